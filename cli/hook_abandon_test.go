package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A hook process stopped by its agent with SIGTERM (what Claude Code and
// Gemini CLI send at their hook timeout) answers deny, should the agent
// still read it, and leaves its proposal abandoned: expired, saying that
// the agent stopped waiting and that whether it ran is not known; never
// "denied by requester", which Gemini CLI would contradict by running it.
func TestHookSIGTERMAbandons(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if out, err := approveTUI(t, "--db", db, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	in := `{"session_id":"s1","cwd":"` + dir + `","hook_event_name":"BeforeTool","timestamp":"2026-01-01T10:00:00Z",` +
		`"tool_name":"run_shell_command","tool_input":{"command":"chmod -R 777 ` + dir + `","description":"open up"}}`
	hook := approveTUI(t, "--db", db, "hook", "gemini", "--timeout", "60s")
	hook.Stdin = strings.NewReader(in)
	var stdout bytes.Buffer
	hook.Stdout = &stdout
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	defer hook.Process.Kill()
	id := awaitListed(t, db, "gm-")
	if err := hook.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := hook.Wait(); err != nil {
		t.Fatalf("hook: %v", err)
	}
	var ans struct{ Decision, Reason string }
	if err := json.Unmarshal(stdout.Bytes(), &ans); err != nil || ans.Decision != "deny" ||
		!strings.Contains(ans.Reason, "Gemini CLI stopped waiting (SIGTERM)") {
		t.Fatalf("answer %q: %v", stdout.String(), err)
	}
	rec := showJSON(t, db, id)
	why, _ := rec["terminal_reason"].(string)
	if rec["status"] != "expired" || !strings.HasPrefix(why, "abandoned: Gemini CLI stopped waiting for a decision (its hook got SIGTERM") ||
		!strings.Contains(why, "whether it ran is not known") {
		t.Fatalf("record: status %v, terminal_reason %q", rec["status"], why)
	}
	out, _ := approveTUI(t, "--db", db, "show", "--", id).Output()
	if !strings.Contains(string(out), "ended:") || !strings.Contains(string(out), "abandoned: Gemini CLI stopped waiting") {
		t.Fatalf("show:\n%s", out)
	}
}

// awaitListed waits for a pending proposal whose id starts with prefix.
func awaitListed(t *testing.T, db, prefix string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := approveTUI(t, "--db", db, "--json", "list").Output()
		var rows []map[string]any
		if err == nil && json.Unmarshal(out, &rows) == nil {
			for _, r := range rows {
				if id, _ := r["approval_id"].(string); strings.HasPrefix(id, prefix) {
					return id
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no pending %s proposal", prefix)
	return ""
}
