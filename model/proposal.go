package model

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// RiskLevel is the pinned or computed risk of a command.
type RiskLevel string

// The risk levels of the data contract. RiskUnknown is never valid in a
// stored proposal; it is what a reader reports for a value it does not
// understand, and it ranks above high so that it fails closed.
const (
	RiskLow     RiskLevel = "low"
	RiskMedium  RiskLevel = "medium"
	RiskHigh    RiskLevel = "high"
	RiskUnknown RiskLevel = "unknown"
	// RiskTier2 (Hermes' tier-2 revision): approved only by typing the
	// phrase VERB TARGET NONCE; ranks above high and is never lowered.
	RiskTier2 RiskLevel = "tier2_critical"
)

// Rank orders risk levels: low < medium < high < tier2_critical < unknown.
// Any value that is not a valid level ranks as unknown.
func (r RiskLevel) Rank() int {
	switch r {
	case RiskLow:
		return 1
	case RiskMedium:
		return 2
	case RiskHigh:
		return 3
	case RiskTier2:
		return 4
	default:
		return 5
	}
}

// Valid reports whether r is one of low, medium, high, tier2_critical.
func (r RiskLevel) Valid() bool {
	return r == RiskLow || r == RiskMedium || r == RiskHigh || r == RiskTier2
}

// Normalized returns r if it is valid and RiskUnknown otherwise.
func (r RiskLevel) Normalized() RiskLevel {
	if r.Valid() {
		return r
	}
	return RiskUnknown
}

// Short is the fixed-width marker that reads without colour.
func (r RiskLevel) Short() string {
	switch r {
	case RiskLow:
		return "LOW"
	case RiskMedium:
		return "MED"
	case RiskHigh:
		return "HIGH"
	case RiskTier2:
		return "CRIT"
	default:
		return "UNKN"
	}
}

// RiskFromRank is the inverse of Rank.
func RiskFromRank(rank int) RiskLevel {
	switch rank {
	case 1:
		return RiskLow
	case 2:
		return RiskMedium
	case 3:
		return RiskHigh
	case 4:
		return RiskTier2
	default:
		return RiskUnknown
	}
}

// MaxRisk returns the higher-ranked of a and b (unknown wins over all).
func MaxRisk(a, b RiskLevel) RiskLevel {
	if b.Normalized().Rank() > a.Normalized().Rank() {
		return b.Normalized()
	}
	return a.Normalized()
}

// Status is the lifecycle state column of gateway_approvals.
type Status string

// Statuses of the data contract.
const (
	StatusPending  Status = "pending"
	StatusConsumed Status = "consumed"
	StatusDenied   Status = "denied"
	StatusExpired  Status = "expired"
	// Hermes' tier-2 revision: a text-confirm proposal whose prompt was
	// shown (armed) and is still open; and a terminal refusal (too many
	// wrong phrases, a lockout, clock skew).
	StatusPendingConfirm Status = "pending_confirm"
	StatusBlocked        Status = "blocked"
)

// Valid reports whether s is one of the statuses of either revision.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusConsumed, StatusDenied, StatusExpired, StatusPendingConfirm, StatusBlocked:
		return true
	}
	return false
}

// Open reports whether a proposal in status s can still be decided:
// pending, or armed for its text confirm.
func (s Status) Open() bool { return s == StatusPending || s == StatusPendingConfirm }

// Decision is the status in an operator's words: a consumed proposal was
// "approved"; the others read as they are.
func (s Status) Decision() string {
	if s == StatusConsumed {
		return "approved"
	}
	return string(s)
}

// ExecutionStatus records what happened after a consume.
type ExecutionStatus string

// Execution statuses. The first three are Hermes'; the others are
// approve-tui's own, for outcomes Hermes has no word for.
const (
	// ExecNotStarted: nothing has run (the default, and the state of every
	// proposal that was not consumed).
	ExecNotStarted ExecutionStatus = "not_started"
	// ExecExecuted: the command ran; execution_reason carries the exit code
	// ("exit code N", "killed by signal X"), or, for a command Claude Code
	// ran after the hook allowed it, how Claude Code reported its end.
	ExecExecuted ExecutionStatus = "executed"
	// ExecBlockedAfterConsume: approved, then refused by the runtime guard
	// (risk rose) or because the bytes to run differ from the pinned ones.
	ExecBlockedAfterConsume ExecutionStatus = "blocked_after_consume"
	// ExecDispatchFailed (approve-tui): approved, but the command could not be
	// started (binary missing, permission denied, fork failure).
	ExecDispatchFailed ExecutionStatus = "dispatch_failed"
	// ExecStarted (approve-tui): the process was started and its end is not
	// recorded: a runner records it while the command runs (and it stays
	// when the runner died then), and an agent hook records it for a call
	// the agent launched in the background, whose end it never reports
	// (execution_reason says which).
	ExecStarted ExecutionStatus = "started"
	// ExecHandedOff (approve-tui): approved and handed to the agent that
	// runs the command itself (Hermes, through its approval transport),
	// which took the approval and does not report the command's end.
	ExecHandedOff ExecutionStatus = "handed_off"
	// ExecRanWithoutApproval (approve-tui): the agent reported the call as
	// run (a post-tool hook, or Hermes' post hook tied to this proposal)
	// while the proposal was not approved: the agent stopped waiting and
	// ran it under its own rules. The proposal is closed (expired, never
	// approvable again) and execution_reason says what the agent reported.
	ExecRanWithoutApproval ExecutionStatus = "ran_without_approval"
)

// Valid reports whether e is a known execution status.
func (e ExecutionStatus) Valid() bool {
	switch e {
	case ExecNotStarted, ExecExecuted, ExecBlockedAfterConsume, ExecDispatchFailed, ExecStarted, ExecHandedOff,
		ExecRanWithoutApproval:
		return true
	}
	return false
}

// Policy decisions and default decisions of the data contract.
const (
	PolicyAllow         = "allow"
	PolicyNeedsApproval = "needs_approval"
	PolicyDeny          = "deny"

	DefaultAllow = "allow"
	DefaultDeny  = "deny"
)

// Proposal is one row of gateway_approvals with its payload decoded: every
// key of SPEC §2. Lifecycle fields come from the row's columns when the
// proposal was read from a store.
type Proposal struct {
	ApprovalID               string
	CreatedAt                float64
	ExpiresAt                *float64
	Status                   Status
	ConsumedAt               *float64
	ConsumedBy               string
	SessionKey               string
	Requester                string
	Command                  string
	Cwd                      string
	Backend                  string
	EnvOverrides             map[string]string
	RiskLevel                RiskLevel
	RiskReason               string
	PolicyDecision           string
	PolicyVersion            string
	RequiresExplicitApproval bool
	DefaultDecision          string
	DiffText                 string
	DiffSummary              string
	DisplayText              string
	ExecutionStatus          ExecutionStatus
	ExecutionReason          string
	ExecutionRecordedAt      *float64

	// RequesterContext is what the requester said about the command (an
	// agent's description of its tool call, --reason): its words, shown
	// apart from the risk reason and labelled as its own, never part of
	// the verdict. approve-tui's own payload key, approve_tui_context
	// (Hermes ignores keys it does not know).
	RequesterContext string

	// Origin is the OS user and host of the process that submitted the
	// proposal (approve-tui's run and hooks: "alice@laptop"; "" for other
	// writers): the person whose agent asks, who may not approve it where
	// the policy asks for more than one approver. approve-tui's own payload
	// key, approve_tui_origin.
	Origin string

	// Impact is the impact preview computed at submit (nil: none): payload
	// key approve_tui_impact.
	Impact *Impact

	// Hermes is what Hermes' approval transport said of the request, for
	// a proposal `hook hermes` made (nil otherwise): payload key
	// approve_tui_hermes.
	Hermes *HermesRequest

	// Tier-2 text confirm (Hermes' later revision), pinned at submit: the
	// proposal is approved only by typing VERB TARGET NONCE (Phrase).
	RequiresTextConfirm bool
	Nonce, Verb, Target string

	// Tier-2 columns (empty on files of the first revision): why a
	// proposal ended other than by approval, the event that armed its
	// text confirm, and the wrong phrases typed so far.
	TerminalReason    string
	ApprovalEventID   string
	ApprovalEventTsMs *int64
	InvalidAttempts   int
}

// Phrase is what approves a text-confirm proposal: VERB TARGET NONCE, verb
// and target in capitals, as Hermes shows it.
func (p *Proposal) Phrase() string {
	return strings.ToUpper(p.Verb) + " " + strings.ToUpper(p.Target) + " " + p.Nonce
}

// NormalizePhrase is typed text as it is compared with Phrase: trimmed,
// runs of spaces as one, letters in capitals.
func NormalizePhrase(typed string) string {
	return strings.ToUpper(strings.Join(strings.Fields(typed), " "))
}

// EffectiveStatus is the status that holds for every purpose at time now: a
// pending row whose expiry has passed is expired whether or not anything has
// rewritten its status yet.
func (p *Proposal) EffectiveStatus(now time.Time) Status {
	if p.Status.Open() && p.ExpiresAt != nil && *p.ExpiresAt <= Epoch(now) {
		return StatusExpired
	}
	return p.Status
}

// TimeLeft is the time until expiry at now (negative once expired), and false
// when the proposal never expires.
func (p *Proposal) TimeLeft(now time.Time) (time.Duration, bool) {
	if p.ExpiresAt == nil {
		return 0, false
	}
	return time.Duration((*p.ExpiresAt - Epoch(now)) * float64(time.Second)), true
}

// Epoch converts t to the REAL seconds since the Unix epoch the table uses.
func Epoch(t time.Time) float64 {
	return float64(t.UnixNano()) / 1e9
}

// FromEpoch converts REAL epoch seconds to a time.Time.
func FromEpoch(sec float64) time.Time {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return time.Time{}
	}
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(frac*1e9))
}

// F64 returns a pointer to v, for the optional time fields.
func F64(v float64) *float64 { return &v }

// ValidationError lists every problem found in a proposal.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid proposal: " + e.Problems[0]
	}
	msg := fmt.Sprintf("invalid proposal (%d problems): ", len(e.Problems))
	for i, p := range e.Problems {
		if i > 0 {
			msg += "; "
		}
		msg += p
	}
	return msg
}

// Validate checks the pinned-policy fields of the data contract and reports
// every problem at once (nil when the proposal is valid).
func (p *Proposal) Validate() error {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if p.ApprovalID == "" {
		add("approval_id is empty")
	}
	if !(p.CreatedAt > 0) || math.IsInf(p.CreatedAt, 0) {
		add("created_at must be a positive time, got %v", p.CreatedAt)
	}
	if p.ExpiresAt != nil && (math.IsNaN(*p.ExpiresAt) || math.IsInf(*p.ExpiresAt, 0)) {
		add("expires_at is not a finite time")
	}
	if p.SessionKey == "" {
		add("session_key is empty")
	}
	if p.Command == "" {
		add("command is empty")
	}
	if p.RiskReason == "" {
		add("risk_reason is empty")
	}
	if !p.RiskLevel.Valid() {
		add("risk_level %q is not one of low, medium, high, tier2_critical", string(p.RiskLevel))
	}
	switch p.PolicyDecision {
	case PolicyAllow, PolicyNeedsApproval, PolicyDeny:
	default:
		add("policy_decision %q is not one of allow, needs_approval, deny", p.PolicyDecision)
	}
	switch p.DefaultDecision {
	case DefaultAllow, DefaultDeny:
	default:
		add("default_decision %q is not one of allow, deny", p.DefaultDecision)
	}
	if (p.RiskLevel == RiskHigh || p.RiskLevel == RiskTier2) && p.DefaultDecision != DefaultDeny {
		add("%s risk requires default_decision deny, got %q", p.RiskLevel, p.DefaultDecision)
	}
	// Tier-2, as Hermes validates it: tier2_critical implies a text
	// confirm, and a text confirm needs its pinned phrase parts.
	if p.RiskLevel == RiskTier2 && !p.RequiresTextConfirm {
		add("tier2_critical requires requires_text_confirm")
	}
	if p.RequiresTextConfirm {
		if len(p.Nonce) != 4 || strings.Trim(p.Nonce, "0123456789") != "" {
			add("nonce must be 4 digits, got %q", Sanitize(p.Nonce, Line))
		}
		if p.Verb == "" {
			add("requires_text_confirm needs a verb")
		}
		if p.Target == "" {
			add("requires_text_confirm needs a target")
		}
	}
	if p.Status != "" && !p.Status.Valid() {
		add("status %q is not one of pending, pending_confirm, consumed, denied, expired, blocked", string(p.Status))
	}
	if p.ExecutionStatus != "" && !p.ExecutionStatus.Valid() {
		add("execution_status %q is unknown", string(p.ExecutionStatus))
	}
	if len(probs) == 0 {
		return nil
	}
	return &ValidationError{Problems: probs}
}

// UntypableID says why an operator cannot type id unambiguously ("" when
// they can): anything but 1 to 128 printable ASCII characters without
// spaces. Hermes accepts such ids, so such a row is valid, but it is
// deny-only: approving by a typed id needs an id that reads as it types.
func UntypableID(id string) string {
	if len(id) > 128 {
		return "the id is longer than 128 characters"
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c == ' ':
			return "the id holds a space"
		case c < ' ' || c == 0x7f:
			return "the id holds a control character"
		case c >= 0x80:
			return "the id holds non-ASCII characters (look-alikes cannot be told apart when typing)"
		}
	}
	return ""
}
