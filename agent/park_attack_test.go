package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// postBashIn is Claude Code's PostToolUse of a Bash call in session and cwd.
func postBashIn(session, cwd, command, toolUseID string) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
		"hook_event_name": "PostToolUse", "tool_name": "Bash", "permission_mode": "default",
		"tool_input":    map[string]any{"command": command, "description": "clean the build dir"},
		"tool_response": map[string]any{"stdout": "", "stderr": "", "interrupted": false},
		"tool_use_id":   toolUseID,
	})
	return string(b)
}

// A deferred call resumed twice (`claude -p --resume SESSION` run twice,
// by a script or by the agent's own model from a shell call: both re-issue
// the deferred call with its tool_use_id): the approval is one run. The
// first resume takes it and runs; Claude Code reports it run; the second
// resume must be refused. Today the "same call" exemption of takeParked
// (a TakenError whose taker is this very call is let through, for hook
// processes running in parallel) has no end: the same tool_use_id is let
// through again after its execution is recorded, and again after
// TakenRefusal, without any approval.
func TestAttackDeferResumedTwiceRunsTwice(t *testing.T) {
	s, o := emptyStore(t)
	opts := hookOpts(s)
	opts.Defer = true
	const cmd = "rm -rf /srv/app/dist"
	call := withTranscript(t, bashCallIn("sess-dd", "/srv/app", "default", cmd, "toolu_DD1"),
		writeTranscript(t, transcriptLine("msg_DD1", "tool_use", "toolu_DD1")))
	id := HookID("sess-dd", "toolu_DD1")
	if d, _ := checkJSON(t, recvHook(t, hookAsync(call, opts))); d != "defer" {
		t.Fatalf("first ask: %s", d)
	}
	approve(t, o, id)
	if d, reason := checkJSON(t, recvHook(t, hookAsync(call, opts))); d != "allow" {
		t.Fatalf("first resume: %s %q", d, reason)
	}
	// Claude Code ran it and says so.
	if ans := recvHook(t, hookAsync(postBashIn("sess-dd", "/srv/app", cmd, "toolu_DD1"), opts)); !ans.Silent {
		t.Fatalf("post: %+v", ans)
	}
	if got := get(t, o, id); got.ExecutionStatus != model.ExecExecuted {
		t.Fatalf("the run is not recorded: %s", got.ExecutionStatus)
	}
	short := opts
	short.Timeout = 500 * time.Millisecond
	d, reason := checkJSON(t, recvHook(t, hookAsync(call, short)))
	if d == "allow" {
		t.Fatalf("the same deferred call resumed a second time, after it ran, is let through again on one approval: %s %q", d, reason)
	}
	if !strings.Contains(reason, id) {
		t.Fatalf("the refusal does not name %s: %q", id, reason)
	}
}

// Codex (or Claude Code) kills its hook at its hook timeout and runs the
// command under its own rules; the hook parks the proposal. The command
// runs for a while; meanwhile the operator approves the parked proposal
// (the console says it lets the call through "when it is asked again").
// Codex's PostToolUse for the original call then arrives, tied by its
// call id. The approval was never handed to any call (nobody took it):
// the call ran without approval. reportable() knows this for reports tied
// by match, but the by-id path of reportedCall skips it, and after()
// records the run as an approved execution ("executed"): the record says
// the operator's approval let it through.
func TestAttackRunBeforeApprovalOfParkedRecordedAsApproved(t *testing.T) {
	for _, a := range postAgents {
		if a.id == "" {
			continue
		}
		t.Run(a.name, func(t *testing.T) {
			s, o := emptyStore(t)
			id := proposeFor(t, s, a, a.id, postCommand)
			park(t, s, id)
			approve(t, o, id)
			runPost(t, s, a)
			r := get(t, o, id)
			if r.ExecutionStatus == model.ExecExecuted || r.ExecutionStatus == model.ExecStarted {
				t.Fatalf("%s: a call run while its proposal was parked, whose approval nobody took, is recorded %s (%q): as if the approval let it through",
					id, r.ExecutionStatus, r.ExecutionReason)
			}
		})
	}
}

// Without parking or defer: Claude Code's call tool_use_id, approved, let
// through, and reported run (executed), asked again with the same session
// and tool_use_id (a replayed PreToolUse; the resume of a deferred call
// is one such re-issue) is let through again on the same approval.
// Codex and Claude Code have no answerOnce: only Hermes does.
func TestAttackSameToolUseIDAfterRunAllowedAgain(t *testing.T) {
	s, o := emptyStore(t)
	opts := hookOpts(s)
	opts.ParkWindow = -1
	const cmd = "rm -rf /srv/app/dist"
	call := bashCallIn("sess-b", "/srv/app", "default", cmd, "toolu_B1")
	id := HookID("sess-b", "toolu_B1")
	ch := hookAsync(call, opts)
	awaitWaiting(t, o)
	approve(t, o, id)
	if d, reason := checkJSON(t, recvHook(t, ch)); d != "allow" {
		t.Fatalf("first: %s %q", d, reason)
	}
	recvHook(t, hookAsync(postBashIn("sess-b", "/srv/app", cmd, "toolu_B1"), opts))
	if got := get(t, o, id); got.ExecutionStatus != model.ExecExecuted {
		t.Fatalf("the run is not recorded: %s", got.ExecutionStatus)
	}
	opts.Timeout = 500 * time.Millisecond
	if d, reason := checkJSON(t, recvHook(t, hookAsync(call, opts))); d == "allow" {
		t.Fatalf("the same call, run once already, is let through again: %s %q", d, reason)
	}
}

// --defer in a headless session whose model asks for two Bash calls in
// one turn (the model chooses that): Claude Code ignores defer for a call
// of a batch of more than one ("defer is solo-only": its PreToolUse
// handling breaks out of the defer branch and goes on with its own
// permission rules), so the call runs wherever those rules allow it
// (`claude -p --allowedTools Bash`, a permissions.allow rule), with its
// proposal parked and approvable. permission_mode says nothing of the
// batch; the transcript Claude Code names in the input does (the
// assistant message, one line per content block, shares one message id).
// The hook answers defer regardless.
func TestAttackDeferInABatchOfTwo(t *testing.T) {
	s, _ := emptyStore(t)
	opts := hookOpts(s)
	opts.Defer = true
	const cmd = "rm -rf /srv/app/dist"
	dir := t.TempDir()
	transcript := filepath.Join(dir, "t.jsonl")
	var lines []byte
	for _, tu := range []struct{ id, cmd string }{{"toolu_BA1", cmd}, {"toolu_BA2", "ls"}} {
		b, _ := json.Marshal(map[string]any{"type": "assistant", "sessionId": "sess-ba", "message": map[string]any{
			"id": "msg_01BATCH", "role": "assistant", "type": "message",
			"content": []any{map[string]any{"type": "tool_use", "id": tu.id, "name": "Bash", "input": map[string]any{"command": tu.cmd}}}}})
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(transcript, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(bashCallIn("sess-ba", "/srv/app", "default", cmd, "toolu_BA1")), &in); err != nil {
		t.Fatal(err)
	}
	in["transcript_path"] = transcript
	call, _ := json.Marshal(in)
	ans := recvHook(t, hookAsync(string(call), opts))
	if ans.Decision == "defer" {
		t.Fatalf("a call of a batch of two is answered defer, which Claude Code ignores for it (and then runs it under its own rules): %s", ans.JSON())
	}
}
