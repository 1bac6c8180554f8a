package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The real OpenSSH client in a real terminal (tmux) against approve-tui
// serve: an approver approves a proposal by typing its id, and denies
// another; both decisions name the key.
func TestServeWithOpenSSHInTmux(t *testing.T) {
	for _, tool := range []string{"tmux", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for the end-to-end SSH test (apt-get install tmux openssh-client)", tool)
		}
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	db := filepath.Join(dir, "state.db")
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "oncall-alice", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, _ := os.ReadFile(key + ".pub")
	approvers := filepath.Join(dir, "approvers")
	if err := os.WriteFile(approvers, pub, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "--db", db, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v %s", err, out)
	}
	submit := func(command string) string {
		out, err := exec.Command(bin, "--db", db, "submit", "--ttl", "1h", "--", command).Output()
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	approveID, denyID := submit("rm -rf /srv/approve-over-openssh"), submit("rm -rf /srv/deny-over-openssh")

	port := freePort(t)
	srv := exec.Command(bin, "--db", db, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--host-key", filepath.Join(dir, "host_ed25519"), "--approvers", approvers)
	var srvLog strings.Builder
	srv.Stderr = &srvLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(os.Interrupt); srv.Wait() })
	waitPort(t, port)

	tm := &demoInTmux{t: t, sock: fmt.Sprintf("approve-tui-ssh-%d", os.Getpid()), bin: bin}
	known := filepath.Join(dir, "known_hosts")
	tm.tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", "ssh", "-tt", "-p", fmt.Sprint(port), "-i", key, "-o", "UserKnownHostsFile="+known,
		"-o", "StrictHostKeyChecking=accept-new", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "alice@127.0.0.1")
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	tm.waitFor("pending")

	tm.key("/")
	tm.typeID(approveID)
	tm.key("Enter", "Enter", "a")
	tm.waitFor("Type the approval id")
	tm.typeID(approveID)
	tm.waitFor("approve: press enter")
	tm.key("Enter")
	tm.waitFor("approved " + approveID)

	tm.key("Escape", "Escape", "Escape", "/")
	tm.typeID(denyID)
	tm.key("Enter", "d")
	tm.waitFor("enter deny")
	tm.typeID("not over ssh")
	tm.key("Enter")
	tm.waitFor("denied " + denyID)

	s, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, want := range map[string]model.Status{approveID: model.StatusConsumed, denyID: model.StatusDenied} {
		rec, err := s.Get(context.Background(), id)
		if err != nil || rec.Status != want || !strings.HasPrefix(rec.ConsumedBy, "oncall-alice (SHA256:") || !strings.HasSuffix(rec.ConsumedBy, " via ssh") {
			t.Fatalf("%s: %s by %q (%v)\nserver log:\n%s", id, rec.Status, rec.ConsumedBy, err, srvLog.String())
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %d", port)
}
