package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// A page's link, followed with the real OpenSSH client in a real terminal
// (tmux): ssh -t HOST open ID starts the console on that proposal, whole;
// the id is typed and the proposal approved, by the key. Then the local
// console, approve-tui --open ID, on the same proposal, now decided: it
// says by whom, on its event in the history.
func TestOpenWithOpenSSHInTmux(t *testing.T) {
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
	// The first in the list is another one: open must select the paged one.
	submit("rm -rf /srv/not-the-paged-one")
	id := submit("rm -rf /srv/the-paged-one")

	port := freePort(t)
	srv := exec.Command(bin, "--db", db, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--host-key", filepath.Join(dir, "host_ed25519"), "--approvers", approvers)
	srvLog := &syncbuf.Buffer{} // written by the copy of the server's stderr while the test reads it
	srv.Stderr = srvLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(os.Interrupt); srv.Wait() })
	waitPort(t, port)

	tm := &demoInTmux{t: t, sock: fmt.Sprintf("approve-tui-open-ssh-%d", os.Getpid()), bin: bin}
	known := filepath.Join(dir, "known_hosts")
	tm.tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", "ssh", "-t", "-p", fmt.Sprint(port), "-i", key, "-o", "UserKnownHostsFile="+known,
		"-o", "StrictHostKeyChecking=accept-new", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "alice@127.0.0.1", "open", id)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	tm.waitFor("/srv/the-paged-one")
	tm.waitFor("end of proposal")
	if s := tm.screen(); !strings.Contains(s, "id         "+id) {
		t.Fatalf("the detail is not the paged proposal's:\n%s", s)
	}
	tm.key("a")
	tm.waitFor("Type the approval id")
	tm.typeID(id)
	tm.waitFor("approve: press enter")
	tm.key("Enter")
	tm.waitFor("approved " + id)

	s, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := s.Get(context.Background(), id)
	if err != nil || rec.Status != model.StatusConsumed || !strings.HasPrefix(rec.ConsumedBy, "oncall-alice (SHA256:") || !strings.HasSuffix(rec.ConsumedBy, " via ssh") {
		t.Fatalf("%s: %s by %q (%v)\nserver log:\n%s", id, rec.Status, rec.ConsumedBy, err, srvLog.String())
	}
	if !strings.Contains(srvLog.String(), "open="+id) {
		t.Fatalf("the server log does not say what the session opened:\n%s", srvLog.String())
	}

	// The same page read again, locally, after the decision.
	local := &demoInTmux{t: t, sock: fmt.Sprintf("approve-tui-open-local-%d", os.Getpid()), bin: bin}
	local.tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", bin, "--db", db, "--open", id)
	t.Cleanup(func() { exec.Command("tmux", "-L", local.sock, "kill-server").Run() })
	local.waitFor(id + " was approved by oncall-alice (SHA256:")
	local.waitFor("audit event")
	local.key("Escape", "Escape")
	local.waitFor("/srv/not-the-paged-one")
}
