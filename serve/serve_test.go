package serve_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"
	gossh "golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/cli"
	"github.com/approve-tui/approve-tui/internal/pgtest"
	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/serve"
	"github.com/approve-tui/approve-tui/storage"
)

// rig is a real server on a loopback port, with real keys and access files.
type rig struct {
	t                   testing.TB
	addr                string
	db                  string
	s                   *storage.Store
	approvers, watchers string
	keys                map[string]gossh.Signer
	cancel              context.CancelFunc
	done                chan struct{}
	logs                *syncbuf.Buffer
}

func newKey(t testing.TB) gossh.Signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func authorizedLine(s gossh.Signer, name string) string {
	return strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey()))) + " " + name + "\n"
}

func startRig(t *testing.T) *rig {
	t.Helper()
	return startRigWith(t, t.TempDir(), nil)
}

func startRigWith(t testing.TB, dir string, tune func(*serve.Config)) *rig {
	t.Helper()
	return startRigOn(t, dir, filepath.Join(dir, "state.db"), tune)
}

// startRigOn serves the store at db (a file, or a PostgreSQL URL).
func startRigOn(t testing.TB, dir, db string, tune func(*serve.Config)) *rig {
	t.Helper()
	r := &rig{t: t, db: db, keys: map[string]gossh.Signer{},
		approvers: filepath.Join(dir, "approvers"), watchers: filepath.Join(dir, "watchers"), logs: &syncbuf.Buffer{}}
	s, err := storage.Open(context.Background(), r.db, storage.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	for _, n := range []string{"alice", "bob", "carol", "mallory"} {
		r.keys[n] = newKey(t)
	}
	r.writeAccess(map[string]string{"alice": "approver", "bob": "approver", "carol": "watcher"})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = l.Addr().String()
	cfg := serve.Config{
		HostKeyPath: filepath.Join(dir, "host_ed25519"), Approvers: r.approvers, Watchers: r.watchers, Store: s,
		Run: func(ctx context.Context, args []string, actor model.Actor, stdin io.Reader, stdout, stderr io.Writer) int {
			return cli.ExecuteAs(ctx, args, r.db, actor, stdin, stdout, stderr)
		},
		ReloadEvery: 100 * time.Millisecond, ShutdownGrace: 2 * time.Second,
		Log: log.NewWithOptions(r.logs, log.Options{}),
	}
	if tune != nil {
		tune(&cfg)
	}
	srv, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		srv.Serve(ctx, l)
	}()
	t.Cleanup(func() {
		r.cancel()
		<-r.done
		s.Close()
	})
	return r
}

func (r *rig) writeAccess(roles map[string]string) {
	var a, w strings.Builder
	for name, role := range roles {
		line := authorizedLine(r.keys[name], name)
		if role == "approver" {
			a.WriteString(line)
		} else {
			w.WriteString(line)
		}
	}
	if err := os.WriteFile(r.approvers, []byte(a.String()), 0o600); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(r.watchers, []byte(w.String()), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) dial(name string) (*gossh.Client, error) {
	return gossh.Dial("tcp", r.addr, &gossh.ClientConfig{
		User: name, Auth: []gossh.AuthMethod{gossh.PublicKeys(r.keys[name])},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second,
	})
}

// run runs a command in a session without a terminal.
func (r *rig) run(name, command string) (string, string, int) {
	r.t.Helper()
	return r.runSession(name, command, false)
}

// runPty runs command in a session with a terminal and waits for its end.
func (r *rig) runPty(name, command string) (string, string, int) {
	r.t.Helper()
	return r.runSession(name, command, true)
}

func (r *rig) runSession(name, command string, pty bool) (string, string, int) {
	r.t.Helper()
	c, err := r.dial(name)
	if err != nil {
		r.t.Fatalf("dial as %s: %v", name, err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		r.t.Fatal(err)
	}
	var out, errb bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errb
	if pty {
		if err := sess.RequestPty("xterm-256color", 40, 120, gossh.TerminalModes{}); err != nil {
			r.t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- sess.Run(command) }()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			r.t.Fatalf("%q with a terminal did not end", command)
		}
	} else {
		err = sess.Run(command)
	}
	code := 0
	if ee, ok := err.(*gossh.ExitError); ok {
		code = ee.ExitStatus()
	} else if err != nil {
		r.t.Fatalf("run %q: %v", command, err)
	}
	return out.String(), errb.String(), code
}

// console is a PTY session running the console.
type console struct {
	t    testing.TB
	c    *gossh.Client
	sess *gossh.Session
	in   io.WriteCloser
	out  *syncbuf.Buffer
	done chan error
}

func (r *rig) console(name string) *console {
	r.t.Helper()
	cs := r.consoleWith(name, "")
	cs.waitFor("pending")
	return cs
}

// consoleWith is a PTY session running command (ssh -t HOST command), or
// the login shell (the console) when command is "".
func (r *rig) consoleWith(name, command string) *console {
	r.t.Helper()
	c, err := r.dial(name)
	if err != nil {
		r.t.Fatalf("dial as %s: %v", name, err)
	}
	sess, err := c.NewSession()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 40, 120, gossh.TerminalModes{}); err != nil {
		r.t.Fatal(err)
	}
	in, _ := sess.StdinPipe()
	out := &syncbuf.Buffer{}
	sess.Stdout, sess.Stderr = out, out
	if command == "" {
		err = sess.Shell()
	} else {
		err = sess.Start(command)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	cs := &console{t: r.t, c: c, sess: sess, in: in, out: out, done: make(chan error, 1)}
	go func() { cs.done <- sess.Wait() }()
	r.t.Cleanup(func() { c.Close() })
	return cs
}

// approveShown approves id, whose detail the console shows, as name, and
// checks the store consumed it by name's key over ssh. As a person would:
// once the explanation and the waiter have arrived (what is drawn counts
// as read once it has arrived).
func (c *console) approveShown(r *rig, name, id string) {
	c.t.Helper()
	c.waitFor("why HIGH")
	c.waitFor("no live waiter")
	c.typeKeys("a")
	c.waitFor("Type the approval id")
	c.typeText(id)
	c.typeKeys(enter)
	c.waitFor("approved " + id)
	rec, err := r.s.Get(context.Background(), id)
	fp := gossh.FingerprintSHA256(r.keys[name].PublicKey())
	if err != nil || rec.Status != model.StatusConsumed || rec.ConsumedBy != name+" ("+fp+") via ssh" {
		c.t.Fatalf("after approving: %s by %q (%v)", rec.Status, rec.ConsumedBy, err)
	}
}

func (c *console) waitFor(s string) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(c.out.String(), s) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("the console never showed %q; it wrote %d bytes: %q", s, len(c.out.String()), c.out.String())
}

// typeKeys types like a person: one key at a time.
func (c *console) typeKeys(keys ...string) {
	for _, k := range keys {
		if _, err := c.in.Write([]byte(k)); err != nil {
			c.t.Fatal(err)
		}
		time.Sleep(40 * time.Millisecond)
	}
}

func (c *console) typeText(s string) {
	for _, r := range s {
		c.typeKeys(string(r))
	}
}

func submit(t testing.TB, s *storage.Store, command string) string {
	t.Helper()
	p, _, err := risk.Propose(risk.Draft{Command: command, SessionKey: "agent:ssh-test", TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(context.Background(), p, model.Actor{Surface: model.SurfaceRunner, Name: "agent"}); err != nil {
		t.Fatal(err)
	}
	return p.ApprovalID
}

const enter = "\r"

// An approver approves over a PTY session by typing the id key by key; the
// decision names them by key; a watcher's approve is refused by the store,
// and audited.
func TestApproveOverSSH(t *testing.T) {
	approveOverSSH(t, startRig(t))
}

// The same over a PostgreSQL store: sessions decide proposals that agents
// on other hosts submitted to the database.
func TestApproveOverSSHOnPostgres(t *testing.T) {
	pgtest.Require(t)
	approveOverSSH(t, startRigOn(t, t.TempDir(), pgtest.Schema(t), nil))
}

func approveOverSSH(t *testing.T, r *rig) {
	id := submit(t, r.s, "rm -rf /srv/over-ssh")
	alice := r.console("alice")
	alice.typeKeys("/")
	alice.typeText(id)
	alice.typeKeys(enter, enter)
	alice.approveShown(r, "alice", id)

	id2 := submit(t, r.s, "rm -rf /srv/watcher-tries")
	carol := r.console("carol")
	carol.typeKeys("/")
	carol.typeText(id2)
	carol.typeKeys(enter, enter, "a")
	carol.waitFor("watcher")
	if rec, _ := r.s.Get(context.Background(), id2); rec.Status != model.StatusPending {
		t.Fatalf("a watcher's approve: %s", rec.Status)
	}
	// "watcher" is on carol's screen from the start (her label): the
	// refusal is waited for in the audit log.
	var evs []storage.AuditEvent
	found := false
	for deadline := time.Now().Add(10 * time.Second); !found && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		evs, _ = r.s.Audit(context.Background(), storage.AuditQuery{ApprovalID: id2, Limit: 5})
		for _, e := range evs {
			if e.Event == storage.EventApprove && e.Outcome == storage.OutcomeRefused && e.Reason == "read_only" && strings.HasPrefix(e.Actor, "carol (SHA256:") {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("the watcher's attempt is not audited: %+v", evs)
	}
	// Sessions are in the audit log too.
	all, _ := r.s.Audit(context.Background(), storage.AuditQuery{Limit: 50})
	starts := 0
	for _, e := range all {
		if e.Event == storage.EventSession && e.Reason == "start" {
			starts++
		}
	}
	if starts < 2 {
		t.Fatalf("%d session starts audited", starts)
	}
}

// An unknown key, and a password, are refused at authentication.
func TestUnknownKeyAndPasswordRefused(t *testing.T) {
	r := startRig(t)
	if c, err := r.dial("mallory"); err == nil {
		c.Close()
		t.Fatal("an unknown key logged in")
	}
	_, err := gossh.Dial("tcp", r.addr, &gossh.ClientConfig{User: "alice",
		Auth:            []gossh.AuthMethod{gossh.Password("hunter2"), gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) { return []string{"x"}, nil })},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err == nil {
		t.Fatal("a password logged in")
	}
	if !strings.Contains(r.logs.String(), "unknown key") {
		t.Fatalf("the refusal is not logged:\n%s", r.logs.String())
	}
}

// A key removed from the access file ends its session within seconds.
func TestRemovedKeyEndsItsSession(t *testing.T) {
	r := startRig(t)
	bob := r.console("bob")
	r.writeAccess(map[string]string{"alice": "approver", "carol": "watcher"})
	select {
	case <-bob.done:
	case <-time.After(5 * time.Second):
		t.Fatal("bob's session outlived the removal of his key")
	}
	if !strings.Contains(bob.out.String(), "your key was removed") {
		t.Fatalf("bob was not told why: %q", bob.out.String())
	}
	if c, err := r.dial("bob"); err == nil {
		c.Close()
		t.Fatal("a removed key logged in again")
	}
}

// Without a terminal: the read-only commands for everyone, deny for
// approvers, approve for nobody.
func TestCommandsWithoutATerminal(t *testing.T) {
	r := startRig(t)
	id := submit(t, r.s, "rm -rf /srv/no-pty")
	out, _, code := r.run("carol", "list --json")
	if code != 0 || !strings.Contains(out, id) {
		t.Fatalf("list as a watcher: %d %s", code, out)
	}
	_, errs, code := r.run("carol", "deny --reason no -- "+id)
	if code != cli.ExitUnavailable || !strings.Contains(errs, "read-only") {
		t.Fatalf("deny as a watcher: %d %s", code, errs)
	}
	_, errs, code = r.run("alice", "approve --confirm "+id+" -- "+id)
	if code == 0 || !strings.Contains(errs, "refused outside the console") {
		t.Fatalf("approve without a terminal: %d %s", code, errs)
	}
	_, errs, code = r.run("alice", "--db /tmp/other.db list")
	if code == 0 {
		t.Fatalf("--db over ssh: %d %s", code, errs)
	}
	out, errs, code = r.run("bob", "deny --reason 'not today' -- "+id)
	if code != 0 {
		t.Fatalf("deny as an approver: %d %s %s", code, out, errs)
	}
	rec, _ := r.s.Get(context.Background(), id)
	if rec.Status != model.StatusDenied || !strings.HasPrefix(rec.ConsumedBy, "bob (SHA256:") {
		t.Fatalf("after deny: %s by %q", rec.Status, rec.ConsumedBy)
	}
}

// Twenty sessions at once all see a commit from another process live.
func TestManySessionsSeeCommitsLive(t *testing.T) {
	r := startRig(t)
	const n = 20
	cs := make([]*console, n)
	for i := range cs {
		name := []string{"alice", "bob", "carol"}[i%3]
		cs[i] = r.console(name)
	}
	// Another process's store: a second handle set would not be another
	// process; the CLI binary is not built here, so use Python's sqlite3.
	p, _, _ := risk.Propose(risk.Draft{Command: "rm -rf /srv/seen-by-all", SessionKey: "agent:other", TTL: time.Hour}, time.Now())
	pyInsert(t, r.db, p)
	for i, c := range cs {
		c.waitFor("/srv/seen-by-all")
		_ = i
	}
}

func pyInsert(t *testing.T, db string, p *model.Proposal) {
	t.Helper()
	py := `import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES (?, ?, ?, 'pending', ?)", (sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5])); c.commit(); c.close()`
	cmd := execCommand("python3", "-c", py, db, p.ApprovalID, fmt.Sprint(p.CreatedAt), fmt.Sprint(*p.ExpiresAt), string(model.EncodePayload(p)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3: %v %s", err, out)
	}
}

var execCommand = exec.Command

// Two SSH sessions see each other, and one follows the other.
func TestPresenceAndFollowOverSSH(t *testing.T) {
	r := startRig(t)
	id := submit(t, r.s, "rm -rf /srv/pairing")
	submit(t, r.s, "rm -rf /srv/other")
	alice := r.console("alice")
	bob := r.console("bob")
	alice.typeKeys("/")
	alice.typeText(id)
	alice.typeKeys(enter, enter)
	bob.waitFor("with alice")
	bob.typeKeys("f")
	bob.waitFor("following alice")
	bob.waitFor(id)
}

// A key moved from approvers to watchers loses the right to decide at
// once: its session ends, and the next one is a watcher's.
func TestRoleChangeEndsTheSession(t *testing.T) {
	r := startRig(t)
	bob := r.console("bob")
	r.writeAccess(map[string]string{"alice": "approver", "bob": "watcher", "carol": "watcher"})
	select {
	case <-bob.done:
	case <-time.After(5 * time.Second):
		t.Fatal("bob's session outlived his role change")
	}
	if !strings.Contains(bob.out.String(), "your role changed to watcher") {
		t.Fatalf("bob was not told: %q", bob.out.String())
	}
	id := submit(t, r.s, "rm -rf /srv/role-change")
	if _, errs, code := r.run("bob", "deny -- "+id); code == 0 || !strings.Contains(errs, "read-only") {
		t.Fatalf("bob as a watcher denied: %d %s", code, errs)
	}
}

// Session limits, per key and in all.
func TestSessionLimits(t *testing.T) {
	dir := t.TempDir()
	r := startRigWith(t, dir, func(c *serve.Config) { c.MaxSessionsPerKey = 2 })
	a1, a2 := r.console("alice"), r.console("alice")
	_, _ = a1, a2
	c, err := r.dial("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, _ := c.NewSession()
	var errb bytes.Buffer
	sess.Stderr = &errb
	sess.RequestPty("xterm", 40, 120, gossh.TerminalModes{})
	sess.Shell()
	sess.Wait()
	if !strings.Contains(errb.String(), "maximum of 2 sessions") {
		t.Fatalf("a third session of one key: %q", errb.String())
	}
}

// sessionEnds are the session end events of the rig's store, as "NAME
// REASON" (REASON the detail's, "" for an end the client made).
func (r *rig) sessionEnds() []string {
	r.t.Helper()
	evs, err := r.s.Audit(context.Background(), storage.AuditQuery{Limit: 1000})
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Event == storage.EventSession && e.Reason == "end" {
			why, _ := e.Detail["reason"].(string)
			out = append(out, strings.Fields(e.Actor)[0]+" "+why)
		}
	}
	sort.Strings(out)
	return out
}

// Shutdown tells every session and ends them; each end is audited, with
// the reason, by the time Serve returns.
func TestShutdownTellsSessions(t *testing.T) {
	r := startRig(t)
	alice := r.console("alice")
	r.cancel()
	select {
	case <-alice.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the session outlived the shutdown")
	}
	<-r.done
	if !strings.Contains(alice.out.String(), "shutting down") {
		t.Fatalf("not told: %q", alice.out.String())
	}
	if ends := r.sessionEnds(); len(ends) != 1 || ends[0] != "alice "+serve.ReasonShutdown {
		t.Fatalf("session ends audited: %q", ends)
	}
}

// The host key is made on first start, ed25519, mode 0600, and its
// fingerprint logged; repeated failures from one address are refused
// outright for a while, the right key included; a connection that does not
// authenticate in time is closed.
func TestHostKeyBackoffAndLoginGrace(t *testing.T) {
	dir := t.TempDir()
	r := startRigWith(t, dir, func(c *serve.Config) {
		c.AuthFailures, c.AuthBackoff, c.LoginGrace = 2, time.Minute, 300*time.Millisecond
	})
	fi, err := os.Stat(filepath.Join(dir, "host_ed25519"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key: %v %v", fi, err)
	}
	pem, _ := os.ReadFile(filepath.Join(dir, "host_ed25519"))
	signer, err := gossh.ParsePrivateKey(pem)
	if err != nil || signer.PublicKey().Type() != gossh.KeyAlgoED25519 {
		t.Fatalf("host key type: %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(r.logs.String(), gossh.FingerprintSHA256(signer.PublicKey())) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(r.logs.String(), gossh.FingerprintSHA256(signer.PublicKey())) {
		t.Fatalf("the host key's fingerprint is not logged:\n%s", r.logs.String())
	}

	// Login grace: a connection that says nothing is closed.
	conn, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	start := time.Now()
	for {
		if _, err := conn.Read(buf); err != nil {
			break
		}
	}
	if time.Since(start) > 3*time.Second {
		t.Fatal("an unauthenticated connection outlived the login grace time")
	}
	conn.Close()

	// Back-off: two unknown keys, then even alice's key is refused.
	for i := 0; i < 2; i++ {
		if c, err := r.dial("mallory"); err == nil {
			c.Close()
			t.Fatal("an unknown key logged in")
		}
	}
	if c, err := r.dial("alice"); err == nil {
		c.Close()
		t.Fatal("a known key logged in from an address in back-off")
	}
	if !strings.Contains(r.logs.String(), "too many failures") {
		t.Fatalf("the back-off is not logged:\n%s", r.logs.String())
	}
}
