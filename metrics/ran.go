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

// requesters are the requester label's values: the agents whose hooks
// record a call run without approval. The requester is the agent's own
// word in the store, so any other reads "other".
var requesters = set("claude-code", "codex", "gemini", "hermes")

// ranTail counts the calls the store's audit log records as run without
// approval (storage.RanWithoutApprovalAfter), as the decision tail counts
// decisions: from the log's end when the process started, each once, at
// each scrape.
type ranTail struct {
	store   *storage.Store
	timeout time.Duration
	ran     *prometheus.CounterVec

	mu      sync.Mutex
	started bool
	after   int64
}

func newRanTail(st *storage.Store, timeout time.Duration) *ranTail {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	t := &ranTail{store: st, timeout: timeout, ran: prometheus.NewCounterVec(prometheus.CounterOpts{Name: RanWithoutApproval,
		Help: "Calls the store's audit log recorded as run without approval (an agent reported running a call whose proposal was not approved) since this process started, by requester (claude-code, codex, gemini, hermes, other)."},
		[]string{"requester"})}
	for r := range requesters {
		t.ran.WithLabelValues(r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	t.mu.Lock()
	_ = t.start(ctx) // a store that cannot be read now is started at the first scrape
	t.mu.Unlock()
	return t
}

// start finds the log's end (t.mu held).
func (t *ranTail) start(ctx context.Context) error {
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
func (t *ranTail) catchUp(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return t.start(ctx)
	}
	for read := 0; read < tailMax; {
		end, err := t.store.AuditSeq(ctx)
		if err != nil {
			return err
		}
		rs, err := t.store.RanWithoutApprovalAfter(ctx, t.after, tailBatch)
		if err != nil {
			return err
		}
		for _, r := range rs {
			t.ran.WithLabelValues(bounded(r.Requester, requesters)).Inc()
			t.after = r.Seq
		}
		read += len(rs)
		if len(rs) < tailBatch {
			t.after = max(t.after, end)
			return nil
		}
	}
	return nil
}

func (t *ranTail) Describe(ch chan<- *prometheus.Desc) { t.ran.Describe(ch) }

// Collect reads what is new, then collects the counter; a log that cannot
// be read fails the scrape.
func (t *ranTail) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), t.timeout)
	defer cancel()
	if err := t.catchUp(ctx); err != nil {
		err = errors.New(model.Sanitize(err.Error(), model.Line))
		ch <- prometheus.NewInvalidMetric(prometheus.NewDesc(RanWithoutApproval, "the store's audit log could not be read", nil, nil), err)
		return
	}
	t.ran.Collect(ch)
}
