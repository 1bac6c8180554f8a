package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/risk"
)

// Audit event names.
const (
	EventSubmit    = "submit"
	EventApprove   = "approve"
	EventDeny      = "deny"
	EventExpire    = "expire"
	EventExecution = "execution"
)

// Audit outcomes.
const (
	OutcomeOK      = "ok"
	OutcomeRefused = "refused"
)

// OutcomeFailed is a Decision's outcome when the store could not decide
// (unavailable, locked, lost connection): nothing changed.
const OutcomeFailed = "failed"

// Decision is how one run of the decision path ended, as an observer
// (WithDecisionObserver) is told it.
type Decision struct {
	Event   string      // the transition: EventApprove, EventDeny, ...
	ID      string      // the approval id as given: hostile until sanitised
	Actor   model.Actor // who asked
	Outcome string      // OutcomeOK, OutcomeRefused (audited) or OutcomeFailed
	Reason  string      // the refusal code, as audited ("store_error" when failed); "" when ok
	Err     error       // the refusal or failure; nil when ok
}

type observerKey struct{}

// WithDecisionObserver returns a context under which every run of the
// decision path (Submit, ConsumeRead, ConsumePhrase, Deny, ...) is reported
// to fn once it has ended: decided, refused, or failed. fn is an observer
// (a server's log), never a gate: it is told after the transaction
// committed or rolled back, on the caller's goroutine, and cannot change
// the outcome.
func WithDecisionObserver(ctx context.Context, fn func(Decision)) context.Context {
	return context.WithValue(ctx, observerKey{}, fn)
}

// observe tells ctx's observer, if any, how t ended.
func observe(ctx context.Context, t transition, err error) {
	fn, _ := ctx.Value(observerKey{}).(func(Decision))
	if fn == nil {
		return
	}
	if err == nil && t.result != nil {
		err = t.result()
	}
	d := Decision{Event: t.event, ID: t.id, Actor: t.actor, Outcome: OutcomeOK, Err: err}
	var vote *VoteRecorded
	switch {
	case err == nil:
	case errors.As(err, &vote):
		d.Event = EventVote // recorded and committed: a decision made
	case isRefusal(err):
		d.Outcome, d.Reason = OutcomeRefused, refusalCode(err)
	default:
		d.Outcome, d.Reason = OutcomeFailed, refusalCode(err)
	}
	fn(d)
}

// auditEntry is one event a transition appends.
type auditEntry struct {
	id      string
	event   string
	outcome string
	reason  string
	detail  map[string]any
}

// transition is the one shape every state change takes. apply runs inside
// BEGIN IMMEDIATE on the writer connection; it returns the events to append
// on success, or a refusal (one of this package's typed errors), which is
// audited in the same transaction and returned to the caller. Any other
// error rolls everything back.
type transition struct {
	event string
	id    string
	actor model.Actor
	apply func(ctx context.Context) ([]auditEntry, error)
	// result, when set, is what the caller returns after a committed
	// transition (a *VoteRecorded): observers are told that, not "ok".
	result func() error
}

// isRefusal reports whether err is a decision the store made (audited,
// committed) rather than a failure to make one.
func isRefusal(err error) bool {
	var (
		np *NotPendingError
		ro *ReadOnlyError
		co *CorruptError
		du *DuplicateError
		va *model.ValidationError
		it *InvalidTransitionError
		dm *DamagedError
		rf *RefusedError
		aa *AlreadyAnsweredError
		pa *PolicyAsksError
		tk *TakenError
	)
	return errors.As(err, &tk) || errors.As(err, &aa) || errors.As(err, &pa) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrConfirmMismatch) ||
		errors.As(err, &np) || errors.As(err, &ro) || errors.As(err, &co) ||
		errors.As(err, &du) || errors.As(err, &va) || errors.As(err, &it) || errors.As(err, &dm) || errors.As(err, &rf)
}

// run executes t: the single decision path of the whole project.
func (s bound) run(ctx context.Context, t transition) (err error) {
	defer func() { observe(ctx, t, err) }()
	if verr := t.actor.Validate(); verr != nil {
		return fmt.Errorf("%s %s: %w", t.event, t.id, verr)
	}
	if s.roReason() != "" {
		// Nothing can be written, not even the refusal.
		return &ReadOnlyError{Reason: s.roReason()}
	}
	err = s.runLocked(ctx, t)
	if errors.Is(err, ErrMoved) {
		// The file at the path is another one now: nothing was written to
		// the old one, and nothing is recorded in the new one, which may not
		// even hold this proposal. Later calls use the file at the path.
		var un *UnavailableError
		if errors.As(err, &un) {
			if _, rerr := s.Store.reopen(context.WithoutCancel(ctx)); rerr == nil {
				un.Reason += "; approve-tui now reads the file at the path: look again before deciding"
			} else {
				un.Reason += "; the file now at the path is not open yet (" + rerr.Error() + ")"
			}
		}
	}
	return err
}

// runLocked is run's transaction, under the writer mutex.
func (s bound) runLocked(ctx context.Context, t transition) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var refusal error
	err := s.inWriteTxLocked(ctx, t.event, func(ctx context.Context) error {
		var entries []auditEntry
		if t.actor.ReadOnly {
			refusal = &ReadOnlyError{Reason: t.actor.String() + " is a watcher (read-only) and cannot " + t.event, Watcher: true}
		} else {
			var err error
			entries, err = t.apply(ctx)
			if err != nil {
				if !isRefusal(err) {
					return err
				}
				refusal = err
			}
		}
		if refusal != nil {
			entries = []auditEntry{{
				id: t.id, event: t.event, outcome: OutcomeRefused, reason: refusalCode(refusal),
				detail: map[string]any{"error": refusal.Error()},
			}}
		}
		if err := s.appendAudits(ctx, entries, t.actor); err != nil {
			return fmt.Errorf("append audit: %w", err)
		}
		return nil
	})
	if errors.Is(err, ErrMoved) {
		return err
	}
	if err != nil {
		var un *UnavailableError
		if errors.As(err, &un) && !s.isLockErr(un) {
			// Record that the attempt failed, if the store lets us: a fresh
			// transaction with only the refusal. Skipped for lock timeouts,
			// which would only wait again.
			_ = s.inWriteTxLocked(context.Background(), t.event, func(ctx context.Context) error {
				return s.appendAudit(ctx, auditEntry{id: t.id, event: t.event, outcome: OutcomeRefused,
					reason: "store_error", detail: map[string]any{"error": err.Error()}}, t.actor)
			})
		}
		return err
	}
	return refusal
}

func (s bound) isLockErr(un *UnavailableError) bool {
	return un.Err != nil && s.eng.lockTimeout(un.Err)
}

// Submit stores a new pending proposal. It validates first (reporting every
// problem), refuses a duplicate id, and writes payload_json once with the
// full key set.
func (st *Store) Submit(ctx context.Context, p *model.Proposal, actor model.Actor) error {
	return st.submit(ctx, p, time.Time{}, actor)
}

// SubmitReserved is Submit with a reservation, written in the same
// transaction: a parks row whose stopped_at is NULL, saying that the
// proposal's waiter may park it until min(until, its expiry) when it stops
// waiting. A waiter killed before it could park leaves that row, so that
// the same call asked again finds the proposal (FindParked, once the
// waiter is gone) and any allow of it goes through Take.
func (st *Store) SubmitReserved(ctx context.Context, p *model.Proposal, until time.Time, actor model.Actor) error {
	if until.IsZero() {
		return &model.ValidationError{Problems: []string{"a reservation needs the end of its park window"}}
	}
	return st.submit(ctx, p, until, actor)
}

func (st *Store) submit(ctx context.Context, p *model.Proposal, reserve time.Time, actor model.Actor) error {
	s := st.bind()
	if p.Status == "" {
		p.Status = model.StatusPending
	}
	if p.ExecutionStatus == "" {
		p.ExecutionStatus = model.ExecNotStarted
	}
	return s.run(ctx, transition{event: EventSubmit, id: p.ApprovalID, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		if err := p.Validate(); err != nil {
			return nil, err
		}
		if p.Status != model.StatusPending || p.ConsumedAt != nil || p.ConsumedBy != "" || p.ExecutionStatus != model.ExecNotStarted {
			return nil, &model.ValidationError{Problems: []string{"a new proposal must be pending, unconsumed and not started"}}
		}
		var exists int
		err := s.ws.exists.QueryRowContext(ctx, p.ApprovalID).Scan(&exists)
		if err == nil {
			return nil, &DuplicateError{ID: p.ApprovalID}
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		payload := model.EncodePayload(p)
		res, err := s.ws.insert.ExecContext(ctx, p.ApprovalID, p.CreatedAt, nullFloat(p.ExpiresAt), string(payload))
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			// Another writer took the id after the check above (PostgreSQL
			// does not serialise the whole database).
			return nil, &DuplicateError{ID: p.ApprovalID}
		}
		eff := effectiveRisk(s.judge, p.RiskLevel, p.Cwd, p.Command)
		if _, err := s.ws.rankPut.ExecContext(ctx, p.ApprovalID, eff.Rank(), nullFloat(p.ExpiresAt)); err != nil {
			return nil, err
		}
		var reserved float64
		if !reserve.IsZero() {
			reserved = model.Epoch(reserve)
			if p.ExpiresAt != nil && *p.ExpiresAt < reserved {
				reserved = *p.ExpiresAt
			}
			if _, err := s.w.ExecContext(ctx, `INSERT INTO approve_tui_parks (approval_id, match_sha256, stopped_at, park_until, why)
				VALUES (?, ?, NULL, ?, '')`, p.ApprovalID, model.MatchOf(p).Key(), reserved); err != nil {
				return nil, err
			}
		}
		d := map[string]any{
			"risk":           string(p.RiskLevel),
			"session":        p.SessionKey,
			"payload_sha256": sha256Hex(payload),
		}
		// What pins the quorum (readPins): the policy version in force now,
		// which no later version can lower, and who submitted it, as the
		// actor's structured person (never the origin's text).
		var version sql.NullInt64
		if s.trusted() != nil {
			// Under trust required, the signed version in force.
			pv, err := s.readPolicyInForce(ctx, s.w)
			var rf *RefusedError
			if err != nil && !errors.As(err, &rf) {
				return nil, err
			}
			if pv != nil {
				version = sql.NullInt64{Int64: pv.Version, Valid: true}
			}
		} else if err := s.w.QueryRowContext(ctx, `SELECT MAX(version) FROM approve_tui_policy`).Scan(&version); err != nil {
			return nil, err
		}
		if version.Valid {
			d["policy_version"] = version.Int64
		}
		if who := policy.VoterOf(actor); who.Person != "" {
			d["submitter_person"] = who.Person
		}
		if reserved != 0 {
			d["reserved_until"] = reserved
		}
		return []auditEntry{{id: p.ApprovalID, event: EventSubmit, outcome: OutcomeOK, detail: d}}, nil
	}})
}

// Consume approves proposal id once, without naming the content read: for
// callers that showed nothing (a script that did not pass the payload's
// hash). See ConsumeRead.
func (st *Store) Consume(ctx context.Context, id, typed string, actor model.Actor) (*Record, error) {
	return st.ConsumeRead(ctx, id, typed, "", actor)
}

// ConsumeRead approves proposal id once. It succeeds only when typed equals
// id exactly (invariant 2), the row is pending and not expired, its payload
// is valid, its command matches no hardline rule, the id is at least
// MinApprovableID long, the actor may write and, when readSHA256 is not "",
// the row's payload_json is still the one whose SHA-256 it is (what the
// approver read: invariant 8). Exactly one of any number of racing consumers
// wins (invariant 1); the others get *NotPendingError naming the winner.
//
// Where the policy in force asks for more than one approver, an approval
// that does not complete the quorum is recorded as a vote and returned as
// *VoteRecorded (the row stays pending); the one that completes it
// consumes, naming every approver in consumed_by.
func (st *Store) ConsumeRead(ctx context.Context, id, typed, readSHA256 string, actor model.Actor) (*Record, error) {
	s := st.bind()
	var out *Record
	var voted *VoteRecorded
	damaged, err := s.damageBeforeApprove(ctx)
	if err != nil {
		return nil, err
	}
	err = s.run(ctx, transition{event: EventApprove, id: id, actor: actor, result: voteResult(&voted), apply: func(ctx context.Context) ([]auditEntry, error) {
		voted, out = nil, nil // a transaction run again starts afresh
		rec, facts, err := s.approvable(ctx, damaged, id, readSHA256, false)
		if err != nil {
			return nil, err
		}
		if typed != id {
			return nil, ErrConfirmMismatch
		}
		// Under trust required the signature decides who approves.
		signed, err := s.checkSigned(ctx, rec, actor, readSHA256, false)
		if err != nil {
			return nil, err
		}
		who, sig := actor, actor.Signature
		if signed != nil {
			who, sig = signed.actor, signed.sig
		}
		// Where no policy version exists (and trust is off: a signed
		// approval may name a policy, which must then be found), no quorum
		// applies: one approver decides, as the quorum would say.
		b := &ballot{met: true}
		if !facts.quiet || s.trusted() != nil {
			if b, err = s.vote(ctx, rec, who); err != nil {
				return nil, err
			}
		}
		if !b.met {
			if err := s.insertSignature(ctx, id, EventVote, sig); err != nil {
				return nil, err
			}
			voted = &VoteRecorded{ID: id, Quorum: b.q}
			signedDetail(signed, b.entries, EventVote)
			return b.entries, nil
		}
		if err := s.insertSignature(ctx, id, EventApprove, sig); err != nil {
			return nil, err
		}
		if err := s.decideOn(ctx, rec, facts, model.StatusConsumed, who, b.by); err != nil {
			return nil, err
		}
		out = rec
		d := map[string]any{
			"risk":           string(rec.EffectiveRisk),
			"pinned_risk":    string(rec.RiskLevel),
			"command_sha256": sha256Hex([]byte(rec.Command)),
			"payload_sha256": rec.PayloadSHA256,
		}
		if readSHA256 != "" {
			d["read"] = true // the approver named the payload it read
		}
		b.quorumDetail(d)
		signed.detail(d)
		return append(b.entries, auditEntry{id: id, event: EventApprove, outcome: OutcomeOK, detail: d}), nil
	}})
	if err != nil {
		return nil, err
	}
	if voted != nil {
		return nil, voted
	}
	return out, nil
}

// Deny refuses proposal id, with an optional reason kept in the audit log.
// Corrupt rows can be denied: deny stays possible wherever the store can be
// written.
func (st *Store) Deny(ctx context.Context, id string, actor model.Actor, reason string) (*Record, error) {
	s := st.bind()
	var out *Record
	err := s.run(ctx, transition{event: EventDeny, id: id, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		rec, err := s.pendingRow(ctx, id)
		if err != nil {
			return nil, err
		}
		// A signed deny is verified under trust required; an unsigned one
		// stays allowed (a deny never lets anything run).
		signed, err := s.checkSigned(ctx, rec, actor, "", true)
		if err != nil {
			return nil, err
		}
		who, sig := actor, actor.Signature
		if signed != nil {
			who, sig = signed.actor, signed.sig
		}
		if err := s.decide(ctx, rec, model.StatusDenied, who); err != nil {
			return nil, err
		}
		if err := s.insertSignature(ctx, id, EventDeny, sig); err != nil {
			return nil, err
		}
		out = rec
		d := map[string]any{"risk": string(rec.EffectiveRisk)}
		if signed != nil {
			signed.detail(d)
		} else if s.trusted() != nil {
			d["unsigned"] = true
		}
		if vetoed, err := s.endVotes(ctx, id, VoteDenied); err != nil {
			return nil, err
		} else if len(vetoed) > 0 {
			d["vetoed_votes"] = vetoed // a deny vetoes, whatever votes exist
		}
		if reason != "" {
			d["reason"] = reason
		}
		if rec.Corrupt != "" {
			d["corrupt"] = rec.Corrupt
		}
		return []auditEntry{{id: id, event: EventDeny, outcome: OutcomeOK, detail: d}}, nil
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pendingRow reads id inside the write transaction and refuses unless it is
// pending and unexpired.
// damageBeforeApprove runs the integrity check before an approval, outside
// the write lock: a failure to check stops the approval; a damaged file is
// returned as the refusal to record inside the transition.
func (s bound) damageBeforeApprove(ctx context.Context) (refusal, fail error) {
	damaged := s.refuseDamaged(ctx)
	var dm *DamagedError
	if damaged != nil && !errors.As(damaged, &dm) {
		return nil, damaged
	}
	return damaged, nil
}

// approvable reads proposal id inside an approve transaction and refuses
// what no typed text can approve: a damaged file, a row that is not open,
// a payload other than the one its submit event recorded (tampered),
// corrupt or of unknown risk, a hardline command, a payload other than the
// one read (readSHA256, when not ""), and a proposal of the other gate: a
// tier-2 proposal approved by its id, or an ordinary one by a phrase. The
// id gate also needs an id that can be typed for sure and is long enough;
// the phrase gate a file with Hermes' tier-2 columns.
func (s bound) approvable(ctx context.Context, damaged error, id, readSHA256 string, byPhrase bool) (*Record, rowFacts, error) {
	if damaged != nil {
		return nil, rowFacts{}, damaged
	}
	rec, facts, err := s.openRow(ctx, id)
	if err != nil {
		return nil, rowFacts{}, err
	}
	textConfirm := rec.RequiresTextConfirm || rec.Status == model.StatusPendingConfirm
	refuse := func(code, reason string) (*Record, rowFacts, error) {
		return nil, rowFacts{}, &RefusedError{ID: id, Code: code, Reason: reason}
	}
	changed := readSHA256 != "" && !strings.EqualFold(readSHA256, rec.PayloadSHA256)
	switch {
	case rec.Tampered != "" && changed:
		// What the approver read is not there any more: said first, as for
		// any change; read again, it shows tampered.
		return refuse(RefusedContentChanged, contentChanged)
	case rec.Tampered != "":
		return refuse(RefusedTampered, "tampered: its "+rec.Tampered+
			": it was changed in the store after it was submitted, so it can be denied, never approved (see `approve-tui audit --verify`)")
	case rec.Corrupt != "":
		return nil, rowFacts{}, &CorruptError{ID: id, Reason: rec.Corrupt}
	case !rec.EffectiveRisk.Valid():
		return nil, rowFacts{}, &CorruptError{ID: id, Reason: "risk level is unknown"}
	case textConfirm && !byPhrase:
		return refuse(RefusedTextConfirm, "it is a tier-2 proposal: Hermes approves it only by the typed phrase "+
			model.Sanitize(rec.Phrase(), model.Line)+", never by its id")
	case !textConfirm && byPhrase:
		return refuse(RefusedNoTextConfirm, "it has no text confirm: approve it by its id")
	case byPhrase && !s.tier2.Load():
		return refuse(RefusedNotTier2File, "it asks for a text confirm, but the file lacks Hermes' tier-2 columns to record one: deny it")
	case rec.Hardline:
		return refuse(RefusedHardline, "the command matches a hardline rule ("+risk.Classify(rec.Command).Reason()+
			"): Hermes never runs it, whoever approves; deny it")
	}
	if !byPhrase {
		if why := model.UntypableID(id); why != "" {
			return refuse(RefusedUntypableID, why+": it cannot be typed for sure, so it can only be denied")
		}
		if utf8.RuneCountInString(id) < MinApprovableID {
			return refuse(RefusedShortID, fmt.Sprintf("its id is shorter than %d characters, too easy to type by accident: it can only be denied", MinApprovableID))
		}
	}
	if changed {
		return refuse(RefusedContentChanged, contentChanged)
	}
	if err := s.parkClosed(ctx, rec, facts); err != nil {
		return nil, rowFacts{}, err
	}
	return rec, facts, nil
}

// contentChanged is the reason of RefusedContentChanged.
const contentChanged = "the proposal changed since it was read (its payload is not the one shown): read it again"

func (s bound) pendingRow(ctx context.Context, id string) (*Record, error) {
	rec, _, err := s.openRow(ctx, id)
	return rec, err
}

// rowFacts is what the deciding read (openRow) learns beside the row.
type rowFacts struct {
	// quiet: no policy version exists and no vote on the proposal still
	// counts, when it was read. No quorum can apply and no vote needs
	// ending, so the transaction reads neither the policy nor the votes
	// again; it stays so to the commit, since nothing in a decision's
	// transaction sets a policy, and a vote is cast only under a policy.
	quiet bool
	// parkRead: the read gave parkUntil, the end of the row's park window
	// (NULL: never parked), so that parkClosed need not read it again.
	parkRead  bool
	parkUntil sql.NullFloat64
}

// openRow is pendingRow, with the facts the same statement read.
//
// That statement names every column the policy and vote reads use, so
// that a policy or votes table it cannot read as they would is an error,
// never "no policy". Where the engine can go on after such an error
// (SQLite: a statement that fails to prepare leaves the transaction as it
// was; PostgreSQL aborts the transaction at its first error, so it reads
// apart from the start), the row is read apart and the decision takes
// every step, so that the step that cannot read its table fails (or a rule
// before it refuses) as it would with no shortcut.
func (s bound) openRow(ctx context.Context, id string) (*Record, rowFacts, error) {
	if !s.eng.decidingReadTogether() {
		rec, err := s.openRowApart(ctx, id)
		return rec, rowFacts{}, err
	}
	var r rawRow
	var submitDetail sql.NullString
	var busy bool // a policy version exists, or a vote on it still counts
	var parkUntil sql.NullFloat64
	err := s.ws.getOpen.QueryRowContext(ctx, id).Scan(r.dest(&submitDetail, &busy, &parkUntil)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rowFacts{}, ErrNotFound
	}
	if err != nil && (s.eng.noTable(err) || s.eng.noColumn(err)) {
		rec, err := s.openRowApart(ctx, id)
		return rec, rowFacts{}, err
	}
	if err != nil {
		return nil, rowFacts{}, err
	}
	rec := r.decode(s.now(), &s.decoded, s.judge)
	if !rec.EffectiveStatus.Open() {
		return nil, rowFacts{}, notPending(rec)
	}
	// Its payload against its submit record, read in this transaction: the
	// record's detail came with the row; where it names another payload,
	// the record is read again with its sequence number, which the mark
	// names.
	if sha := submitPayload(submitDetail.String); submitDetail.Valid && sha != "" && !strings.EqualFold(sha, rec.PayloadSHA256) {
		var sub submitRecord
		var detail string
		if err := s.w.QueryRowContext(ctx, selectSubmit, id).Scan(&sub.seq, &detail); err != nil {
			return nil, rowFacts{}, err
		}
		sub.sha256 = submitPayload(detail)
		sub.mark(rec)
	}
	return rec, rowFacts{quiet: !busy, parkRead: true, parkUntil: parkUntil}, nil
}

// openRowApart is openRow in two reads, the row and its submit record,
// learning nothing of the policy and votes (no shortcut: every step runs).
func (s bound) openRowApart(ctx context.Context, id string) (*Record, error) {
	rec, err := s.scanRecord(s.ws.get.QueryRowContext(ctx, id), s.now())
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !rec.EffectiveStatus.Open() {
		return nil, notPending(rec)
	}
	var sub submitRecord
	var detail string
	err = s.w.QueryRowPrepared(ctx, selectSubmit, id).Scan(&sub.seq, &detail)
	if errors.Is(err, sql.ErrNoRows) {
		return rec, nil
	}
	if err != nil {
		return nil, err
	}
	sub.sha256 = submitPayload(detail)
	sub.mark(rec)
	return rec, nil
}

func notPending(rec *Record) *NotPendingError {
	e := &NotPendingError{ID: rec.ApprovalID, Status: rec.EffectiveStatus, By: rec.ConsumedBy, At: rec.ConsumedAt}
	if rec.EffectiveStatus == model.StatusExpired {
		e.At = rec.ExpiresAt
		e.By = ""
	}
	return e
}

// decide is the compare-and-set out of pending: Hermes' own UPDATE.
func (s bound) decide(ctx context.Context, rec *Record, to model.Status, actor model.Actor) error {
	return s.decideBy(ctx, rec, to, actor, "")
}

// decideBy is decide with consumed_by naming approvers ("": the actor).
func (s bound) decideBy(ctx context.Context, rec *Record, to model.Status, actor model.Actor, approvers string) error {
	return s.decideOn(ctx, rec, rowFacts{}, to, actor, approvers)
}

// decideOn is decideBy for a row read with facts: a quiet one has no vote
// to end.
func (s bound) decideOn(ctx context.Context, rec *Record, facts rowFacts, to model.Status, actor model.Actor, approvers string) error {
	now := model.Epoch(s.now())
	var at float64
	by := columnText(actor.String())
	if approvers != "" {
		by = columnText(approvers)
	}
	var err error
	if to == model.StatusDenied && s.ws.deny != nil {
		// Tier-2 file: armed rows too, and terminal_reason, as Hermes.
		err = s.ws.deny.QueryRowContext(ctx, now, by, rec.ApprovalID, now).Scan(&at)
		if err == nil {
			rec.TerminalReason = "denied_explicit"
		}
	} else {
		err = s.ws.decide.QueryRowContext(ctx, string(to), now, by, rec.ApprovalID, now).Scan(&at)
	}
	if errors.Is(err, sql.ErrNoRows) {
		// Not reachable while we hold the write lock, but never assume.
		return &NotPendingError{ID: rec.ApprovalID, Status: model.StatusConsumed}
	}
	if err != nil {
		return err
	}
	rec.Status, rec.EffectiveStatus = to, to
	rec.ConsumedAt, rec.ConsumedBy = model.F64(at), by
	if to == model.StatusConsumed && !facts.quiet {
		if _, err := s.endVotes(ctx, rec.ApprovalID, VoteConsumed); err != nil {
			return err
		}
	}
	return s.leaveRankEntry(ctx, rec.ApprovalID)
}

// ExpireDue marks every pending proposal whose expiry has passed as expired
// and returns their ids. Such rows were already unconsumable; this makes the
// status column say so and audits each one.
func (st *Store) ExpireDue(ctx context.Context, actor model.Actor) ([]string, error) {
	s := st.bind()
	var ids []string
	err := s.run(ctx, transition{event: EventExpire, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		ids = ids[:0]
		var entries []auditEntry
		expire := func(st *wstmt, reason string) error {
			rows, err := st.QueryContext(ctx, model.Epoch(s.now()))
			if err != nil {
				return err
			}
			for rows.Next() {
				var id string
				var exp float64
				if err := rows.Scan(&id, &exp); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, id)
				d := map[string]any{"expires_at": exp}
				if reason != "" {
					d["terminal_reason"] = reason
				}
				entries = append(entries, auditEntry{id: id, event: EventExpire, outcome: OutcomeOK, detail: d})
			}
			if err := rows.Close(); err != nil {
				return err
			}
			return rows.Err()
		}
		if s.ws.expireArmed != nil {
			// Armed rows say they expired waiting for their phrase, as
			// Hermes stamps them.
			if err := expire(s.ws.expireArmed, "expired_no_confirm"); err != nil {
				return nil, err
			}
		}
		if err := expire(s.ws.expireDue, ""); err != nil {
			return nil, err
		}
		// Their rank entries, in one statement: every pending row due by now
		// has just been expired (and an entry left behind by a row another
		// program decided is stale anyway). The named stale entries go
		// first, or the statement would delete some of them uncounted.
		for _, id := range ids {
			if _, err := s.endVotes(ctx, id, VoteExpired); err != nil {
				return nil, err
			}
		}
		if len(ids) > 0 {
			if err := s.flushStale(ctx); err != nil {
				return nil, err
			}
			if _, err := s.ws.rankDelDue.ExecContext(ctx, model.Epoch(s.now())); err != nil {
				return nil, err
			}
		}
		return entries, nil
	}})
	return ids, err
}

// execution outcomes that may follow each current execution status.
var executionNext = map[model.ExecutionStatus][]model.ExecutionStatus{
	model.ExecNotStarted: {model.ExecStarted, model.ExecExecuted, model.ExecBlockedAfterConsume, model.ExecDispatchFailed, model.ExecHandedOff},
	model.ExecStarted:    {model.ExecExecuted},
}

// RecordExecution records what happened to a consumed proposal at the real
// execution boundary: started, executed (reason carries the exit code),
// blocked_after_consume, dispatch_failed, or handed_off (the agent that
// runs the command took the approval). Each outcome is recorded once;
// only started may be followed by executed.
func (st *Store) RecordExecution(ctx context.Context, id string, outcome model.ExecutionStatus, reason string, actor model.Actor) error {
	s := st.bind()
	return s.run(ctx, transition{event: EventExecution, id: id, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		if outcome == model.ExecNotStarted || !outcome.Valid() {
			return nil, &InvalidTransitionError{ID: id, Reason: fmt.Sprintf("%q is not an outcome", outcome)}
		}
		rec, err := s.scanRecord(s.ws.get.QueryRowContext(ctx, id), s.now())
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		if rec.Status != model.StatusConsumed {
			return nil, &InvalidTransitionError{ID: id, Reason: "the proposal is " + string(rec.EffectiveStatus) + ", not consumed"}
		}
		allowed := false
		for _, n := range executionNext[rec.ExecutionStatus] {
			if n == outcome {
				allowed = true
			}
		}
		if !allowed {
			return nil, &InvalidTransitionError{ID: id, Reason: fmt.Sprintf("execution already recorded as %s", rec.ExecutionStatus)}
		}
		res, err := s.ws.execution.ExecContext(ctx, string(outcome), nullString(reason), model.Epoch(s.now()), id, string(rec.ExecutionStatus))
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil, &InvalidTransitionError{ID: id, Reason: "the execution status changed underneath"}
		}
		d := map[string]any{"from": string(rec.ExecutionStatus), "to": string(outcome)}
		if reason != "" {
			d["reason"] = reason
		}
		return []auditEntry{{id: id, event: EventExecution, outcome: OutcomeOK, reason: string(outcome), detail: d}}, nil
	}})
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	var out [64]byte
	hex.Encode(out[:], h[:])
	return string(out[:])
}

func nullFloat(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return columnText(s)
}

// columnText is how approve-tui writes free text (actor names, reasons) into
// TEXT columns that Hermes reads: SQLite would store invalid UTF-8 as is, and
// Python's sqlite3 then cannot fetch the row at all. Such text goes through
// the sanitiser, which makes every odd byte a visible escape.
func columnText(s string) string {
	return model.Sanitize(s, model.Line)
}

// voteResult reports *v, once set, as a transition's result.
func voteResult(v **VoteRecorded) func() error {
	return func() error {
		if *v == nil {
			return nil
		}
		return *v
	}
}
