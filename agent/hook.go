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
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// Agent hooks (`approve-tui hook claude-code|codex|gemini`, SPEC §6). An
// agent runs its hook before a tool call, writes the call as JSON on its
// stdin, and reads a decision on its stdout. Every agent lets the call run
// when its hook crashes, times out or exits with an unexpected code, so the
// hook always answers, in time, in its agent's protocol; anything that goes
// wrong is a deny with the reason.
//
// One core does the work for every agent: read the input, submit the
// proposal, wait for the decision heartbeating as its live waiter, re-check
// it, and answer, failing closed. A small adapter per agent (hook_claude.go,
// hook_codex.go, hook_gemini.go) decodes its input into a hookCall and
// encodes the HookAnswer in its own JSON.

// DefaultHookTimeout is how long a hook waits for a decision by default:
// well within Claude Code's and Codex's own 600 s hook timeouts. (Gemini
// CLI's default is 60 s: its command defaults to DefaultGeminiTimeout.)
const DefaultHookTimeout = 300 * time.Second

// hookTTLMargin is how long after the hook's deadline its proposal expires:
// a hook killed before it could withdraw leaves nothing approvable for
// long.
const hookTTLMargin = 5 * time.Second

// withdrawTimeout bounds the hook's withdrawal after its deadline.
const withdrawTimeout = 10 * time.Second

// maxHookInput bounds the input read from the agent.
const maxHookInput = 4 << 20

// The --low policies: what the hook answers for a command no rule matches.
const (
	// LowPass prints no decision: the agent's own permission rules apply.
	LowPass = "pass"
	// LowAllow allows it (audited as allowed by policy), where the agent's
	// protocol can say allow.
	LowAllow = "allow"
	// LowDefer is the old name of LowPass, still accepted. Deprecated: it
	// reads like Claude Code's own "defer" decision, which is something
	// else (the hook never answers defer).
	LowDefer = "defer"
)

// Agent names an agent whose hook protocol a HookAnswer speaks.
type Agent string

// The agents with a hook. The zero Agent is Claude Code.
const (
	AgentClaudeCode Agent = "claude-code"
	AgentCodex      Agent = "codex"
	AgentGemini     Agent = "gemini"
	AgentHermes     Agent = "hermes"
)

// HookOptions configure a hook.
type HookOptions struct {
	// Timeout is the longest the hook takes, waiting included
	// (DefaultHookTimeout when not positive). When it passes, the proposal
	// is withdrawn and the answer is deny.
	Timeout time.Duration
	// Low is how a command that goes unasked is answered: LowPass (the
	// default), LowAllow, or the deprecated LowDefer (LowPass).
	Low string
	// Unasked is what goes without a proposal (--unasked): UnaskedNothing,
	// UnaskedReadOnly or UnaskedLow ("": UnaskedLow).
	Unasked string
	// Risk is what commands are judged with besides their cwd: the
	// configured sensitive paths and programs and the surface's own files
	// (config.RiskContext; its Cwd is ignored: each call's is used).
	Risk risk.Context
	// Open opens the store; it is called only when the store is needed.
	Open func(ctx context.Context) (*storage.Store, error)
	// Actor submits and audits (its surface should be hook).
	Actor model.Actor
	// Agent names the agent process that started the hook, as a take of
	// a parked approval records it (the same call from another agent
	// process is another asker); "": this process's parent, by its pid
	// and start time.
	Agent string
	// HeartbeatEvery is the waiter's heartbeat interval (0: the default).
	HeartbeatEvery time.Duration
	// Log receives diagnostics (nil: none).
	Log io.Writer
	// Store is the store in use as given (--db: a path, sqlite:PATH or a
	// postgres URL): a command naming it is never let through unseen
	// (selfDecides).
	Store string
	// Trust is the trust configuration (nil or mode off: no check). Where
	// it is required, an approved proposal is allowed only with valid
	// signatures from enough principals (VerifySignatures).
	Trust *trust.Settings
	// ParkWindow is how long the proposal stays open after the hook stops
	// waiting (its timeout, its agent's signal, its agent gone), so that
	// the same call asked again takes a late approval, once (0:
	// DefaultParkWindow; negative: parking off, the proposal is withdrawn
	// or abandoned as before). The proposal's TTL covers wait and window.
	ParkWindow time.Duration
	// Paged, when set, says whether a configured paging route matches the
	// proposal: the parked deny says "an operator has been paged" only
	// then (nil: no route matches).
	Paged func(*storage.Record) bool
	// Defer (Claude Code only): where the session can resume a deferred
	// call (permission_mode default or plan), answer defer instead of the
	// parked deny; the resumed call rejoins the proposal.
	Defer bool
}

// HookAnswer is a hook's answer, in the protocol of Agent.
type HookAnswer struct {
	// Agent is the protocol JSON speaks ("": Claude Code).
	Agent Agent
	// Silent: print nothing (not a call the hook handles, or a command no
	// rule matches under LowPass); the agent's own rules apply.
	Silent bool
	// Decision is "allow" or "deny"; anything else is a deny.
	Decision string
	// Reason is shown to the user (allow) or to the model (deny).
	Reason string
	// ApprovalID is the proposal decided, if any.
	ApprovalID string
	// Report, when not nil, answers an event that reports what became of
	// a proposal (Hermes' post_approval_response) rather than asking.
	Report *Report
}

// Report is the answer to a reporting event: whether what was reported is
// recorded on the proposal, and why not.
type Report struct {
	Recorded bool
	Reason   string
}

// JSON is the answer as its agent reads it, one line, or nil when there is
// nothing to print (Silent, or an allow in a protocol that cannot say
// allow). It never rewrites the tool input.
func (a HookAnswer) JSON() []byte {
	if a.Agent == AgentHermes {
		// Hermes' transport always reads an answer: silence is a deny.
		return hermesJSON(a)
	}
	if a.Silent {
		return nil
	}
	if a.Decision == "defer" && a.Agent != AgentClaudeCode && a.Agent != "" {
		a.Decision = "deny" // only Claude Code resumes a deferred call
	}
	if a.Decision != "allow" && a.Decision != "defer" {
		a.Decision = "deny" // anything unexpected fails closed
	}
	a.Reason = model.Sanitize(a.Reason, model.Line)
	switch a.Agent {
	case AgentCodex:
		return codexJSON(a)
	case AgentGemini:
		return geminiJSON(a)
	}
	return claudeJSON(a)
}

// Denied is a deny in agent's protocol, for the failures found before any
// hook ran (bad flags): reason is given as it is.
func Denied(agent Agent, reason string) HookAnswer {
	return HookAnswer{Agent: agent, Decision: "deny", Reason: reason}
}

// encodeLine encodes v as one line of JSON, HTML characters as they are.
func encodeLine(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // cannot fail: strings and booleans only
	return b.Bytes()
}

// callEvent is what kind of event a hook call is.
type callEvent int

const (
	eventOther callEvent = iota // not one the hook has a say in: no output
	eventPre                    // before the tool runs: the hook decides
	eventPost                   // after it ran: record the execution
)

// hookCall is one event as an agent's adapter decoded it.
type hookCall struct {
	event callEvent
	// impact is the preview made while deciding whether to ask (nil: not
	// made yet).
	impact *model.Impact
	// tool is the tool's name; guarded says the hook gates it (a shell).
	tool    string
	guarded bool
	// command is the command to run (nil: none given).
	command     *string
	description string
	sessionID   string
	cwd         string
	// key names the call within its session (Claude Code's and Codex's
	// tool_use_id): the proposal's id derives from it, so a second hook
	// process on the same call rejoins the first one's proposal. "" draws a
	// fresh id.
	key string
	// unknownRisk: the rules do not cover this shell (PowerShell): a
	// command no rule matches still needs approval.
	unknownRisk bool
	// background: the tool starts the command and returns without waiting.
	background bool
	// outcome and outcomeReason: for eventPost, the execution to record.
	outcome       model.ExecutionStatus
	outcomeReason string

	// session, when not empty, is the proposal's whole session key (the
	// agent's own, as Hermes gives it) in place of REQUESTER:SESSION_ID.
	session string
	// alwaysAsk: the agent asks only about commands it flagged itself, so
	// one no rule matches needs approval all the same (no --low policy).
	alwaysAsk bool
	// raise is the risk the agent gave the command (pinned when higher than
	// the classifier's), raiseWhy says so in the reason.
	raise    model.RiskLevel
	raiseWhy string
	// answerBy, when set, is when the hook must have answered (the agent's
	// own deadline less its margin): the wait ends then, and the proposal
	// expires right after. timeoutWords says it in a reason.
	answerBy     time.Time
	timeoutWords string
	// selfWhy, when set, says the command would decide approvals
	// (selfDecides): it is always asked, at least high.
	selfWhy string
	// gitWhy, when set, says a git command of it may run a program its
	// configuration names (gitRunsCode): it is asked, at least medium.
	gitWhy string
	// policyWhy, when set, says which rules of the policy in force name a
	// command the classifier finds nothing in: it is asked all the same.
	policyWhy string
	// hermes is Hermes' request, kept in the payload.
	hermes *model.HermesRequest
	// noResume: the call cannot be told apart from another one of another
	// session (no session id): it is never matched to a parked proposal,
	// and not parked.
	noResume bool
	// canDefer, when set, says whether the agent can resume this call
	// later (Claude Code's permission_mode default or plan, the only tool
	// call of its turn), so that --defer may answer defer: "" when it can,
	// else why not. Called only under --defer (it reads a file).
	canDefer func() string
	// reported is, for a reporting event, what the agent reported (Hermes'
	// accepted choice or its transport failure) and who decided.
	reported, decidedBy string
}

// protocol is an agent's side of the hook.
type protocol struct {
	agent Agent
	// requester names the agent in proposals; sessions are requester:ID.
	requester string
	// idPrefix starts its proposals' ids.
	idPrefix string
	// preEvent names its pre-tool event in messages.
	preEvent string
	// canAllow: its pre-tool answer can say allow (Codex's cannot: an
	// allowed call is answered with no output).
	canAllow bool
	// decode reads one event; deny, when not empty, is why the input is
	// refused.
	decode func(data []byte) (c hookCall, deny string)
	// report, when set, answers its reporting events (eventPost) in place
	// of recording an execution.
	report func(ctx context.Context, h *hook, c *hookCall) HookAnswer
	// ttlLag is how long after the hook's deadline its proposal expires (0:
	// hookTTLMargin).
	ttlLag time.Duration
	// answerSource, when set, names the agent's request ids in the store
	// (the call's key is one): an allow is given only once the store has
	// recorded it as that request's one answer (storage.RecordAnswer), in
	// the words answerChoice; a request id answered already is denied.
	answerSource, answerChoice string
	// noPreview: its calls are not previewed (impact), since where the
	// command runs is not known to the hook.
	noPreview bool
}

// callID is the approval id of the call key of session sessionID: prefix
// and 9 bytes of SHA-256, URL-safe base64: 15 characters an operator can
// type.
func callID(prefix, sessionID, key string) string {
	h := sha256.Sum256([]byte(sessionID + "\x00" + key))
	return prefix + base64.RawURLEncoding.EncodeToString(h[:9])
}

// errHookTimeout is the cause of a hook that reached its timeout.
var errHookTimeout = errors.New("hook timeout")

// runHook reads one event from in and decides it in p's protocol:
//   - not a call the hook gates, or an event it has no say in: Silent
//     (after a post-tool event of a call it let through, it records the
//     execution);
//   - malformed input: deny;
//   - a hardline command: deny at once, audited, never submitted (Hermes
//     never runs one, and an operator's approval must not make the agent
//     run it);
//   - a command no rule matches, in a shell the rules cover: the Low policy
//     (Silent, or allow, audited), unless a rule of the policy in force
//     names it: then it is asked, like the rest;
//   - otherwise: submit a proposal (session REQUESTER:SESSION, the call's
//     description as context, its id derived from the call), heartbeat as
//     its waiter, wait for the decision, and allow only an approved proposal
//     whose pinned command is this call's command, byte for byte, and whose
//     risk has not risen since (runtime guard); denied, expired, timed out
//     (withdrawn) or any failure: deny, with the reason.
//
// It never panics: a panic becomes a deny.
func runHook(ctx context.Context, in io.Reader, o HookOptions, p *protocol) (ans HookAnswer) {
	h := &hook{o: o, p: p}
	defer func() {
		if v := recover(); v != nil {
			if o.Log != nil {
				fmt.Fprintf(o.Log, "approve-tui hook: panic: %v\n%s", v, debug.Stack())
			}
			ans = h.deny("internal error (%v); denied to be safe", v)
		}
	}()
	if h.o.Timeout <= 0 {
		h.o.Timeout = DefaultHookTimeout
	}
	switch h.o.Low {
	case "", LowDefer:
		h.o.Low = LowPass
	case LowPass:
	case LowAllow:
		if !p.canAllow {
			return h.deny("--low allow cannot be said in %s's %s protocol; denied to be safe", p.requester, p.preEvent)
		}
	default:
		return h.deny("bad --low policy %q (want pass or allow); denied to be safe", h.o.Low)
	}
	mode, err := checkUnasked(h.o.Unasked)
	if err != nil {
		return h.deny("%v; denied to be safe", err)
	}
	h.o.Unasked = mode
	ctx, cancel := context.WithTimeoutCause(ctx, h.o.Timeout, errHookTimeout)
	defer cancel()

	data, err := readInput(ctx, in)
	if err != nil {
		return h.deny("could not read the %s input: %v", p.preEvent, err)
	}
	c, deny := p.decode(data)
	if deny != "" {
		return h.deny("%s; denied to be safe", deny)
	}
	if c.session == "" && c.sessionID == "" {
		c.noResume = true // no session: another session's call could match
	}
	if !c.answerBy.IsZero() {
		// The agent's own deadline bounds the wait: the hook answers by it.
		left := time.Until(c.answerBy)
		if left < HermesMinWindow {
			return h.deny("%s leaves no time for a decision (%s left); denied", c.timeoutWords, left.Round(time.Millisecond))
		}
		if left < h.o.Timeout {
			h.o.Timeout = left
			var cancel2 context.CancelFunc
			ctx, cancel2 = context.WithTimeoutCause(ctx, left, errHookTimeout)
			defer cancel2()
		}
	}
	switch c.event {
	case eventPost:
		if p.report != nil {
			return p.report(ctx, h, &c)
		}
		h.after(ctx, &c)
		return h.silent()
	case eventOther:
		return h.silent()
	}
	if !c.guarded {
		return h.silent()
	}
	if c.command == nil || strings.TrimSpace(*c.command) == "" {
		return h.deny("a %s call without a command; denied to be safe", c.tool)
	}
	command := *c.command
	if strings.ContainsRune(command, '\uFFFD') {
		// Invalid UTF-8 or a lone surrogate became U+FFFD when decoded: the
		// bytes pinned would not be the ones the agent runs.
		return h.deny("the command holds characters that cannot be pinned exactly (U+FFFD); denied to be safe")
	}

	v := risk.Judge(command, h.judging(c.cwd))
	if v.Hardline {
		return h.hardline(ctx, &c, command, v.Table)
	}
	c.selfWhy = selfDecides(command, c.cwd, h.o.Store, os.Environ())
	mayGo := h.o.Unasked == UnaskedLow || h.o.Unasked == UnaskedReadOnly && v.ReadOnly
	if mayGo && v.Level == model.RiskLow {
		// git may run what the repository's configuration names, which
		// the agent wrote: such a git command is asked, at least medium.
		c.gitWhy = gitRunsCode(command, c.cwd, os.Environ())
	}
	if mayGo && v.Level == model.RiskLow && len(v.Table.Matches) == 0 && !c.unknownRisk && !c.alwaysAsk && c.selfWhy == "" && c.gitWhy == "" {
		// Judged low (read-only, where only that goes unasked): the
		// preview decides whether it is asked (it is kept for the
		// proposal).
		if !h.p.noPreview {
			c.impact = preview(ctx, command, c.cwd, hookShell, hookPreviewTime)
		}
		if unasked(h.o.Unasked, v.Level, v, c.impact) {
			if h.o.Low == LowPass {
				if ans, asked := h.passLow(ctx, &c, command); !asked {
					return ans
				}
			} else if ans, asked := h.allowLow(ctx, &c, command); !asked {
				return ans
			}
			// A rule of the policy in force names it: asked below.
		}
	}
	return h.ask(ctx, &c, command, v)
}

type hook struct {
	o HookOptions
	p *protocol
	// request is the call's key: the agent's request id (answerSource).
	request string
	// submitted is when this process submitted the call's proposal, or,
	// when it rejoined one another process submitted, when it joined: an
	// approval signed before this process asked (less the clock skew) is
	// not this call's, whatever the row's created_at says (a call sent
	// again with the same tool_use_id rejoins a proposal approved once).
	submitted time.Time
	// ttl is how long the call's proposal lives.
	ttl time.Duration
	// match is the call as a parked proposal must match it; window and
	// parking: the park window, and whether parking is on.
	match   model.Match
	callID  string // the id the call's own key derives ("": none)
	agentID string // the agent process that started the hook (HookOptions.Agent)
	window  time.Duration
	parking bool
}

// judging is the judgement's context for a command run in cwd.
func (h *hook) judging(cwd string) risk.Context {
	c := h.o.Risk
	c.Cwd = cwd
	return c
}

func (h *hook) logf(format string, args ...any) {
	if h.o.Log != nil {
		fmt.Fprintf(h.o.Log, "approve-tui: "+format+"\n", args...)
	}
}

func (h *hook) silent() HookAnswer {
	return HookAnswer{Agent: h.p.agent, Silent: true}
}

func (h *hook) deny(format string, args ...any) HookAnswer {
	return HookAnswer{Agent: h.p.agent, Decision: "deny", Reason: "approve-tui: " + fmt.Sprintf(format, args...)}
}

func (h *hook) allow(id, format string, args ...any) HookAnswer {
	return HookAnswer{Agent: h.p.agent, Decision: "allow", Reason: "approve-tui: " + fmt.Sprintf(format, args...), ApprovalID: id}
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
func (h *hook) session(c *hookCall) string {
	if c.session != "" {
		return c.session
	}
	if c.sessionID == "" {
		return h.p.requester + ":unknown"
	}
	return h.p.requester + ":" + c.sessionID
}

// id is the call's approval id ("" when the call has no key).
func (h *hook) id(c *hookCall) string {
	if c.key == "" {
		return ""
	}
	return callID(h.p.idPrefix, c.sessionID, c.key)
}

func (h *hook) policy(c *hookCall, command, decision, reason string, level model.RiskLevel) *storage.PolicyRecord {
	return &storage.PolicyRecord{Decision: decision, Reason: reason, Command: command, Cwd: c.cwd,
		SessionKey: h.session(c), Requester: h.p.requester, Risk: level}
}

// after records what the agent reported of a call it ran: for an approved
// proposal, executed once the command ended (never before), started when
// it was only launched (a background call, whose end the agent does not
// report); for one that was not approved, ran_without_approval
// (ranUnapproved). The report is tied to the proposal by the call's id
// where the agent names the call, else by the call's match, never by a
// guess (reportedCall); anything not tied is left alone. It prints
// nothing: the hook has no say after the fact.
func (h *hook) after(ctx context.Context, c *hookCall) {
	if !c.guarded || c.command == nil || c.outcome == "" || c.key == "" && namesCalls(h.p.agent) {
		return // a report without the call id its agent always gives: not tied
	}
	s, err := h.o.Open(ctx)
	if err != nil {
		h.logf("warning: cannot record the outcome of a call %s reported: %v", agentNames[h.p.agent], err)
		return
	}
	defer s.Close()
	rec, how := h.reportedCall(ctx, s, c)
	if rec == nil {
		return
	}
	id := rec.ApprovalID
	if rec.ExecutionStatus != model.ExecNotStarted {
		return // recorded already: once only
	}
	unapproved := rec.Status != model.StatusConsumed
	if approvedParked(rec) {
		// Approved with a parks row: whether the approval reached a call
		// (every allow of such a proposal takes it first) is the store's
		// to say, from its verified audit log, in the transaction that
		// records the run, never from the row read here. Not taken: the
		// call ran without it, under the agent's own rules.
		_, err := s.RecordRanWithoutApproval(ctx, id, h.ranUnapprovedReason(rec, c, how, rec.Command != *c.command), h.o.Actor)
		var it *storage.InvalidTransitionError
		switch {
		case err == nil:
			h.logf("warning: %s: the call ran while its approval had reached no call", model.Sanitize(id, model.Line))
			return
		case !errors.As(err, &it):
			h.logf("warning: could not record how %s ran: %v", model.Sanitize(id, model.Line), err)
			return
		}
		// Taken by a call: an approved run, recorded below.
	}
	if rec.Command != *c.command {
		// This very call ran another command than the one proposed: its
		// input was changed after the hook answered (another hook's
		// updatedInput, say). An approved proposal is not marked run; the
		// report says it. One never approved ran without approval.
		if unapproved {
			h.ranUnapproved(ctx, s, rec, c, how, true)
			return
		}
		who := agentNames[h.p.agent]
		if err := s.RecordReport(ctx, id, h.p.requester, who+" reported that this call ran another command than the one approved (its input was changed after the approval)",
			map[string]any{"command_run": *c.command, "outcome": string(c.outcome)}, h.o.Actor); err != nil {
			h.logf("warning: could not record that %s ran another command: %v", id, err)
		}
		h.logf("warning: %s: the call ran another command than the one approved", id)
		return
	}
	if unapproved {
		h.ranUnapproved(ctx, s, rec, c, how, false)
		return
	}
	if err := s.RecordExecution(ctx, id, c.outcome, c.outcomeReason, h.o.Actor); err != nil {
		var it *storage.InvalidTransitionError
		if !errors.As(err, &it) {
			h.logf("warning: could not record that %s ran: %v", id, err)
		}
	}
}

// ranUnapproved records that the agent reports running a call whose
// proposal was not approved: it stopped waiting for its hook (at its hook
// timeout, with no signal the hook could answer) and ran it under its own
// rules, or ran it against a deny. The execution becomes
// ran_without_approval with what the agent reported; a proposal still open
// (pending or parked) is closed expired in the same transaction, so that
// nobody approves a call that ran, and the hook process still waiting on
// it answers and ends. A denied or expired one keeps its status.
func (h *hook) ranUnapproved(ctx context.Context, s *storage.Store, rec *storage.Record, c *hookCall, how string, otherCommand bool) {
	h.recordRanUnapproved(ctx, s, rec, h.ranUnapprovedReason(rec, c, how, otherCommand))
}

// hardline denies a hardline command without submitting it; the refusal is
// audited when the store can be written.
func (h *hook) hardline(ctx context.Context, c *hookCall, command string, v risk.Verdict) HookAnswer {
	ans := h.deny("refused: the command matches a hardline rule (%s), which is never run, whoever approves; do not retry it", v.Reason())
	s, err := h.o.Open(ctx)
	if err == nil {
		defer s.Close()
		err = s.RecordPolicy(ctx, h.policy(c, command, storage.PolicyDeny, "hardline: "+v.Reason(), v.Level), h.o.Actor)
	}
	if err != nil {
		h.logf("warning: the hardline refusal could not be audited: %v", err)
	}
	return ans
}

// allowLow allows a command no rule matches under the LowAllow policy: only
// once the decision is audited. asked: a rule of the policy in force names
// the command (the store refused the allow in the transaction that would
// have recorded it), so it must be asked instead (c.policyWhy says why).
func (h *hook) allowLow(ctx context.Context, c *hookCall, command string) (ans HookAnswer, asked bool) {
	s, err := h.o.Open(ctx)
	if err != nil {
		return h.deny("low risk, but the approval store is unavailable to audit it (%v); denied to be safe", err), false
	}
	defer s.Close()
	asked, err = h.lowAsks(ctx, s, c, command, func() error {
		return s.RecordPolicy(ctx, h.policy(c, command, storage.PolicyAllow,
			risk.NoMatchReason+": allowed by the hook's --low allow policy", model.RiskLow), h.o.Actor)
	})
	switch {
	case asked:
		return HookAnswer{}, true
	case err != nil:
		return h.deny("low risk, but the decision could not be audited (%v); denied to be safe", err), false
	}
	return h.allow("", "%s (low risk); allowed by policy", risk.NoMatchReason), false
}

// passLow passes a command no rule matches under the LowPass policy (the
// agent's own rules apply), unless a rule of the policy in force names it:
// then asked, and c.policyWhy says why. A store that does not exist holds
// no policy; one that cannot be read denies (its policy is not known).
func (h *hook) passLow(ctx context.Context, c *hookCall, command string) (ans HookAnswer, asked bool) {
	s, err := h.o.Open(ctx)
	if errors.Is(err, storage.ErrMissing) {
		return h.silent(), false
	}
	if err != nil {
		return h.deny("low risk, but the approval store is unavailable to read its policy (%v); denied to be safe", err), false
	}
	defer s.Close()
	asked, err = h.lowAsks(ctx, s, c, command, func() error {
		return s.PolicyAsks(ctx, h.policy(c, command, storage.PolicyAllow, "", model.RiskLow))
	})
	switch {
	case asked:
		return HookAnswer{}, true
	case err != nil:
		return h.deny("low risk, but the policy in the store could not be read (%v); denied to be safe", err), false
	}
	return h.silent(), false
}

// lowAsks says whether the policy in force asks for command, a low-risk
// call the hook would let through: a signed policy's rule that names it,
// or the store's answer to check (a *storage.PolicyAsksError). Either way
// c.policyWhy says why. err: check failed otherwise.
func (h *hook) lowAsks(ctx context.Context, s *storage.Store, c *hookCall, command string, check func() error) (asked bool, err error) {
	if err := SignedPolicyAsks(ctx, h.o.Trust, s, command, c.cwd, h.session(c), h.p.requester, model.RiskLow, h.o.Risk); err != nil {
		c.policyWhy = signedAsksWords(err)
		return true, nil
	}
	err = check()
	var asks *storage.PolicyAsksError
	if errors.As(err, &asks) {
		c.policyWhy = asks.Error()
		return true, nil
	}
	return false, err
}

// draft is the proposal for the call: the classifier's verdict and the
// call's circumstances in the reason, the call's description (the agent's
// words) apart, as the requester's context; a command in a shell the rules
// do not cover that no rule matches is raised to medium (its risk is not
// known, so it is not shown as low).
func (h *hook) draft(c *hookCall, command string, v risk.Judgement) risk.Draft {
	var notes []string
	switch {
	case c.unknownRisk && len(v.Table.Matches) == 0:
		notes = append(notes, c.tool+" command: the rules are written for POSIX shells, so its risk is unknown")
	case c.unknownRisk:
		notes = append(notes, c.tool+" command: the rules are written for POSIX shells, and may miss more of its risk")
	}
	if c.background {
		notes = append(notes, "runs in the background")
	}
	if c.policyWhy != "" {
		notes = append(notes, c.policyWhy)
	}
	lag := h.p.ttlLag
	if lag <= 0 {
		lag = hookTTLMargin
	}
	d := risk.Draft{Command: command, SessionKey: h.session(c), Requester: h.p.requester, Cwd: c.cwd,
		Backend: "local", Notes: strings.Join(notes, "; "), Context: c.description, TTL: h.o.Timeout + lag + h.window, ID: h.id(c),
		Hermes: c.hermes, Origin: model.LocalOrigin(), Judging: h.o.Risk}
	if c.unknownRisk && len(v.Table.Matches) == 0 {
		d.Raise = model.RiskMedium
	}
	pinned := v.Level
	if d.Raise != "" {
		pinned = d.Raise
	}
	if c.raise.Valid() && c.raise.Rank() > pinned.Rank() {
		d.Raise, d.RaiseWhy = c.raise, c.raiseWhy
	}
	raiseGit(&d, c.gitWhy)
	raiseSelf(&d, c.selfWhy)
	return d
}

// hookPreviewTime bounds a hook's impact preview: the agent waits for the
// hook, within its own timeout.
var hookPreviewTime = time.Second

// ask submits (or rejoins) the proposal and waits for the decision. With
// parking on, it first looks for the same call parked (FindParked): an
// approved one is taken and answered, a pending one is waited on as if
// this process had submitted it; otherwise the proposal is submitted with
// its reservation, and parked when the wait stops.
func (h *hook) ask(ctx context.Context, c *hookCall, command string, v risk.Judgement) HookAnswer {
	h.request = c.key
	h.callID = h.id(c)
	h.agentID = h.o.Agent
	if h.agentID == "" {
		h.agentID = agentProcess()
	}
	h.window, h.parking = parkWindow(h.o.ParkWindow)
	if h.parking && c.noResume {
		h.window, h.parking = 0, false
	}
	if h.p.agent != AgentHermes {
		// An agent that ends without signalling its hook (Codex at the
		// end of `codex exec`) leaves it waiting for nobody: the wait ends
		// when the process that started the hook is gone.
		var stop func()
		ctx, stop = whileParentLives(ctx, parentPoll)
		defer stop()
	}
	s, err := h.o.Open(ctx)
	if err != nil {
		return h.deny("the approval store is unavailable (%v); denied to be safe", err)
	}
	defer s.Close()
	d := h.draft(c, command, v)
	h.ttl = d.TTL
	switch {
	case h.p.noPreview:
	case c.impact != nil:
		pinImpact(&d, c.impact) // made already, for a command no rule matches
	default:
		withImpact(ctx, &d, hookShell, hookPreviewTime)
	}
	p, _, err := risk.Propose(d, s.Now())
	if err != nil {
		return h.deny("could not make a proposal (%v); denied to be safe", err)
	}
	h.match = model.MatchOf(p)
	id := p.ApprovalID
	started := time.Now()
	var waiting func()
	resumed := false
	if h.parking {
		rec, _, ferr := s.FindParked(ctx, h.match)
		var tk *storage.TakenError
		switch {
		case errors.As(ferr, &tk):
			if !sameCallTake(ctx, s, tk.ID, tk, asker(h.o.Actor, h.callID, h.agentID), h.callID) {
				return h.deny("%s", takenWords(tk))
			}
			// This very call took it (a second hook process on it): as
			// any rejoin, below.
		case ferr == nil:
			// The same call, asked again: its parked proposal, not a new one.
			id, resumed = rec.ApprovalID, true
			h.submitted = model.FromEpoch(rec.CreatedAt)
			if rec.ExpiresAt != nil {
				h.ttl = model.FromEpoch(*rec.ExpiresAt).Sub(h.submitted)
			}
			if rec.EffectiveStatus == model.StatusConsumed {
				h.logf("%s: this call was parked and is approved; taking the approval", id)
				return h.decided(ctx, s, rec, command)
			}
			h.logf("%s: this call was parked; waiting on it again", id)
		case !errors.Is(ferr, storage.ErrNotFound):
			return h.deny("could not look for this call parked (%v); denied to be safe", ferr)
		}
	}
	if !resumed {
		if h.parking {
			err = s.SubmitReserved(ctx, p, model.FromEpoch(*p.ExpiresAt), h.o.Actor)
		} else {
			err = s.Submit(ctx, p, h.o.Actor)
		}
	}
	var dup *storage.DuplicateError
	switch {
	case resumed:
	case errors.As(err, &dup):
		// Another hook process on the same call submitted it: wait on that
		// proposal, if it is this call's.
		rec, gerr := s.Get(ctx, id)
		if gerr != nil {
			return h.deny("could not read proposal %s (%v); denied to be safe", id, gerr)
		}
		if rec.Command != command || rec.SessionKey != p.SessionKey {
			return h.deny("proposal %s already exists for another command; denied to be safe", id)
		}
		h.logf("%s: rejoining the proposal already submitted for call %s", id, model.Sanitize(c.key, model.Line))
		h.submitted = s.Now()
		if rec.Park != nil && !rec.Park.Reserved() {
			// Parked by a hook on this very call (Claude Code resuming a
			// deferred call): what the approval was given for.
			h.submitted = model.FromEpoch(rec.CreatedAt)
		}
	case err != nil:
		if ctx.Err() != nil {
			return h.deny("timed out submitting the proposal (%v); denied to be safe", err)
		}
		return h.deny("could not submit the proposal (%v); denied to be safe", err)
	default:
		h.submitted = model.FromEpoch(p.CreatedAt)
		// Said once the hook is the proposal's registered waiter (a
		// console that sees the proposal sees a live waiter).
		waiting = func() {
			h.logf("%s needs approval (%s risk: %s); waiting up to %s", id, p.RiskLevel, model.Sanitize(p.RiskReason, model.Line), h.o.Timeout.Round(100*time.Millisecond))
		}
	}
	deferring := false
	if h.parking && h.o.Defer && c.canDefer != nil {
		if why := c.canDefer(); why != "" {
			h.logf("%s: not deferred, parked and denied instead: %s", id, why)
		} else {
			deferring = true
		}
	}
	if deferring {
		// The session resumes the call later: park it now, and answer
		// defer; one decided already is answered as such.
		rec, err := s.Get(ctx, id)
		if err != nil {
			return h.deny("could not read proposal %s (%v); denied to be safe", id, err)
		}
		if !rec.EffectiveStatus.Open() {
			return h.decided(ctx, s, rec, command)
		}
		return h.stopped(ctx, s, id, command, nil, "deferred to the operator (Claude Code defer)", true)
	}

	rec, werr := WaitDecision(ctx, s, id, WaitOptions{Surface: model.SurfaceHook, Every: h.o.HeartbeatEvery,
		OnError:    func(err error) { h.logf("warning: %v", err) },
		OnProgress: func(q *storage.Quorum) { h.logf("%s: %s", id, QuorumWords(q)) }, Waiting: waiting})
	if werr != nil {
		if h.parking && ctx.Err() != nil {
			return h.stopped(ctx, s, id, command, rec, stopWhy(context.Cause(ctx), c.timeoutWords, h.o.Timeout), false)
		}
		if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errHookTimeout) && h.p.agent != AgentHermes {
			// The agent stopped waiting (it signals its hook at its own
			// hook timeout) and decides alone what happens next.
			return h.abandon(ctx, s, id, command, context.Cause(ctx), time.Since(started))
		}
		reason := "requester interrupted"
		switch {
		case errors.Is(context.Cause(ctx), errHookTimeout) && c.timeoutWords != "":
			reason = c.timeoutWords
		case errors.Is(context.Cause(ctx), errHookTimeout):
			reason = "requester timed out after " + h.o.Timeout.String()
		case ctx.Err() == nil:
			reason = "requester stopped waiting: " + werr.Error()
		}
		return h.giveUp(ctx, s, id, command, reason)
	}
	return h.decided(ctx, s, rec, command)
}

// stopped parks id when the hook stops waiting (why says why) and answers
// the parked deny (or, deferring, Claude Code's defer). A decision that
// raced the stop is answered as such when the hook's own timeout ended the
// wait (the agent still reads the answer): an approval is taken and
// allowed. Where the agent stopped the hook, an approval it has not seen
// is parked all the same, for the retry to take. Parking that fails
// (the window would end past the expiry, the store refused) falls back
// to withdrawing it.
func (h *hook) stopped(ctx context.Context, s *storage.Store, id, command string, rec *storage.Record, why string, deferring bool) HookAnswer {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	agentStopped := ctx.Err() != nil && !errors.Is(context.Cause(ctx), errHookTimeout)
	if rec != nil && !rec.EffectiveStatus.Open() && (rec.EffectiveStatus != model.StatusConsumed || !agentStopped) {
		return h.decided(wctx, s, rec, command)
	}
	now := s.Now()
	pk, err := s.Park(wctx, id, now.Add(h.window), why, model.Actor{Surface: model.SurfaceHook, Name: "requester", Detail: fmt.Sprintf("pid %d", os.Getpid())})
	var np *storage.NotPendingError
	var tk *storage.TakenError
	switch {
	case err == nil:
		h.logf("%s: parked (%s) until %s", id, why, model.FromEpoch(pk.Until).UTC().Format(time.RFC3339))
		if deferring {
			return HookAnswer{Agent: h.p.agent, Decision: "defer", ApprovalID: id,
				Reason: "approve-tui: " + parkedWords(id, h.paged(s, id), model.FromEpoch(pk.Until))}
		}
		return h.deny("%s", parkedWords(id, h.paged(s, id), model.FromEpoch(pk.Until)))
	case errors.As(err, &tk):
		return h.deny("%s", takenWords(tk))
	case errors.As(err, &np):
		if got, gerr := s.Get(wctx, id); gerr == nil && !got.EffectiveStatus.Open() {
			return h.decided(wctx, s, got, command)
		}
	}
	h.logf("warning: could not park %s: %v", id, err)
	if deferring {
		return h.deny("%s could not be parked (%v); denied, not run", id, err)
	}
	return h.giveUp(ctx, s, id, command, "requester stopped waiting ("+why+") and could not park it")
}

// paged says whether a configured paging route matches proposal id.
func (h *hook) paged(s *storage.Store, id string) bool {
	if h.o.Paged == nil {
		return false
	}
	rctx, cancel := context.WithTimeout(context.Background(), finalReadTimeout)
	defer cancel()
	rec, err := s.Get(rctx, id)
	if err != nil {
		return false
	}
	return h.o.Paged(rec)
}

// giveUp withdraws id (denied by actor "requester"); a decision that raced
// the withdrawal is reported as it is, an approval that did is recorded as
// blocked_after_consume. Always deny.
func (h *hook) giveUp(ctx context.Context, s *storage.Store, id, command, reason string) HookAnswer {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	_, err := s.Deny(wctx, id, model.Actor{Surface: model.SurfaceHook, Name: "requester", Detail: fmt.Sprintf("pid %d", os.Getpid())}, reason)
	if err == nil {
		return h.deny("%s: no decision on %s; withdrawn, not run", reason, id)
	}
	var np *storage.NotPendingError
	if errors.As(err, &np) {
		if rec, gerr := s.Get(wctx, id); gerr == nil {
			if rec.EffectiveStatus == model.StatusConsumed {
				h.block(wctx, s, id, reason+", before answering")
				return h.deny("%s: %s was approved too late; not run", reason, id)
			}
			return h.decided(wctx, s, rec, command)
		}
	}
	return h.deny("%s: not run; %s could not be withdrawn (%v)", reason, id, err)
}

// agentNames are the agents as a reason names them.
var agentNames = map[Agent]string{AgentClaudeCode: "Claude Code", AgentCodex: "Codex", AgentGemini: "Gemini CLI"}

// abandon ends id when the agent stopped waiting for the hook (it sent the
// signal that cause describes, as agents do at their hook timeout): the
// proposal is expired as abandoned (storage.Abandon), not denied, since
// nobody decided and the agent may run the command under its own rules;
// what became of it is not known here. A decision that raced it is
// answered as giveUp answers it. Always deny: if the agent still reads the
// answer, nothing was approved.
//
// The signal is what an agent sends at its hook timeout, but any process of
// the user's may send it (the agent's own model, through a command it
// runs): the reason says how long the hook had waited, not that the
// agent's timeout was reached.
func (h *hook) abandon(ctx context.Context, s *storage.Store, id, command string, cause error, waited time.Duration) HookAnswer {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	why := signalWords(cause)
	who := agentNames[h.p.agent]
	reason := fmt.Sprintf("%s stopped waiting for a decision (its hook got %s after %s of waiting: %s sends it at its hook timeout, "+
		"but any process of this user can); nobody decided, and %s may run the command under its own rules: whether it ran is not known",
		who, why, human.Duration(waited.Round(time.Second)), who, who)
	var gone errParentGone
	if errors.As(cause, &gone) {
		why = gone.Error()
		reason = fmt.Sprintf("%s stopped waiting for a decision (%s while its hook waited); nobody decided, "+
			"and %s may have run the command under its own rules: whether it ran is not known", who, why, who)
	}
	_, err := s.Abandon(wctx, id, reason, model.Actor{Surface: model.SurfaceHook, Name: "requester", Detail: fmt.Sprintf("pid %d", os.Getpid())})
	if err == nil {
		h.logf("%s: %s", id, reason)
		return h.deny("%s stopped waiting (%s): %s was not decided; abandoned, not approved", who, why, id)
	}
	var np *storage.NotPendingError
	if errors.As(err, &np) {
		if rec, gerr := s.Get(wctx, id); gerr == nil {
			if rec.EffectiveStatus == model.StatusConsumed {
				// Approved as the agent gave up: the approval was not
				// given to it, and what the agent did under its own rules
				// is not known, so nothing is recorded as run or not run.
				if rerr := s.RecordReport(wctx, id, h.p.requester, "approved after "+who+" stopped waiting for the hook ("+why+
					"); the approval was not given to it, and whether it ran the command under its own rules is not known", nil, h.o.Actor); rerr != nil {
					h.logf("warning: could not record that %s was approved too late: %v", id, rerr)
				}
				return h.deny("%s stopped waiting (%s): %s was approved too late; not given", who, why, id)
			}
			return h.decided(wctx, s, rec, command)
		}
	}
	return h.deny("%s stopped waiting (%s): %s could not be marked abandoned (%v); not approved", who, why, id, err)
}

// parentPoll is how often a hook checks that the process that started it
// is still there.
var parentPoll = time.Second

// errParentGone is the cause of a wait ended because the hook's parent
// process is gone.
type errParentGone struct{ pid int }

func (e errParentGone) Error() string { return fmt.Sprintf("its agent (pid %d) ended", e.pid) }

// whileParentLives is ctx, cancelled with an errParentGone cause once this
// process's parent changes (the parent ended, and the process was
// reparented). stop ends the watch.
func whileParentLives(ctx context.Context, every time.Duration) (context.Context, func()) {
	ppid := os.Getppid()
	ctx, cancel := context.WithCancelCause(ctx)
	if ppid <= 1 {
		return ctx, func() { cancel(nil) }
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if os.Getppid() != ppid {
					cancel(errParentGone{ppid})
					return
				}
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() { close(done) })
		cancel(nil)
	}
}

// signalWords names the signal that ended a hook's wait, from its
// context's cause (os/signal's "terminated signal received"): SIGTERM,
// SIGINT, SIGHUP, or the cause's own words.
func signalWords(cause error) string {
	if cause == nil {
		return "interrupted"
	}
	switch s := cause.Error(); s {
	case "terminated signal received":
		return "SIGTERM"
	case "interrupt signal received":
		return "SIGINT"
	case "hangup signal received":
		return "SIGHUP"
	default:
		return s
	}
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
		return h.deny("%s", msg)
	case model.StatusExpired:
		return h.deny("%s expired with no decision; not run", id)
	case model.StatusConsumed:
	default:
		return h.deny("%s has an unexpected status %q; denied to be safe", id, string(rec.EffectiveStatus))
	}
	if rec.ExecutionStatus != model.ExecNotStarted {
		// Answered before (a repeated request, a deferred call resumed
		// again, whatever call id asks): an approval is one run, for
		// every agent.
		return h.deny("%s was approved once and already answered (execution %s); not again", id, string(rec.ExecutionStatus))
	}
	// Parked or reserved: exactly one asker takes the approval, this one
	// included, before every runtime check below.
	rec, refused, notThis := takeParked(ctx, s, rec, h.match, h.o.Actor, h.callID, h.agentID)
	if notThis {
		// Rewritten since it was submitted: refused below, after the
		// checks that say it more precisely.
		refused = ""
	} else if refused != "" {
		return h.deny("%s", refused)
	}
	signed := ""
	if h.o.Trust.Required() {
		// Signed by enough people, over exactly this: checked from the
		// rows and the trust file, before anything else is believed.
		chk, err := VerifySignatures(ctx, h.o.Trust, s, rec, Self{Requesters: RequesterNames(), Since: h.submitted, MaxAge: h.ttl})
		if err != nil {
			words := refuseSignatures(ctx, s, id, err, h.o.Actor, h.logf)
			h.block(ctx, s, id, ReasonSignatureInvalid)
			return h.deny("%s was approved but is refused: its signatures do not hold: %s", id, words)
		}
		signed = ", " + chk.Words()
	}
	// Approved: exactly this command, and no riskier than when pinned.
	var why string
	switch {
	case rec.Corrupt != "":
		why = "the proposal is corrupt: " + rec.Corrupt
	case rec.Command != command:
		why = "command bytes differ from the pinned ones"
	default:
		if err := risk.Guard(rec.RiskLevel, rec.Command, h.judging(rec.Cwd)); err != nil {
			why = err.Error()
		} else if notThis {
			why = "the proposal is not the call submitted any more (another session, requester or directory)"
		}
	}
	if why != "" {
		h.block(ctx, s, id, why)
		return h.deny("%s was approved but is refused at run time: %s", id, why)
	}
	if grew := impactGrew(ctx, rec, hookShell, hookPreviewTime); len(grew) > 0 {
		if err := recordGrowth(ctx, s, id, grew, h.o.Actor); err != nil {
			h.logf("warning: could not record what grew: %v", err)
		}
		h.block(ctx, s, id, ReasonImpactGrew)
		return h.deny("%s was approved but is refused: what it would touch grew since: %s", id, strings.Join(grew, "; "))
	}
	if rec.Park == nil && h.callID != "" && h.p.answerSource == "" {
		// Its own waiter answers it (parking off), every check above
		// passed: the allow is recorded as a take, so that the same call
		// id asked again before its run is reported (a replayed request,
		// a re-issued call) is refused, while the parallel hook processes
		// of this one call go on. (A
		// protocol whose answers are recorded by request id is refused a
		// second answer by RecordAnswer below.)
		err := s.TakeAnswered(ctx, id, asker(h.o.Actor, h.callID, h.agentID))
		var tk *storage.TakenError
		switch {
		case err == nil:
		case errors.As(err, &tk) && sameCallTake(ctx, s, id, tk, asker(h.o.Actor, h.callID, h.agentID), h.callID):
		case errors.As(err, &tk):
			return h.deny("%s", takenWords(tk))
		default:
			return h.deny("%s was approved, but its allow could not be recorded (%v); not run", id, err)
		}
	}
	if h.p.answerSource != "" {
		// The answer is recorded before it is given, in the transaction
		// that checks it is the request's first: a replayed request id, in
		// this process or another, is refused there.
		err := s.RecordAnswer(ctx, storage.Answer{Source: h.p.answerSource, RequestID: h.request, ApprovalID: id,
			Command: command, Decision: h.p.answerChoice}, h.o.Actor)
		var aa *storage.AlreadyAnsweredError
		switch {
		case errors.As(err, &aa):
			return h.deny("%s; not answered again", aa.Error())
		case err != nil:
			return h.deny("%s was approved, but its answer could not be recorded before giving it (%v); denied to be safe", id, err)
		}
	}
	return h.allow(id, "approved%s (%s%s): this command, once", by, id, signed)
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
