package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// The Hermes adapter (`approve-tui hook hermes`): the approval transport
// of upstream Hermes (hermes_cli/approval_transport.py). Hermes' plugin
// integrations/hermes/approve-tui/ registers the transport "approve-tui";
// Hermes hands it each approval prompt as an ApprovalRequest (redacted
// command and description, pattern keys, surface cli or gateway,
// timeout_seconds = approvals.timeout, allowed_choices) and waits, up to
// timeout_seconds, for request.respond(choice); a late, malformed or
// disallowed answer is a deny there. The plugin runs this hook with the
// request's fields, the session key its pre_approval_request hook saw for
// the same request_id, and presented_at (when Hermes called it), as one
// JSON object on stdin, and maps the one-line answer
//
//	{"choice":"once","approval_id":"hm-…","reason":"…"}
//	{"choice":"deny","approval_id":"hm-…","reason":"…"}
//
// to request.respond: never "session" or "always" (SPEC §5). After Hermes
// took (or refused) the answer, the plugin's post_approval_response hook
// runs it again with {"event":"post_approval_response","request_id",
// "choice","decided_by"}; that is recorded on the proposal, answered
// {"recorded":true|false,…}.
//
// The proposal expires just after the hook stops waiting, HermesMargin
// before Hermes' deadline, so that nobody can approve what Hermes has
// already refused, and an approval made in time reaches Hermes in time.

// HermesMargin is how long before Hermes' own deadline (the request's
// timeout_seconds, Hermes' approvals.timeout) `hook hermes` stops waiting,
// withdraws the proposal and answers: enough for the answer to reach Hermes
// in time, since Hermes discards a late one.
const HermesMargin = 5 * time.Second

// HermesMinWindow is the least time an operator must have to decide a
// Hermes request: a request that leaves less once HermesMargin is taken is
// denied at once.
const HermesMinWindow = 1 * time.Second

// hermesExpiryLag is how long after the hook stops waiting its proposal
// expires: the withdrawal comes first, the expiry right after, both before
// Hermes' deadline.
const hermesExpiryLag = 250 * time.Millisecond

// hermesClockSkew is how far ahead of this clock a presented_at may be
// (Hermes' clock and this one differ a little) before it is refused.
const hermesClockSkew = 2 * time.Second

// maxHermesTimeout bounds a request's timeout_seconds.
const maxHermesTimeout = 7 * 24 * time.Hour

// HermesRequestSchema is the ApprovalRequest schema_version understood.
const HermesRequestSchema = 1

// The events of `hook hermes`.
const (
	HermesEventPresent  = "present"
	HermesEventResponse = "post_approval_response"
)

// HermesHookInput is what the plugin writes on the hook's stdin: Hermes'
// ApprovalRequest fields, and the plugin's own (event, session_key,
// presented_at; for the response event, choice and decided_by).
type HermesHookInput struct {
	Event          string   `json:"event"`
	SchemaVersion  *int     `json:"schema_version"`
	RequestID      string   `json:"request_id"`
	Digest         string   `json:"digest"`
	Command        *string  `json:"command"`
	Description    string   `json:"description"`
	PatternKey     string   `json:"pattern_key"`
	PatternKeys    []string `json:"pattern_keys"`
	Surface        string   `json:"surface"`
	TimeoutSeconds *float64 `json:"timeout_seconds"`
	AllowedChoices []string `json:"allowed_choices"`
	SessionKey     string   `json:"session_key"`
	PresentedAt    float64  `json:"presented_at"`
	Choice         string   `json:"choice"`
	DecidedBy      string   `json:"decided_by"`
}

// HermesHook reads one event of Hermes' approval transport from in and
// answers it (see runHook): a request is submitted, waited on and answered
// once or deny, by Hermes' deadline less margin (HermesMargin when not
// positive); a response event is recorded on its proposal. o.Timeout, when
// positive, caps the wait further.
func HermesHook(ctx context.Context, in io.Reader, o HookOptions, margin time.Duration) HookAnswer {
	if margin <= 0 {
		margin = HermesMargin
	}
	if o.Timeout <= 0 {
		o.Timeout = maxHermesTimeout
	}
	p := &protocol{agent: AgentHermes, requester: "hermes", idPrefix: "hm-", preEvent: "approval request",
		canAllow: true, ttlLag: hermesExpiryLag, report: hermesReport, answerOnce: true,
		answerSource: "hermes", answerChoice: "once",
		// Hermes runs the command in its terminal backend (local, a
		// container, another host), in a directory the request does not
		// carry, and the request's command is redacted: a preview made
		// here would be a guess.
		noPreview: true,
		decode:    func(data []byte) (hookCall, string) { return decodeHermes(data, margin, time.Now()) }}
	return runHook(ctx, in, o, p)
}

// HermesHookID is the approval id of Hermes' request requestID: "hm-" and
// 12 characters, the same for every run on the same request.
func HermesHookID(requestID string) string {
	return callID("hm-", "", requestID)
}

// hermesToken reports whether s is a plausible request id or digest:
// 1 to 128 printable ASCII characters, no spaces.
func hermesToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func decodeHermes(data []byte, margin time.Duration, now time.Time) (hookCall, string) {
	var in HermesHookInput
	if err := decodeOne(data, &in); err != nil {
		return hookCall{}, fmt.Sprintf("malformed Hermes approval request (%v)", err)
	}
	c := hookCall{tool: "Hermes", guarded: true, alwaysAsk: true, key: in.RequestID}
	if !hermesToken(in.RequestID) {
		return c, "the Hermes request has no valid request_id"
	}
	switch in.Event {
	case HermesEventResponse:
		if in.Choice == "" {
			return c, "a post_approval_response without a choice"
		}
		c.event, c.reported, c.decidedBy = eventPost, in.Choice, in.DecidedBy
		return c, ""
	case "", HermesEventPresent:
		c.event = eventPre
	default:
		return c, fmt.Sprintf("unknown event %q", model.Sanitize(in.Event, model.Line))
	}
	switch {
	case in.SchemaVersion == nil:
		return c, "the Hermes request has no schema_version"
	case *in.SchemaVersion != HermesRequestSchema:
		return c, fmt.Sprintf("the Hermes request's schema_version %d is not understood (want %d): update approve-tui", *in.SchemaVersion, HermesRequestSchema)
	case !hermesToken(in.Digest):
		return c, "the Hermes request has no valid digest"
	case in.Command == nil:
		return c, "the Hermes request has no command"
	case in.TimeoutSeconds == nil || !(*in.TimeoutSeconds > 0) || math.IsInf(*in.TimeoutSeconds, 0):
		return c, "the Hermes request has no positive timeout_seconds"
	}
	once := false
	for _, ch := range in.AllowedChoices {
		once = once || ch == "once"
	}
	if !once {
		return c, "Hermes does not allow the choice once for this request, so it cannot be approved"
	}
	c.command, c.description = in.Command, in.Description
	c.session = in.SessionKey
	if c.session == "" {
		c.noResume = true // "hermes:SURFACE" names no one session
		surface := in.Surface
		if surface == "" {
			surface = "unknown"
		}
		c.session = "hermes:" + surface
	}
	timeout := time.Duration(*in.TimeoutSeconds * float64(time.Second))
	if *in.TimeoutSeconds > maxHermesTimeout.Seconds() {
		timeout = maxHermesTimeout
	}
	// presented_at is when Hermes called the plugin: its deadline runs
	// from about then. Without it, how long Hermes has waited already
	// cannot be known, and an approval could reach Hermes after it stopped
	// waiting (or answer a request replayed long after): stale. A time
	// before the whole timeout is stale too. One ahead of this clock by
	// more than hermesClockSkew, or not a finite number, is not a time
	// Hermes could have called at: refused as such.
	switch pa := in.PresentedAt; {
	case math.IsNaN(pa) || math.IsInf(pa, 0):
		return c, "the Hermes request's presented_at is not a finite time; refused"
	case !(pa > 0):
		return c, "the Hermes request has no presented_at, so how long Hermes has waited cannot be known: treated as stale"
	case pa > float64(now.Add(hermesClockSkew).UnixNano())/1e9:
		return c, fmt.Sprintf("the Hermes request's presented_at is in the future (more than %s ahead of this clock); refused", hermesClockSkew)
	}
	start := now
	switch at := model.FromEpoch(in.PresentedAt); {
	case !at.After(now.Add(-timeout)):
		return c, "the Hermes request was presented longer ago than its timeout (stale); Hermes has stopped waiting"
	case at.Before(now):
		start = at
	}
	deadline := start.Add(timeout)
	c.answerBy = deadline.Add(-margin)
	c.timeoutWords = fmt.Sprintf("Hermes stops waiting in %s (approvals.timeout %gs)", margin, *in.TimeoutSeconds)
	c.hermes = &model.HermesRequest{RequestID: in.RequestID, Digest: in.Digest, Surface: in.Surface,
		PatternKey: in.PatternKey, PatternKeys: in.PatternKeys, TimeoutSeconds: *in.TimeoutSeconds, Deadline: model.Epoch(deadline)}
	c.raise, c.raiseWhy = hermesRisk(c.hermes, in.Description)
	return c, ""
}

// hermesRisk is the risk of the patterns Hermes flagged (Hermes' own rule
// on their descriptions; high when it named none), and the words for the
// reason.
func hermesRisk(h *model.HermesRequest, description string) (model.RiskLevel, string) {
	keys := h.Patterns()
	if len(keys) == 0 && description != "" {
		keys = []string{description}
	}
	if len(keys) == 0 {
		return model.RiskHigh, "by Hermes, which flagged it without naming a pattern"
	}
	level, why := model.RiskLow, ""
	for _, k := range keys {
		if l := risk.DescriptionRisk(k); l.Rank() > level.Rank() {
			level, why = l, k
		}
	}
	return level, fmt.Sprintf("by Hermes' pattern %q", model.Sanitize(why, model.Line))
}

// hermesReport records what Hermes reported of its request: a report
// event on the proposal, and, for one that was approved and not marked
// yet, what that means for its execution: handed_off when Hermes took the
// approval (Hermes runs its command and reports no end), else
// blocked_after_consume (Hermes refused the answer, e.g. it came too late:
// nothing ran).
func hermesReport(ctx context.Context, h *hook, c *hookCall) HookAnswer {
	id := h.id(c)
	ans := func(recorded bool, format string, args ...any) HookAnswer {
		return HookAnswer{Agent: AgentHermes, ApprovalID: id, Report: &Report{Recorded: recorded, Reason: "approve-tui: " + fmt.Sprintf(format, args...)}}
	}
	reported := c.reported
	if len(reported) > 64 {
		reported = reported[:64]
	}
	s, err := h.o.Open(ctx)
	if err != nil {
		return ans(false, "the approval store is unavailable (%v): Hermes' %s not recorded", err, model.Sanitize(reported, model.Line))
	}
	defer s.Close()
	rec, err := s.Get(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return ans(false, "no proposal for this request (%s)", id)
	}
	if err != nil {
		return ans(false, "could not read %s (%v)", id, err)
	}
	detail := map[string]any{"choice": reported, "request_id": c.key}
	if c.decidedBy != "" {
		detail["decided_by"] = c.decidedBy
	}
	if err := s.RecordReport(ctx, id, "hermes", reported, detail, h.o.Actor); err != nil {
		return ans(false, "could not record Hermes' %s on %s (%v)", model.Sanitize(reported, model.Line), id, err)
	}
	if rec.Status == model.StatusConsumed && rec.ExecutionStatus == model.ExecNotStarted {
		outcome, reason := model.ExecHandedOff, "handed to Hermes, which runs its own command (the original of the redacted one shown) and reports no outcome"
		if reported != "once" {
			outcome, reason = model.ExecBlockedAfterConsume, "Hermes did not take the approval ("+reported+"): not run"
		}
		if err := s.RecordExecution(ctx, id, outcome, reason, h.o.Actor); err != nil {
			var it *storage.InvalidTransitionError
			if !errors.As(err, &it) {
				return ans(false, "recorded Hermes' %s, but not the execution of %s (%v)", model.Sanitize(reported, model.Line), id, err)
			}
		}
	}
	return ans(true, "recorded Hermes' %s on %s", model.Sanitize(reported, model.Line), id)
}

// hermesJSON is a's answer in the transport's protocol: a choice, or, for
// a reporting event, whether it was recorded. Anything but an allow is a
// deny; silence is a deny too (Hermes asked).
func hermesJSON(a HookAnswer) []byte {
	reason := strings.TrimSpace(model.Sanitize(a.Reason, model.Line))
	if a.Report != nil {
		return encodeLine(struct {
			Recorded   bool   `json:"recorded"`
			ApprovalID string `json:"approval_id,omitempty"`
			Reason     string `json:"reason,omitempty"`
		}{a.Report.Recorded, a.ApprovalID, model.Sanitize(a.Report.Reason, model.Line)})
	}
	choice := "deny"
	if a.Decision == "allow" && !a.Silent {
		choice = "once"
	}
	if choice == "deny" && reason == "" {
		reason = "approve-tui: denied"
	}
	return encodeLine(struct {
		Choice     string `json:"choice"`
		ApprovalID string `json:"approval_id,omitempty"`
		Reason     string `json:"reason,omitempty"`
	}{choice, model.Sanitize(a.ApprovalID, model.Line), reason})
}
