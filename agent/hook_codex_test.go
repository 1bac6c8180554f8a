package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Codex's PostToolUse of a call the hook let through records executed.
func TestCodexHookPostToolUseRecordsExecuted(t *testing.T) {
	s, o := emptyStore(t)
	ch := runAsync(CodexHook, sample(t, "codex.txtar", "pre-bash-rm.json"), hookOpts(s))
	rec := awaitHookProposal(t, o)
	approve(t, o, rec.ApprovalID)
	a := recvHook(t, ch)
	if d, _ := codexCheck(t, a); d != "allow" || a.JSON() != nil {
		t.Fatalf("%+v", a)
	}
	if r := get(t, o, rec.ApprovalID); r.ExecutionStatus != model.ExecNotStarted {
		t.Fatalf("execution %s before PostToolUse", r.ExecutionStatus)
	}
	if a := recvHook(t, runAsync(CodexHook, sample(t, "codex.txtar", "post-bash-rm.json"), hookOpts(s))); !a.Silent {
		t.Fatalf("PostToolUse answered %+v", a)
	}
	if r := get(t, o, rec.ApprovalID); r.ExecutionStatus != model.ExecExecuted || r.ExecutionReason != "ran in Codex (PostToolUse)" {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
}

// Codex's PreToolUse cannot say allow: --low allow is refused, closed.
func TestCodexHookCannotAllowLow(t *testing.T) {
	o := noStore(t)
	o.Low = LowAllow
	d, reason := codexCheck(t, recvHook(t, runAsync(CodexHook, sample(t, "codex.txtar", "pre-bash-echo.json"), o)))
	if d != "deny" || !strings.Contains(reason, "--low allow cannot be said in codex's PreToolUse protocol") {
		t.Fatalf("%s %q", d, reason)
	}
}

func TestCodexHookBadShellInput(t *testing.T) {
	for in, want := range map[string]string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["rm","-rf","/x"]}}`: "malformed Bash tool_input",
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}`:                            "a Bash call without a command",
		`{"hook_event_name":"PreToolUse","tool_name":"Bash"}`:                                            "a Bash call without tool_input",
	} {
		if d, reason := codexCheck(t, recvHook(t, runAsync(CodexHook, in, noStore(t)))); d != "deny" || !strings.Contains(reason, want) {
			t.Fatalf("%s: %s %q", in, d, reason)
		}
	}
}

func TestCodexAnswerJSON(t *testing.T) {
	if got := string(Denied(AgentCodex, "no <x> \x1b[31m").JSON()); got !=
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no <x> \\x1b[31m"}}`+"\n" {
		t.Fatalf("%s", got)
	}
	// A deny always carries a reason: Codex ignores one without.
	if d, reason := codexCheck(t, HookAnswer{Agent: AgentCodex, Decision: "deny"}); d != "deny" || reason == "" {
		t.Fatalf("%s %q", d, reason)
	}
	if b := (HookAnswer{Agent: AgentCodex, Decision: "allow", Reason: "ok"}).JSON(); b != nil {
		t.Fatalf("allow printed %s", b)
	}
}

// Codex stops waiting at its hook timeout without signalling the hook (it
// keeps running) and runs the command; its PostToolUse then reports the
// run of a call nobody approved. The execution is recorded as run without
// approval and the proposal closed expired for that reason (not left
// pending, not denied), and the hook still waiting on it ends.
func TestCodexHookRunWithoutApprovalIsRecorded(t *testing.T) {
	s, o := emptyStore(t)
	ch := runAsync(CodexHook, sample(t, "codex.txtar", "pre-bash-rm.json"), hookOpts(s))
	rec := awaitHookProposal(t, o)
	if a := recvHook(t, runAsync(CodexHook, sample(t, "codex.txtar", "post-bash-rm.json"), hookOpts(s))); !a.Silent {
		t.Fatalf("PostToolUse answered %+v", a)
	}
	r := get(t, o, rec.ApprovalID)
	if r.EffectiveStatus != model.StatusExpired || r.ExecutionStatus != model.ExecRanWithoutApproval {
		t.Fatalf("recorded %s, execution %s", r.EffectiveStatus, r.ExecutionStatus)
	}
	if why := r.ExecutionReason; !strings.Contains(why, "Codex reported the call as run") || !strings.Contains(why, "not approved") ||
		!strings.Contains(why, "any process of this user can also send") {
		t.Fatalf("execution reason %q", why)
	}
	// The hook that was still waiting answers (deny) and ends.
	if d, _ := codexCheck(t, recvHook(t, ch)); d != "deny" {
		t.Fatalf("the waiting hook answered %s", d)
	}
	// A second report of the same run records nothing more.
	before := auditOf(t, o, rec.ApprovalID)
	if a := recvHook(t, runAsync(CodexHook, sample(t, "codex.txtar", "post-bash-rm.json"), hookOpts(s))); !a.Silent {
		t.Fatalf("PostToolUse answered %+v", a)
	}
	evs, err := o.Audit(context.Background(), storage.AuditQuery{ApprovalID: rec.ApprovalID})
	if err != nil || len(evs) != len(before) || evs[0].Event != storage.EventExecution || evs[0].Reason != string(model.ExecRanWithoutApproval) {
		t.Fatalf("audit %+v, %v", evs, err)
	}
}
