package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/pgtest"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Agents on two hosts, one console, one PostgreSQL database: the real
// binary, two `run` processes that record different host names, and the
// console in a real terminal (tmux). Each proposal shows up without a key
// pressed (LISTEN/NOTIFY), with its host; the console approves one (typed a
// key at a time) and denies the other; the first runner runs its command,
// the second does not; the audit chain verifies; and a copy of the
// database into a SQLite file and back verifies too.
func TestPostgresTwoHostsOneConsoleInTmux(t *testing.T) {
	pgtest.Require(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the end-to-end console test (apt-get install tmux)")
	}
	db := pgtest.Schema(t)
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	cli := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"--db", db}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := cli(nil, "init"); err != nil || !strings.Contains(out, "PostgreSQL") {
		t.Fatalf("init: %v\n%s", err, out)
	}
	tm := &demoInTmux{t: t, db: db, sock: fmt.Sprintf("approve-tui-pg-%d", os.Getpid()), bin: bin}
	tm.tmux("new-session", "-d", "-s", "e2e", "-x", "100", "-y", "30", "env", "TERM=xterm-256color", bin, "--db", db)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	tm.waitFor("No pending proposals")

	type runner struct {
		cmd  *exec.Cmd
		out  strings.Builder
		mark string
	}
	start := func(host, name string) *runner {
		r := &runner{mark: filepath.Join(dir, name)}
		r.cmd = exec.Command(bin, "--db", db, "run", "--risk", "high", "--reason", "fleet test", "--timeout", "1m",
			"--", "sh", "-c", "echo ran > "+r.mark)
		r.cmd.Env = append(os.Environ(), model.EnvHost+"="+host)
		r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := start("host-a", "ran-a")
	b := start("host-b", "ran-b")
	tm.waitFor("@host-a")
	tm.waitFor("@host-b")

	s, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	idOn := func(host string) string {
		recs, err := s.List(context.Background(), storage.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if strings.HasSuffix(r.SessionKey, "@"+host) {
				ws, _ := s.Waiters(context.Background(), r.ApprovalID)
				if len(ws) != 1 || ws[0].Host != host {
					t.Fatalf("waiters of %s: %+v", r.ApprovalID, ws)
				}
				return r.ApprovalID
			}
		}
		t.Fatalf("no proposal from %s in %d", host, len(recs))
		return ""
	}
	idA, idB := idOn("host-a"), idOn("host-b")

	// Approve host-a's.
	tm.key("/")
	tm.typeID(idA)
	tm.key("Enter", "Enter", "End", "a")
	tm.waitFor("Type the approval id")
	tm.typeID(idA)
	tm.waitFor("approve: press enter")
	tm.key("Enter")
	tm.waitFor("approved " + idA)
	// Deny host-b's.
	tm.key("Escape", "/")
	tm.typeID(idB)
	tm.key("Enter", "d")
	tm.waitFor("enter deny")
	tm.key("Enter")
	tm.waitFor("denied " + idB)

	waitExit := func(r *runner) int {
		done := make(chan error, 1)
		go func() { done <- r.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			r.cmd.Process.Kill()
			t.Fatalf("runner still waiting:\n%s", r.out.String())
		}
		return r.cmd.ProcessState.ExitCode()
	}
	if code := waitExit(a); code != 0 {
		t.Fatalf("runner on host-a exited %d:\n%s", code, a.out.String())
	}
	if _, err := os.Stat(a.mark); err != nil {
		t.Fatalf("host-a's approved command did not run: %v", err)
	}
	if code := waitExit(b); code == 0 {
		t.Fatalf("runner on host-b exited 0 after a deny:\n%s", b.out.String())
	}
	if _, err := os.Stat(b.mark); err == nil {
		t.Fatal("host-b's denied command ran")
	}
	rec, _ := s.Get(context.Background(), idA)
	if rec.Status != model.StatusConsumed || rec.ExecutionStatus != model.ExecExecuted {
		t.Fatalf("host-a's row: %s %s", rec.Status, rec.ExecutionStatus)
	}
	if res, err := s.VerifyAudit(context.Background()); err != nil || !res.OK {
		t.Fatalf("audit: %+v %v", res, err)
	}

	// The Claude Code hook on a third host, parking off: no decision
	// within its timeout is a deny, and the proposal is withdrawn.
	hook := exec.Command(bin, "--db", db, "hook", "claude-code", "--timeout", "1s", "--park-window", "0s")
	hook.Env = append(os.Environ(), model.EnvHost+"=host-c")
	hook.Stdin = strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"rm -rf /srv/from-host-c"},"session_id":"s-c","hook_event_name":"PreToolUse","cwd":"/tmp"}`)
	out, err := hook.Output()
	if err != nil || !strings.Contains(string(out), `"permissionDecision":"deny"`) {
		t.Fatalf("hook on host-c: %v\n%s", err, out)
	}
	tm.waitFor("history") // still drawing
	recs, _ := s.List(context.Background(), storage.ListOptions{Status: storage.ListDenied})
	withdrawn := false
	for _, r := range recs {
		if r.Command != "rm -rf /srv/from-host-c" {
			continue
		}
		evs, _ := s.Audit(context.Background(), storage.AuditQuery{ApprovalID: r.ApprovalID})
		for _, e := range evs {
			withdrawn = withdrawn || (e.Event == storage.EventSubmit && strings.HasSuffix(e.Actor, "@host-c"))
		}
	}
	if !withdrawn {
		t.Fatalf("no withdrawn proposal submitted from host-c: %d denied", len(recs))
	}
	if res, err := s.VerifyAudit(context.Background()); err != nil || !res.OK {
		t.Fatalf("audit after the hook: %+v %v", res, err)
	}

	// Into a SQLite file and back into another schema, verified each way.
	file := filepath.Join(dir, "copy.db")
	if out, err := cli(nil, "copy", "--from", db, "--to", file); err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("copy to SQLite: %v\n%s", err, out)
	}
	back := pgtest.Schema(t)
	if out, err := cli(nil, "copy", "--from", file, "--to", back); err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("copy back to PostgreSQL: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--db", back, "audit", "--verify").CombinedOutput(); err != nil {
		t.Fatalf("audit --verify on the copy: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--db", back, "show", idA).CombinedOutput(); err != nil || !strings.Contains(string(out), "host-a") {
		t.Fatalf("show in the copy: %v\n%s", err, out)
	}
}
