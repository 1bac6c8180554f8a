package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Claude Code headless with the hook's --defer and an allow rule for the
// shell (--allowedTools Bash), whose model asks for two Bash calls in one
// turn: Claude Code ignores defer where the message carrying the call
// holds more than one tool call, and then its allow rule would run the
// call. The hook answers defer only for the only tool call of its turn,
// as the transcript shows it: here the parked deny, so that the call that
// needs approval does not run, whatever Claude Code does with a defer.
func TestRealAgentClaudeDeferBatch(t *testing.T) {
	marker := "batch-marker"
	r := newAgentRig(t, realAgents[0], "sh -c 'touch "+marker+"'", "create the marker file")
	r.stub.AlsoAsk("echo two", "print two")
	r.preArgs = " --defer"
	r.waitFor = 3 * time.Second
	r.installHooksByHand()
	run := r.start("Create the marker file.", "--allowedTools", "Bash")
	stdout, stderr := r.wait(run)
	var res struct {
		StopReason string `json:"stop_reason"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &res); err != nil || res.StopReason == "tool_deferred" {
		t.Fatalf("deferred, or no result (%v)\nstdout: %s\nstderr: %s", err, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(r.work, marker)); err == nil {
		t.Fatalf("the call of a batch of two ran with no approval\nmodel log:\n%s", r.stub.Log())
	}
	id := awaitListed(t, r.db, "cc-")
	rec := r.show(id)
	park, _ := rec["park"].(map[string]any)
	if rec["status"] != "pending" || park == nil || park["state"] != "parked" || strings.Contains(park["why"].(string), "defer") {
		t.Fatalf("not parked with the deny: status %v park %v", rec["status"], rec["park"])
	}
	found := false
	for _, tr := range r.stub.ToolResults() {
		found = found || strings.Contains(tr, "not run: parked as "+id)
	}
	if !found {
		t.Fatalf("the model was not told the call is parked: %q", r.stub.ToolResults())
	}
}
