package storage

import (
	"context"
	"database/sql"

	"github.com/approve-tui/approve-tui/model"
)

// Parks reads the park rows of ids (the rows a list shows), by approval
// id: an id never parked is absent. One query per run of 200 ids, so that
// a list of thousands of proposals learns which are parked without a read
// per row. A stopped_at that is NULL (a reservation: the waiter may park
// the proposal, it has not stopped) reads as StoppedAt 0. A store this
// build may not migrate (read only), with no parks table, has no park.
func (st *Store) Parks(ctx context.Context, ids []string) (map[string]*Park, error) {
	s := st.bind()
	out := map[string]*Park{}
	if len(ids) == 0 {
		return out, nil
	}
	err := inLists(ids, func(in string, args []any) error {
		rows, err := s.rdb.QueryContext(ctx, `SELECT approval_id, match_sha256, stopped_at, park_until, why, taken_by, taken_at
			FROM approve_tui_parks WHERE approval_id IN (`+in+`)`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			p := &Park{}
			var stopped, takenAt sql.NullFloat64
			var why, taken sql.NullString
			if err := rows.Scan(&p.ApprovalID, &p.MatchSHA256, &stopped, &p.Until, &why, &taken, &takenAt); err != nil {
				return err
			}
			p.StoppedAt, p.Why, p.TakenBy = stopped.Float64, why.String, taken.String
			if takenAt.Valid {
				p.TakenAt = model.F64(takenAt.Float64)
			}
			out[p.ApprovalID] = p
		}
		return rows.Err()
	})
	if err != nil {
		if s.eng.noTable(err) && s.roReason() != "" {
			return map[string]*Park{}, nil
		}
		return nil, s.classify("parks", err)
	}
	return out, nil
}

// FillParks sets the Park of each of recs from one bulk read (Parks): what
// Get fills for one record, for a list of them.
func (st *Store) FillParks(ctx context.Context, recs []*Record) error {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ApprovalID
	}
	ps, err := st.Parks(ctx, ids)
	if err != nil {
		return err
	}
	for _, r := range recs {
		r.Park = ps[r.ApprovalID]
	}
	return nil
}

// ParkSignature is a cheap fingerprint of the park rows: a park, a
// reservation's waiter stopping (stopped_at set), a park again and a take
// each move it. PendingSignature does not see them (they touch only
// approve_tui_parks): a console that finds both unchanged need not re-read
// its list.
type ParkSignature struct {
	Count, Taken   int64
	Stopped, Until float64
}

// ParkSignature reads the signature: one pass over approve_tui_parks,
// whose rows are a few dozen bytes (no join: reading the open rows of
// gateway_approvals to find theirs costs ten times more; BENCHMARKS.md).
// A store with no parks table (read only, not migrated) has the zero one.
func (st *Store) ParkSignature(ctx context.Context) (ParkSignature, error) {
	s := st.bind()
	var sig ParkSignature
	err := s.rdb.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(stopped_at), 0), coalesce(sum(park_until), 0), count(taken_by)
		FROM approve_tui_parks`).Scan(&sig.Count, &sig.Stopped, &sig.Until, &sig.Taken)
	if err != nil && s.eng.noTable(err) && s.roReason() != "" {
		return ParkSignature{}, nil
	}
	return sig, s.classify("parks", err)
}
