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

// TestConsoleInTmux runs the real binary's demo in a real terminal (tmux)
// at 80x24, approves one proposal by typing its id a key at a time, and
// checks the database and the audit log.
func TestConsoleInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the end-to-end console test (apt-get install tmux)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "approve-tui")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/approve-tui").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "demo.db")
	sock := fmt.Sprintf("approve-tui-e2e-%d", os.Getpid())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", "e2e", "-x", "80", "-y", "24",
		"env", "TERM=xterm-256color", bin, "demo", "--seed", "1", "--db", db)
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })

	screen := func() string { return tmux("capture-pane", "-p", "-t", "e2e") }
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if strings.Contains(screen(), want) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("screen never showed %q:\n%s", want, screen())
	}
	key := func(keys ...string) {
		for _, k := range keys {
			tmux("send-keys", "-t", "e2e", k)
			time.Sleep(30 * time.Millisecond)
		}
	}
	typeID := func(s string) { // a person types: one key at a time
		for _, r := range s {
			tmux("send-keys", "-t", "e2e", "-l", string(r))
			time.Sleep(30 * time.Millisecond)
		}
	}

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
