package storage

import (
	"context"

	"github.com/approve-tui/approve-tui/model"
)

// BlockedSince lists the proposals whose execution was recorded as
// blocked_after_consume for reason (the execution reason, e.g.
// signature_invalid) at or after since, oldest first, at most limit: what
// a notifier pages as refused at execution. A file without the execution
// columns (an older one opened read-only) has none.
func (st *Store) BlockedSince(ctx context.Context, reason string, since float64, limit int) ([]string, error) {
	s := st.bind()
	if limit <= 0 {
		limit = 200
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT approval_id FROM gateway_approvals
		WHERE execution_status = ? AND execution_reason = ? AND execution_recorded_at >= ?
		ORDER BY execution_recorded_at, approval_id LIMIT ?`, string(model.ExecBlockedAfterConsume), reason, since, limit)
	if err != nil {
		if s.eng.noTable(err) || s.eng.noColumn(err) {
			return nil, nil
		}
		return nil, s.classify("blocked", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, s.classify("blocked", err)
		}
		out = append(out, id)
	}
	return out, s.classify("blocked", rows.Err())
}
