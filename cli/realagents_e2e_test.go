package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
			run, id := r.installAndAsk()
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

// Denied with a reason: the command does not run, and the model receives
// the reason as the tool's result.
func TestRealAgentDeny(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			marker := "denied-marker"
			r := newAgentRig(t, a, "sh -c 'touch "+marker+"'", "create the marker file")
			run, id := r.installAndAsk()
			reason := "not on a Friday"
			if out, err := approveTUI(t, "--db", r.db, "deny", id, "--reason", reason).CombinedOutput(); err != nil {
				t.Fatalf("deny: %v\n%s", err, out)
			}
			stdout, stderr := r.wait(run)
			if _, err := os.Stat(filepath.Join(r.work, marker)); err == nil {
				t.Fatal("denied, but the command ran")
			}
			results := r.stub.ToolResults()
			if len(results) == 0 || !strings.Contains(strings.Join(results, "\n"), reason) {
				t.Fatalf("the model was not told the reason: tool results %q\nstdout: %s\nstderr: %s\nmodel log:\n%s", results, stdout, stderr, r.stub.Log())
			}
			t.Logf("tool result: %q", results)
			if rec := r.show(id); rec["status"] != "denied" || rec["execution_status"] != "not_started" {
				t.Errorf("record: status %v, execution %v; want denied, not_started", rec["status"], rec["execution_status"])
			}
		})
	}
}

// Escape sequences and other control bytes in the command and its
// description reach the store as they are, and are inert where they are
// shown: list and show print them visibly, never raw.
func TestRealAgentHostileBytesInert(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			marker := "hostile-marker"
			command := "sh -c 'touch " + marker + "' # \x1b]0;pwned\x07\x1b[2J\u202e"
			if a.name == "claude-code" {
				// Claude Code refuses a Bash command with control
				// characters itself (InputValidationError, before any
				// hook); its description takes them.
				command = "sh -c 'touch " + marker + "' # \u202eexe.live"
			}
			r := newAgentRig(t, a, command, "create \x1b[31mthe\x1b[0m marker\x1b]8;;http://x\x07")
			run, id := r.installAndAsk()
			for _, args := range [][]string{{"list"}, {"show", id}} {
				out, err := approveTUI(t, append([]string{"--db", r.db}, args...)...).CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", args[0], err, out)
				}
				if strings.ContainsAny(string(out), "\x1b\x07\u202e") {
					t.Fatalf("%s printed raw control bytes: %q", args[0], out)
				}
				if args[0] == "show" && !strings.Contains(string(out), `\x1b`) && !strings.Contains(string(out), `<U+202E>`) {
					t.Fatalf("show does not make the escape visible: %q", out)
				}
			}
			rec := r.show(id)
			if rec["command"] != command {
				t.Errorf("the pinned command is not the agent's bytes: %q", rec["command"])
			}
			if s, _ := rec["suspicious"].(bool); !s {
				t.Errorf("a proposal with escape sequences is not flagged suspicious")
			}
			if out, err := approveTUI(t, "--db", r.db, "deny", id, "--reason", "hostile bytes").CombinedOutput(); err != nil {
				t.Fatalf("deny: %v\n%s", err, out)
			}
			stdout, stderr := r.wait(run)
			if _, err := os.Stat(filepath.Join(r.work, marker)); err == nil {
				t.Fatal("denied, but the command ran")
			}
			if strings.ContainsAny(stdout+stderr, "\x1b\x07") && a.name != "codex" {
				t.Logf("note: the agent's own output holds control bytes (the agent's to render)")
			}
		})
	}
}

// The agent's own hook timeout passes while the operator has not decided
// (the hook's --timeout is longer, as when the settings disagree): each
// agent stops waiting its own way (Claude Code and Gemini CLI send SIGTERM;
// Codex kills the shell it started the hook with), and may then run the
// command under its own rules. The record never says denied, nor stays a
// plain pending request: a call the agent ran is recorded as run without
// approval (its post-run event) and closed, so approving it afterwards is
// refused; one it did not run is parked (pending, its park saying the
// agent stopped waiting), so that the call asked again can be let through.
func TestRealAgentHookTimeoutIsRecordedTruthfully(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			marker := "timeout-marker"
			r := newAgentRig(t, a, "sh -c 'touch "+marker+"'", "create the marker file")
			r.hookTimeout, r.waitFor = 4*time.Second, 40*time.Second
			// Settings that disagree (the agent gives up first): written by
			// hand, since hook install never writes them.
			r.installHooksByHand()
			run := r.start("Create the marker file.")
			id := r.pendingID(run)
			stdout, stderr := r.wait(run)
			_, statErr := os.Stat(filepath.Join(r.work, marker))
			ran := statErr == nil
			t.Logf("%s ran the command after its hook timeout: %v; tool results %q", a.bin, ran, r.stub.ToolResults())
			var rec map[string]any
			eventually(t, 60*time.Second, "the record never said what happened", func() bool {
				rec = r.show(id)
				park, _ := rec["park"].(map[string]any)
				return rec["execution_status"] == "ran_without_approval" || park["state"] == "parked"
			})
			t.Logf("record: status %v, execution %v (%v), park %v", rec["status"], rec["execution_status"], rec["execution_reason"], rec["park"])
			if rec["status"] == "denied" || rec["status"] == "consumed" {
				t.Fatalf("status %v: nobody decided\nstdout: %s\nstderr: %s", rec["status"], stdout, stderr)
			}
			if !ran {
				if rec["status"] != "pending" || rec["execution_status"] != "not_started" {
					t.Fatalf("not run, and the record says status %v, execution %v; want parked", rec["status"], rec["execution_status"])
				}
				return
			}
			if rec["execution_status"] != "ran_without_approval" || rec["status"] != "expired" {
				t.Fatalf("the agent ran the command, and the record says status %v, execution %v", rec["status"], rec["execution_status"])
			}
			out, err := approveTUI(t, "--db", r.db, "approve", id, "--confirm", id).CombinedOutput()
			if err == nil {
				t.Fatalf("a proposal whose call ran without approval was approved afterwards:\n%s", out)
			}
			t.Logf("approving it afterwards: %s", strings.TrimSpace(string(out)))
		})
	}
}
