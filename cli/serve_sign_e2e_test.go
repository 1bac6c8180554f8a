package cli

import (
	"bytes"
	"context"
	"fmt"
	"github.com/approve-tui/approve-tui/internal/sshtest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// The real binary's serve under a configuration that requires signatures,
// reached with the real OpenSSH client: the console approves with the key
// of the agent the client forwards (ssh -A), and so does a deny without a
// terminal; without -A the deny is unsigned and says so. Every signature
// kept passes ssh-keygen -Y verify.
func TestServeSignsWithTheForwardedAgent(t *testing.T) {
	dir, _, trustPath, sock := signingSetup(t, "dave", "  policy_signers: [dave]\n")
	// The server runs with that agent in its environment too: it must
	// never sign with it.
	t.Setenv("SSH_AUTH_SOCK", sock)
	r := newSSHRig(t)
	login := r.key("dave-login", "dave", false)
	r.serve()
	sshArgs := func(forward string, remote ...string) []string {
		return append([]string{forward, "-p", fmt.Sprint(r.port), "-i", login, "-o", "UserKnownHostsFile=" + r.knownHosts,
			"-o", "StrictHostKeyChecking=accept-new", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "dave@127.0.0.1"}, remote...)
	}
	signatures := func(id string) []storage.SignatureRecord {
		return readStore(t, r.db, func(ctx context.Context, s *storage.Store) ([]storage.SignatureRecord, error) {
			return s.Signatures(ctx, id)
		})
	}

	// The console, over ssh -A.
	id := r.submit("rm -rf /srv/e2e-signed-console")
	r.sessionsTaken++
	tm := &demoInTmux{t: t, sock: fmt.Sprintf("approve-tui-ssh-sign-%d-%d", os.Getpid(), r.sessionsTaken), bin: r.bin}
	tm.tmux(append([]string{"new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", "env", "TERM=xterm-256color", "SSH_AUTH_SOCK=" + sock, "ssh", "-tt"},
		sshArgs("-A")...)...)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	approveInConsole(tm, id, "dave")
	if got := r.get(id); got.Status != "consumed" {
		t.Fatalf("after a signed approve over ssh: %s", got.Status)
	}
	if sigs := signatures(id); len(sigs) != 1 || sigs[0].Principal != "dave" || sigs[0].Event != storage.EventApprove {
		t.Fatalf("the console's signature: %+v", sigs)
	} else {
		verifySignature(t, dir, trustPath, sigs[0])
	}

	// A deny without a terminal, over ssh -A: signed by the forwarded agent.
	id = r.submit("rm -rf /srv/e2e-signed-deny")
	cmd := exec.Command("ssh", sshArgs("-A", "deny", id)...)
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "signed by dave") {
		t.Fatalf("ssh -A deny: %v\n%s", err, out)
	}
	if sigs := signatures(id); len(sigs) != 1 || sigs[0].Principal != "dave" || sigs[0].Event != storage.EventDeny {
		t.Fatalf("the deny's signature: %+v", sigs)
	} else {
		verifySignature(t, dir, trustPath, sigs[0])
	}

	// Without -A: the server's own agent never signs; the deny is unsigned.
	id = r.submit("rm -rf /srv/e2e-unsigned-deny")
	cmd = exec.Command("ssh", sshArgs("-a", "deny", id)...)
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "connect with ssh -A") {
		t.Fatalf("ssh -a deny: %v\n%s", err, out)
	}
	if got := r.get(id); got.Status != "denied" || len(signatures(id)) != 0 {
		t.Fatalf("the unsigned deny: %s, %+v", got.Status, signatures(id))
	}
}

// The local console under a configuration that requires signatures signs
// with the agent at $SSH_AUTH_SOCK, or with --key FILE.
func TestConsoleSignsWithTheLocalAgentOrKeyFile(t *testing.T) {
	dir, key, trustPath, sock := signingSetup(t, "alice", "")
	r := newSSHRig(t)
	for i, c := range []struct {
		env  string
		args []string
	}{
		{"SSH_AUTH_SOCK=" + sock, nil},
		{"SSH_AUTH_SOCK=", []string{"--key", key}},
	} {
		id := r.submit(fmt.Sprintf("rm -rf /srv/e2e-local-%d", i))
		tm := &demoInTmux{t: t, sock: fmt.Sprintf("approve-tui-local-sign-%d-%d", os.Getpid(), i), bin: r.bin}
		tm.tmux(append([]string{"new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", "env", "TERM=xterm-256color", c.env, r.bin, "--db", r.db}, c.args...)...)
		t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
		approveInConsole(tm, id, "alice")
		sigs := readStore(t, r.db, func(ctx context.Context, s *storage.Store) ([]storage.SignatureRecord, error) {
			return s.Signatures(ctx, id)
		})
		if len(sigs) != 1 || sigs[0].Principal != "alice" {
			t.Fatalf("signatures (%s %v): %+v", c.env, c.args, sigs)
		}
		verifySignature(t, dir, trustPath, sigs[0])
	}
}

// signingSetup makes the key NAME signs with (DIR/NAME), an allowed
// signers file naming it, a configuration that requires signatures from
// that file (with extraTrust lines added under trust:) for the binary's
// processes, and a running ssh-agent holding the key at the socket it
// returns.
func signingSetup(t *testing.T, name, extraTrust string) (dir, key, trustPath, sock string) {
	t.Helper()
	for _, tool := range []string{"ssh-agent", "ssh-add"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for this end-to-end SSH test (apt-get install openssh-client)", tool)
		}
	}
	dir = t.TempDir()
	key = filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(pub))
	trustPath = filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(trustPath, []byte(name+" "+f[0]+" "+f[1]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("trust:\n  allowed_signers: "+trustPath+"\n"+extraTrust), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("APPROVE_TUI_CONFIG", cfg)        // the binary's processes read it
	agentDir, err := os.MkdirTemp("", "agent") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(agentDir) })
	sock = filepath.Join(agentDir, "sock")
	sshtest.StartAgent(t, sock)
	sshtest.AddKeys(t, sock, nil, key)
	return dir, key, trustPath, sock
}

// approveInConsole opens id's detail in the console running in tm,
// approves it with the typed confirmation, and waits for the approval
// and principal's signature to show.
func approveInConsole(tm *demoInTmux, id, principal string) {
	tm.t.Helper()
	tm.waitFor("pending")
	tm.typeID("/" + id)
	tm.key("Enter", "Enter")
	tm.waitFor("why HIGH")
	tm.waitFor("no live waiter")
	tm.typeID("a")
	tm.waitFor("Type the approval id")
	tm.typeID(id)
	tm.key("Enter")
	tm.waitFor("approved " + id)
	tm.waitFor(principal + " SHA256:")
}

// verifySignature checks sg with ssh-keygen -Y verify against the allowed
// signers file trustPath, writing the signature in dir.
func verifySignature(t *testing.T, dir, trustPath string, sg storage.SignatureRecord) {
	t.Helper()
	sp := filepath.Join(dir, "sig")
	if err := os.WriteFile(sp, []byte(sg.Armored), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", trustPath, "-I", sg.Principal, "-n", trust.Namespace, "-s", sp)
	cmd.Stdin = bytes.NewReader(sg.Statement)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify refuses %s's %s signature: %v\n%s", sg.Principal, sg.Event, err, out)
	}
}
