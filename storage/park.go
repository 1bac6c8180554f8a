package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Parked proposals. An agent kills its hook at its own hook timeout (or
// `run --timeout` ends): the waiter stops, the proposal need not. Park keeps
// it open for a park window (never past its expiry), recording when the
// waiter stopped; the same call asked again (model.Match: requester,
// session, exact command bytes, cwd) finds it (FindParked) instead of
// making a new proposal, and, once it is approved, exactly one asker takes
// the approval (Take: a compare-and-set on approve_tui_parks.taken_by).
// Every step is a transition of the one audited path.
//
// The stored match key is only an index: FindParked and Take check the
// asked Match against the proposal's own fields, so that a parks row
// written by anyone else cannot hand one call's approval to another.

// Audit events of parked proposals.
const (
	EventPark = "park"
	EventTake = "take"
)

// Refusal codes of parked proposals (RefusedError.Code).
const (
	// RefusedParkOver: the park window ended; the approval would let
	// nothing through, so it is refused (approve) or not taken (take).
	RefusedParkOver = "park_window_over"
	// RefusedTaken: another asker took the approval already.
	RefusedTaken = "taken"
	// RefusedNotParked: the proposal was never parked.
	RefusedNotParked = "not_parked"
	// RefusedNoMatch: the call asked is not the parked one (another
	// command, session, requester or directory).
	RefusedNoMatch = "match_differs"
	// RefusedNotApproved: the parked proposal is not approved (still
	// pending, denied or expired): nothing to take.
	RefusedNotApproved = "not_approved"
)

// DetailRanWithoutApproval is the expire event's reason when a proposal
// was closed because its agent reported the call as run without approval.
const DetailRanWithoutApproval = string(model.ExecRanWithoutApproval)

// Park is what the store knows of a parked proposal: when its waiter
// stopped, until when it stays open, and who took its approval.
type Park struct {
	ApprovalID  string
	MatchSHA256 string  // model.Match.Key of the parked call
	StoppedAt   float64 // epoch seconds: when the waiter stopped (0: reserved, its waiter has not stopped)
	Until       float64 // epoch seconds: the end of the park window (never past the expiry)
	Why         string  // why the waiter stopped, as the parking surface said it (sanitised)
	TakenBy     string  // who took the approval ("" while nobody has)
	TakenAt     *float64
}

// Open reports whether the park window is still open at now.
func (p *Park) Open(now time.Time) bool { return p != nil && model.Epoch(now) < p.Until }

// Reserved reports whether p is a reservation written with the submit
// whose waiter has not parked it (it waits, or it died without a word).
func (p *Park) Reserved() bool { return p != nil && p.StoppedAt == 0 }

// ReserveGrace is how long after its submit a reserved proposal with no
// waiter row is taken for one whose waiter is gone (killed before its first
// heartbeat): the waiter writes its first heartbeat right after the submit.
const ReserveGrace = WaiterStaleAfter

// TakenError is the refusal of a Take whose approval another asker took:
// exactly one asker takes a parked approval.
type TakenError struct {
	ID string
	By string
	At float64
}

func (e *TakenError) Error() string {
	at := ""
	if e.At > 0 {
		at = " at " + formatEpoch(e.At)
	}
	return "proposal " + model.Sanitize(e.ID, model.Line) + " was taken already by " + model.Sanitize(e.By, model.Line) +
		at + ": its approval lets one call through, once"
}

// Park keeps pending proposal id open after its waiter stopped, until
// min(until, its expiry); why says why the waiter stopped ("hook timeout",
// "killed by its agent"). A proposal approved before its waiter saw it
// (nothing run yet) is parked too, so that the retry takes the approval.
// Parking again (the same call stopped waiting once more) records the new
// stop and window. A proposal denied or expired, one whose approval was
// taken or whose execution is recorded, or a window that would end before
// now, is refused.
func (st *Store) Park(ctx context.Context, id string, until time.Time, why string, actor model.Actor) (*Park, error) {
	s := st.bind()
	if why == "" {
		why = "its waiter stopped waiting"
	}
	var out *Park
	err := s.run(ctx, transition{event: EventPark, id: id, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		out = nil
		rec, err := s.pendingRow(ctx, id)
		var np *NotPendingError
		if errors.As(err, &np) && np.Status == model.StatusConsumed {
			// Approved as its waiter stopped, before it saw the approval:
			// parked all the same, so that the retry takes it.
			rec, err = s.scanRecord(s.ws.get.QueryRowContext(ctx, id), s.now())
			if err == nil && rec.ExecutionStatus != model.ExecNotStarted {
				return nil, &InvalidTransitionError{ID: id, Reason: "its execution is recorded already (" + string(rec.ExecutionStatus) + "): nothing to park"}
			}
		}
		if err != nil {
			return nil, err
		}
		now := model.Epoch(s.now())
		end := model.Epoch(until)
		if rec.ExpiresAt != nil && *rec.ExpiresAt < end {
			end = *rec.ExpiresAt
		}
		if end <= now {
			return nil, &RefusedError{ID: id, Code: RefusedParkOver, Verb: "parked",
				Reason: "its park window would end before now (" + formatEpoch(end) + ")"}
		}
		prev, err := s.parkRow(ctx, id)
		if err != nil {
			return nil, err
		}
		if prev != nil {
			// Taken or not: the verified audit log says, never the row.
			pa, err := readParkAudit(ctx, s.w, id)
			if err != nil {
				return nil, err
			}
			if err := pa.takenness(id, prev); err != nil {
				return nil, err
			}
		}
		p := &Park{ApprovalID: id, MatchSHA256: model.MatchOf(&rec.Proposal).Key(), StoppedAt: now, Until: end, Why: columnText(why)}
		if _, err := s.w.ExecContext(ctx, `INSERT INTO approve_tui_parks (approval_id, match_sha256, stopped_at, park_until, why)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (approval_id) DO UPDATE SET match_sha256 = excluded.match_sha256,
			stopped_at = excluded.stopped_at, park_until = excluded.park_until, why = excluded.why`,
			p.ApprovalID, p.MatchSHA256, p.StoppedAt, p.Until, p.Why); err != nil {
			return nil, err
		}
		out = p
		d := map[string]any{"stopped_at": p.StoppedAt, "until": p.Until, "why": p.Why, "match_sha256": p.MatchSHA256}
		switch {
		case prev.Reserved():
			d["reserved_until"] = prev.Until
		case prev != nil:
			d["parked_before_at"] = prev.StoppedAt
		}
		return []auditEntry{{id: id, event: EventPark, outcome: OutcomeOK, detail: d}}, nil
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// selectPark reads one park row.
const selectPark = `SELECT match_sha256, stopped_at, park_until, why, taken_by, taken_at
	FROM approve_tui_parks WHERE approval_id = ?`

// parkRow reads id's park row in the write transaction (nil when it was
// never parked).
func (s bound) parkRow(ctx context.Context, id string) (*Park, error) {
	return scanPark(s.ws.parkGet.QueryRowContext(ctx, id), id)
}

// scanPark scans a selectPark row (nil when there is none).
func scanPark(sc rowScanner, id string) (*Park, error) {
	p := &Park{ApprovalID: id}
	var taken sql.NullString
	var stopped, takenAt sql.NullFloat64
	err := sc.Scan(&p.MatchSHA256, &stopped, &p.Until, &p.Why, &taken, &takenAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p.TakenBy = taken.String
	p.StoppedAt = stopped.Float64
	if takenAt.Valid {
		p.TakenAt = model.F64(takenAt.Float64)
	}
	return p, nil
}

// parkClosed refuses the approval of parked proposal rec whose park window
// ended: its waiter is gone and the retry that would take it can no longer
// match, so the approval would let nothing through (and could surprise a
// later caller). Read in the approval's transaction: by the deciding read
// where it ran as one statement (facts), else here.
func (s bound) parkClosed(ctx context.Context, rec *Record, facts rowFacts) error {
	if facts.parkRead && (!facts.parkUntil.Valid || model.Epoch(s.now()) < facts.parkUntil.Float64) {
		return nil // never parked, or its window is open
	}
	p, err := s.parkRow(ctx, rec.ApprovalID)
	if err != nil || p == nil {
		return err
	}
	if !p.Open(s.now()) && p.Reserved() {
		return &RefusedError{ID: rec.ApprovalID, Code: RefusedParkOver, Reason: "its park window ended at " + formatEpoch(p.Until) +
			": approving it now would let nothing through; deny it or let it expire"}
	}
	if !p.Open(s.now()) {
		return &RefusedError{ID: rec.ApprovalID, Code: RefusedParkOver, Reason: "its agent stopped waiting at " + formatEpoch(p.StoppedAt) +
			" and its park window ended at " + formatEpoch(p.Until) + ": approving it now would let nothing through; deny it or let it expire"}
	}
	return nil
}

// ParkOf is what the store knows of proposal id's park (nil when it was
// never parked).
func (st *Store) ParkOf(ctx context.Context, id string) (*Park, error) {
	s := st.bind()
	p, err := scanPark(s.rdb.QueryRowContext(ctx, selectPark, id), id)
	if err != nil {
		return nil, s.classify("park", err)
	}
	return p, nil
}

// FindParked returns the parked proposal the call m may resume: the most
// recently parked one whose park window is open, whose approval nobody took,
// which is still open (pending, or tier-2 pending_confirm) or approved with
// nothing run, and whose own requester, session, command bytes and cwd are
// m's. A reserved proposal (its waiter never parked it) is found too once
// its waiter is gone: its heartbeat is stale or its process is gone, or it
// has no waiter row ReserveGrace after its submit (killed -9 at any
// point); one whose waiter is live is not (that waiter answers it).
// Parked proposals come before reserved ones. A parks row counts only as
// far as the proposal's verified audit events say (readParkAudit): one
// they do not reserve is skipped, one they record as taken is taken (who
// and when as the take event says), and one whose row says taken with no
// verified take event, or whose events do not verify, is refused
// (audit_broken). ErrNotFound when there is none (the common case: one
// indexed lookup).
//
// When the only parked proposal of m (parked: its waiter stopped) had its
// approval taken less than TakenRefusal ago (a retry storm, or two retries
// at once), a *TakenError naming who took it is returned, with its park:
// the call was let through once, and is refused rather than asked anew.
// Later, the same call asked again is a new request, as is one whose
// proposal its own waiter took (never parked).
func (st *Store) FindParked(ctx context.Context, m model.Match) (*Record, *Park, error) {
	s := st.bind()
	rows, err := s.rdb.QueryContext(ctx, `SELECT p.approval_id FROM approve_tui_parks p
		JOIN gateway_approvals g ON g.approval_id = p.approval_id
		WHERE p.match_sha256 = ? AND (p.park_until > ?
		AND (g.status IN ('pending', 'pending_confirm') OR (g.status = 'consumed' AND g.execution_status = 'not_started'))
		OR p.taken_by IS NOT NULL AND g.execution_status = 'not_started' OR p.taken_at > ?)
		ORDER BY CASE WHEN p.taken_by IS NULL THEN 0 ELSE 1 END, CASE WHEN p.stopped_at IS NULL THEN 1 ELSE 0 END,
		p.stopped_at DESC, g.created_at DESC LIMIT 8`, m.Key(), model.Epoch(s.now()), model.Epoch(s.now().Add(-TakenRefusal)))
	if err != nil {
		return nil, nil, s.classify("find parked", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, nil, s.classify("find parked", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, s.classify("find parked", err)
	}
	var taken *Record
	for _, id := range ids {
		rec, err := st.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if model.MatchOf(&rec.Proposal) != m {
			continue // a parks row that names another call: never matched
		}
		if rec.Park == nil {
			continue
		}
		// Believed only as far as its verified audit events say (Take
		// checks it again in its transaction). Whether it was taken, by
		// whom and when, comes from them alone: a row that says taken
		// and no verified take event does is refused, never "taken" (it
		// would let the same call through) nor "not taken".
		pa, err := readParkAudit(ctx, s.rdb, id)
		if err != nil {
			return nil, nil, s.classify("find parked", err)
		}
		var tk *TakenError
		if err := pa.takenness(id, rec.Park); errors.As(err, &tk) {
			rec.Park.TakenBy, rec.Park.TakenAt = tk.By, model.F64(tk.At)
			if taken == nil && !rec.Park.Reserved() && model.Epoch(s.now())-tk.At < TakenRefusal.Seconds() {
				taken = rec
			}
			continue
		} else if err != nil {
			return nil, nil, err
		}
		status := rec.EffectiveStatus
		if !status.Open() && !(status == model.StatusConsumed && rec.ExecutionStatus == model.ExecNotStarted) {
			continue
		}
		if !rec.Park.Open(s.now()) {
			continue
		}
		if err := pa.refusal(id, rec.Park); err != nil {
			continue
		}
		if rec.Park.Reserved() {
			gone, err := st.waiterGone(ctx, rec)
			if err != nil {
				return nil, nil, err
			}
			if !gone {
				continue // its waiter is there: it answers the call
			}
		}
		return rec, rec.Park, nil
	}
	if taken != nil {
		// By and At as the verified take event says (set above).
		return taken, taken.Park, &TakenError{ID: taken.ApprovalID, By: taken.Park.TakenBy, At: *taken.Park.TakenAt}
	}
	return nil, nil, ErrNotFound
}

// TakenRefusal is how long after a parked approval was taken the same
// call asked again is refused as taken (FindParked), rather than asked as
// a new request.
const TakenRefusal = time.Minute

// waiterGone says whether reserved proposal rec's waiter is gone: it
// heartbeated and stopped (stale, or its process on this host is gone), or
// it never wrote a heartbeat ReserveGrace after the submit.
func (st *Store) waiterGone(ctx context.Context, rec *Record) (bool, error) {
	ws, err := st.WaiterState(ctx, rec.ApprovalID)
	if err != nil {
		return false, err
	}
	switch ws.State {
	case WaiterLive:
		return false, nil
	case WaiterDead:
		return true, nil
	}
	return model.Epoch(st.bind().now())-rec.CreatedAt >= ReserveGrace.Seconds(), nil
}

// Take lets asker take the approval of parked proposal id for call m,
// exactly once: the proposal must be approved with nothing run, parked
// for m (checked against its own fields), inside its park window, its
// payload the one submitted, and nobody may have taken it: taken or not
// comes from its verified audit events alone, which must also record its
// reservation and verify (readParkAudit); a parks row that says taken with
// no verified take event is refused (audit_broken). Of any number of
// racing askers one wins; the others get *TakenError naming the winner,
// as its take event does.
// The caller still runs every runtime check of the call (risk re-check,
// pinned bytes, impact) before letting it through.
func (st *Store) Take(ctx context.Context, id string, m model.Match, asker model.Actor) (*Record, error) {
	s := st.bind()
	var out *Record
	err := s.run(ctx, transition{event: EventTake, id: id, actor: asker, apply: func(ctx context.Context) ([]auditEntry, error) {
		out = nil
		rec, err := s.scanRecord(s.ws.get.QueryRowContext(ctx, id), s.now())
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		var sub submitRecord
		var detail string
		switch err := s.w.QueryRowPrepared(ctx, selectSubmit, id).Scan(&sub.seq, &detail); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, err
		default:
			sub.sha256 = submitPayload(detail)
			sub.mark(rec)
		}
		p, err := s.parkRow(ctx, id)
		if err != nil {
			return nil, err
		}
		refuse := func(code, reason string) ([]auditEntry, error) {
			return nil, &RefusedError{ID: id, Code: code, Reason: reason, Verb: "taken"}
		}
		switch {
		case p == nil:
			return refuse(RefusedNotParked, "it was never parked: only its own waiter takes its approval")
		}
		// Whether it was taken, by whom and when, comes from the
		// verified audit log alone (the parks row's taken_by is a column
		// any process of the user's can write): a row that says taken
		// with no verified take event is not believed either way.
		pa, err := readParkAudit(ctx, s.w, id)
		if err != nil {
			return nil, err
		}
		if pa.broken == "" && pa.taken != nil {
			return nil, pa.taken
		}
		switch {
		case model.MatchOf(&rec.Proposal) != m || p.MatchSHA256 != m.Key():
			return refuse(RefusedNoMatch, "the call asked is not the parked one (another command, session, requester or directory)")
		case rec.Tampered != "":
			return refuse(RefusedTampered, "tampered: its "+rec.Tampered+": it was changed in the store after it was submitted")
		case rec.Corrupt != "":
			return nil, &CorruptError{ID: id, Reason: rec.Corrupt}
		case rec.Status != model.StatusConsumed:
			return refuse(RefusedNotApproved, "it is "+string(rec.EffectiveStatus)+", not approved")
		case rec.ExecutionStatus != model.ExecNotStarted:
			return refuse(RefusedNotApproved, "its execution is recorded already ("+string(rec.ExecutionStatus)+")")
		case !p.Open(s.now()):
			return refuse(RefusedParkOver, "its park window ended at "+formatEpoch(p.Until))
		}
		// The parks row is believed only as far as the proposal's own
		// audit events, verified, say: reserved or parked, the window
		// recorded, and no take before (a row rewritten to be taken
		// again, or written by the agent for a proposal never parked).
		if err := pa.takenness(id, p); err != nil {
			return nil, err
		}
		if err := pa.refusal(id, p); err != nil {
			return nil, err
		}
		now := model.Epoch(s.now())
		by := columnText(asker.String())
		res, err := s.w.ExecContext(ctx, `UPDATE approve_tui_parks SET taken_by = ?, taken_at = ?
			WHERE approval_id = ? AND taken_by IS NULL`, by, now, id)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n != 1 {
			// The row changed after the read above: who took it is what
			// the verified audit log says, nothing else.
			won, err := readParkAudit(ctx, s.w, id)
			if err != nil {
				return nil, err
			}
			return nil, won.takenness(id, &Park{TakenBy: "(changed underneath)"})
		}
		p.TakenBy, p.TakenAt = by, model.F64(now)
		rec.Park = p
		out = rec
		return []auditEntry{{id: id, event: EventTake, outcome: OutcomeOK, detail: map[string]any{
			"match_sha256":   p.MatchSHA256,
			"payload_sha256": rec.PayloadSHA256,
			"command_sha256": sha256Hex([]byte(rec.Command)),
			"stopped_at":     p.StoppedAt,
			"until":          p.Until,
		}}}, nil
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecordRanWithoutApproval records that the agent reported proposal id's
// call as run while the proposal was not approved (pending, denied or
// expired), or approved with its approval never handed to a call (it has a
// parks row whose approval nobody took: its waiter stopped before it saw
// the approval, and no call asked again took it; an allow is given only
// after a take): execution_status becomes ran_without_approval, reason says
// what the agent reported, and in the same transaction an open proposal is
// closed as expired (audited as an expire event with reason
// ran_without_approval), so that nobody approves a call that already ran,
// and the park window of an approved one is closed (park_until set to now),
// so that its approval is never taken afterwards. An approved proposal
// whose approval was taken, or that has no parks row, is refused (its
// execution is recorded by RecordExecution), as is one whose execution is
// recorded already.
func (st *Store) RecordRanWithoutApproval(ctx context.Context, id, reason string, actor model.Actor) (*Record, error) {
	s := st.bind()
	var out *Record
	err := s.run(ctx, transition{event: EventExecution, id: id, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		out = nil
		rec, err := s.scanRecord(s.ws.get.QueryRowContext(ctx, id), s.now())
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		var untaken *Park
		auditBroken := ""
		if rec.Status == model.StatusConsumed {
			if untaken, err = s.parkRow(ctx, id); err != nil {
				return nil, err
			}
		}
		if untaken != nil {
			// Taken or not comes from the verified audit log alone, never
			// from the parks row's taken_by (a column the agent can
			// write, to hide a run without approval or to frame a run on
			// a take). Events that do not verify cannot say it was
			// taken: the run is recorded as without approval (the alarm,
			// not the silence), and the record says why.
			pa, err := readParkAudit(ctx, s.w, id)
			if err != nil {
				return nil, err
			}
			var tk *TakenError
			if err := pa.takenness(id, nil); errors.As(err, &tk) {
				return nil, &InvalidTransitionError{ID: id, Reason: "it was approved and its approval handed to a call (taken by " +
					model.Sanitize(tk.By, model.Line) + " at " + formatEpoch(tk.At) + "): its execution is recorded as such, not as run without approval"}
			}
			auditBroken = pa.broken
		}
		switch {
		case rec.ExecutionStatus != model.ExecNotStarted:
			return nil, &InvalidTransitionError{ID: id, Reason: fmt.Sprintf("execution already recorded as %s", rec.ExecutionStatus)}
		case rec.Status == model.StatusConsumed && untaken == nil:
			return nil, &InvalidTransitionError{ID: id, Reason: "it was approved and its approval handed to a call: its execution is recorded as such, not as run without approval"}
		}
		now := model.Epoch(s.now())
		var entries []auditEntry
		before := rec.Status
		if untaken != nil {
			// Approved, never taken: the park is closed with the record,
			// so that the approval lets nothing through afterwards.
			res, err := s.w.ExecContext(ctx, `UPDATE approve_tui_parks SET park_until = ?
				WHERE approval_id = ? AND park_until > ?`, now, id, now)
			if err != nil {
				return nil, err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				entries = append(entries, auditEntry{id: id, event: EventPark, outcome: OutcomeOK, reason: DetailRanWithoutApproval,
					detail: map[string]any{"closed_at": now, "until_was": untaken.Until, "stopped_at": untaken.StoppedAt}})
			}
		}
		if rec.Status.Open() {
			res, err := s.w.ExecContext(ctx, `UPDATE gateway_approvals SET status = 'expired'
				WHERE approval_id = ? AND status = ?`, id, string(rec.Status))
			if err != nil {
				return nil, err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return nil, &InvalidTransitionError{ID: id, Reason: "the status changed underneath"}
			}
			if _, err := s.endVotes(ctx, id, VoteExpired); err != nil {
				return nil, err
			}
			if err := s.leaveRankEntry(ctx, id); err != nil {
				return nil, err
			}
			rec.Status, rec.EffectiveStatus = model.StatusExpired, model.StatusExpired
			d := map[string]any{"was": string(before)}
			if rec.ExpiresAt != nil {
				d["expires_at"] = *rec.ExpiresAt
			}
			entries = append(entries, auditEntry{id: id, event: EventExpire, outcome: OutcomeOK, reason: DetailRanWithoutApproval, detail: d})
		}
		res, err := s.w.ExecContext(ctx, `UPDATE gateway_approvals SET execution_status = ?, execution_reason = ?,
			execution_recorded_at = ? WHERE approval_id = ? AND status = ? AND execution_status = 'not_started'`,
			string(model.ExecRanWithoutApproval), nullString(reason), now, id, string(rec.Status))
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil, &InvalidTransitionError{ID: id, Reason: "the execution status changed underneath"}
		}
		rec.ExecutionStatus, rec.ExecutionReason, rec.ExecutionRecordedAt = model.ExecRanWithoutApproval, nullText(reason), model.F64(now)
		out = rec
		d := map[string]any{"from": string(model.ExecNotStarted), "to": string(model.ExecRanWithoutApproval), "status": string(before)}
		if untaken != nil {
			d["approval"] = "never taken"
			if auditBroken != "" {
				d["approval"] = "not known to be taken: " + auditBroken
			}
		}
		if reason != "" {
			d["reason"] = reason
		}
		return append(entries, auditEntry{id: id, event: EventExecution, outcome: OutcomeOK, reason: string(model.ExecRanWithoutApproval), detail: d}), nil
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func formatEpoch(f float64) string {
	return time.Unix(0, int64(f*1e9)).UTC().Format(time.RFC3339)
}

func derefF(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

func nullText(s string) string {
	if s == "" {
		return ""
	}
	return columnText(s)
}

// TakeAnswered records that the waiter of approved proposal id, which has
// no parks row (parking was off for it: its own waiter answers it), lets
// its call through, as asker: an ok take event, so that the approval is
// one allow even before the call's run is reported. Whether it was taken
// before comes from the verified audit log (readParkAudit): taken is
// *TakenError naming the first taker (the caller's same-call exemption
// decides whether that was this very call), events that do not verify
// are refused (audit_broken). A proposal with a parks row is taken with
// Take; one not approved, or whose execution is recorded, is refused.
func (st *Store) TakeAnswered(ctx context.Context, id string, asker model.Actor) error {
	s := st.bind()
	return s.run(ctx, transition{event: EventTake, id: id, actor: asker, apply: func(ctx context.Context) ([]auditEntry, error) {
		rec, err := s.scanRecord(s.ws.get.QueryRowContext(ctx, id), s.now())
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		refuse := func(code, reason string) ([]auditEntry, error) {
			return nil, &RefusedError{ID: id, Code: code, Reason: reason, Verb: "taken"}
		}
		p, err := s.parkRow(ctx, id)
		if err != nil {
			return nil, err
		}
		pa, err := readParkAudit(ctx, s.w, id)
		if err != nil {
			return nil, err
		}
		if err := pa.takenness(id, p); err != nil {
			return nil, err
		}
		switch {
		case p != nil:
			return refuse(RefusedNotApproved, "it has a parks row: its approval is taken as a parked one")
		case rec.Status != model.StatusConsumed:
			return refuse(RefusedNotApproved, "it is "+string(rec.EffectiveStatus)+", not approved")
		case rec.ExecutionStatus != model.ExecNotStarted:
			return refuse(RefusedNotApproved, "its execution is recorded already ("+string(rec.ExecutionStatus)+")")
		}
		return []auditEntry{{id: id, event: EventTake, outcome: OutcomeOK, detail: map[string]any{
			"own_waiter":     true,
			"payload_sha256": rec.PayloadSHA256,
			"command_sha256": sha256Hex([]byte(rec.Command)),
		}}}, nil
	}})
}
