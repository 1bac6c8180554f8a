package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// codexCall is a Codex PreToolUse input for command in dir, call callID.
func codexCall(dir, command, callID string) string {
	b, _ := json.Marshal(map[string]any{"session_id": "s-park", "turn_id": "t1", "cwd": dir, "hook_event_name": "PreToolUse",
		"model": "m", "permission_mode": "default", "tool_name": "Bash", "tool_input": map[string]any{"command": command}, "tool_use_id": callID})
	return string(b)
}

// runCodexHook runs `hook codex` on in, and returns its stdout.
func runCodexHook(t *testing.T, db, in string, args ...string) string {
	t.Helper()
	hook := approveTUI(t, append([]string{"--db", db, "hook", "codex"}, args...)...)
	hook.Stdin = strings.NewReader(in)
	var out bytes.Buffer
	hook.Stdout = &out
	_ = hook.Run() // a deny exits 0 or 2
	return out.String()
}

// A hook killed -9 while it waits (no word, no park) leaves its reserved
// proposal; the same call asked again resumes it (no second proposal) and,
// once approved, is let through; two more retries at once are told it was
// taken.
func TestHookKilledResumedOnce(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if out, err := approveTUI(t, "--db", db, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	command := "chmod -R 777 " + dir
	hook := approveTUI(t, "--db", db, "hook", "codex", "--timeout", "60s")
	hook.Stdin = strings.NewReader(codexCall(dir, command, "call_1"))
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	id := awaitListed(t, db, "cx-")
	if err := hook.Process.Kill(); err != nil { // SIGKILL: nothing recorded by the hook
		t.Fatal(err)
	}
	_ = hook.Wait()
	rec := showJSON(t, db, id)
	if rec["status"] != "pending" {
		t.Fatalf("after kill -9: %v", rec["status"])
	}

	// Asked again: it waits on the same proposal, and parks it again at its
	// timeout.
	out := runCodexHook(t, db, codexCall(dir, command, "call_2"), "--timeout", "1s")
	if !strings.Contains(out, "not run: parked as "+id+";") {
		t.Fatalf("the retry: %s", out)
	}
	if out, _ := approveTUI(t, "--db", db, "--json", "list", "--status", "all").Output(); strings.Count(string(out), `"approval_id"`) != 1 {
		t.Fatalf("more than one proposal:\n%s", out)
	}
	if out, err := approveTUI(t, "--db", db, "approve", "--confirm", id, "--", id).CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	// Codex's allow is no output.
	if out := runCodexHook(t, db, codexCall(dir, command, "call_3"), "--timeout", "5s"); strings.TrimSpace(out) != "" {
		t.Fatalf("the retry after the approval: %q", out)
	}
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			outs[i] = runCodexHook(t, db, codexCall(dir, command, "call_4"+string(rune('a'+i))), "--timeout", "2s")
		}(i)
	}
	wg.Wait()
	for _, o := range outs {
		if !strings.Contains(o, id+" was taken by ") || !strings.Contains(o, "not run") {
			t.Fatalf("a later retry: %s", o)
		}
	}
	rec = showJSON(t, db, id)
	if rec["status"] != "consumed" {
		t.Fatalf("status %v", rec["status"])
	}
}
