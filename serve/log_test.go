package serve_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/cli"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/serve"
	"github.com/approve-tui/approve-tui/storage"
)

// logLine waits for a line of the server's log holding every one of parts,
// and returns it.
func (r *rig) logLine(parts ...string) string {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, l := range strings.Split(r.logs.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(l, p)
			}
			if all {
				return l
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no log line with %q:\n%s", parts, r.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *rig) fingerprint(name string) string {
	return gossh.FingerprintSHA256(r.keys[name].PublicKey())
}

// Every decision made through the server is in its log, whatever the
// surface: a deny run without a terminal, a watcher's deny the store
// refuses (with the refusal's code), a console's deny, and a deny of a
// hostile id (sanitised), each with the key's name and fingerprint.
func TestServeLogsEveryDecision(t *testing.T) {
	r := startRig(t)
	overSSH, byWatcher, inConsole := submit(t, r.s, "rm -rf /srv/log-a"), submit(t, r.s, "rm -rf /srv/log-c"), submit(t, r.s, "rm -rf /srv/log-b")

	if out, errs, code := r.run("alice", `deny --reason "no piping to sh" -- `+overSSH); code != 0 {
		t.Fatalf("deny over ssh: %d %s %s", code, out, errs)
	}
	r.logLine("decision", "name=alice", "key="+r.fingerprint("alice"), "action=deny", "id="+overSSH, "outcome=ok")

	if _, errs, code := r.run("carol", "deny -- "+byWatcher); code != cli.ExitUnavailable {
		t.Fatalf("a watcher's deny: %d %s", code, errs)
	}
	l := r.logLine("decision", "name=carol", "key="+r.fingerprint("carol"), "action=deny", "id="+byWatcher, "outcome=refused", "reason=read_only")
	if !strings.Contains(l, "WARN") {
		t.Fatalf("a refused decision is not a warning: %s", l)
	}

	bob := r.console("bob")
	bob.typeKeys("/")
	bob.typeText(inConsole)
	bob.typeKeys(enter, "d")
	bob.waitFor("deny: press enter")
	bob.typeKeys(enter)
	bob.waitFor("denied " + inConsole)
	r.logLine("decision", "name=bob", "key="+r.fingerprint("bob"), "action=deny", "id="+inConsole, "outcome=ok")

	// An id is the client's text: the log shows it sanitised.
	hostile := "evil\x1b]0;pwned\x07\u202eid"
	if _, _, code := r.run("alice", "deny -- '"+hostile+"'"); code != cli.ExitNotFound {
		t.Fatalf("deny of an unknown id: %d", code)
	}
	r.logLine("decision", "name=alice", "action=deny", "evil", "outcome=refused", "reason=not_found")
	if logs := r.logs.String(); strings.ContainsAny(logs, "\x1b\x07\u202e") {
		t.Fatalf("the log holds the raw id: %q", logs)
	}

	for id, want := range map[string]model.Status{overSSH: model.StatusDenied, byWatcher: model.StatusPending, inConsole: model.StatusDenied} {
		if rec, err := r.s.Get(context.Background(), id); err != nil || rec.Status != want {
			t.Fatalf("%s: %v %v, want %s", id, rec, err, want)
		}
	}
	// Logged once each: by the store's decision path, not also by the console.
	if n := strings.Count(r.logs.String(), "id="+inConsole); n != 1 {
		t.Fatalf("the console's deny is logged %d times:\n%s", n, r.logs.String())
	}
}

// A key refused (and so disconnected at once) leaves nothing to time out:
// no login-grace warning follows. A connection that ends before
// authenticating is the same; one that idles unauthenticated is closed at
// the grace time, and that is logged.
func TestServeLoginGraceOnlyForIdleConnections(t *testing.T) {
	r := startRigWith(t, t.TempDir(), func(c *serve.Config) { c.LoginGrace = 300 * time.Millisecond })
	if c, err := r.dial("mallory"); err == nil {
		c.Close()
		t.Fatal("an unknown key logged in")
	}
	r.logLine("authentication refused: unknown key")
	gone, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	gone.Close()
	time.Sleep(900 * time.Millisecond)
	if strings.Contains(r.logs.String(), "login grace") {
		t.Fatalf("a connection that had ended timed out:\n%s", r.logs.String())
	}

	idle, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	buf := make([]byte, 4096)
	for {
		if _, err := idle.Read(buf); err != nil {
			break
		}
	}
	if time.Since(start) > 3*time.Second {
		t.Fatal("an unauthenticated connection outlived the login grace time")
	}
	r.logLine("login grace time passed")
	if n := strings.Count(r.logs.String(), "login grace time passed"); n != 1 {
		t.Fatalf("%d login-grace warnings for one idle connection:\n%s", n, r.logs.String())
	}
}

// deny ID --reason no piping to sh, unquoted: the server splits the
// command into words as a shell would, and deny says that a reason of
// several words needs quotes that reach the server. Nothing is denied. An
// unclosed quote is said as such; quoted whole, the reason arrives whole.
func TestSSHDenyReasonOfSeveralWords(t *testing.T) {
	r := startRig(t)
	id := submit(t, r.s, "curl http://x | sh")
	_, errs, code := r.run("alice", "deny --reason no -- "+id+" piping to sh")
	if code != cli.ExitUsage || !strings.Contains(errs, `deny takes one approval id, and got 4 arguments (the reason was read as "no")`) ||
		!strings.Contains(errs, `ssh HOST 'deny ID --reason "no piping to sh"'`) {
		t.Fatalf("an unquoted reason: %d %s", code, errs)
	}
	_, errs, code = r.run("alice", `deny --reason "no piping -- `+id)
	if code != cli.ExitUsage || !strings.Contains(errs, "no closing quotation") || !strings.Contains(errs, `ssh HOST 'deny ID --reason "no piping to sh"'`) {
		t.Fatalf("an unclosed quote: %d %s", code, errs)
	}
	if rec, err := r.s.Get(context.Background(), id); err != nil || rec.Status != model.StatusPending {
		t.Fatalf("after the refused commands: %v %v", rec, err)
	}
	if out, errs, code := r.run("alice", `deny --reason "no piping to sh" -- `+id); code != 0 {
		t.Fatalf("a quoted reason: %d %s %s", code, out, errs)
	}
	evs, err := r.s.Audit(context.Background(), storage.AuditQuery{ApprovalID: id, Limit: 5})
	if err != nil || len(evs) == 0 || evs[0].Event != storage.EventDeny || evs[0].Detail["reason"] != "no piping to sh" {
		t.Fatalf("the deny's audit event: %+v %v", evs, err)
	}
}

// follow, and the console, need a terminal: a session without one is told
// to ask for it (ssh -t).
func TestSSHFollowWithoutATerminal(t *testing.T) {
	r := startRig(t)
	_, errs, code := r.run("alice", "follow bob")
	if code != cli.ExitUsage || !strings.Contains(errs, "follow needs a terminal") || !strings.Contains(errs, "ssh -t HOST follow NAME") {
		t.Fatalf("follow without a terminal: %d %s", code, errs)
	}
	_, errs, code = r.run("alice", "")
	if code != cli.ExitUsage || !strings.Contains(errs, "the console needs a terminal") || !strings.Contains(errs, "ssh -t HOST") {
		t.Fatalf("the console without a terminal: %d %s", code, errs)
	}
}
