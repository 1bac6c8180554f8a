package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/sshtest"

	gossh "golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/serve"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// Signed approvals over SSH, with the real OpenSSH client in a real
// terminal (tmux) and a real ssh-agent on the client's side: the session
// signs with the agent the client forwards (ssh -A), and without one it
// decides nothing.

func needTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (packages openssh-client, tmux): the real client is needed for this test", tool)
		}
	}
}

// keygen makes an ed25519 key pair with ssh-keygen.
func keygen(t testing.TB, dir, name string) string {
	t.Helper()
	return sshtest.Keygen(t, filepath.Join(dir, name), "ed25519", name)
}

// terminal is the real ssh client in a tmux session of its own.
type terminal struct {
	t    testing.TB
	sock string
}

var terminals int

func (r *rig) openSSH(t testing.TB, dir, user, login, agentSock string, forward bool) *terminal {
	t.Helper()
	terminals++
	tm := &terminal{t: t, sock: fmt.Sprintf("approve-tui-serve-sign-%d-%d", os.Getpid(), terminals)}
	_, port, _ := strings.Cut(r.addr, ":")
	args := []string{"-L", tm.sock, "new-session", "-d", "-s", "ssh", "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", "SSH_AUTH_SOCK=" + agentSock, "ssh", "-tt", "-p", port, "-i", login,
		"-o", "UserKnownHostsFile=" + filepath.Join(dir, "known_hosts"), "-o", "StrictHostKeyChecking=accept-new",
		"-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes"}
	if forward {
		args = append(args, "-A")
	} else {
		args = append(args, "-a")
	}
	args = append(args, user+"@127.0.0.1")
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	tm.waitFor("pending")
	return tm
}

func (tm *terminal) screen() string {
	out, _ := exec.Command("tmux", "-L", tm.sock, "capture-pane", "-p", "-J", "-t", "ssh").Output()
	return string(out)
}

func (tm *terminal) waitFor(s string) {
	tm.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(30 * time.Millisecond) {
		if strings.Contains(tm.screen(), s) {
			return
		}
	}
	tm.t.Fatalf("the terminal never showed %q:\n%s", s, tm.screen())
}

// keys sends tmux key names (Enter, Escape) or, with literal, text.
func (tm *terminal) keys(literal bool, keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		args := []string{"-L", tm.sock, "send-keys", "-t", "ssh"}
		if literal {
			args = append(args, "-l")
		}
		if out, err := exec.Command("tmux", append(args, k)...).CombinedOutput(); err != nil {
			tm.t.Fatalf("tmux send-keys: %v\n%s", err, out)
		}
		time.Sleep(40 * time.Millisecond)
	}
}

func (tm *terminal) typeText(s string) {
	for _, r := range s {
		tm.keys(true, string(r))
	}
}

// openApprove finds id, reads it whole and opens its approve prompt.
func (tm *terminal) openApprove(id string) {
	tm.t.Helper()
	tm.keys(true, "/")
	tm.typeText(id)
	tm.keys(false, "Enter", "Enter")
	tm.waitFor("why HIGH")
	tm.waitFor("no live waiter")
	tm.keys(true, "a")
	tm.waitFor("Type the approval id")
	tm.typeText(id)
	tm.keys(false, "Enter")
}

// loginKey gives the rig name's login key, the private key in file path.
func (r *rig) loginKey(name, path string) {
	r.t.Helper()
	pem, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatal(err)
	}
	if r.keys[name], err = gossh.ParsePrivateKey(pem); err != nil {
		r.t.Fatal(err)
	}
}

// awaitLogin waits until name's key logs in: the server reads the access
// files again within ReloadEvery.
func (r *rig) awaitLogin(name string) {
	r.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := r.dial(name); err == nil {
			c.Close()
			return
		} else if time.Now().After(deadline) {
			r.t.Fatalf("%s's key is not taken: %v", name, err)
		}
	}
}

// signedRig serves a store that requires signatures, with a trust file
// naming dave's signing key; dave logs in with another key.
func signedRig(t *testing.T) (r *rig, dir, login, signing, trustPath string) {
	needTools(t, "ssh", "ssh-agent", "ssh-add", "ssh-keygen", "tmux")
	dir = t.TempDir()
	login, signing = keygen(t, dir, "dave-login"), keygen(t, dir, "dave-sign")
	trustPath = filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(trustPath, []byte("dave "+sshtest.PublicLine(t, signing)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	signers, err := trust.LoadTrustFile(trustPath)
	if err != nil {
		t.Fatal(err)
	}
	settings := &trust.Settings{Mode: trust.ModeRequired, Path: trustPath, Signers: signers}
	r = startRigWith(t, dir, func(cfg *serve.Config) {
		s, err := storage.Open(context.Background(), filepath.Join(dir, "state.db"), storage.Options{Trust: settings})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		cfg.Store = s
	})
	r.loginKey("dave", login)
	r.writeAccess(map[string]string{"alice": "approver", "dave": "approver"})
	r.awaitLogin("dave")
	return r, dir, login, signing, trustPath
}

func TestApproveOverSSHSignsWithTheForwardedAgent(t *testing.T) {
	r, dir, login, signing, trustPath := signedRig(t)
	id := submit(t, r.s, "rm -rf /srv/signed-over-ssh")
	// The login key is not in the agent: what signs is the key the
	// client's agent holds, and the trust file names.
	tm := r.openSSH(t, dir, "dave", login, sshtest.Agent(t, signing), true)
	tm.openApprove(id)
	tm.waitFor("approved " + id)
	tm.waitFor("signed by")
	tm.waitFor("dave SHA256:")
	rec, err := r.s.Get(context.Background(), id)
	if err != nil || rec.Status != model.StatusConsumed {
		t.Fatalf("after a signed approve over ssh: %v %v", rec, err)
	}
	sigs, err := r.s.Signatures(context.Background(), id)
	if err != nil || len(sigs) != 1 {
		t.Fatalf("signatures: %+v %v", sigs, err)
	}
	sg := sigs[0]
	pub, _, _, _, _ := gossh.ParseAuthorizedKey([]byte(sshtest.PublicLine(t, signing)))
	if sg.Principal != "dave" || sg.Key != gossh.FingerprintSHA256(pub) || sg.Event != storage.EventApprove {
		t.Fatalf("stored signature: %+v", sg)
	}
	// The oracle: OpenSSH's own verifier accepts it.
	sigPath := filepath.Join(dir, "approve.sig")
	if err := os.WriteFile(sigPath, []byte(sg.Armored), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", trustPath, "-I", "dave", "-n", trust.Namespace, "-s", sigPath)
	cmd.Stdin = bytes.NewReader(sg.Statement)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify refuses the session's signature: %v\n%s", err, out)
	}
	st, err := trust.ParseStatement(sg.Statement)
	if err != nil || st.ApprovalID != id || st.PayloadSHA256 != rec.PayloadSHA256 || st.Store != r.s.Identity() {
		t.Fatalf("statement %+v (%v)", st, err)
	}
}

// Without a forwarded agent, or with one whose keys the trust file does
// not know, approving says what to do and decides nothing.
func TestApproveOverSSHWithoutAgentDecidesNothing(t *testing.T) {
	r, dir, login, _, _ := signedRig(t)
	stranger := keygen(t, dir, "stranger")
	for _, c := range []struct {
		name    string
		agent   string
		forward bool
		want    string
	}{
		{"no ssh -A", sshtest.Agent(t), false, "connect with ssh -A so your key can sign"},
		{"unknown key", sshtest.Agent(t, stranger), true, "is not in the trust file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := submit(t, r.s, "rm -rf /srv/unsigned-"+strings.ReplaceAll(c.name, " ", "-"))
			tm := r.openSSH(t, dir, "dave", login, c.agent, c.forward)
			tm.openApprove(id)
			tm.waitFor("not signed, nothing decided")
			tm.waitFor(c.want)
			if rec, err := r.s.Get(context.Background(), id); err != nil || rec.Status != model.StatusPending {
				t.Fatalf("an unsigned approve over ssh: %v %v", rec, err)
			}
			if sigs, _ := r.s.Signatures(context.Background(), id); len(sigs) != 0 {
				t.Fatalf("signatures stored: %+v", sigs)
			}
		})
	}
}

// A command without a terminal (ssh -A HOST deny ID) is given the client's
// forwarded agent, and only then: never the server's own.
func TestDenyOverSSHGetsTheForwardedAgent(t *testing.T) {
	needTools(t, "ssh", "ssh-agent", "ssh-add", "ssh-keygen")
	dir := t.TempDir()
	login, signing := keygen(t, dir, "dave-login"), keygen(t, dir, "dave-sign")
	seen := make(chan []string, 4)
	r := startRigWith(t, dir, func(cfg *serve.Config) {
		run := cfg.Run
		cfg.Run = func(ctx context.Context, args []string, actor model.Actor, stdin io.Reader, stdout, stderr io.Writer) int {
			var keys []string
			if ag := serve.ForwardedAgent(ctx); ag != nil {
				list, err := ag.List()
				if err != nil {
					t.Errorf("the forwarded agent does not list its keys: %v", err)
				}
				for _, k := range list {
					keys = append(keys, k.Comment)
				}
			}
			seen <- keys
			return run(ctx, args, actor, stdin, stdout, stderr)
		}
	})
	r.loginKey("dave", login)
	r.writeAccess(map[string]string{"dave": "approver"})
	r.awaitLogin("dave")
	sock := sshtest.Agent(t, signing)
	_, port, _ := strings.Cut(r.addr, ":")
	for _, forward := range []string{"-A", "-a"} {
		id := submit(t, r.s, "rm -rf /srv/deny-"+forward)
		cmd := exec.Command("ssh", forward, "-p", port, "-i", login, "-o", "UserKnownHostsFile="+filepath.Join(dir, "known_hosts"),
			"-o", "StrictHostKeyChecking=accept-new", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "dave@127.0.0.1", "deny", id)
		cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ssh %s deny: %v\n%s", forward, err, out)
		}
		keys := <-seen
		switch {
		case forward == "-A" && (len(keys) != 1 || keys[0] != "dave-sign"):
			t.Fatalf("with ssh -A the command saw the agent keys %q", keys)
		case forward == "-a" && keys != nil:
			t.Fatalf("without ssh -A the command saw an agent: %q", keys)
		}
	}
}

// Two operators, each with an ssh-agent of their own holding the key the
// trust file names for them, approve one proposal under a two-person
// policy over ssh -A: the first approval is a vote, the second consumes
// it, and both signatures are kept, each accepted by ssh-keygen -Y verify.
func TestTwoOperatorsSignOverSSH(t *testing.T) {
	needTools(t, "ssh", "ssh-agent", "ssh-add", "ssh-keygen", "tmux")
	dir := t.TempDir()
	logins, signing := map[string]string{}, map[string]string{}
	var trustText string
	for _, p := range []string{"dave", "erin"} {
		logins[p], signing[p] = keygen(t, dir, p+"-login"), keygen(t, dir, p+"-sign")
		trustText += p + " " + sshtest.PublicLine(t, signing[p]) + "\n"
	}
	trustPath := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(trustPath, []byte(trustText), 0o600); err != nil {
		t.Fatal(err)
	}
	signers, err := trust.LoadTrustFile(trustPath)
	if err != nil {
		t.Fatal(err)
	}
	settings := &trust.Settings{Mode: trust.ModeRequired, Path: trustPath, Signers: signers, PolicySigners: []string{"dave"}}
	var ts *storage.Store
	r := startRigWith(t, dir, func(cfg *serve.Config) {
		s, err := storage.Open(context.Background(), filepath.Join(dir, "state.db"), storage.Options{Trust: settings})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		cfg.Store, ts = s, s
	})
	settings.Store = ts.Identity()
	for _, p := range []string{"dave", "erin"} {
		r.loginKey(p, logins[p])
	}
	r.writeAccess(map[string]string{"dave": "approver", "erin": "approver"})
	r.awaitLogin("erin")
	// The two-person policy, signed by dave (a policy signer).
	src := "policy:\n  - match: {risk: high}\n    approvals: 2\n"
	pol, err := config.ParsePolicy("policy.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	daveKey, err := trust.KeyFileSigner(signing["dave"])
	if err != nil {
		t.Fatal(err)
	}
	psig, err := settings.SignDecision(daveKey, trust.Statement{Decision: trust.DecisionPolicy, PolicySHA256: trust.SHA256Hex([]byte(src))}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ts.SetPolicy(context.Background(), []byte(src), pol, model.Actor{Surface: model.SurfaceCLI, Name: "dave@laptop", Person: "dave", Signature: psig}); err != nil {
		t.Fatal(err)
	}

	id := submit(t, r.s, "rm -rf /srv/two-person")
	dave := r.openSSH(t, dir, "dave", logins["dave"], sshtest.Agent(t, signing["dave"]), true)
	dave.openApprove(id)
	dave.waitFor("vote recorded on " + id)
	dave.waitFor("dave SHA256:")
	if rec, _ := r.s.Get(context.Background(), id); rec == nil || rec.Status != model.StatusPending {
		t.Fatalf("after one of two: %+v", rec)
	}
	erin := r.openSSH(t, dir, "erin", logins["erin"], sshtest.Agent(t, signing["erin"]), true)
	erin.openApprove(id)
	erin.waitFor("approved " + id)
	erin.waitFor("erin SHA256:")
	rec, err := r.s.Get(context.Background(), id)
	if err != nil || rec.Status != model.StatusConsumed {
		t.Fatalf("after two of two: %+v %v", rec, err)
	}
	sigs, err := r.s.Signatures(context.Background(), id)
	if err != nil || len(sigs) != 2 || sigs[0].Principal != "dave" || sigs[0].Event != storage.EventVote || sigs[1].Principal != "erin" || sigs[1].Event != storage.EventApprove {
		t.Fatalf("signatures: %+v %v", sigs, err)
	}
	for i, sg := range sigs {
		sigPath := filepath.Join(dir, fmt.Sprintf("sig-%d", i))
		if err := os.WriteFile(sigPath, []byte(sg.Armored), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", trustPath, "-I", sg.Principal, "-n", trust.Namespace, "-s", sigPath)
		cmd.Stdin = bytes.NewReader(sg.Statement)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen -Y verify refuses %s's signature: %v\n%s", sg.Principal, err, out)
		}
	}
}
