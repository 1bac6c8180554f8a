package metrics

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// decisionTail counts the decisions the store's audit log records (a
// notifier decides nothing itself, but its metrics speak of the store it
// watches). At each scrape it reads the decision events after the last
// one it counted, counts each once by event and outcome, and observes an
// approval's or denial's time from its proposal's submit; then the
// counters are collected. It starts at the log's end, as a log tailer
// does: the counters start at zero with the process (a restart is a reset
// to Prometheus's rate and increase), never with the whole history at
// once; stats sums up the history from the log itself.
type decisionTail struct {
	store     *storage.Store
	timeout   time.Duration
	decisions *prometheus.CounterVec
	seconds   prometheus.Histogram

	mu      sync.Mutex
	started bool  // after is where the log's end was at start
	after   int64 // the last seq read
}

// tailBatch and tailMax bound one scrape's read of the log: a scrape
// after a very busy spell counts the rest at the next one.
const (
	tailBatch = 5000
	tailMax   = 100_000
)

func newDecisionTail(st *storage.Store, decisions *prometheus.CounterVec, seconds prometheus.Histogram, timeout time.Duration) *decisionTail {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	t := &decisionTail{store: st, timeout: timeout, decisions: decisions, seconds: seconds}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_ = t.start(ctx) // a store that cannot be read now is started at the first scrape
	return t
}

// start finds the log's end (t.mu held, or before t is shared).
func (t *decisionTail) start(ctx context.Context) error {
	if t.started {
		return nil
	}
	seq, err := t.store.AuditSeq(ctx)
	if err != nil {
		return err
	}
	t.after, t.started = seq, true
	return nil
}

// catchUp counts the decisions recorded since the last read.
func (t *decisionTail) catchUp(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return t.start(ctx)
	}
	for read := 0; read < tailMax; {
		// The end before the read: when the read comes short, nothing up
		// to it is left (the log's seq is its commit order), so the next
		// read skips the other events in between.
		end, err := t.store.AuditSeq(ctx)
		if err != nil {
			return err
		}
		evs, err := t.store.DecisionsAfter(ctx, t.after, tailBatch)
		if err != nil {
			return err
		}
		for _, e := range evs {
			t.count(e)
			t.after = e.Seq
		}
		read += len(evs)
		if len(evs) < tailBatch {
			t.after = max(t.after, end)
			return nil
		}
	}
	return nil
}

func (t *decisionTail) count(e storage.DecisionEvent) {
	t.decisions.WithLabelValues(bounded(e.Event, events), bounded(e.Outcome, outcomes)).Inc()
	if e.Outcome != storage.OutcomeOK || (e.Event != storage.EventApprove && e.Event != storage.EventDeny) || e.Created.IsZero() {
		return
	}
	if d := e.At.Sub(e.Created); d >= 0 {
		t.seconds.Observe(d.Seconds())
	}
}

func (t *decisionTail) Describe(ch chan<- *prometheus.Desc) {
	t.decisions.Describe(ch)
	t.seconds.Describe(ch)
}

// Collect reads what is new, then collects the counters. A log that
// cannot be read fails the scrape (Prometheus's up says so), as the open
// proposals' read does; what was counted stays counted.
func (t *decisionTail) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), t.timeout)
	defer cancel()
	if err := t.catchUp(ctx); err != nil {
		err = errors.New(model.Sanitize(err.Error(), model.Line))
		ch <- prometheus.NewInvalidMetric(prometheus.NewDesc(Decisions, "the store's audit log could not be read", nil, nil), err)
		return
	}
	t.decisions.Collect(ch)
	t.seconds.Collect(ch)
}
