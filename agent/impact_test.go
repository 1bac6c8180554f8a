package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// The preview is pinned at submit (payload, diff_summary); a target that
// grew between the approval and the run blocks it: blocked_after_consume,
// impact_grew, what grew reported, nothing deleted.
func TestRunRefusesWhenTheImpactGrew(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	build := filepath.Join(dir, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, "a.o"), []byte("obj"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := runReq(dir, "rm", "-rf", build)
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	if rec.Impact == nil || rec.Impact.Entries != 2 || !strings.HasPrefix(rec.DiffSummary, "impact: deletes 1 directory, 1 file, 3 B") {
		t.Fatalf("pinned impact %+v, diff summary %q", rec.Impact, rec.DiffSummary)
	}
	for i := 0; i < 40; i++ {
		if err := os.WriteFile(filepath.Join(build, fmt.Sprintf("new-%d.o", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	approve(t, o, rec.ApprovalID)
	out := recvRun(t, ch)
	if out.res.Outcome != RunBlocked || !strings.Contains(out.res.Message, "grew") {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	r := get(t, o, rec.ApprovalID)
	if r.ExecutionStatus != model.ExecBlockedAfterConsume || r.ExecutionReason != ReasonImpactGrew {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
	if _, err := os.Stat(filepath.Join(build, "a.o")); err != nil {
		t.Fatal("deleted although the impact grew")
	}
	if got := strings.Join(auditOf(t, o, rec.ApprovalID), " "); !strings.Contains(got, "report:impact: ") {
		t.Fatalf("audit: %s", got)
	}
}

// Unchanged, it runs.
func TestRunRunsWhenTheImpactIsAsApproved(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	build := filepath.Join(dir, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	ch := startRun(s, runReq(dir, "rm", "-rf", build))
	rec := awaitWaiting(t, o)
	approve(t, o, rec.ApprovalID)
	if out := recvRun(t, ch); out.res.Outcome != RunRan {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if _, err := os.Stat(build); !os.IsNotExist(err) {
		t.Fatal("not deleted")
	}
}

// The Claude Code hook pins the preview at submit and refuses, at the
// moment it would answer allow, an approval whose impact grew since.
func TestHookRefusesWhenTheImpactGrew(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	call, _ := json.Marshal(map[string]any{
		"session_id": "sess-i", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "rm -rf build"}, "tool_use_id": "toolu_I",
	})
	ch := hookAsync(string(call), hookOpts(s))
	rec := awaitHookProposal(t, o)
	if rec.Impact == nil || len(rec.Impact.Targets) != 1 || rec.Impact.Targets[0].Path != filepath.Join(dir, "build") {
		t.Fatalf("pinned impact %+v", rec.Impact)
	}
	for i := 0; i < 30; i++ {
		if err := os.WriteFile(filepath.Join(dir, "build", fmt.Sprintf("f%d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	approve(t, o, rec.ApprovalID)
	d, reason := checkJSON(t, recvHook(t, ch))
	if d != "deny" || !strings.Contains(reason, "grew") {
		t.Fatalf("%s %q", d, reason)
	}
	if r := get(t, o, rec.ApprovalID); r.ExecutionStatus != model.ExecBlockedAfterConsume || r.ExecutionReason != ReasonImpactGrew {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
}

// A command no rule matches is let through, unless its impact raises it:
// truncating a big file with > asks.
func TestHookAsksWhenTheImpactRaisesACommandNoRuleMatches(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	for i := 0; i < 1100; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	call := func(command, id string) string {
		b, _ := json.Marshal(map[string]any{"session_id": "sess-r", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": command}, "tool_use_id": id})
		return string(b)
	}
	opts := hookOpts(s)
	opts.Low = LowAllow
	if d, _ := checkJSON(t, recvHook(t, hookAsync(call("echo hi > f0001", "toolu_small"), opts))); d != "allow" {
		t.Fatalf("a small overwrite no rule matches: %s", d)
	}
	ch := hookAsync(call("chmod 600 *", "toolu_big"), opts)
	rec := awaitHookProposal(t, o)
	if rec.RiskLevel != model.RiskMedium || rec.Impact == nil || rec.Impact.Entries < 1000 {
		t.Fatalf("raised to %s, impact %+v", rec.RiskLevel, rec.Impact)
	}
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "no"); err != nil {
		t.Fatal(err)
	}
	if d, _ := checkJSON(t, recvHook(t, ch)); d != "deny" {
		t.Fatal(d)
	}
}
