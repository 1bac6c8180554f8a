package tui

import (
	"errors"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Event is one thing the console did and how it ended. Options.OnEvent
// receives them synchronously from Update (the headless driver writes them
// to its event log); the interactive console leaves the hook nil.
//
// Kinds and outcomes:
//
//	loaded   -        the first load of the pending list (Detail: "15 pending")
//	ranking  -        the list is provisional (soonest expiry first) while
//	                  the store ranks a large file's pending rows
//	                  (Detail: "100000 pending to rank")
//	ranked   -        that ranking is done: most urgent first again
//	load     error    a load failed (Detail: what the screen says)
//	prompt   opened   Detail: approve or deny
//	prompt   closed   Detail: cancelled, decided, decided elsewhere, expired
//	approve  approved | voted | refused | lost | expired | not_found | unavailable | error
//	         (voted: recorded as a vote toward the policy's quorum; the
//	         proposal stays pending)
//	deny     denied   | refused | lost | expired | not_found | unavailable | error
//	paste    refused  pasted text in the approve prompt
//	sign     asked | touch | signed | identity | unavailable: where the
//	         store requires signatures, a decision's signature asked for,
//	         a security key waiting for its touch, the signature made
//	         (Detail: "alice SHA256:ab12…"); at start, the key the console
//	         signs with, or why it cannot sign (Detail: the reason). An
//	         approve that cannot be signed is "approve refused".
//	gone     approved | denied | expired | unknown: the selected proposal
//	         left the list by another hand (no prompt of ours was open on it)
//	open     opened | approved | denied | expired | blocked | unknown |
//	         not_found | not_listed | error: the proposal of Options.Open
//	         shown whole, or why not (Detail: the note)
//
// "lost" is a lost race: another actor decided the proposal first, either
// noticed live while our prompt was open or reported by the store at enter.
// Detail is the note the operator sees (agent text already made inert).
type Event struct {
	Kind    string
	ID      string
	Outcome string
	Detail  string
	At      time.Time
}

// Event outcomes shared by several kinds.
const (
	OutcomeRefused = "refused"
	OutcomeLost    = "lost"
	// OutcomeVoted: an approve recorded as a vote that does not complete
	// the quorum (storage.VoteRecorded).
	OutcomeVoted = "voted"
)

func (m *Model) emit(kind, id, outcome, detail string) {
	if m.opt.OnEvent != nil {
		m.opt.OnEvent(Event{Kind: kind, ID: id, Outcome: outcome, Detail: detail, At: m.opt.Now()})
	}
}

// decisionOutcome names how an approve or deny ended.
func decisionOutcome(msg decidedMsg) string {
	var (
		np *storage.NotPendingError
		un *storage.UnavailableError
		vr *storage.VoteRecorded
	)
	switch {
	case errors.As(msg.err, &vr):
		return OutcomeVoted
	case msg.err == nil && msg.action == "deny":
		return "denied"
	case msg.err == nil:
		return "approved"
	case errors.Is(msg.err, storage.ErrNotFound):
		return "not_found"
	case errors.As(msg.err, &np) && np.Status == model.StatusExpired:
		return "expired"
	case errors.As(msg.err, &np):
		return OutcomeLost
	case errors.Is(msg.err, storage.ErrConfirmMismatch):
		return OutcomeRefused
	case errors.As(msg.err, &un):
		return "unavailable"
	}
	var (
		ro *storage.ReadOnlyError
		co *storage.CorruptError
		rf *storage.RefusedError
	)
	if errors.As(msg.err, &ro) || errors.As(msg.err, &co) || errors.As(msg.err, &rf) {
		return OutcomeRefused
	}
	return "error"
}

// goneOutcome names how a proposal left the pending list elsewhere.
func goneOutcome(rec *storage.Record) string {
	if rec == nil {
		return "unknown"
	}
	switch rec.EffectiveStatus {
	case model.StatusConsumed, model.StatusDenied, model.StatusExpired:
		return rec.EffectiveStatus.Decision()
	}
	return "unknown"
}

func (k promptKind) String() string {
	if k == promptApprove {
		return "approve"
	}
	return "deny"
}
