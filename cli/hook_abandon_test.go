package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
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
	hook := approveTUI(t, "--db", db, "hook", "gemini", "--timeout", "60s", "--park-window", "0s")
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

// An agent that ends without signalling its hook (Codex at the end of
// `codex exec`, its hook timeout past) leaves the hook waiting for nobody:
// once the process that started it is gone, the hook ends its wait and
// abandons the proposal, saying so, rather than heartbeating as a live
// waiter and then withdrawing it as if denied.
func TestHookWhoseAgentEndedAbandons(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if out, err := approveTUI(t, "--db", db, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	in := filepath.Join(dir, "in.json")
	if err := os.WriteFile(in, []byte(`{"session_id":"s1","cwd":"`+dir+`","hook_event_name":"PreToolUse","tool_name":"Bash",`+
		`"tool_input":{"command":"chmod -R 777 `+dir+`"},"tool_use_id":"call_1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := exec.LookPath("approve-tui")
	if err != nil {
		t.Skip("approve-tui is not in $PATH:", err)
	}
	// The "agent": a shell that starts the hook, waits a little, and ends.
	agent := exec.Command("sh", "-c", `"$0" --db "$1" hook codex --timeout 60s --park-window 0s < "$2" > "$3" 2>&1 & sleep 1`,
		bin, db, in, filepath.Join(dir, "out.txt"))
	agent.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	if err := agent.Run(); err != nil {
		t.Fatal(err)
	}
	id := ""
	eventually(t, 30*time.Second, "the proposal was never abandoned", func() bool {
		out, err := approveTUI(t, "--db", db, "--json", "list", "--status", "all").Output()
		var rows []map[string]any
		if err != nil || json.Unmarshal(out, &rows) != nil || len(rows) != 1 {
			return false
		}
		id, _ = rows[0]["approval_id"].(string)
		return rows[0]["status"] == "expired"
	})
	rec := showJSON(t, db, id)
	why, _ := rec["terminal_reason"].(string)
	if !strings.Contains(why, "abandoned: Codex stopped waiting for a decision (its agent (pid ") || !strings.Contains(why, "whether it ran is not known") {
		t.Fatalf("terminal_reason %q", why)
	}
	if w, _ := rec["waiter"].(map[string]any); w["state"] == "live" {
		t.Fatalf("a live waiter is left: %v", w)
	}
}
