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

	"github.com/approve-tui/approve-tui/demo"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// buildBinary builds approve-tui into dir, for a real terminal to run.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "approve-tui")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/approve-tui").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// demoInTmux is the real binary's demo running in a real terminal (tmux)
// at 80x24 on a file of the test's.
type demoInTmux struct {
	t    *testing.T
	db   string
	sock string
	bin  string
}

func startDemoInTmux(t *testing.T) *demoInTmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the end-to-end console test (apt-get install tmux)")
	}
	// Not t.TempDir: the demo in tmux may still write its WAL for a moment
	// after the server is killed, and a directory not empty then failed
	// the test at cleanup. Removed once the session is gone, best effort.
	dir, err := os.MkdirTemp("", "approve-tui-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 50 && os.RemoveAll(dir) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	bin := buildBinary(t, dir)
	tm := &demoInTmux{t: t, db: filepath.Join(dir, "demo.db"), sock: fmt.Sprintf("approve-tui-e2e-%d-%s", os.Getpid(), t.Name()), bin: bin}
	tm.tmux("new-session", "-d", "-s", "e2e", "-x", "80", "-y", "24",
		"env", "TERM=xterm-256color", bin, "demo", "--seed", "1", "--db", tm.db)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	return tm
}

func (tm *demoInTmux) tmux(args ...string) string {
	out, err := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (tm *demoInTmux) screen() string { return tm.tmux("capture-pane", "-p", "-t", "e2e") }

func (tm *demoInTmux) waitFor(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(tm.screen(), want) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tm.t.Fatalf("screen never showed %q:\n%s", want, tm.screen())
}

func (tm *demoInTmux) key(keys ...string) {
	for _, k := range keys {
		tm.tmux("send-keys", "-t", "e2e", k)
		time.Sleep(30 * time.Millisecond)
	}
}

// typeID types like a person: one key at a time.
func (tm *demoInTmux) typeID(s string) {
	for _, r := range s {
		tm.tmux("send-keys", "-t", "e2e", "-l", string(r))
		time.Sleep(30 * time.Millisecond)
	}
}

// The demo's console next to Hermes' Python store writing the same file,
// a connection per operation (each closing connection once made SQLite
// delete the WAL under the console): live updates keep working, and a deny
// in the console is what Python reads.
func TestDemoInTmuxWithHermesWriter(t *testing.T) {
	tm := startDemoInTmux(t)
	tm.waitFor("pending")
	hermes := func(args ...string) string {
		out, err := exec.Command("python3", append([]string{"../storage/testdata/hermes_store.py", tm.db}, args...)...).Output()
		if err != nil {
			t.Fatalf("hermes_store.py %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	id := hermes("submit", "--risk", "high", "rm -rf /srv/written-by-python")
	tm.waitFor("written-by-python")
	if _, err := os.Stat(tm.db + "-wal"); err != nil {
		t.Fatalf("the WAL under the console: %v", err)
	}
	tm.key("/")
	tm.typeID("written-by-python")
	tm.key("Enter", "d")
	tm.waitFor("enter deny")
	tm.key("Enter")
	tm.waitFor("denied " + id)
	if got := hermes("get", id); !strings.Contains(got, `"status": "denied"`) {
		t.Fatalf("python reads %s", got)
	}
	hermes("submit", "rm -rf /srv/second-from-python")
	tm.key("Escape")
	tm.waitFor("second-from-python")
}

// TestConsoleInTmux runs the real binary's demo in a real terminal (tmux)
// at 80x24, approves one proposal by typing its id a key at a time, and
// checks the database and the audit log.
func TestConsoleInTmux(t *testing.T) {
	tm := startDemoInTmux(t)
	db, sock, screen, waitFor, key, typeID := tm.db, tm.sock, tm.screen, tm.waitFor, tm.key, tm.typeID

	var id string
	for _, e := range demo.Catalogue(1) {
		if e.Name == "drop" {
			id = e.ID
		}
	}
	waitFor("pending")
	key("/")
	typeID(id)
	key("Enter", "Enter", "End", "a")
	waitFor("Type the approval id")
	typeID(id)
	waitFor("approve: press enter")
	key("Enter")
	waitFor("approved " + id)

	s, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != model.StatusConsumed || !strings.HasSuffix(rec.ConsumedBy, " via tui") {
		t.Fatalf("row after approving in the console: %s by %q", rec.Status, rec.ConsumedBy)
	}
	// The demo agent is the proposal's live waiter: it records the outcome.
	deadline := time.Now().Add(10 * time.Second)
	for rec.ExecutionStatus == model.ExecNotStarted && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		rec, _ = s.Get(context.Background(), id)
	}
	if rec.ExecutionStatus != model.ExecExecuted {
		t.Fatalf("execution outcome: %s", rec.ExecutionStatus)
	}
	evs, err := s.Audit(context.Background(), storage.AuditQuery{ApprovalID: id})
	if err != nil {
		t.Fatal(err)
	}
	approvals := 0
	for _, e := range evs {
		if e.Event == storage.EventApprove && e.Outcome == storage.OutcomeOK {
			approvals++
			if e.Surface != string(model.SurfaceTUI) {
				t.Fatalf("approved via %q", e.Surface)
			}
		}
	}
	if approvals != 1 {
		t.Fatalf("%d approve events", approvals)
	}
	if res, err := s.VerifyAudit(context.Background()); err != nil || !res.OK {
		t.Fatalf("audit verify: %+v %v", res, err)
	}
	key("q")
	deadline = time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := exec.Command("tmux", "-L", sock, "has-session", "-t", "e2e").Run(); err != nil {
			return // the console quit and the session ended
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the console did not quit on q:\n%s", screen())
}
