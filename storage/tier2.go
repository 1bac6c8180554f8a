package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Hermes' tier-2 text confirm. A proposal with requires_text_confirm is
// approved only by its phrase, VERB TARGET NONCE, never by its id; wrong
// phrases are counted, and at the limit the proposal is blocked and its
// (verb, target) locked out for a while. approve-tui does on a tier-2 file
// what Hermes' gateway does, in one transaction per attempt of the one
// decision path, with the same SQL compare-and-sets, so that a race with
// Hermes' own consume has one winner.

// Defaults of the tier-2 gate.
const (
	DefaultPhraseLimit = 3
	DefaultLockout     = 15 * time.Minute
)

// Audit event and refusal codes of the tier-2 gate.
const (
	EventLockout = "lockout" // a lockout cleared by an operator

	RefusedPhraseMismatch = "phrase_mismatch"
	RefusedPhraseLimit    = "invalid_confirm_limit"
	RefusedLockedOut      = "locked_out"
	RefusedNoTextConfirm  = "no_text_confirm"
	RefusedNotTier2File   = "not_tier2_file"
)

// PhraseOptions tune ConsumePhrase.
type PhraseOptions struct {
	// Limit is the number of wrong phrases that blocks the proposal
	// (DefaultPhraseLimit when not positive).
	Limit int
	// Lockout is how long (verb, target) stays locked after a block
	// (DefaultLockout when not positive). An active lockout is never
	// shortened.
	Lockout time.Duration
}

// Lockout is one row of gateway_approval_lockouts.
type Lockout struct {
	Verb      string  `json:"verb"`
	Target    string  `json:"target"`
	ExpiresAt float64 `json:"expires_at"`
	Reason    string  `json:"reason"`
	CreatedAt float64 `json:"created_at"`
}

// Tier2 reports whether the file has Hermes' tier-2 columns.
func (st *Store) Tier2() bool { return st.bind().tier2.Load() }

// HermesRevision names the revision of Hermes' approval store the file's
// table has: "tier-2" (text confirm) or "pr-41427" (the first one).
func (st *Store) HermesRevision() string {
	if st.Tier2() {
		return "tier-2"
	}
	return "pr-41427"
}

// ConsumePhrase approves a text-confirm proposal by its typed phrase. In one
// transaction: the proposal must be open, valid, not hardline, its payload
// the one read (readSHA256, when not ""), and its (verb, target) not locked
// out; a pending proposal is armed first (pending_confirm, with an event id
// naming approve-tui and the actor, and the time in milliseconds), as
// Hermes' gateway arms it when it shows the prompt. Then the phrase decides:
// a match consumes it (exactly once, whoever races), a mismatch counts an
// invalid attempt, and the attempt that reaches the limit blocks it
// (terminal_reason invalid_confirm_limit) and locks (verb, target) out.
// Every refusal is audited with its own code, and what it changed (the arm,
// the count, the block) is committed with it.
func (st *Store) ConsumePhrase(ctx context.Context, id, typed, readSHA256 string, o PhraseOptions, actor model.Actor) (*Record, error) {
	s := st.bind()
	if o.Limit <= 0 {
		o.Limit = DefaultPhraseLimit
	}
	if o.Lockout <= 0 {
		o.Lockout = DefaultLockout
	}
	damaged, err := s.damageBeforeApprove(ctx)
	if err != nil {
		return nil, err
	}
	var out *Record
	var voted *VoteRecorded
	err = s.run(ctx, transition{event: EventApprove, id: id, actor: actor, result: voteResult(&voted), apply: func(ctx context.Context) ([]auditEntry, error) {
		voted, out = nil, nil // a transaction run again starts afresh
		rec, _, err := s.approvable(ctx, damaged, id, readSHA256, true)
		if err != nil {
			return nil, err
		}
		// Under trust required the signature decides who approves, before
		// anything is armed or counted.
		signed, err := s.checkSigned(ctx, rec, actor, readSHA256, false)
		if err != nil {
			return nil, err
		}
		actor, sig := actor, actor.Signature // this attempt's: who signed, when verified
		if signed != nil {
			actor, sig = signed.actor, signed.sig
		}
		now := s.now()
		nowE := model.Epoch(now)
		if until, reason, locked, err := s.lockedOut(ctx, rec.Verb, rec.Target, nowE); err != nil {
			return nil, err
		} else if locked {
			return nil, &RefusedError{ID: id, Code: RefusedLockedOut, Reason: fmt.Sprintf(
				"%s %s is locked out until %s (%s): no phrase is taken for it until then",
				model.Sanitize(rec.Verb, model.Line), model.Sanitize(rec.Target, model.Line),
				model.FromEpoch(until).UTC().Format("15:04:05Z"), model.Sanitize(reason, model.Line))}
		}
		var entries []auditEntry
		if rec.Status == model.StatusPending {
			event := columnText("approve-tui:" + actor.String())
			res, err := s.w.ExecContext(ctx, `UPDATE gateway_approvals SET status = 'pending_confirm',
				approval_event_id = ?, approval_event_ts_ms = ?
				WHERE approval_id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?)`,
				event, now.UnixMilli(), id, nowE)
			if err != nil {
				return nil, err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return nil, &NotPendingError{ID: id, Status: model.StatusConsumed}
			}
			rec.Status, rec.ApprovalEventID = model.StatusPendingConfirm, event
		}
		if model.NormalizePhrase(typed) == rec.Phrase() {
			b, verr := s.vote(ctx, rec, actor)
			if verr != nil {
				return nil, verr
			}
			if !b.met {
				if err := s.insertSignature(ctx, id, EventVote, sig); err != nil {
					return nil, err
				}
				voted = &VoteRecorded{ID: id, Quorum: b.q}
				signedDetail(signed, b.entries, EventVote)
				return append(entries, b.entries...), nil
			}
			if err := s.insertSignature(ctx, id, EventApprove, sig); err != nil {
				return nil, err
			}
			entries = append(entries, b.entries...)
			var at float64
			by := columnText(actor.String())
			if b.by != "" {
				by = columnText(b.by)
			}
			err := s.w.QueryRowContext(ctx, `UPDATE gateway_approvals SET status = 'consumed', consumed_at = ?, consumed_by = ?
				WHERE approval_id = ? AND status = 'pending_confirm' AND (expires_at IS NULL OR expires_at > ?)
				RETURNING consumed_at`, nowE, by, id, nowE).Scan(&at)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, &NotPendingError{ID: id, Status: model.StatusConsumed}
			}
			if err != nil {
				return nil, err
			}
			if err := s.leaveRankEntry(ctx, id); err != nil {
				return nil, err
			}
			if _, err := s.endVotes(ctx, id, VoteConsumed); err != nil {
				return nil, err
			}
			rec.Status, rec.EffectiveStatus, rec.ConsumedAt, rec.ConsumedBy = model.StatusConsumed, model.StatusConsumed, model.F64(at), by
			out = rec
			d := map[string]any{
				"risk":           string(rec.EffectiveRisk),
				"text_confirm":   true,
				"payload_sha256": rec.PayloadSHA256,
			}
			b.quorumDetail(d)
			signed.detail(d)
			return append(entries, auditEntry{id: id, event: EventApprove, outcome: OutcomeOK, detail: d}), nil
		}
		var n int
		err = s.w.QueryRowContext(ctx, `UPDATE gateway_approvals SET invalid_attempts = invalid_attempts + 1
			WHERE approval_id = ? AND status = 'pending_confirm' RETURNING invalid_attempts`, id).Scan(&n)
		if err != nil {
			return nil, err
		}
		if n < o.Limit {
			return nil, &RefusedError{ID: id, Code: RefusedPhraseMismatch, Reason: fmt.Sprintf(
				"the typed phrase does not match (wrong phrase %d of %d: at %d the proposal is blocked and %s %s locked out)",
				n, o.Limit, o.Limit, model.Sanitize(rec.Verb, model.Line), model.Sanitize(rec.Target, model.Line))}
		}
		if _, err := s.w.ExecContext(ctx, `UPDATE gateway_approvals SET status = 'blocked',
			terminal_reason = 'invalid_confirm_limit', consumed_at = ?
			WHERE approval_id = ? AND status IN ('pending', 'pending_confirm')`, nowE, id); err != nil {
			return nil, err
		}
		if err := s.leaveRankEntry(ctx, id); err != nil {
			return nil, err
		}
		if _, err := s.endVotes(ctx, id, VoteBlocked); err != nil {
			return nil, err
		}
		until := nowE + o.Lockout.Seconds()
		if _, err := s.w.ExecContext(ctx, s.eng.schema().lockoutsTable); err != nil {
			return nil, err
		}
		if _, err := s.w.ExecContext(ctx, `INSERT INTO gateway_approval_lockouts (verb, target, expires_at, reason, created_at)
			VALUES (?, ?, ?, 'invalid_confirm_limit', ?)
			ON CONFLICT(verb, target) DO UPDATE SET expires_at = `+s.eng.greatest("excluded.expires_at", "gateway_approval_lockouts.expires_at")+`, reason = excluded.reason`,
			rec.Verb, rec.Target, until, nowE); err != nil {
			return nil, err
		}
		return nil, &RefusedError{ID: id, Code: RefusedPhraseLimit, Reason: fmt.Sprintf(
			"the typed phrase does not match, %d times: the proposal is blocked (invalid_confirm_limit) and %s %s locked out until %s",
			n, model.Sanitize(rec.Verb, model.Line), model.Sanitize(rec.Target, model.Line), model.FromEpoch(until).UTC().Format("15:04:05Z"))}
	}})
	if err != nil {
		return nil, err
	}
	if voted != nil {
		return nil, voted
	}
	return out, nil
}

// lockedOut reads an active lockout of (verb, target) inside the writer's
// transaction.
func (s bound) lockedOut(ctx context.Context, verb, target string, now float64) (until float64, reason string, locked bool, err error) {
	err = s.w.QueryRowContext(ctx, `SELECT expires_at, reason FROM gateway_approval_lockouts
		WHERE verb = ? AND target = ? AND expires_at > ?`, verb, target, now).Scan(&until, &reason)
	switch {
	case errors.Is(err, sql.ErrNoRows), isNoTable(err):
		return 0, "", false, nil
	case err != nil:
		return 0, "", false, err
	}
	return until, reason, true, nil
}

// Lockouts lists the active (verb, target) lockouts, soonest to end first.
func (st *Store) Lockouts(ctx context.Context) ([]Lockout, error) {
	s := st.bind()
	rows, err := s.rdb.QueryContext(ctx, `SELECT verb, target, expires_at, reason, created_at
		FROM gateway_approval_lockouts WHERE expires_at > ? ORDER BY expires_at, verb, target`, model.Epoch(s.now()))
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify("lockouts", err)
	}
	defer rows.Close()
	var out []Lockout
	for rows.Next() {
		var l Lockout
		if err := rows.Scan(&l.Verb, &l.Target, &l.ExpiresAt, &l.Reason, &l.CreatedAt); err != nil {
			return nil, s.classify("lockouts", err)
		}
		out = append(out, l)
	}
	return out, s.classify("lockouts", rows.Err())
}

// ClearLockout removes the lockout of (verb, target), through the decision
// path: audited, refused for a watcher. ErrNotFound when there is none.
func (st *Store) ClearLockout(ctx context.Context, verb, target string, actor model.Actor) error {
	s := st.bind()
	return s.run(ctx, transition{event: EventLockout, id: verb + " " + target, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		res, err := s.w.ExecContext(ctx, `DELETE FROM gateway_approval_lockouts WHERE verb = ? AND target = ?`, verb, target)
		if isNoTable(err) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, ErrNotFound
		}
		return []auditEntry{{id: verb + " " + target, event: EventLockout, outcome: OutcomeOK,
			reason: "cleared", detail: map[string]any{"verb": verb, "target": target}}}, nil
	}})
}

// noticeTier2Locked: Hermes may upgrade a file to the tier-2 revision while
// approve-tui has it open (its ALTER TABLEs are commits like any other).
// Called with the writer mutex held after another process's commit, it
// looks at the table's columns and, when they are there now, reads and
// writes the file as tier-2 from then on: the writer statements that differ
// are made again (each prepared at its first use). On SQLite the columns
// are read only when the schema changed since the last look (its
// schema_version, a read of the header): most commits change none.
func (s bound) noticeTier2Locked(ctx context.Context) {
	schema, known := s.eng.schemaMark(ctx, s.w)
	if known && schema == s.schemaSeen {
		return
	}
	cols, err := s.eng.tableColumns(ctx, s.w, "gateway_approvals")
	if err != nil {
		return
	}
	if known {
		s.schemaSeen = schema
	}
	for _, c := range tier2Columns {
		if !cols[c] {
			return
		}
	}
	fresh := &writerStmts{}
	p := &preparer{e: s.eng, c: s.w, ws: fresh}
	p.revision(selectColumns(false, true), true)
	s.ws.get.Close()
	s.ws.get, s.ws.deny, s.ws.expireArmed = fresh.get, fresh.deny, fresh.expireArmed
	s.ws.all = append(s.ws.all, fresh.all...)
	s.tier2.Store(true)
}
