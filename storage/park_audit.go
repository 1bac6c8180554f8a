package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/approve-tui/approve-tui/model"
)

// What the audit log says of one proposal's park, read where a parks row
// is about to be believed (Take, FindParked). The parks table is a row
// any process of the user's can write; the audit log is hash-chained. A
// parks row is believed only when the proposal's own events, each checked
// against its hash and its link to the event after it (or the recorded
// head), say it was reserved (the submit's reserved_until; a park event
// counts only on a reserved proposal, since every waiter that parks
// submitted with its reservation), and whether somebody took it (a take
// event: taken, by whom and when, is known from nothing else). An agent
// that can write both tables can still append events or rewrite the chain
// from the submit on, consistently (the hash is unkeyed): against that
// writer this check, like `approve-tui audit --verify`, detects what it
// can, and prevents nothing (docs/parking.md, "What the audit check
// cannot do").

// RefusedAuditBroken: the proposal's audit events do not verify (one was
// changed, or one after it removed): its parks row is not believed.
const RefusedAuditBroken = "audit_broken"

// parkAudit is what the proposal's verified audit events say of its park.
type parkAudit struct {
	parked bool    // reserved with its submit (and so parkable)
	until  float64 // the latest window the log recorded (reserved_until, a park's until)
	taken  *TakenError
	broken string // why the proposal's events do not verify ("" when they do)
}

// queryer is a connection, a transaction's writer or the readers' pool.
type queryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// readParkAudit reads and checks proposal id's audit events in one
// statement (one snapshot: each event, the prev_hash of the event after
// it, and the recorded head).
func readParkAudit(ctx context.Context, q queryer, id string) (parkAudit, error) {
	var out parkAudit
	rows, err := q.QueryContext(ctx, `SELECT a.seq, a.at, a.approval_id, a.event, a.outcome, a.reason, a.actor,
		a.surface, a.detail, a.prev_hash, a.hash, n.prev_hash, (SELECT value FROM approve_tui_meta WHERE key = 'audit_head')
		FROM approve_tui_audit a LEFT JOIN approve_tui_audit n ON n.seq = a.seq + 1
		WHERE a.approval_id = ? ORDER BY a.seq`, id)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var e AuditEvent
		var next, head sql.NullString
		if err := rows.Scan(&e.Seq, &e.At, &e.ApprovalID, &e.Event, &e.Outcome, &e.Reason, &e.Actor, &e.Surface,
			&e.DetailRaw, &e.PrevHash, &e.Hash, &next, &head); err != nil {
			return out, err
		}
		if out.broken != "" {
			continue
		}
		if h := eventHash(&e); h != e.Hash {
			out.broken = fmt.Sprintf("audit event %d of it was changed after it was written", e.Seq)
			continue
		}
		switch {
		case next.Valid && next.String != e.Hash:
			out.broken = fmt.Sprintf("the audit event after event %d of it does not link to it", e.Seq)
			continue
		case !next.Valid:
			// The last event of the log: the head names it.
			hseq, hhash, perr := parseHead(head.String)
			if perr != nil || hseq != e.Seq || hhash != e.Hash {
				out.broken = fmt.Sprintf("the audit event after event %d of it is missing", e.Seq)
				continue
			}
		}
		if e.Outcome != OutcomeOK {
			continue
		}
		var d map[string]any
		_ = json.Unmarshal([]byte(e.DetailRaw), &d)
		switch e.Event {
		case EventSubmit:
			if u, ok := d["reserved_until"].(float64); ok {
				out.parked, out.until = true, u
			}
		case EventPark:
			// A park counts only on a proposal its submit reserved: every
			// waiter that parks submitted with its reservation, so a park
			// event on a proposal submitted without one was appended by
			// someone else (its own waiter may have let it through, with
			// no take recorded).
			if u, ok := d["until"].(float64); ok && out.parked {
				out.until = u
			}
		case EventTake:
			if out.taken == nil {
				by := model.Actor{Name: e.Actor, Surface: model.Surface(e.Surface)}
				out.taken = &TakenError{ID: id, By: by.String(), At: e.At}
			}
		}
	}
	return out, rows.Err()
}

// takenness says whether proposal id's approval was taken, from the
// verified audit events alone: *TakenError (its By and At are the take
// event's) when it was; audit_broken when the events do not verify, or
// when parks row p says taken (taken_by or taken_at) and no verified take
// event does (a row written to be believed as taken); nil when it was not.
func (a parkAudit) takenness(id string, p *Park) error {
	switch {
	case a.broken != "":
		return &RefusedError{ID: id, Code: RefusedAuditBroken, Verb: "taken",
			Reason: a.broken + ": whether its approval was taken is not known; see `approve-tui audit --verify`"}
	case a.taken != nil:
		return a.taken
	case p != nil && (p.TakenBy != "" || p.TakenAt != nil):
		return &RefusedError{ID: id, Code: RefusedAuditBroken, Verb: "taken",
			Reason: "its parks row says its approval was taken, and the audit log records no take of it: the row is not believed; see `approve-tui audit --verify`"}
	}
	return nil
}

// refusal is why the parks row of id is not believed (nil when it is):
// p is the row as read.
func (a parkAudit) refusal(id string, p *Park) error {
	switch {
	case a.broken != "":
		return &RefusedError{ID: id, Code: RefusedAuditBroken, Verb: "taken",
			Reason: a.broken + ": its parks row is not believed; see `approve-tui audit --verify`"}
	case a.taken != nil:
		return a.taken
	case !a.parked:
		return &RefusedError{ID: id, Code: RefusedNotParked, Verb: "taken",
			Reason: "the audit log records no reservation or park of it: only its own waiter takes its approval"}
	case p != nil && p.Until > a.until:
		return &RefusedError{ID: id, Code: RefusedParkOver, Verb: "taken",
			Reason: "its parks row names a window the audit log never recorded (it ends at " + formatEpoch(a.until) + ")"}
	}
	return nil
}
