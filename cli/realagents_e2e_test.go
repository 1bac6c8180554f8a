package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With the hook set up, the real agent's shell call becomes a proposal
// while the agent waits; approving it with the CLI (the retyped id) lets
// the command run, and the record says so where the agent reports it.
func TestRealAgentApprove(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			marker := "approved-marker"
			// sh -c: a rule matches (a shell command via -c), so it is asked.
			r := newAgentRig(t, a, "sh -c 'touch "+marker+"'", "create the marker file")
			r.installHooksByHand()
			run := r.start("Create the marker file.")
			id := r.pendingID(run)
			if _, err := os.Stat(filepath.Join(r.work, marker)); err == nil {
				t.Fatal("the command ran before any decision")
			}
			if out, err := approveTUI(t, "--db", r.db, "approve", id, "--confirm", id).CombinedOutput(); err != nil {
				t.Fatalf("approve: %v\n%s", err, out)
			}
			stdout, stderr := r.wait(run)
			if _, err := os.Stat(filepath.Join(r.work, marker)); err != nil {
				t.Fatalf("approved, but the command did not run (%v)\nstdout: %s\nstderr: %s\nmodel log:\n%s", err, stdout, stderr, r.stub.Log())
			}
			rec := r.show(id)
			t.Logf("record: status %v, execution %v (%v)", rec["status"], rec["execution_status"], rec["execution_reason"])
			if rec["status"] != "consumed" {
				t.Errorf("status %v, want consumed", rec["status"])
			}
			if a.name != "gemini" && rec["execution_status"] != "executed" {
				t.Errorf("execution %v, want executed (the agent reports the call's end)", rec["execution_status"])
			}
			if !strings.Contains(stdout, "All done.") && r.stub.Finished() == 0 {
				t.Errorf("the model never got the tool's result\nstdout: %s\nmodel log:\n%s", stdout, r.stub.Log())
			}
		})
	}
}
