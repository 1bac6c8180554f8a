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

// auditTail counts what the store's audit log records after the log's end
// at start, each event once, at each scrape: read reads at most n of the
// events it counts after seq, counts them, and returns how many it read
// and the last one's seq. Then the counters (collectors) are collected. A
// log that cannot be read fails the scrape (Prometheus's up says so), as
// the open proposals' read does; what was counted stays counted.
type auditTail struct {
	store      *storage.Store
	timeout    time.Duration
	name       string // the metric named in a failed scrape
	read       func(ctx context.Context, after int64, n int) (int, int64, error)
	collectors []prometheus.Collector

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

// newAuditTail starts a tail at the log's end (a store that cannot be
// read now is started at the first scrape).
func newAuditTail(st *storage.Store, timeout time.Duration, name string, read func(context.Context, int64, int) (int, int64, error), cs ...prometheus.Collector) *auditTail {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	t := &auditTail{store: st, timeout: timeout, name: name, read: read, collectors: cs}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	t.mu.Lock()
	_ = t.start(ctx)
	t.mu.Unlock()
	return t
}

// newDecisionTail counts the decisions the store's audit log records (a
// notifier decides nothing itself, but its metrics speak of the store it
// watches). At each scrape it reads the decision events after the last
// one it counted, counts each once by event and outcome, and observes an
// approval's or denial's time from its proposal's submit; then the
// counters are collected. It starts at the log's end, as a log tailer
// does: the counters start at zero with the process (a restart is a reset
// to Prometheus's rate and increase), never with the whole history at
// once; stats sums up the history from the log itself.
func newDecisionTail(st *storage.Store, decisions *prometheus.CounterVec, seconds prometheus.Histogram, timeout time.Duration) *auditTail {
	return newAuditTail(st, timeout, Decisions, func(ctx context.Context, after int64, n int) (int, int64, error) {
		evs, err := st.DecisionsAfter(ctx, after, n)
		if err != nil {
			return 0, after, err
		}
		for _, e := range evs {
			countDecision(decisions, seconds, e)
			after = e.Seq
		}
		return len(evs), after, nil
	}, decisions, seconds)
}

// start finds the log's end (t.mu held, or before t is shared).
func (t *auditTail) start(ctx context.Context) error {
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

// catchUp counts what was recorded since the last read.
func (t *auditTail) catchUp(ctx context.Context) error {
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
		n, last, err := t.read(ctx, t.after, tailBatch)
		if err != nil {
			return err
		}
		t.after = last
		read += n
		if n < tailBatch {
			t.after = max(t.after, end)
			return nil
		}
	}
	return nil
}

// countDecision counts one decision event, and observes an approval's or
// denial's time from its proposal's submit.
func countDecision(decisions *prometheus.CounterVec, seconds prometheus.Histogram, e storage.DecisionEvent) {
	decisions.WithLabelValues(bounded(e.Event, events), bounded(e.Outcome, outcomes)).Inc()
	if e.Outcome != storage.OutcomeOK || (e.Event != storage.EventApprove && e.Event != storage.EventDeny) || e.Created.IsZero() {
		return
	}
	if d := e.At.Sub(e.Created); d >= 0 {
		seconds.Observe(d.Seconds())
	}
}

func (t *auditTail) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range t.collectors {
		c.Describe(ch)
	}
}

// Collect reads what is new, then collects the counters.
func (t *auditTail) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), t.timeout)
	defer cancel()
	if err := t.catchUp(ctx); err != nil {
		err = errors.New(model.Sanitize(err.Error(), model.Line))
		ch <- prometheus.NewInvalidMetric(prometheus.NewDesc(t.name, "the store's audit log could not be read", nil, nil), err)
		return
	}
	for _, c := range t.collectors {
		c.Collect(ch)
	}
}
