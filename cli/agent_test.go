package cli

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

// approveTUI is the approve-tui program that TestMain put in $PATH: this
// test binary, run as a separate process.
func approveTUI(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("approve-tui")
	if err != nil {
		t.Skip("approve-tui is not in $PATH:", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	return cmd
}

// showJSON runs `approve-tui show --json` as its own process.
func showJSON(t *testing.T, db, id string) map[string]any {
	t.Helper()
	out, err := approveTUI(t, "--db", db, "--json", "show", "--", id).Output()
	if err != nil {
		t.Fatalf("show: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("show --json: %v: %s", err, out)
	}
	return v
}

// initStore makes a store with `approve-tui init` in a directory of its
// own.
func initStore(t *testing.T) (dir, db string) {
	t.Helper()
	dir = t.TempDir()
	db = filepath.Join(dir, "state.db")
	if err := approveTUI(t, "--db", db, "init").Run(); err != nil {
		t.Fatal(err)
	}
	return dir, db
}

// startRunner starts `approve-tui run -- sh -c script` on db and returns it
// with the id of the proposal it says needs approval; the test's end kills
// it if it still runs.
func startRunner(t *testing.T, db, script string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	args := append(append([]string{"--db", db, "run"}, flags...), "--", "sh", "-c", script)
	runner := approveTUI(t, args...)
	stderr, err := runner.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Process.Kill() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := regexp.MustCompile(`^approve-tui: (\S+) needs approval`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("runner said %q: %v", line, err)
	}
	return runner, m[1]
}

// A waiting `run` killed with SIGKILL cannot withdraw its proposal; show
// (and the console, which reads the same waiter state) reports its waiter
// dead within a few heartbeats, and approving it says that nothing will run.
func TestKilledRunnerReadsAsDeadWaiter(t *testing.T) {
	dir, db := initStore(t)
	marker := filepath.Join(dir, "ran.txt")
	// Parking off: a killed runner's proposal is only a dead waiter's.
	// (With parking on it is also resumable by the same run: see
	// hook_park_test.go.)
	runner, id := startRunner(t, db, "echo ran >> "+marker, "--park-window", "0s")

	// The runner says it waits, then registers as the waiter: give it a
	// moment, as an operator's console would.
	w := showJSON(t, db, id)["waiter"].(map[string]any)
	for end := time.Now().Add(5 * time.Second); w["state"] != "live" && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		w = showJSON(t, db, id)["waiter"].(map[string]any)
	}
	if w["state"] != "live" || int(w["pid"].(float64)) != runner.Process.Pid || w["surface"] != "runner" {
		t.Fatalf("waiter before the kill: %v", w)
	}
	if err := runner.Process.Kill(); err != nil { // SIGKILL: no chance to withdraw
		t.Fatal(err)
	}
	_ = runner.Wait()
	killed := time.Now()

	deadline := killed.Add(3 * storage.HeartbeatInterval)
	for {
		v := showJSON(t, db, id)
		if v["waiter"].(map[string]any)["state"] == "dead" {
			if v["status"] != "pending" {
				t.Fatalf("status %v", v["status"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiter still %v %v after the kill", v["waiter"], time.Since(killed))
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := approveTUI(t, "--db", db, "show", "--", id).Output()
	if err != nil || !regexp.MustCompile(`(?m)^waiter: +gone: pid \d+ on \S+ stopped heartbeating .*approving may run nothing$`).Match(out) {
		t.Fatalf("show: %v\n%s", err, out)
	}

	// list marks it: pending, but its waiter is gone.
	out, err = approveTUI(t, "--db", db, "list").Output()
	if err != nil || !strings.Contains(string(out), "pending (waiter gone)") {
		t.Fatalf("list: %v\n%s", err, out)
	}

	// Approving it is allowed, and the operator is told nothing will run.
	var errb bytes.Buffer
	approve := approveTUI(t, "--db", db, "approve", "--confirm", id, "--", id)
	approve.Stderr = &errb
	if err := approve.Run(); err != nil {
		t.Fatalf("approve: %v %s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "the process that waited on "+id) || !strings.Contains(errb.String(), "is gone") ||
		!strings.Contains(errb.String(), "so it runs nothing") {
		t.Fatalf("approve said %q", errb.String())
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran without its runner")
	}
}

// A locked store is a quick deny, with exit 0 and the reason, well within
// the hook's own timeout: the hook's lock wait is short by default.
func TestHookLockedStoreDenies(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	if code, _, stderr := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(stderr)
	}
	raw, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	conn, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")

	in := `{"session_id":"s","cwd":"/srv","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf build/"},"tool_use_id":"toolu_1"}`
	for _, args := range [][]string{
		{"hook", "claude-code"},                            // the hook's own short lock wait
		{"--lock-timeout", "300ms", "hook", "claude-code"}, // or the flag's
	} {
		start := time.Now()
		code, stdout, stderr := run(t, db, false, in, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var out struct {
			HookSpecificOutput map[string]string `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%v: %v: %q", args, err, stdout)
		}
		if out.HookSpecificOutput["permissionDecision"] != "deny" || !strings.Contains(out.HookSpecificOutput["permissionDecisionReason"], "locked") {
			t.Fatalf("%v: %s", args, stdout)
		}
		if el := time.Since(start); el > hookLockTimeout+3*time.Second {
			t.Fatalf("%v: answered after %v", args, el)
		}
	}
}

// Usage errors of the hook's own flags are still a JSON deny with exit 0.
func TestHookBadFlagValuesDeny(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	in := `{"tool_name":"Bash","tool_input":{"command":"ls"}}`
	for _, args := range [][]string{{"hook", "claude-code", "--low", "maybe"}, {"hook", "claude-code", "--timeout", "0s"}} {
		code, stdout, _ := run(t, db, false, in, args...)
		if code != 0 || !strings.Contains(stdout, `"permissionDecision":"deny"`) {
			t.Fatalf("%v: exit %d %q", args, code, stdout)
		}
	}
}

// A `run` killed with SIGKILL while its approved command runs cannot record
// the outcome: the execution stays started, and show says the runner died
// and the outcome is unknown (from its waiter row, which the runner kept
// heartbeating while the command ran), not that it ran or failed.
func TestRunnerKilledMidCommandReadsAsOutcomeUnknown(t *testing.T) {
	dir, db := initStore(t)
	childPID := filepath.Join(dir, "child.pid")
	defer func() { // the orphaned command
		if b, err := os.ReadFile(childPID); err == nil {
			exec.Command("kill", "-KILL", strings.TrimSpace(string(b))).Run()
		}
	}()
	runner, id := startRunner(t, db, "echo $$ > "+childPID+"; exec sleep 60")
	if out, err := approveTUI(t, "--db", db, "approve", "--confirm", id, "--", id).CombinedOutput(); err != nil {
		t.Fatalf("approve: %v %s", err, out)
	}

	deadline := time.Now().Add(10 * time.Second)
	for {
		v := showJSON(t, db, id)
		if v["run"] == "running" {
			w := v["waiter"].(map[string]any)
			if v["execution_status"] != "started" || w["state"] != "live" || int(w["pid"].(float64)) != runner.Process.Pid {
				t.Fatalf("while running: %v", v)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never seen running: run=%v execution=%v waiter=%v", v["run"], v["execution_status"], v["waiter"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, err := approveTUI(t, "--db", db, "show", "--", id).Output()
	if err != nil || !regexp.MustCompile(`(?m)^execution: +started: pid \d+ .*; running \(runner pid \d+ on \S+, heartbeat `).Match(out) {
		t.Fatalf("show while running: %v\n%s", err, out)
	}

	if err := runner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = runner.Wait()
	v := showJSON(t, db, id) // same host: a gone pid reads as dead at once
	if v["run"] != "runner_died" || v["execution_status"] != "started" || v["status"] != "consumed" {
		t.Fatalf("after the kill: run=%v execution=%v status=%v", v["run"], v["execution_status"], v["status"])
	}
	out, err = approveTUI(t, "--db", db, "show", "--", id).Output()
	if err != nil || !regexp.MustCompile(`(?m)^execution: +started: pid \d+ .*; runner died, outcome unknown \(runner pid \d+ on \S+ is gone, last heartbeat `).Match(out) {
		t.Fatalf("show after the kill: %v\n%s", err, out)
	}
	if regexp.MustCompile(`approving may run nothing`).Match(out) {
		t.Fatalf("a decided proposal's waiter talks of approving:\n%s", out)
	}
}
