// Package notify pages operators about proposals that wait: a page when a
// proposal a route matches opens, escalation steps while it stays open, a
// reminder before expiry, a resolution when it is decided or expires. A
// page says what waits and how to open it; nothing in it can approve.
package notify

import "time"

// The kinds of event a channel is sent.
const (
	KindPage       = "page"
	KindEscalation = "escalation"
	KindReminder   = "reminder"
	KindResolved   = "resolved"
	// KindVote: a proposal the policy asks more than one approver for got
	// a vote and needs another approver: the channels paged so far (or
	// the route's first step) hear who approved and who is still needed.
	// Its step is the number of votes.
	KindVote = "vote"
	// KindRefused: an approved proposal was refused where its command
	// runs because its approval's signatures do not hold (execution
	// reason RefusedReason: missing, forged, copied, or too few): the
	// store held an approval nobody can vouch for. Sent once to the
	// channels paged so far and the route's first step, whatever the
	// proposal's status; it asks nothing.
	KindRefused = "refused"
	// KindRanWithoutApproval: an agent reported running a call whose
	// proposal was not approved (execution ran_without_approval): it
	// stopped waiting for its hook and ran the command under its own
	// rules, or ran it against a deny. Sent once, like KindRefused, to the
	// channels paged so far and the first step of the first route that
	// matches the proposal and sends this kind; it asks nothing.
	KindRanWithoutApproval = "ran_without_approval"
)

// Kinds are every kind of event, as a route's events may name them
// (config.EventKinds).
var Kinds = []string{KindPage, KindEscalation, KindReminder, KindResolved, KindVote, KindRefused, KindRanWithoutApproval}

// RefusedReason is the execution reason that KindRefused pages: the one
// run and the hooks record when an approval's signatures do not hold.
const RefusedReason = "signature_invalid"

// refusedWindow is how far back a notifier looks for refused executions
// and calls run without approval (each is paged once: the deliveries are
// kept by key).
const refusedWindow = 24 * time.Hour

// Event is what one delivery says, already made safe to leave the
// machine: every string from the proposal sanitised (model.Sanitize,
// Line), the command cut (or left out), no secrets.
type Event struct {
	Kind string
	// Step is the index of the route's step (0 for the first page, 1 for
	// the first escalation): people read StepNumber's 1-based count.
	// Reminders and resolutions carry 0; a vote, the number of votes.
	Step       int
	ApprovalID string
	// Risk is the effective risk level (low, medium, high, unknown).
	Risk       string
	SessionKey string
	Requester  string
	CreatedAt  time.Time
	// ExpiresAt is zero when the proposal never expires.
	ExpiresAt time.Time
	// Command is the command, sanitised and cut; "" with CommandOmitted
	// when the channel leaves it out.
	Command        string
	CommandOmitted bool
	// OpenHint is how to open it, {id} replaced ("" when not configured).
	OpenHint string
	// Outcome and Actor, for a resolution: approved, denied or expired,
	// and who decided ("" for an expiry).
	Outcome string
	Actor   string
	// Signers, for an approved or denied resolution, are the principals
	// whose signatures over that decision verified against the trust file
	// (never a signature or a statement); Unsigned: signatures are
	// required and none verified.
	Signers  []string
	Unsigned bool
	// Approvals, Voters and Needed say where a proposal stands against the
	// policy ("1 of 2 approvals", who voted, "one more approver from
	// dba"): empty when no rule asks for more than one approver.
	Approvals string
	Voters    []string
	Needed    string
	// ParkState and Park, for a proposal whose agent stopped waiting
	// (approvals.ParkStateOf, approvals.ParkWords): "parked", "reserved"
	// (its hook was killed), "window_over", and the words that say what an
	// approval does now and until when ("the agent stopped waiting at 03:12
	// UTC (hook timeout); approving lets this exact call through when it
	// is asked again, until 04:12 UTC"). Empty otherwise.
	ParkState string
	Park      string
	// At is when the event was made.
	At time.Time
}

// TimeLeft is the time until expiry at now (0 and false when it never
// expires).
func (e Event) TimeLeft(now time.Time) (time.Duration, bool) {
	if e.ExpiresAt.IsZero() {
		return 0, false
	}
	return e.ExpiresAt.Sub(now), true
}
