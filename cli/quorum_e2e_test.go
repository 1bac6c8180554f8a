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

// The two-person rule over the real OpenSSH client, each person in a
// terminal of their own (tmux): a policy asks for two approvers of a HIGH
// command; alice approves and it waits, showing her vote; alice with her
// second key is refused (one person counts once); a watcher cannot vote;
// bob completes it, and the row is consumed naming both.
func TestTwoPersonRuleOverOpenSSHInTmux(t *testing.T) {
	for _, tool := range []string{"tmux", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for the end-to-end SSH test (apt-get install tmux openssh-client)", tool)
		}
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	db := filepath.Join(dir, "state.db")
	keygen := func(name, comment string) (string, []byte) {
		key := filepath.Join(dir, name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
		pub, _ := os.ReadFile(key + ".pub")
		return key, pub
	}
	aliceKey, alicePub := keygen("alice", "alice@laptop")
	alice2Key, alice2Pub := keygen("alice2", "alice@desktop")
	bobKey, bobPub := keygen("bob", "bob@desk")
	carolKey, carolPub := keygen("carol", "carol@watch")
	approvers := filepath.Join(dir, "approvers")
	watchers := filepath.Join(dir, "watchers")
	if err := os.WriteFile(approvers, append(append(alicePub, alice2Pub...), bobPub...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(watchers, carolPub, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"--db", db}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init")
	policyFile := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policyFile, []byte("policy:\n  - match: {risk: high, session: \"agent:prod:*\"}\n    approvals: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("policy", "set", policyFile)
	id := run("submit", "--ttl", "1h", "--session", "agent:prod:db", "--", "rm -rf /srv/two-person")

	port := freePort(t)
	srv := exec.Command(bin, "--db", db, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--host-key", filepath.Join(dir, "host_ed25519"), "--approvers", approvers, "--watchers", watchers)
	var srvLog syncbuf.Buffer
	srv.Stderr = &srvLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(os.Interrupt); srv.Wait() })
	waitPort(t, port)

	known := filepath.Join(dir, "known_hosts")
	connect := func(who, key string) *demoInTmux {
		tm := &demoInTmux{t: t, sock: fmt.Sprintf("approve-tui-2p-%s-%d", who, os.Getpid()), bin: bin}
		tm.tmux("new-session", "-d", "-s", "e2e", "-x", "100", "-y", "30",
			"env", "TERM=xterm-256color", "ssh", "-tt", "-p", fmt.Sprint(port), "-i", key, "-o", "UserKnownHostsFile="+known,
			"-o", "StrictHostKeyChecking=accept-new", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", who+"@127.0.0.1")
		t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
		tm.waitFor("pending")
		return tm
	}
	approve := func(tm *demoInTmux) {
		tm.key("/")
		tm.typeID(id)
		tm.key("Enter", "Enter", "a")
		tm.waitFor("Type the approval id")
		tm.typeID(id)
		tm.waitFor("press enter")
		tm.key("Enter")
	}
	get := func() *storage.Record {
		s, err := storage.Open(context.Background(), db, storage.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec, err := s.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}

	a := connect("alice", aliceKey)
	approve(a)
	a.waitFor("vote recorded")
	if rec := get(); rec.Status != model.StatusPending || rec.ConsumedBy != "" {
		t.Fatalf("after alice's vote: %s by %q, want pending\nserver log:\n%s", rec.Status, rec.ConsumedBy, srvLog.String())
	}

	a2 := connect("alice2", alice2Key)
	a2.waitFor("1/2")
	approve(a2)
	a2.waitFor("voted already")
	if rec := get(); rec.Status != model.StatusPending {
		t.Fatalf("alice's second key pushed it through: %s by %q", rec.Status, rec.ConsumedBy)
	}

	c := connect("carol", carolKey)
	c.key("/")
	c.typeID(id)
	c.key("Enter", "Enter", "a")
	c.waitFor("watcher")
	if rec := get(); rec.Status != model.StatusPending {
		t.Fatalf("a watcher changed it: %s", rec.Status)
	}

	b := connect("bob", bobKey)
	b.waitFor("1/2")
	approve(b)
	b.waitFor("approved " + id)
	rec := get()
	if rec.Status != model.StatusConsumed || !strings.Contains(rec.ConsumedBy, "alice@laptop (SHA256:") || !strings.Contains(rec.ConsumedBy, "bob@desk (SHA256:") {
		t.Fatalf("after bob: %s by %q, want consumed naming alice and bob\nserver log:\n%s", rec.Status, rec.ConsumedBy, srvLog.String())
	}
	out := run("show", "--json", id)
	for _, want := range []string{`"votes"`, `"alice@laptop (SHA256:`, `"bob@desk (SHA256:`} {
		if !strings.Contains(out, want) {
			t.Fatalf("show --json lacks %s:\n%s", want, out)
		}
	}
	if v := run("audit", "--verify"); !strings.Contains(v, "audit log intact") {
		t.Fatalf("audit --verify: %s", v)
	}
}
