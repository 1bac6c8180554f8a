package storage

import (
	"context"
	"errors"

	"github.com/approve-tui/approve-tui/model"
)

// Reads for the calls agents report as run: the proposals of one call
// (model.Match), for a post-run report that carries no call id, and the
// calls recorded as run without approval, for the pages and the metrics.

// ProposalsOfMatch lists the proposals of call m that have a parks row
// (reserved or parked), most recently stopped first, at most limit (8 when
// not positive). The stored match key is an index only: a proposal whose
// own requester, session, command bytes or cwd are not m's is left out, so
// a parks row written by anyone else never ties another call to m. More
// than limit rows under m's key are read as limit: the caller that needs
// exactly one treats limit as "more than one".
func (st *Store) ProposalsOfMatch(ctx context.Context, m model.Match, limit int) ([]*Record, error) {
	s := st.bind()
	if limit <= 0 {
		limit = 8
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT approval_id FROM approve_tui_parks
		WHERE match_sha256 = ? ORDER BY stopped_at DESC, approval_id LIMIT ?`, m.Key(), limit)
	if err != nil {
		if s.eng.noTable(err) {
			return nil, nil
		}
		return nil, s.classify("proposals of a call", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, s.classify("proposals of a call", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.classify("proposals of a call", err)
	}
	var out []*Record
	for _, id := range ids {
		rec, err := st.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if model.MatchOf(&rec.Proposal) != m {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// RanUnapproved is one call recorded as run without approval, as the
// audit log says it: its execution event's seq and the proposal's
// requester (as stored: hostile, for a bounded label only; "" when the
// proposal is gone or unreadable).
type RanUnapproved struct {
	Seq        int64
	ApprovalID string
	Requester  string
}

// RanWithoutApprovalAfter lists the execution events recorded as
// ran_without_approval after seq, oldest first, at most limit: what the
// metrics count, whichever process recorded them.
func (st *Store) RanWithoutApprovalAfter(ctx context.Context, after int64, limit int) ([]RanUnapproved, error) {
	s := st.bind()
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT seq, approval_id FROM approve_tui_audit
		WHERE seq > ? AND event = ? AND outcome = ? AND reason = ? ORDER BY seq LIMIT ?`,
		after, EventExecution, OutcomeOK, string(model.ExecRanWithoutApproval), limit)
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify("audit", err)
	}
	var out []RanUnapproved
	for rows.Next() {
		var r RanUnapproved
		if err := rows.Scan(&r.Seq, &r.ApprovalID); err != nil {
			rows.Close()
			return nil, s.classify("audit", err)
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.classify("audit", err)
	}
	// The requester is in the proposal's payload: read it (a row gone or
	// unreadable leaves it "").
	for i := range out {
		rec, err := st.Get(ctx, out[i].ApprovalID)
		var ce *CorruptError
		switch {
		case err == nil:
			out[i].Requester = rec.Requester
		case !errors.Is(err, ErrNotFound) && !errors.As(err, &ce):
			return nil, err
		}
	}
	return out, nil
}

// RanWithoutApprovalSince lists the proposals whose execution was recorded
// as ran_without_approval at or after since, newest first, at most limit:
// what a notifier pages. Newest first, so that a burst of old records
// (an agent may write any number) never hides the one that comes next. A
// file without the execution columns has none.
func (st *Store) RanWithoutApprovalSince(ctx context.Context, since float64, limit int) ([]string, error) {
	s := st.bind()
	if limit <= 0 {
		limit = 200
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT approval_id FROM gateway_approvals
		WHERE execution_status = ? AND execution_recorded_at >= ?
		ORDER BY execution_recorded_at DESC, approval_id LIMIT ?`, string(model.ExecRanWithoutApproval), since, limit)
	if err != nil {
		if s.eng.noTable(err) || s.eng.noColumn(err) {
			return nil, nil
		}
		return nil, s.classify("ran without approval", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, s.classify("ran without approval", err)
		}
		out = append(out, id)
	}
	return out, s.classify("ran without approval", rows.Err())
}
