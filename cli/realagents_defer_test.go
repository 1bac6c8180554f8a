package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Claude Code headless (claude -p) with the hook's --defer: the call that
// needs approval is parked and deferred, the session ends with
// stop_reason tool_deferred and nothing run; approved later, "claude -p
// --resume SESSION" asks the same call again (same session and
// tool_use_id), which takes the approval and runs, once.
func TestRealAgentClaudeDefer(t *testing.T) {
	marker := "deferred-marker"
	r := newAgentRig(t, realAgents[0], "sh -c 'touch "+marker+"'", "create the marker file")
	r.preArgs = " --defer"
	r.installHooksByHand()
	run := r.start("Create the marker file.")
	stdout, stderr := r.wait(run) // deferred at once: it ends before a poll may see it
	id := awaitListed(t, r.db, "cc-")
	var res struct {
		SessionID  string `json:"session_id"`
		StopReason string `json:"stop_reason"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &res); err != nil || res.StopReason != "tool_deferred" || res.SessionID == "" {
		t.Fatalf("not deferred (%v)\nstdout: %s\nstderr: %s", err, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(r.work, marker)); err == nil {
		t.Fatal("the command ran before any decision")
	}
	rec := r.show(id)
	if rec["status"] != "pending" {
		t.Fatalf("status %v", rec["status"])
	}
	if out, err := approveTUI(t, "--db", r.db, "approve", id, "--confirm", id).CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	resumed := r.start("", "--resume", res.SessionID)
	stdout, stderr = r.wait(resumed)
	if _, err := os.Stat(filepath.Join(r.work, marker)); err != nil {
		t.Fatalf("approved and resumed, but the command did not run (%v)\nstdout: %s\nstderr: %s\nmodel log:\n%s", err, stdout, stderr, r.stub.Log())
	}
	rec = r.show(id)
	t.Logf("record: status %v, execution %v, park %v", rec["status"], rec["execution_status"], rec["park"])
	if rec["status"] != "consumed" {
		t.Errorf("status %v, want consumed", rec["status"])
	}
	// The resumed call was the same call: no second proposal.
	if out, _ := approveTUI(t, "--db", r.db, "--json", "list", "--status", "all").Output(); strings.Count(string(out), `"approval_id"`) != 1 {
		t.Errorf("more than one proposal:\n%s", out)
	}
}
