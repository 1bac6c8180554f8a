package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// The Claude Code PreToolUse hook (`approve-tui hook claude-code`, SPEC §6).
// Claude Code runs it before each tool call, writes the call as JSON on its
// stdin, and reads a decision as JSON on its stdout. Claude Code lets the
// call run when a hook crashes, times out or exits with an unexpected code,
// so the hook always answers, in time, with exactly one JSON object and
// exit code 0 for every Bash call it handles; anything that goes wrong is a
// deny with the reason.

// DefaultHookTimeout is how long the hook waits for a decision by default:
// well within Claude Code's own 600 s hook timeout.
const DefaultHookTimeout = 300 * time.Second

// hookTTLMargin is how long after the hook's deadline its proposal expires:
// a hook killed before it could withdraw leaves nothing approvable for
// long.
const hookTTLMargin = 5 * time.Second

// withdrawTimeout bounds the hook's withdrawal after its deadline.
const withdrawTimeout = 10 * time.Second

// maxHookInput bounds the input read from Claude Code.
const maxHookInput = 4 << 20

// The --low policies: what the hook answers for a command no rule matches.
const (
	// LowDefer prints nothing: Claude Code's own permission rules apply.
	LowDefer = "defer"
	// LowAllow allows it (audited as allowed by policy).
	LowAllow = "allow"
)

// HookOptions configure ClaudeCodeHook.
type HookOptions struct {
	// Timeout is the longest the hook takes, waiting included
	// (DefaultHookTimeout when not positive). When it passes, the proposal
	// is withdrawn and the answer is deny.
	Timeout time.Duration
	// Low is the policy for low-risk commands: LowDefer (the default) or
	// LowAllow.
	Low string
	// Open opens the store; it is called only when the store is needed.
	Open func(ctx context.Context) (*storage.Store, error)
	// Actor submits and audits (its surface should be hook).
	Actor model.Actor
	// HeartbeatEvery is the waiter's heartbeat interval (0: the default).
	HeartbeatEvery time.Duration
	// Log receives diagnostics (nil: none).
	Log io.Writer
}

// HookInput is Claude Code's PreToolUse input: the keys the hook uses
// (others are ignored). ToolInput is decoded only for Bash, whose input is
// {"command": ..., "description": ...}: other tools' inputs have other
// shapes.
type HookInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	PermissionMode string          `json:"permission_mode"`
	// ToolResponse is PostToolUse's report of the call.
	ToolResponse json.RawMessage `json:"tool_response"`
}

// bashInput is the Bash tool's input.
type bashInput struct {
	Command     *string `json:"command"`
	Description string  `json:"description"`
}

// HookAnswer is the hook's answer.
type HookAnswer struct {
	// Silent: print nothing (not a call the hook handles, or a low-risk
	// command under LowDefer); Claude Code's own rules apply.
	Silent bool
	// Decision is "allow" or "deny".
	Decision string
	// Reason is shown to the user (allow) or to Claude (deny).
	Reason string
	// ApprovalID is the proposal waited on, if any.
	ApprovalID string
}

// JSON is the answer as Claude Code reads it, one line, or nil when
// Silent. It never carries updatedInput: the hook never rewrites the
// command.
func (a HookAnswer) JSON() []byte {
	if a.Silent {
		return nil
	}
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	var out struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}
	decision := a.Decision
	if decision != "allow" {
		decision = "deny" // anything unexpected fails closed
	}
	out.HookSpecificOutput = specific{HookEventName: "PreToolUse", PermissionDecision: decision,
		PermissionDecisionReason: model.Sanitize(a.Reason, model.Line)}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out) // cannot fail: strings only
	return b.Bytes()
}

func hookDeny(format string, args ...any) HookAnswer {
	return HookAnswer{Decision: "deny", Reason: "approve-tui: " + fmt.Sprintf(format, args...)}
}

func hookAllow(format string, args ...any) HookAnswer {
	return HookAnswer{Decision: "allow", Reason: "approve-tui: " + fmt.Sprintf(format, args...)}
}

// HookID is the approval id of the Bash call tool_use_id of session
// sessionID: the same call always maps to the same proposal, so a second
// hook process on it (Claude Code runs matching hooks in parallel) waits on
// the first one's proposal instead of submitting another. "cc-" and 9 bytes
// of SHA-256, URL-safe base64: 15 characters an operator can type.
func HookID(sessionID, toolUseID string) string {
	h := sha256.Sum256([]byte(sessionID + "\x00" + toolUseID))
	return "cc-" + base64.RawURLEncoding.EncodeToString(h[:9])
}

// errHookTimeout is the cause of a hook that reached its timeout.
var errHookTimeout = errors.New("hook timeout")

// ClaudeCodeHook reads one PreToolUse call from in and decides it:
//   - not the Bash tool, or another event: Silent (after a PostToolUse or
//     PostToolUseFailure event of a Bash call it let through, it records
//     that the command ran: executed);
//   - malformed input: deny;
//   - a hardline command: deny at once, audited, never submitted (Hermes
//     never runs one, and an operator's approval must not make Claude Code
//     run it);
//   - a command no rule matches: the Low policy (Silent, or allow, audited);
//   - otherwise: submit a proposal (session claude-code:SESSION, requester
//     claude-code, the call's description as context, id HookID), heartbeat
//     as its waiter, wait for the decision, and allow only an approved
//     proposal whose pinned command is this call's command, byte for byte,
//     and whose risk has not risen since (runtime guard); denied, expired,
//     timed out (withdrawn) or any failure: deny, with the reason.
//
// It never panics: a panic becomes a deny.
func ClaudeCodeHook(ctx context.Context, in io.Reader, o HookOptions) (ans HookAnswer) {
	defer func() {
		if v := recover(); v != nil {
			if o.Log != nil {
				fmt.Fprintf(o.Log, "approve-tui hook: panic: %v\n%s", v, debug.Stack())
			}
			ans = hookDeny("internal error (%v); denied to be safe", v)
		}
	}()
	if o.Timeout <= 0 {
		o.Timeout = DefaultHookTimeout
	}
	switch o.Low {
	case "":
		o.Low = LowDefer
	case LowDefer, LowAllow:
	default:
		return hookDeny("bad --low policy %q (want allow or defer); denied to be safe", o.Low)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, errHookTimeout)
	defer cancel()
	h := &hook{o: o}

	data, err := readInput(ctx, in)
	if err != nil {
		return hookDeny("could not read the PreToolUse input: %v", err)
	}
	var hin HookInput
	if err := decodeOne(data, &hin); err != nil {
		return hookDeny("malformed PreToolUse input (%v); denied to be safe", err)
	}
	switch hin.HookEventName {
	case "", "PreToolUse":
	case "PostToolUse", "PostToolUseFailure":
		h.after(ctx, &hin)
		return HookAnswer{Silent: true}
	default:
		return HookAnswer{Silent: true}
	}
	if hin.ToolName == "" {
		return hookDeny("malformed PreToolUse input: no tool_name; denied to be safe")
	}
	if hin.ToolName != "Bash" {
		return HookAnswer{Silent: true}
	}
	var bi bashInput
	if len(hin.ToolInput) == 0 {
		return hookDeny("malformed PreToolUse input: a Bash call without tool_input; denied to be safe")
	}
	if err := decodeOne(hin.ToolInput, &bi); err != nil {
		return hookDeny("malformed Bash tool_input (%v); denied to be safe", err)
	}
	if bi.Command == nil || strings.TrimSpace(*bi.Command) == "" {
		return hookDeny("a Bash call without a command; denied to be safe")
	}
	command := *bi.Command
	if strings.ContainsRune(command, '\uFFFD') {
		// Invalid UTF-8 or a lone surrogate became U+FFFD when decoded: the
		// bytes pinned would not be the ones Claude Code runs.
		return hookDeny("the command holds characters that cannot be pinned exactly (U+FFFD); denied to be safe")
	}

	v := risk.Classify(command)
	switch {
	case v.Hardline:
		return h.hardline(ctx, &hin, command, v)
	case len(v.Matches) == 0:
		if o.Low == LowDefer {
			return HookAnswer{Silent: true}
		}
		return h.allowLow(ctx, &hin, command)
	}
	return h.ask(ctx, &hin, command, bi.Description)
}

type hook struct {
	o HookOptions
}

func (h *hook) logf(format string, args ...any) {
	if h.o.Log != nil {
		fmt.Fprintf(h.o.Log, "approve-tui: "+format+"\n", args...)
	}
}

// readInput reads all of in, at most maxHookInput bytes, before ctx ends.
func readInput(ctx context.Context, in io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(in, maxHookInput+1))
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		if r.err == nil && len(r.b) > maxHookInput {
			r.err = fmt.Errorf("more than %d bytes", maxHookInput)
		}
		return r.b, r.err
	case <-ctx.Done():
		return nil, errors.New("timed out reading stdin")
	}
}

// decodeOne decodes exactly one JSON value from data.
func decodeOne(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty input")
		}
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// session is the proposal's session key.
func session(hin *HookInput) string {
	if hin.SessionID == "" {
		return "claude-code:unknown"
	}
	return "claude-code:" + hin.SessionID
}

func (h *hook) policy(hin *HookInput, command, decision, reason string, level model.RiskLevel) *storage.PolicyRecord {
	return &storage.PolicyRecord{Decision: decision, Reason: reason, Command: command, Cwd: hin.Cwd,
		SessionKey: session(hin), Requester: "claude-code", Risk: level}
}

// after records that Claude Code ran an approved Bash call: it sends
// PostToolUse (PostToolUseFailure when the tool failed) once the command
// has ended, so executed is recorded after it ran, never before. Only a
// proposal of this hook (its id derived from the same call), approved, and
// pinning exactly this command is marked; anything else is left alone. It
// prints nothing: the hook has no say after the fact.
func (h *hook) after(ctx context.Context, hin *HookInput) {
	if hin.ToolName != "Bash" || hin.ToolUseID == "" {
		return
	}
	var bi bashInput
	if decodeOne(hin.ToolInput, &bi) != nil || bi.Command == nil {
		return
	}
	var resp struct {
		Interrupted bool `json:"interrupted"`
	}
	_ = json.Unmarshal(hin.ToolResponse, &resp)
	s, err := h.o.Open(ctx)
	if err != nil {
		h.logf("warning: cannot record the outcome of tool_use_id %s: %v", model.Sanitize(hin.ToolUseID, model.Line), err)
		return
	}
	defer s.Close()
	id := HookID(hin.SessionID, hin.ToolUseID)
	rec, err := s.Get(ctx, id)
	if err != nil || rec.Status != model.StatusConsumed || rec.ExecutionStatus != model.ExecNotStarted || rec.Command != *bi.Command {
		return // not a call this hook let through (low risk, or another command)
	}
	reason := "ran in Claude Code (" + hin.HookEventName + ")"
	switch {
	case resp.Interrupted:
		reason = "ran in Claude Code, interrupted (" + hin.HookEventName + ")"
	case hin.HookEventName == "PostToolUseFailure":
		reason = "ran in Claude Code, which reported a failure (PostToolUseFailure)"
	}
	if err := s.RecordExecution(ctx, id, model.ExecExecuted, reason, h.o.Actor); err != nil {
		var it *storage.InvalidTransitionError
		if !errors.As(err, &it) {
			h.logf("warning: could not record that %s ran: %v", id, err)
		}
	}
}

// hardline denies a hardline command without submitting it; the refusal is
// audited when the store can be written.
func (h *hook) hardline(ctx context.Context, hin *HookInput, command string, v risk.Verdict) HookAnswer {
	ans := hookDeny("refused: the command matches a hardline rule (%s), which is never run, whoever approves; do not retry it", v.Reason())
	s, err := h.o.Open(ctx)
	if err == nil {
		defer s.Close()
		err = s.RecordPolicy(ctx, h.policy(hin, command, storage.PolicyDeny, "hardline: "+v.Reason(), v.Level), h.o.Actor)
	}
	if err != nil {
		h.logf("warning: the hardline refusal could not be audited: %v", err)
	}
	return ans
}

// allowLow allows a command no rule matches under the LowAllow policy: only
// once the decision is audited.
func (h *hook) allowLow(ctx context.Context, hin *HookInput, command string) HookAnswer {
	s, err := h.o.Open(ctx)
	if err != nil {
		return hookDeny("low risk, but the approval store is unavailable to audit it (%v); denied to be safe", err)
	}
	defer s.Close()
	if err := s.RecordPolicy(ctx, h.policy(hin, command, storage.PolicyAllow,
		risk.NoMatchReason+": allowed by the hook's --low allow policy", model.RiskLow), h.o.Actor); err != nil {
		return hookDeny("low risk, but the decision could not be audited (%v); denied to be safe", err)
	}
	return hookAllow("%s (low risk); allowed by policy", risk.NoMatchReason)
}

// ask submits (or rejoins) the proposal and waits for the decision.
func (h *hook) ask(ctx context.Context, hin *HookInput, command, description string) HookAnswer {
	s, err := h.o.Open(ctx)
	if err != nil {
		return hookDeny("the approval store is unavailable (%v); denied to be safe", err)
	}
	defer s.Close()
	d := risk.Draft{Command: command, SessionKey: session(hin), Requester: "claude-code", Cwd: hin.Cwd,
		Backend: "local", Context: description, TTL: h.o.Timeout + hookTTLMargin}
	if hin.ToolUseID != "" {
		d.ID = HookID(hin.SessionID, hin.ToolUseID)
	}
	p, _, err := risk.Propose(d, s.Now())
	if err != nil {
		return hookDeny("could not make a proposal (%v); denied to be safe", err)
	}
	id := p.ApprovalID
	err = s.Submit(ctx, p, h.o.Actor)
	var dup *storage.DuplicateError
	switch {
	case errors.As(err, &dup):
		// Another hook process on the same call submitted it: wait on that
		// proposal, if it is this call's.
		rec, gerr := s.Get(ctx, id)
		if gerr != nil {
			return hookDeny("could not read proposal %s (%v); denied to be safe", id, gerr)
		}
		if rec.Command != command || rec.SessionKey != p.SessionKey {
			return hookDeny("proposal %s already exists for another command; denied to be safe", id)
		}
		h.logf("%s: rejoining the proposal already submitted for tool_use_id %s", id, model.Sanitize(hin.ToolUseID, model.Line))
	case err != nil:
		if ctx.Err() != nil {
			return hookDeny("timed out submitting the proposal (%v); denied to be safe", err)
		}
		return hookDeny("could not submit the proposal (%v); denied to be safe", err)
	default:
		h.logf("%s needs approval (%s risk: %s); waiting up to %s", id, p.RiskLevel, model.Sanitize(p.RiskReason, model.Line), h.o.Timeout)
	}

	rec, werr := WaitDecision(ctx, s, id, WaitOptions{Surface: model.SurfaceHook, Every: h.o.HeartbeatEvery,
		OnError: func(err error) { h.logf("warning: %v", err) }})
	if werr != nil {
		reason := "requester interrupted"
		switch {
		case errors.Is(context.Cause(ctx), errHookTimeout):
			reason = "requester timed out after " + h.o.Timeout.String()
		case ctx.Err() == nil:
			reason = "requester stopped waiting: " + werr.Error()
		}
		return h.giveUp(ctx, s, id, command, reason)
	}
	return h.decided(ctx, s, rec, command)
}

// giveUp withdraws id (denied by actor "requester"); a decision that raced
// the withdrawal is reported as it is, an approval that did is recorded as
// blocked_after_consume. Always deny.
func (h *hook) giveUp(ctx context.Context, s *storage.Store, id, command, reason string) HookAnswer {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	_, err := s.Deny(wctx, id, model.Actor{Surface: model.SurfaceHook, Name: "requester", Detail: fmt.Sprintf("pid %d", os.Getpid())}, reason)
	if err == nil {
		return hookDeny("%s: no decision on %s; withdrawn, not run", reason, id)
	}
	var np *storage.NotPendingError
	if errors.As(err, &np) {
		if rec, gerr := s.Get(wctx, id); gerr == nil {
			if rec.EffectiveStatus == model.StatusConsumed {
				h.block(wctx, s, id, reason+", before answering")
				return hookDeny("%s: %s was approved too late; not run", reason, id)
			}
			return h.decided(wctx, s, rec, command)
		}
	}
	return hookDeny("%s: not run; %s could not be withdrawn (%v)", reason, id, err)
}

// decided answers for a proposal that left pending.
func (h *hook) decided(ctx context.Context, s *storage.Store, rec *storage.Record, command string) HookAnswer {
	id := rec.ApprovalID
	by := ""
	if rec.ConsumedBy != "" {
		by = " by " + rec.ConsumedBy
	}
	switch rec.EffectiveStatus {
	case model.StatusDenied:
		msg := id + " was denied" + by
		if reason, err := s.DenyReason(ctx, id); err == nil && reason != "" {
			msg += ": " + reason
		}
		return hookDeny("%s", msg)
	case model.StatusExpired:
		return hookDeny("%s expired with no decision; not run", id)
	case model.StatusConsumed:
	default:
		return hookDeny("%s has an unexpected status %q; denied to be safe", id, string(rec.EffectiveStatus))
	}
	// Approved: exactly this command, and no riskier than when pinned.
	var why string
	switch {
	case rec.Corrupt != "":
		why = "the proposal is corrupt: " + rec.Corrupt
	case rec.Command != command:
		why = "command bytes differ from the pinned ones"
	default:
		if err := risk.Guard(rec.RiskLevel, rec.Command); err != nil {
			why = err.Error()
		}
	}
	if why != "" {
		h.block(ctx, s, id, why)
		return hookDeny("%s was approved but is refused at run time: %s", id, why)
	}
	return hookAllow("approved%s (%s): this command, once", by, id)
}

// block records that approved proposal id is not run (best effort: a
// second hook process on the same call may have recorded it already).
func (h *hook) block(ctx context.Context, s *storage.Store, id, reason string) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	if err := s.RecordExecution(wctx, id, model.ExecBlockedAfterConsume, reason, h.o.Actor); err != nil {
		var it *storage.InvalidTransitionError
		if !errors.As(err, &it) {
			h.logf("warning: could not record that %s is not run: %v", id, err)
		}
	}
}
