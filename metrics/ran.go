package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/approve-tui/approve-tui/storage"
)

// requesters are the requester label's values: the agents whose hooks
// record a call run without approval. The requester is the agent's own
// word in the store, so any other reads "other".
var requesters = set("claude-code", "codex", "gemini", "hermes")

// newRanTail counts the calls the store's audit log records as run
// without approval (storage.RanWithoutApprovalAfter), as the decision tail
// counts decisions: from the log's end when the process started, each
// once, at each scrape.
func newRanTail(st *storage.Store, timeout time.Duration) *auditTail {
	ran := prometheus.NewCounterVec(prometheus.CounterOpts{Name: RanWithoutApproval,
		Help: "Calls the store's audit log recorded as run without approval (an agent reported running a call whose proposal was not approved) since this process started, by requester (claude-code, codex, gemini, hermes, other)."},
		[]string{"requester"})
	for r := range requesters {
		ran.WithLabelValues(r)
	}
	return newAuditTail(st, timeout, RanWithoutApproval, func(ctx context.Context, after int64, n int) (int, int64, error) {
		rs, err := st.RanWithoutApprovalAfter(ctx, after, n)
		if err != nil {
			return 0, after, err
		}
		for _, r := range rs {
			ran.WithLabelValues(bounded(r.Requester, requesters)).Inc()
			after = r.Seq
		}
		return len(rs), after, nil
	}, ran)
}
