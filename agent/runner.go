package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// Exit codes of Run. When the command ran, Run exits with the command's own
// code (128+N when signal N killed it); these are the others. They follow
// `approve-tui wait` (10, 11, 12, 130), SPEC §4 (1, 6) and the shells
// (126, 127).
const (
	ExitError       = 1   // any other error
	ExitUnavailable = 6   // the store is unavailable: nothing was submitted or run
	ExitDenied      = 10  // the operator denied it: not run
	ExitExpired     = 11  // it expired with no decision: not run
	ExitTimedOut    = 12  // --timeout passed: withdrawn, not run
	ExitHardline    = 13  // a hardline rule matched: refused without a proposal, not run
	ExitBlocked     = 14  // approved, then refused by the runtime guard or the pinned-bytes check: not run
	ExitCannotRun   = 126 // approved, but the command could not be started
	ExitNotFound    = 127 // approved, but the command was not found
	ExitInterrupted = 130 // interrupted while waiting (SIGINT, SIGTERM, SIGHUP): withdrawn, not run
)

// Outcomes of Run.
const (
	RunRan            = "ran"                   // it ran (approved, or allowed because no rule matched)
	RunDenied         = "denied"                // denied by an operator
	RunExpired        = "expired"               // expired with no decision
	RunTimedOut       = "timed_out"             // the requester gave up (--timeout) and withdrew it
	RunInterrupted    = "interrupted"           // the requester was interrupted and withdrew it
	RunBlocked        = "blocked_after_consume" // approved but refused at run time
	RunHardline       = "hardline"              // refused without a proposal
	RunDispatchFailed = "dispatch_failed"       // approved but could not be started
	RunTaken          = "taken"                 // parked and approved, but another asker took the approval: not run
)

// ShellPath is the shell that runs a --shell command line.
const ShellPath = "/bin/sh"

// RunRequest is what to run and how to ask for it.
type RunRequest struct {
	// Argv is the command to run without a shell (argv mode); its pinned
	// form is QuoteArgs(Argv). Exactly one of Argv and Shell is set.
	Argv []string
	// Shell is a command line for ShellPath -c (shell mode), pinned as is.
	Shell string
	// Draft carries everything else the proposal pins (session, requester,
	// cwd, backend, context, raised risk, TTL, diff). Its Command is set by
	// Run; an empty Cwd is the current directory.
	Draft risk.Draft
	// Timeout is how long to wait for a decision (0: until the proposal is
	// decided or expires). When it passes, the proposal is withdrawn.
	Timeout time.Duration
	// Stdin, Stdout and Stderr are passed to the command.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Log receives the runner's own messages (nil: none).
	Log io.Writer
	// Signals are the signals this process receives (SIGINT, SIGTERM,
	// SIGHUP): while it waits, the first one withdraws the proposal; while
	// the command runs, each is passed on to it. nil: none.
	Signals <-chan os.Signal
	// Actor submits and records outcomes (its surface should be runner).
	Actor model.Actor
	// HeartbeatEvery is the waiter's heartbeat interval (0: the default).
	HeartbeatEvery time.Duration
	// Unasked is what runs without a proposal (--unasked): UnaskedNothing,
	// UnaskedReadOnly or UnaskedLow ("": UnaskedLow). The draft's Judging
	// is what commands are judged with besides their cwd.
	Unasked string
	// Trust is the trust configuration (nil or mode off: no check). Where
	// it is required, an approved proposal runs only with valid
	// signatures from enough principals (VerifySignatures).
	Trust *trust.Settings
	// ParkWindow is how long the proposal stays open after --timeout
	// passed (or SIGTERM or SIGHUP ended the wait), so that the same run
	// asked again (same requester, session, command and cwd) takes a late
	// approval, once (0: DefaultParkWindow; negative: parking off, the
	// proposal is withdrawn as before). The proposal's TTL covers wait
	// and window.
	ParkWindow time.Duration
	// Paged, when set, says whether a configured paging route matches the
	// proposal, for the parked message (nil: none does).
	Paged func(*storage.Record) bool
}

// RunResult says what Run did.
type RunResult struct {
	// ApprovalID is the proposal submitted ("" when none was).
	ApprovalID string
	// PolicyRef is the audit reference of a command decided by policy
	// alone (allowed because no rule matched, or hardline).
	PolicyRef string
	// Outcome is one of the Run* outcomes.
	Outcome string
	// ExitCode is the process exit code: the command's own when it ran.
	ExitCode int
	// Message says, in one line, why the command did not run ("" when it
	// ran: its own output speaks).
	Message string
}

// propose pins a draft into a proposal; tests replace it to pin a risk the
// classifier would not give.
var propose = risk.Propose

// errTimedOut is the cause of a wait that reached RunRequest.Timeout.
var errTimedOut = errors.New("timed out")

// recordTimeout bounds each write after the wait ended (the store's own
// lock timeout usually ends it sooner).
const recordTimeout = time.Minute

// Run is `approve-tui run`: it classifies the command and
//   - runs it at once when no risk rule matches and no rule of the policy
//     in force names it (audited as allowed by policy);
//   - refuses it without submitting when a hardline rule matches (audited);
//   - otherwise submits a proposal pinning the command and its risk,
//     heartbeats as its waiter, and waits for the decision by watching the
//     store. Approved: the runtime guard re-classifies the command, the
//     consumed proposal's command bytes must be the ones submitted, then
//     exactly those bytes run, with stdin, stdout, stderr and signals passed
//     through; started (with the pid) is recorded once the process exists,
//     executed (with the exit code) once it ended, dispatch_failed if it
//     could not start, blocked_after_consume if it was refused. Denied,
//     expired, timed out or interrupted: it never runs; on a timeout or an
//     interrupt the proposal is withdrawn (denied by actor "requester") so
//     that nobody approves a request nobody waits on.
//
// The error is for what stopped Run before it could decide (the store was
// unavailable, the request was malformed); then nothing ran.
func Run(ctx context.Context, s *storage.Store, req RunRequest) (RunResult, error) {
	command, shell, err := req.command()
	if err != nil {
		return RunResult{}, err
	}
	if req.Unasked, err = checkUnasked(req.Unasked); err != nil {
		return RunResult{}, err
	}
	d := req.Draft
	d.Command = command
	if d.Cwd == "" {
		if d.Cwd, err = os.Getwd(); err != nil {
			return RunResult{}, fmt.Errorf("current directory: %w", err)
		}
	}
	if !risk.Classify(command).Hardline {
		// A hardline command is refused unseen: nothing to preview.
		withImpact(ctx, &d, runnerShell, previewTime)
	}
	// A command that would decide approvals is always asked, at least high.
	raiseSelf(&d, selfDecides(command, d.Cwd, s.DSN(), os.Environ()))
	if req.Unasked != UnaskedNothing {
		// git may run what the repository's configuration names, which
		// the agent wrote: such a git command is asked, at least medium.
		raiseGit(&d, gitRunsCode(command, d.Cwd, os.Environ()))
	}
	p, v, err := propose(d, s.Now())
	if err != nil {
		return RunResult{}, err
	}
	r := &runner{s: s, req: req, shell: shell}
	if v.Hardline {
		return r.refuseHardline(ctx, p, v.Table), nil
	}
	if unasked(req.Unasked, p.RiskLevel, v, p.Impact) {
		// Under trust required the policy a policy signer signed binds
		// too, whatever the store's newest policy row says.
		if err := SignedPolicyAsks(ctx, req.Trust, s, p.Command, p.Cwd, p.SessionKey, p.Requester, model.RiskLow, d.Judging); err != nil {
			p.RiskReason += "; " + signedAsksWords(err)
			return r.askAndRun(ctx, p)
		}
		res, err := r.runAllowed(ctx, p)
		var asks *storage.PolicyAsksError
		if !errors.As(err, &asks) {
			return res, err
		}
		// A rule of the policy in force names it: it is asked, whatever
		// its risk, and the reason says which rule.
		p.RiskReason += "; " + asks.Error()
	}
	return r.askAndRun(ctx, p)
}

// command is the command line to pin and whether it runs in a shell.
func (req *RunRequest) command() (string, bool, error) {
	switch {
	case len(req.Argv) > 0 && req.Shell != "":
		return "", false, errors.New("give either a command and its arguments or a shell line, not both")
	case req.Shell != "":
		if strings.TrimSpace(req.Shell) == "" {
			return "", false, errors.New("the shell line is empty")
		}
		return req.Shell, true, nil
	case len(req.Argv) > 0:
		if req.Argv[0] == "" {
			return "", false, errors.New("the command name is empty")
		}
		return QuoteArgs(req.Argv), false, nil
	}
	return "", false, errors.New("nothing to run")
}

type runner struct {
	s     *storage.Store
	req   RunRequest
	shell bool

	hbOnce sync.Once
	// match is the run as a parked proposal must match it; resumed, when
	// set, is when the parked proposal it resumed was submitted.
	match   model.Match
	resumed time.Time
	// notThis, when set, is why the approved proposal is not this run's
	// (its take was refused: rewritten since it was submitted).
	notThis string
}

// since is when the run's proposal was submitted: the parked one's time
// when it resumed one.
func (r *runner) since(p *model.Proposal) time.Time {
	if !r.resumed.IsZero() {
		return r.resumed
	}
	return model.FromEpoch(p.CreatedAt)
}

func (r *runner) logf(format string, args ...any) {
	if r.req.Log != nil {
		fmt.Fprintf(r.req.Log, "approve-tui: "+format+"\n", args...)
	}
}

// bg is a context for the writes that must happen whatever became of ctx
// (the outcome of a command that ran, a withdrawal after an interrupt).
func bg(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
}

// refuseHardline audits the refusal of a hardline command; it is never
// submitted (Hermes never runs one, whatever an operator says).
func (r *runner) refuseHardline(ctx context.Context, p *model.Proposal, v risk.Verdict) RunResult {
	pol := &storage.PolicyRecord{Decision: storage.PolicyDeny, Reason: "hardline: " + v.Reason(), Command: p.Command,
		Cwd: p.Cwd, SessionKey: p.SessionKey, Requester: p.Requester, Risk: v.Level}
	msg := fmt.Sprintf("refused, not submitted and not run: the command matches a hardline rule (%s), which is never run", v.Reason())
	if err := r.s.RecordPolicy(ctx, pol, r.req.Actor); err != nil {
		msg += "; the refusal could not be audited: " + err.Error()
	}
	return RunResult{PolicyRef: pol.Ref, Outcome: RunHardline, ExitCode: ExitHardline, Message: msg}
}

// runAllowed runs a command no rule matched, without a proposal. The
// decision is audited before the command starts (no audit, no run) and
// its outcome after it ended.
func (r *runner) runAllowed(ctx context.Context, p *model.Proposal) (RunResult, error) {
	cmd, err := r.build(p.Command, p.Cwd)
	if err != nil {
		return RunResult{}, err
	}
	pol := &storage.PolicyRecord{Decision: storage.PolicyAllow, Reason: risk.NoMatchReason + ": runs without approval",
		Command: p.Command, Cwd: p.Cwd, SessionKey: p.SessionKey, Requester: p.Requester, Risk: model.RiskLow}
	if err := r.s.RecordPolicy(ctx, pol, r.req.Actor); err != nil {
		return RunResult{}, fmt.Errorf("not run: the policy decision could not be audited: %w", err)
	}
	res := r.execute(cmd, nil, func(outcome model.ExecutionStatus, reason string) {
		ev := &storage.PolicyRecord{Ref: pol.Ref, Decision: storage.PolicyExecuted, Reason: reason, Command: p.Command}
		if outcome == model.ExecDispatchFailed {
			ev.Decision = storage.PolicyDispatchFailed
		}
		wctx, cancel := bg(ctx)
		defer cancel()
		if err := r.s.RecordPolicy(wctx, ev, r.req.Actor); err != nil {
			r.logf("warning: could not record the outcome (%s) of %s: %v", reason, pol.Ref, err)
		}
	})
	res.PolicyRef = pol.Ref
	return res, nil
}

// askAndRun submits the proposal, waits for the decision and acts on it.
func (r *runner) askAndRun(ctx context.Context, p *model.Proposal) (RunResult, error) {
	window, parking := parkWindow(r.req.ParkWindow)
	if parking && hookRequester(p.Requester) {
		// --requester names a hook protocol: a run neither resumes a
		// hook's parked call (its approval is that agent's call's) nor
		// parks one a hook would resume.
		r.logf("not parking: requester %q is a hook's; this run neither resumes nor parks a call", model.Sanitize(p.Requester, model.Line))
		window, parking = 0, false
	}
	r.match = model.MatchOf(p)
	id := p.ApprovalID
	resumed := false
	if parking {
		if r.req.Timeout > 0 {
			// The TTL covers the wait and the park window.
			if end := p.CreatedAt + (r.req.Timeout + window).Seconds(); p.ExpiresAt == nil || *p.ExpiresAt < end {
				p.ExpiresAt = model.F64(end)
			}
		}
		rec, _, err := r.s.FindParked(ctx, r.match)
		var tk *storage.TakenError
		switch {
		case errors.As(err, &tk):
			return RunResult{ApprovalID: tk.ID, Outcome: RunTaken, ExitCode: ExitBlocked, Message: takenWords(tk)}, nil
		case err == nil:
			id, resumed = rec.ApprovalID, true
			r.resumed = model.FromEpoch(rec.CreatedAt)
			if rec.EffectiveStatus == model.StatusConsumed {
				r.logf("%s: this run was parked and is approved; taking the approval", id)
				return r.decided(ctx, p, rec)
			}
			r.logf("%s: this run was parked; waiting on it again", id)
		case !errors.Is(err, storage.ErrNotFound):
			return RunResult{}, fmt.Errorf("not run: could not look for this run parked: %w", err)
		}
	}
	switch {
	case resumed:
	case parking && p.ExpiresAt != nil:
		if err := r.s.SubmitReserved(ctx, p, model.FromEpoch(*p.ExpiresAt), r.req.Actor); err != nil {
			return RunResult{}, err
		}
	default:
		if err := r.s.Submit(ctx, p, r.req.Actor); err != nil {
			return RunResult{}, err
		}
	}
	limit := ""
	if r.req.Timeout > 0 {
		limit = " (giving up after " + r.req.Timeout.String() + ")"
	}
	// Said once this process is the proposal's registered waiter: a
	// console that sees the proposal sees a live waiter. A proposal
	// decided before that is still named, after the wait.
	said := false
	say := func() {
		said = true
		r.logf("%s needs approval (%s risk: %s); waiting for a decision%s. Approve it in the console, or: approve-tui approve %s",
			id, p.RiskLevel, model.Sanitize(p.RiskReason, model.Line), limit, id)
	}
	rec, werr, sig := r.await(ctx, id, say)
	if !said {
		r.logf("%s: submitted (%s risk: %s)", id, p.RiskLevel, model.Sanitize(p.RiskReason, model.Line))
	}
	switch {
	case parking && sig != nil && sig != os.Interrupt:
		// Its caller ended it (an agent's tool timeout, a closed terminal):
		// parked for the same run asked again.
		return r.park(ctx, id, window, RunInterrupted, ExitInterrupted, "it got "+signalName(sig)), nil
	case parking && werr != nil && errors.Is(werr, errTimedOut):
		return r.park(ctx, id, window, RunTimedOut, ExitTimedOut, "run --timeout "+r.req.Timeout.String()), nil
	case sig != nil:
		return r.giveUp(ctx, id, RunInterrupted, ExitInterrupted, "requester interrupted ("+signalName(sig)+")"), nil
	case werr != nil && errors.Is(werr, errTimedOut):
		return r.giveUp(ctx, id, RunTimedOut, ExitTimedOut, "requester timed out after "+r.req.Timeout.String()), nil
	case werr != nil && ctx.Err() != nil:
		return r.giveUp(ctx, id, RunInterrupted, ExitInterrupted, "requester cancelled"), nil
	case werr != nil:
		// The store failed while waiting: withdraw if it still can.
		wctx, cancel := bg(ctx)
		defer cancel()
		_, _ = r.s.Deny(wctx, id, r.requester(), "requester stopped waiting: "+werr.Error())
		return RunResult{ApprovalID: id}, fmt.Errorf("not run: waiting for %s failed: %w", id, werr)
	}
	return r.decided(ctx, p, rec)
}

// await waits for the decision on id; the first signal ends the wait.
func (r *runner) await(ctx context.Context, id string, waiting func()) (*storage.Record, error, os.Signal) {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if r.req.Timeout > 0 {
		var stop context.CancelFunc
		wctx, stop = context.WithTimeoutCause(wctx, r.req.Timeout, errTimedOut)
		defer stop()
	}
	var got os.Signal
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		sigs := r.req.Signals
		for {
			select {
			case sig, ok := <-sigs:
				if !ok {
					sigs = nil
					continue
				}
				got = sig
				cancel(fmt.Errorf("interrupted by %s", signalName(sig)))
				return
			case <-done:
				return
			}
		}
	}()
	rec, err := WaitDecision(wctx, r.s, id, WaitOptions{Surface: model.SurfaceRunner, Every: r.req.HeartbeatEvery, OnError: r.heartbeatError,
		OnProgress: func(q *storage.Quorum) { r.logf("%s: %s", id, QuorumWords(q)) }, Waiting: waiting})
	close(done)
	<-stopped
	return rec, err, got
}

func (r *runner) heartbeatError(err error) {
	r.hbOnce.Do(func() {
		r.logf("warning: %v (the console may not see this process waiting)", err)
	})
}

// requester is the actor of a withdrawal: the requester itself.
func (r *runner) requester() model.Actor {
	return model.Actor{Surface: model.SurfaceRunner, Name: "requester", Detail: fmt.Sprintf("pid %d", os.Getpid())}
}

// giveUp withdraws id after a timeout or an interrupt: nothing runs. A
// decision that raced the withdrawal is reported as it is; an approval that
// did is recorded as blocked_after_consume.
func (r *runner) giveUp(ctx context.Context, id, outcome string, code int, reason string) RunResult {
	wctx, cancel := bg(ctx)
	defer cancel()
	res := RunResult{ApprovalID: id, Outcome: outcome, ExitCode: code}
	_, err := r.s.Deny(wctx, id, r.requester(), reason)
	if err == nil {
		res.Message = fmt.Sprintf("%s: withdrew %s (denied as requester); not run", reason, id)
		return res
	}
	var np *storage.NotPendingError
	if errors.As(err, &np) {
		if rec, gerr := r.s.Get(wctx, id); gerr == nil && !rec.EffectiveStatus.Open() {
			if rec.EffectiveStatus == model.StatusConsumed {
				b := r.block(wctx, id, reason+", before execution")
				res.Message = fmt.Sprintf("%s: %s was approved just as the requester gave up; %s", reason, id, b.Message)
				return res
			}
			return r.decidedNotRun(wctx, rec)
		}
	}
	res.Message = fmt.Sprintf("%s: not run; could not withdraw %s: %v", reason, id, err)
	return res
}

// decided acts on a proposal that left pending.
func (r *runner) decided(ctx context.Context, p *model.Proposal, rec *storage.Record) (RunResult, error) {
	if rec.EffectiveStatus != model.StatusConsumed {
		return r.decidedNotRun(ctx, rec), nil
	}
	// Parked or reserved: exactly one asker takes the approval, this one
	// included, before every runtime check.
	rec, refused, notThis := takeParked(ctx, r.s, rec, r.match, r.req.Actor, "", "")
	if notThis {
		// Rewritten since it was submitted: the runtime checks refuse it,
		// and, should none, runApproved does.
		r.notThis = refused
	} else if refused != "" {
		return RunResult{ApprovalID: rec.ApprovalID, Outcome: RunTaken, ExitCode: ExitBlocked, Message: refused}, nil
	}
	return r.runApproved(ctx, p, rec), nil
}

// park keeps id open for the park window after the wait stopped (why):
// the result says it is parked, with the run's usual outcome and exit code
// for the stop. A decision that raced the stop is reported as it is; a
// park that fails withdraws it as before.
func (r *runner) park(ctx context.Context, id string, window time.Duration, outcome string, code int, why string) RunResult {
	wctx, cancel := bg(ctx)
	defer cancel()
	pk, err := r.s.Park(wctx, id, r.s.Now().Add(window), why, r.requester())
	if err == nil {
		paged := false
		if r.req.Paged != nil {
			if rec, gerr := r.s.Get(wctx, id); gerr == nil {
				paged = r.req.Paged(rec)
			}
		}
		return RunResult{ApprovalID: id, Outcome: outcome, ExitCode: code,
			Message: why + ": " + parkedWords(id, paged, model.FromEpoch(pk.Until))}
	}
	var np *storage.NotPendingError
	if errors.As(err, &np) {
		if rec, gerr := r.s.Get(wctx, id); gerr == nil && !rec.EffectiveStatus.Open() && rec.EffectiveStatus != model.StatusConsumed {
			return r.decidedNotRun(wctx, rec)
		}
	}
	var tk *storage.TakenError
	if errors.As(err, &tk) {
		return RunResult{ApprovalID: id, Outcome: RunTaken, ExitCode: ExitBlocked, Message: takenWords(tk)}
	}
	r.logf("warning: could not park %s: %v", id, err)
	return r.giveUp(ctx, id, outcome, code, "requester stopped waiting ("+why+") and could not park it")
}

// decidedNotRun reports a denial or an expiry.
func (r *runner) decidedNotRun(ctx context.Context, rec *storage.Record) RunResult {
	id := rec.ApprovalID
	switch rec.EffectiveStatus {
	case model.StatusDenied:
		msg := id + " denied"
		if rec.ConsumedBy != "" {
			msg += " by " + model.Sanitize(rec.ConsumedBy, model.Line)
		}
		if reason, err := r.s.DenyReason(ctx, id); err == nil && reason != "" {
			msg += ": " + model.Sanitize(reason, model.Line)
		}
		return RunResult{ApprovalID: id, Outcome: RunDenied, ExitCode: ExitDenied, Message: msg + "; not run"}
	case model.StatusExpired:
		return RunResult{ApprovalID: id, Outcome: RunExpired, ExitCode: ExitExpired,
			Message: id + " expired with no decision; not run"}
	}
	return RunResult{ApprovalID: id, Outcome: RunBlocked, ExitCode: ExitError,
		Message: fmt.Sprintf("%s has an unexpected status %q; not run", id, model.Sanitize(string(rec.EffectiveStatus), model.Line))}
}

// runApproved runs a consumed proposal: exactly its pinned command, after
// the runtime guard and the pinned-bytes check.
func (r *runner) runApproved(ctx context.Context, p *model.Proposal, rec *storage.Record) RunResult {
	id := rec.ApprovalID
	if rec.Corrupt != "" {
		return r.block(ctx, id, "the proposal is corrupt: "+rec.Corrupt)
	}
	if r.req.Trust.Required() {
		// Signed by enough people, over exactly this: checked from the
		// rows and the trust file, before anything else is believed.
		chk, err := VerifySignatures(ctx, r.req.Trust, r.s, rec, Self{Requesters: RequesterNames(), Risk: p.RiskLevel,
			Since: r.since(p)})
		if err != nil {
			words := refuseSignatures(ctx, r.s, id, err, r.req.Actor, r.logf)
			return r.blockAs(ctx, id, ReasonSignatureInvalid, words)
		}
		r.logf("%s: %s", id, chk.Words())
	}
	judging := r.req.Draft.Judging
	judging.Cwd = rec.Cwd
	if err := risk.Guard(rec.RiskLevel, rec.Command, judging); err != nil {
		return r.block(ctx, id, err.Error())
	}
	if why := pinnedDiffers(p, rec); why != "" {
		return r.block(ctx, id, why)
	}
	if grew := impactGrew(ctx, rec, runnerShell, previewTime); len(grew) > 0 {
		wctx, cancel := bg(ctx)
		if err := recordGrowth(wctx, r.s, id, grew, r.req.Actor); err != nil {
			r.logf("warning: could not record what grew: %v", err)
		}
		cancel()
		return r.blockAs(ctx, id, ReasonImpactGrew, "what it would touch grew since it was approved: "+strings.Join(grew, "; "))
	}
	// What runs is built from the consumed record's bytes, not from the
	// local copy (they were just found equal).
	if r.notThis != "" {
		return r.block(ctx, id, r.notThis)
	}
	cmd, err := r.build(rec.Command, rec.Cwd)
	if err != nil {
		return r.block(ctx, id, "command bytes differ from the pinned ones: "+err.Error())
	}
	by := ""
	if rec.ConsumedBy != "" {
		by = " by " + model.Sanitize(rec.ConsumedBy, model.Line)
	}
	r.logf("%s approved%s; running it", id, by)
	// The runner goes on heartbeating while the command runs, until its
	// outcome is recorded: a row whose execution stays started with a
	// stale heartbeat then reads as "runner died, outcome unknown". Its
	// context is not the wait's: an interrupt is passed on to the command,
	// and the runner stays while the command does.
	stopBeats := KeepAlive(context.WithoutCancel(ctx), r.s, LocalWaiter(id, model.SurfaceRunner), r.req.HeartbeatEvery, r.heartbeatError)
	defer stopBeats()
	res := r.execute(cmd, func(pid int) {
		wctx, cancel := bg(ctx)
		defer cancel()
		if err := r.s.RecordExecution(wctx, id, model.ExecStarted, fmt.Sprintf("pid %d", pid), r.req.Actor); err != nil {
			r.logf("warning: could not record that %s started: %v", id, err)
		}
	}, func(outcome model.ExecutionStatus, reason string) {
		wctx, cancel := bg(ctx)
		defer cancel()
		if err := r.s.RecordExecution(wctx, id, outcome, reason, r.req.Actor); err != nil {
			r.logf("warning: could not record the outcome (%s) of %s: %v", reason, id, err)
		}
	})
	res.ApprovalID = id
	return res
}

// pinnedDiffers says how the consumed proposal differs from what this
// runner submitted ("" when it does not).
func pinnedDiffers(p *model.Proposal, rec *storage.Record) string {
	switch {
	case rec.Command != p.Command:
		return "command bytes differ from the pinned ones"
	case rec.Cwd != p.Cwd:
		return "the working directory differs from the one submitted"
	case len(rec.EnvOverrides) != 0:
		return "the proposal pins environment overrides the runner did not ask for"
	}
	return ""
}

// block records that approved proposal id is not run, and why.
func (r *runner) block(ctx context.Context, id, reason string) RunResult {
	return r.blockAs(ctx, id, reason, reason)
}

// blockAs is block with the execution reason recorded (a code) apart from
// the words said.
func (r *runner) blockAs(ctx context.Context, id, reason, words string) RunResult {
	wctx, cancel := bg(ctx)
	defer cancel()
	msg := fmt.Sprintf("%s was approved but is not run: %s", id, model.Sanitize(words, model.Line))
	if err := r.s.RecordExecution(wctx, id, model.ExecBlockedAfterConsume, reason, r.req.Actor); err != nil {
		msg += " (the outcome could not be recorded: " + err.Error() + ")"
	} else {
		msg += " (recorded blocked_after_consume)"
	}
	return RunResult{ApprovalID: id, Outcome: RunBlocked, ExitCode: ExitBlocked, Message: msg}
}

// build makes the process for a pinned command line: ShellPath -c LINE in
// shell mode, else the argument vector that SplitQuoted reads from it.
func (r *runner) build(command, cwd string) (*exec.Cmd, error) {
	var cmd *exec.Cmd
	if r.shell {
		cmd = exec.Command(ShellPath, "-c", command)
	} else {
		argv, err := SplitQuoted(command)
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	cmd.Dir = cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.req.Stdin, r.req.Stdout, r.req.Stderr
	return cmd, nil
}

// execute starts cmd, calls started with its pid once it exists, passes
// signals on while it runs, and calls ended with the outcome: executed
// with "exit code N" (or "killed by signal X") once it ended, or
// dispatch_failed with the error if it could not start. Both are called at
// that boundary, never before.
func (r *runner) execute(cmd *exec.Cmd, started func(pid int), ended func(model.ExecutionStatus, string)) RunResult {
	p, err := startCommand(cmd)
	if err != nil {
		ended(model.ExecDispatchFailed, err.Error())
		return RunResult{Outcome: RunDispatchFailed, ExitCode: startFailureCode(err),
			Message: "could not start the command: " + model.Sanitize(err.Error(), model.Line)}
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	f, _ := r.req.Stdin.(*os.File)
	code, words := p.wait(r.req.Signals, inForegroundOfTerminal(f))
	ended(model.ExecExecuted, words)
	return RunResult{Outcome: RunRan, ExitCode: code}
}
