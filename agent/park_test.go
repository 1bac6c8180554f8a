package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// bashCallIn is bashCall in session and cwd, in permission mode mode.
func bashCallIn(session, cwd, mode, command, toolUseID string) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
		"hook_event_name": "PreToolUse", "tool_name": "Bash", "permission_mode": mode,
		"tool_input":  map[string]any{"command": command, "description": "clean the build dir"},
		"tool_use_id": toolUseID,
	})
	return string(b)
}

// parkedCall runs the hook on call until it stops at its timeout, and
// returns its parked proposal.
func parkedCall(t *testing.T, o *storage.Store, opts HookOptions, call string) *storage.Record {
	t.Helper()
	opts.Timeout = 400 * time.Millisecond
	d, reason := checkJSON(t, recvHook(t, hookAsync(call, opts)))
	if d != "deny" || !strings.Contains(reason, "approve-tui: not run: parked as cc-") ||
		!strings.Contains(reason, "Ask again later with the exact same command in the same directory: once approved, it runs, until ") {
		t.Fatalf("%s %q", d, reason)
	}
	id := strings.TrimSuffix(strings.Fields(strings.SplitAfter(reason, "parked as ")[1])[0], ";")
	rec := get(t, o, id)
	if rec.EffectiveStatus != model.StatusPending || rec.Park == nil || rec.Park.Reserved() ||
		!strings.Contains(rec.Park.Why, "its own timeout after 400ms") || !strings.Contains(reason, id+"; no paging route matches it") {
		t.Fatalf("not parked: %s %+v (%q)", rec.EffectiveStatus, rec.Park, reason)
	}
	return rec
}

// The hook stops at its timeout: the proposal is parked, not withdrawn;
// approved later, the same call asked again (a new tool_use_id) is let
// through at once on it, and the approval is taken; asked once more, it
// needs a new approval. Another command, session or directory never
// takes it.
func TestHookParkResumeOnce(t *testing.T) {
	s, o := emptyStore(t)
	const cmd = "rm -rf /srv/app/build"
	rec := parkedCall(t, o, hookOpts(s), bashCall(cmd, "toolu_P1"))
	if rec.ExpiresAt == nil || *rec.ExpiresAt-rec.CreatedAt < DefaultParkWindow.Seconds() {
		t.Fatalf("the TTL does not cover the park window: %v", rec.ExpiresAt)
	}
	approve(t, o, rec.ApprovalID)

	short := hookOpts(s)
	short.Timeout = 300 * time.Millisecond
	for name, call := range map[string]string{
		"command": bashCall(cmd+" ", "toolu_X1"),
		"session": bashCallIn("sess-2", "/srv/app", "default", cmd, "toolu_X2"),
		"cwd":     bashCallIn("sess-1", "/srv", "default", cmd, "toolu_X3"),
	} {
		ans := recvHook(t, hookAsync(call, short))
		if ans.Decision == "allow" || strings.Contains(ans.Reason, rec.ApprovalID) {
			t.Fatalf("another %s took it: %+v", name, ans)
		}
	}

	ans := recvHook(t, hookAsync(bashCall(cmd, "toolu_P2"), hookOpts(s)))
	if d, reason := checkJSON(t, ans); d != "allow" || !strings.Contains(reason, "approved by alice@console via tui ("+rec.ApprovalID+")") {
		t.Fatalf("the retry: %s %q", d, reason)
	}
	got := get(t, o, rec.ApprovalID)
	if got.Park.TakenBy != "dev@laptop (call "+HookID("sess-1", "toolu_P2")+", agent "+agentProcess()+") via hook" {
		t.Fatalf("taken by %q", got.Park.TakenBy)
	}
	// Asked once more: the approval was one run, taken.
	ans = recvHook(t, hookAsync(bashCall(cmd, "toolu_P3"), short))
	if d, reason := checkJSON(t, ans); d != "deny" || !strings.Contains(reason, rec.ApprovalID+" was taken by dev@laptop (call "+HookID("sess-1", "toolu_P2")+", agent "+agentProcess()+") via hook at ") {
		t.Fatalf("a third ask: %s %q", d, reason)
	}
	if res, err := o.VerifyAudit(context.Background()); err != nil || !res.OK {
		t.Fatalf("audit: %+v %v", res, err)
	}
}

// Two retries of one approved parked call at once: one is let through,
// the other is told who took it.
func TestHookParkedTwoRetriesAtOnce(t *testing.T) {
	s, o := emptyStore(t)
	const cmd = "chmod -R 777 /srv/app"
	rec := parkedCall(t, o, hookOpts(s), bashCall(cmd, "toolu_R0"))
	approve(t, o, rec.ApprovalID)
	a, b := hookAsync(bashCall(cmd, "toolu_R1"), hookOpts(s)), hookAsync(bashCall(cmd, "toolu_R2"), hookOpts(s))
	allowed, taken := 0, 0
	for _, ch := range []<-chan HookAnswer{a, b} {
		d, reason := checkJSON(t, recvHook(t, ch))
		switch {
		case d == "allow":
			allowed++
		case strings.Contains(reason, rec.ApprovalID+" was taken by dev@laptop (call cc-") && strings.HasSuffix(reason, "; not run"):
			taken++
		default:
			t.Fatalf("%s %q", d, reason)
		}
	}
	if allowed != 1 || taken != 1 {
		t.Fatalf("%d allowed, %d taken", allowed, taken)
	}
}

// A parked call asked again before anyone decided: the retry waits on the
// parked proposal (no new one), and is let through when it is approved.
func TestHookParkedRetryWaits(t *testing.T) {
	s, o := emptyStore(t)
	const cmd = "git push --force origin main"
	rec := parkedCall(t, o, hookOpts(s), bashCall(cmd, "toolu_W0"))
	ch := hookAsync(bashCall(cmd, "toolu_W1"), hookOpts(s))
	eventually(t, 10*time.Second, "the retry never waited on the parked proposal", func() bool {
		return waiterState(t, o, rec.ApprovalID).State == storage.WaiterLive
	})
	approve(t, o, rec.ApprovalID)
	if d, reason := checkJSON(t, recvHook(t, ch)); d != "allow" || !strings.Contains(reason, rec.ApprovalID) {
		t.Fatalf("%s %q", d, reason)
	}
	if recs, _ := o.List(context.Background(), storage.ListOptions{Status: storage.ListAll}); len(recs) != 1 {
		t.Fatalf("%d proposals", len(recs))
	}
}

// Stopped by its agent (SIGTERM): parked, saying so; with a paging route
// that matches, the deny says an operator has been paged.
func TestHookSignalParks(t *testing.T) {
	s, o := emptyStore(t)
	opts := hookOpts(s)
	opts.Paged = func(*storage.Record) bool { return true }
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan HookAnswer, 1)
	go func() {
		ch <- ClaudeCodeHook(ctx, strings.NewReader(bashCall("rm -rf /srv/app/cache", "toolu_S")), opts)
	}()
	rec := awaitHookProposal(t, o)
	if got := get(t, o, rec.ApprovalID); !got.Park.Reserved() {
		t.Fatalf("no reservation while it waits: %+v", got.Park)
	}
	cancel(errors.New("terminated signal received"))
	d, reason := checkJSON(t, recvHook(t, ch))
	if d != "deny" || !strings.Contains(reason, "not run: parked as "+rec.ApprovalID+"; an operator has been paged. Ask again later") {
		t.Fatalf("%s %q", d, reason)
	}
	got := get(t, o, rec.ApprovalID)
	if got.EffectiveStatus != model.StatusPending || got.Park.Reserved() || got.Park.Why != "it got SIGTERM (its agent's hook timeout?)" {
		t.Fatalf("%s %+v", got.EffectiveStatus, got.Park)
	}
}

// After its park window an approval is refused, clearly; parking off keeps
// the old withdrawal.
func TestHookParkWindowOver(t *testing.T) {
	s, o := emptyStore(t)
	opts := hookOpts(s)
	opts.ParkWindow = 300 * time.Millisecond
	rec := parkedCall(t, o, opts, bashCall("rm -rf /srv/app/old", "toolu_O"))
	time.Sleep(400 * time.Millisecond)
	_, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, operator)
	var rf *storage.RefusedError
	if !errors.As(err, &rf) || rf.Code != storage.RefusedParkOver || !strings.Contains(err.Error(), "park window ended at") {
		t.Fatalf("approval after the window: %v", err)
	}
}

// An approval that lands as the hook's own timeout ends: the hook (still
// read by its agent) takes it and allows; its own waiter goes through
// Take too, so a retry finds nothing to take.
func TestHookOwnWaiterTakes(t *testing.T) {
	s, o := emptyStore(t)
	const cmd = "rm -rf /srv/app/tmp"
	ch := hookAsync(bashCall(cmd, "toolu_T"), hookOpts(s))
	rec := awaitHookProposal(t, o)
	approve(t, o, rec.ApprovalID)
	if d, reason := checkJSON(t, recvHook(t, ch)); d != "allow" {
		t.Fatalf("%s %q", d, reason)
	}
	if got := get(t, o, rec.ApprovalID); got.Park == nil || got.Park.TakenBy == "" {
		t.Fatalf("the waiter did not take it: %+v", got.Park)
	}
	// Never parked: the same command asked again is a new request.
	if _, _, err := o.FindParked(context.Background(), model.MatchOf(&rec.Proposal)); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("found after its waiter took it: %v", err)
	}
}

// Claude Code's defer, opt-in: in permission mode default or plan the hook
// parks at once and answers defer; the resumed call (same session and
// tool_use_id) is let through once approved. In the modes whose
// fall-through would run the command, the parked deny instead.
func TestHookClaudeDefer(t *testing.T) {
	s, o := emptyStore(t)
	opts := hookOpts(s)
	opts.Defer = true
	const cmd = "rm -rf /srv/app/dist"
	call := withTranscript(t, bashCallIn("sess-d", "/srv/app", "default", cmd, "toolu_D1"),
		writeTranscript(t, transcriptLine("msg_D1", "tool_use", "toolu_D1")))
	ans := recvHook(t, hookAsync(call, opts))
	var out struct {
		HookSpecificOutput struct{ HookEventName, PermissionDecision, PermissionDecisionReason string }
	}
	if err := json.Unmarshal(ans.JSON(), &out); err != nil || out.HookSpecificOutput.PermissionDecision != "defer" ||
		out.HookSpecificOutput.HookEventName != "PreToolUse" || !strings.Contains(out.HookSpecificOutput.PermissionDecisionReason, "parked as "+HookID("sess-d", "toolu_D1")) {
		t.Fatalf("%s %v", ans.JSON(), err)
	}
	id := HookID("sess-d", "toolu_D1")
	if got := get(t, o, id); got.EffectiveStatus != model.StatusPending || got.Park == nil || got.Park.Reserved() {
		t.Fatalf("not parked: %+v", got.Park)
	}
	approve(t, o, id)
	if d, reason := checkJSON(t, recvHook(t, hookAsync(call, opts))); d != "allow" || !strings.Contains(reason, id) {
		t.Fatalf("resumed: %s %q", d, reason)
	}
	for _, mode := range []string{"bypassPermissions", "acceptEdits", "dontAsk", "auto", "", "weird"} {
		opts.Timeout = 300 * time.Millisecond
		ans := recvHook(t, hookAsync(bashCallIn("sess-"+mode, "/srv/app", mode, cmd, "toolu_D2"), opts))
		if d, reason := checkJSON(t, ans); d != "deny" || !strings.Contains(reason, "parked as") {
			t.Fatalf("mode %q: %s %q", mode, d, reason)
		}
	}
	// Gemini never says defer.
	if got := (HookAnswer{Agent: AgentGemini, Decision: "defer"}).JSON(); !strings.Contains(string(got), `"decision":"deny"`) {
		t.Fatalf("gemini: %s", got)
	}
}

// run stopped by SIGTERM while it waits (its caller's tool timeout): the
// proposal is parked, exit code unchanged; approved later, the same run
// asked again runs it once, and the next one at once is refused as taken.
// A run in another directory never takes it.
func TestRunParkResumeOnce(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	sigs := make(chan os.Signal, 1)
	req := runReq(dir, "sh", "-c", "echo ran >> log.txt")
	req.Signals = sigs
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	sigs <- syscall.SIGTERM
	out := recvRun(t, ch)
	if out.err != nil || out.res.Outcome != RunInterrupted || out.res.ExitCode != ExitInterrupted ||
		!strings.Contains(out.res.Message, "it got SIGTERM: not run: parked as "+rec.ApprovalID+"; no paging route matches it") {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	approve(t, o, rec.ApprovalID)
	other := runReq(t.TempDir(), "sh", "-c", "echo ran >> log.txt")
	other.Timeout = 300 * time.Millisecond
	if out := recvRun(t, startRun(s, other)); out.res.ApprovalID == rec.ApprovalID || out.res.Outcome == RunRan {
		t.Fatalf("another directory: %+v %v", out.res, out.err)
	}
	out = recvRun(t, startRun(s, runReq(dir, "sh", "-c", "echo ran >> log.txt")))
	if out.err != nil || out.res.Outcome != RunRan || out.res.ApprovalID != rec.ApprovalID {
		t.Fatalf("the retry: %+v %v", out.res, out.err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(b) != "ran\n" {
		t.Fatalf("log: %q", b)
	}
	out = recvRun(t, startRun(s, runReq(dir, "sh", "-c", "echo ran >> log.txt")))
	if out.err != nil || out.res.Outcome != RunTaken || out.res.ExitCode != ExitBlocked || !strings.Contains(out.res.Message, rec.ApprovalID+" was taken by ") {
		t.Fatalf("a second retry: %+v %v", out.res, out.err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(b) != "ran\n" {
		t.Fatalf("ran twice: %q", b)
	}
}

// `run` naming a hook's requester and session (free flags) for the exact
// command and directory of a Claude Code call parked and approved: the
// run neither takes that approval nor parks a call the hook would take;
// the hook's retry still takes it, once.
func TestRunDoesNotTakeAHooksParkedApproval(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	argv := []string{"sh", "-c", "echo ran >> log.txt"}
	cmd := QuoteArgs(argv)
	rec := parkedCall(t, o, hookOpts(s), bashCallIn("sess-r", dir, "default", cmd, "toolu_R1"))
	approve(t, o, rec.ApprovalID)

	req := runReq(dir, argv...)
	req.Draft.Requester, req.Draft.SessionKey = rec.Requester, rec.SessionKey
	req.Timeout = 300 * time.Millisecond
	out := recvRun(t, startRun(s, req))
	if out.res.ApprovalID == rec.ApprovalID || out.res.Outcome == RunRan {
		t.Fatalf("the run took the hook's approval: %+v %v", out.res, out.err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "log.txt")); len(b) != 0 {
		t.Fatalf("ran: %q", b)
	}
	if got := get(t, o, rec.ApprovalID); got.Park.TakenBy != "" {
		t.Fatalf("taken by %q", got.Park.TakenBy)
	}
	if pk, err := o.ParkOf(context.Background(), out.res.ApprovalID); err != nil || pk != nil {
		t.Fatalf("the run's own proposal has a parks row: %+v %v", pk, err)
	}
	short := hookOpts(s)
	short.Timeout = 300 * time.Millisecond
	if d, reason := checkJSON(t, recvHook(t, hookAsync(bashCallIn("sess-r", dir, "default", cmd, "toolu_R2"), short))); d != "allow" {
		t.Fatalf("the hook's retry: %s %q", d, reason)
	}
}

// The same call id asked again after SameCallTake, with nothing recorded
// as run (a deferred call resumed twice, the first still running): the
// take was this call's, and it is not let through a second time.
func TestHookSameCallTakeIsShort(t *testing.T) {
	s, o := emptyStore(t)
	const cmd = "rm -rf /srv/app/dist"
	call := bashCallIn("sess-w", "/srv/app", "default", cmd, "toolu_W1")
	rec := parkedCall(t, o, hookOpts(s), call)
	approve(t, o, rec.ApprovalID)
	if d, reason := checkJSON(t, recvHook(t, hookAsync(call, hookOpts(s)))); d != "allow" {
		t.Fatalf("the resume: %s %q", d, reason)
	}
	later := hookOpts(s)
	later.Timeout = 300 * time.Millisecond
	later.Open = func(ctx context.Context) (*storage.Store, error) {
		return storage.Open(ctx, s.Path(), storage.Options{BusyTimeout: 2 * time.Second, Now: func() time.Time { return time.Now().Add(SameCallTake + time.Second) }})
	}
	d, reason := checkJSON(t, recvHook(t, hookAsync(call, later)))
	if d == "allow" || !strings.Contains(reason, rec.ApprovalID+" was taken by ") {
		t.Fatalf("the same call id, %s after its take: %s %q", SameCallTake+time.Second, d, reason)
	}
	if got := get(t, o, rec.ApprovalID); got.ExecutionStatus != model.ExecNotStarted {
		t.Fatalf("execution %s", got.ExecutionStatus)
	}
}
