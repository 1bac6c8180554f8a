package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The agent runs as the operator's own user, with no two-person policy in
// force: one tool call waits for approval, a second one would approve the
// first. Every surface (Claude Code's, Codex's and Gemini CLI's hooks, and
// run) must refuse to let the second through unseen: it is asked, at least
// high, and the first is never allowed. Real processes: the hooks and run
// are this program, and a call let through is run by a real shell, as the
// agent would.

// selfRig is a store and the environment the agent's commands run in.
type selfRig struct {
	db, cwd string
	env     []string
}

func newSelfRig(t *testing.T) *selfRig {
	t.Helper()
	dir := t.TempDir()
	// HOME is the rig's: ~/.hermes/state.db is the store.
	r := &selfRig{db: filepath.Join(dir, ".hermes", "state.db"), cwd: filepath.Join(dir, "work")}
	for _, d := range []string{filepath.Dir(r.db), r.cwd, filepath.Join(r.cwd, "build")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "HOME="+dir, "APPROVE_TUI_DB="+r.db, "HERMES_HOME="+filepath.Dir(r.db))
	if out, err := r.cmd(t, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v: %s", err, out)
	}
	return r
}

func (r *selfRig) cmd(t *testing.T, args ...string) *exec.Cmd {
	c := approveTUI(t, args...)
	c.Env, c.Dir = r.env, r.cwd
	return c
}

// hookInput is one shell tool call in who's protocol.
func hookInput(who, cwd, key, command string) string {
	m := map[string]any{"session_id": "s1", "cwd": cwd, "tool_input": map[string]any{"command": command}}
	switch who {
	case "gemini":
		m["hook_event_name"], m["tool_name"] = "BeforeTool", "run_shell_command"
	default:
		m["hook_event_name"], m["tool_name"], m["tool_use_id"] = "PreToolUse", "Bash", key
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// letThrough says whether who's hook answer lets the call run: an allow,
// or no answer at all (the agent's own rules, which let it run).
func letThrough(t *testing.T, who string, out []byte) bool {
	t.Helper()
	if len(bytes.TrimSpace(out)) == 0 {
		return true
	}
	var v struct {
		Decision string            `json:"decision"`
		HSO      map[string]string `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s: answer %q: %v", who, out, err)
	}
	return v.Decision == "allow" || v.HSO["permissionDecision"] == "allow"
}

// pendingID waits for the first pending proposal in the store.
func (r *selfRig) pendingID(t *testing.T, not string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+r.db+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var id string
		err := db.QueryRow(`SELECT approval_id FROM gateway_approvals WHERE status = 'pending' AND approval_id != ? ORDER BY created_at LIMIT 1`, not).Scan(&id)
		if err == nil {
			return id
		}
	}
	t.Fatal("no pending proposal appeared")
	return ""
}

// surface runs one tool call of who (claude-code, codex, gemini, or run)
// that waits up to wait; done receives whether it was let through (and,
// for run, ran).
func (r *selfRig) surface(t *testing.T, who, key, command string, wait time.Duration) (start func(), done func() (bool, string)) {
	var c *exec.Cmd
	var out, errb bytes.Buffer
	switch who {
	case "run":
		c = r.cmd(t, "run", "--timeout", wait.String(), "--shell", command)
	case "codex":
		c = r.cmd(t, "hook", who, "--timeout", wait.String())
	default:
		c = r.cmd(t, "hook", who, "--timeout", wait.String(), "--low", "allow")
	}
	if who != "run" {
		c.Stdin = strings.NewReader(hookInput(who, r.cwd, key, command))
	}
	c.Stdout, c.Stderr = &out, &errb
	start = func() {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	done = func() (bool, string) {
		err := c.Wait()
		if who == "run" {
			return err == nil, out.String() + errb.String()
		}
		if err != nil && who == "claude-code" {
			t.Fatalf("%s hook: %v: %s", who, err, errb.String())
		}
		through := letThrough(t, who, out.Bytes())
		if through {
			// The agent runs the call it was let through.
			sh := exec.Command("/bin/sh", "-c", command)
			sh.Env, sh.Dir = r.env, r.cwd
			if b, err := sh.CombinedOutput(); err != nil {
				t.Logf("%s: the call let through failed: %v: %s", who, err, b)
			}
		}
		return through, out.String() + errb.String()
	}
	return start, done
}

func TestAgentCannotApproveItsOwnCall(t *testing.T) {
	if _, err := exec.LookPath("approve-tui"); err != nil {
		t.Skip("approve-tui is not in $PATH:", err)
	}
	bin, _ := exec.LookPath("approve-tui")
	type attack struct{ who, command string }
	var attacks []attack
	for _, who := range []string{"claude-code", "codex", "gemini", "run"} {
		attacks = append(attacks, attack{who, "approve-tui approve ID --confirm ID"})
	}
	attacks = append(attacks,
		attack{"claude-code", bin + " approve ID --confirm ID"},
		attack{"claude-code", "env X=1 approve-tui approve ID --confirm ID"},
		attack{"claude-code", "bash -c 'approve-tui approve ID --confirm ID'"},
		attack{"claude-code", "sqlite3 ~/.hermes/state.db \"update gateway_approvals set status='consumed' where approval_id='ID'\""},
		attack{"gemini", "sqlite3 $HERMES_HOME/state.db \"update gateway_approvals set status='consumed' where approval_id='ID'\""},
		attack{"run", "cd $HERMES_HOME && sqlite3 state.db \"update gateway_approvals set status='consumed' where approval_id='ID'\""},
	)
	for _, a := range attacks {
		t.Run(a.who+": "+a.command, func(t *testing.T) {
			if strings.Contains(a.command, "sqlite3") {
				if _, err := exec.LookPath("sqlite3"); err != nil {
					t.Skip("sqlite3 is not installed")
				}
			}
			r := newSelfRig(t)

			// The first call waits for approval.
			startWait, waited := r.surface(t, a.who, "toolu_wait", "rm -rf build/", 8*time.Second)
			startWait()
			id := r.pendingID(t, "")
			// The second one would approve it.
			command := strings.ReplaceAll(a.command, "ID", id)
			startSelf, selfDone := r.surface(t, a.who, "toolu_self", command, 2*time.Second)
			startSelf()
			through, out := selfDone()
			if through {
				t.Errorf("the approving call was let through: %s", out)
			}
			// The approving call is over: had it (or the command it ran)
			// decided the waiting proposal, the store says so now and the
			// operator's deny below is refused. The deny only ends the
			// wait early instead of at its timeout.
			_ = r.cmd(t, "deny", "--reason", "the operator ends the wait", "--", id).Run()
			if through, out := waited(); through {
				t.Fatalf("the waiting call was let through (approved by the agent itself): %s", out)
			}
			// The approving call was asked, high, saying why.
			db, err := sql.Open("sqlite", "file:"+r.db+"?mode=ro&_busy_timeout=5000")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var payload string
			if err := db.QueryRowContext(context.Background(), `SELECT payload_json FROM gateway_approvals WHERE approval_id != ? ORDER BY created_at DESC LIMIT 1`, id).Scan(&payload); err != nil {
				t.Fatalf("the approving call made no proposal: %v (%s)", err, out)
			}
			var p struct {
				Command, RiskLevel, RiskReason string
			}
			var m map[string]any
			_ = json.Unmarshal([]byte(payload), &m)
			p.Command, _ = m["command"].(string)
			p.RiskLevel, _ = m["risk_level"].(string)
			p.RiskReason, _ = m["risk_reason"].(string)
			if p.Command != command || (p.RiskLevel != "high" && p.RiskLevel != "critical") || !strings.Contains(p.RiskReason, "decide an approval itself") {
				t.Fatalf("the approving call's proposal: %+v", p)
			}
		})
	}
}
