package serve_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/model"
)

// Opening one proposal from a page: ssh -t HOST open ID.

// consoleWith is a PTY session running command (ssh -t HOST command).
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
	if err := sess.Start(command); err != nil {
		r.t.Fatal(err)
	}
	cs := &console{t: r.t, c: c, sess: sess, in: in, out: out, done: make(chan error, 1)}
	go func() { cs.done <- sess.Wait() }()
	r.t.Cleanup(func() { c.Close() })
	return cs
}

// An approver opens a pending proposal by its id: the console starts on
// its detail, and approving takes the typed id as always; a watcher opens
// the same view and is refused by the store.
func TestOpenOverSSH(t *testing.T) {
	r := startRig(t)
	submit(t, r.s, "rm -rf /srv/first-in-the-list")
	id := submit(t, r.s, "rm -rf /srv/paged-over-ssh")
	alice := r.consoleWith("alice", "open "+id)
	alice.waitFor("end of proposal")
	alice.waitFor("/srv/paged-over-ssh")
	// As a person would: once the explanation and the waiter have arrived
	// (until then the lines do not count as read).
	alice.waitFor("why HIGH")
	alice.waitFor("no live waiter")
	alice.typeKeys("a")
	alice.waitFor("Type the approval id")
	alice.typeText(id)
	alice.typeKeys(enter)
	alice.waitFor("approved " + id)
	rec, err := r.s.Get(context.Background(), id)
	fp := gossh.FingerprintSHA256(r.keys["alice"].PublicKey())
	if err != nil || rec.Status != model.StatusConsumed || rec.ConsumedBy != "alice ("+fp+") via ssh" {
		t.Fatalf("after approving: %s by %q (%v)", rec.Status, rec.ConsumedBy, err)
	}
	if !strings.Contains(r.logs.String(), "open="+id) {
		t.Fatalf("the session's start does not say what it opened:\n%s", r.logs.String())
	}

	id2 := submit(t, r.s, "rm -rf /srv/paged-to-a-watcher")
	carol := r.consoleWith("carol", "open "+id2)
	carol.waitFor("/srv/paged-to-a-watcher")
	carol.waitFor("end of proposal")
	carol.typeKeys("a")
	carol.waitFor("watcher")
	if rec, _ := r.s.Get(context.Background(), id2); rec.Status != model.StatusPending {
		t.Fatalf("a watcher's approve: %s", rec.Status)
	}
}

// A proposal decided before the page was read: the note says by whom; one
// the store never had: "no proposal", the id inert on screen and in the
// log.
func TestOpenOverSSHNotPending(t *testing.T) {
	r := startRig(t)
	id := submit(t, r.s, "rm -rf /srv/decided-before")
	bob := model.Actor{Surface: model.SurfaceCLI, Name: "bob@laptop", Person: "bob"}
	if _, err := r.s.Deny(context.Background(), id, bob, "done by hand"); err != nil {
		t.Fatal(err)
	}
	alice := r.consoleWith("alice", "open "+id)
	alice.waitFor(id + " was denied by bob@laptop via cli")
	alice.waitFor("audit event")

	hostile := "hm-\u202eevil"
	alice2 := r.consoleWith("alice", "open "+hostile)
	alice2.waitFor("no such proposal yet")
	alice2.waitFor("no proposal hm-<U+202E>evil")
	if strings.Contains(alice2.out.String(), "\u202e") || strings.Contains(r.logs.String(), "\u202e") {
		t.Fatal("the id reached the screen or the log raw")
	}
	if !strings.Contains(r.logs.String(), "open=hm-<U+202E>evil") {
		t.Fatalf("the log does not name what was opened:\n%s", r.logs.String())
	}
}

// open without an id, with more than one, and without a terminal: each
// says how to run it, and nothing starts.
func TestOpenOverSSHErrors(t *testing.T) {
	r := startRig(t)
	id := submit(t, r.s, "rm -rf /srv/open-errors")
	for _, tc := range []struct {
		command string
		pty     bool
		want    string
	}{
		{"open", true, "open needs the approval id of a proposal: ssh -t HOST open ID"},
		{"open ''", true, "open needs the approval id"},
		{"open " + id + " now", true, "open takes one approval id, and was given 2 words"},
		{"open", false, "open needs the approval id of a proposal"},
		{"open " + id, false, "the console needs a terminal, and this session has none (ssh asks for one only when its own input is a terminal): connect with ssh -t HOST open ID"},
	} {
		var out, errs string
		var code int
		if tc.pty {
			out, errs, code = r.runPty("alice", tc.command)
		} else {
			out, errs, code = r.run("alice", tc.command)
		}
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Contains(out, "pending") {
			t.Errorf("%q (pty %v): exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.command, tc.pty, code, out, errs, tc.want)
		}
	}
	// "open -- ID", as the CLI writes an id that starts with -.
	alice := r.consoleWith("alice", "open -- "+id)
	alice.waitFor("/srv/open-errors")
	alice.waitFor("end of proposal")
}

// runPty runs command in a session with a terminal and waits for its end.
func (r *rig) runPty(name, command string) (string, string, int) {
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
	if err := sess.RequestPty("xterm-256color", 40, 120, gossh.TerminalModes{}); err != nil {
		r.t.Fatal(err)
	}
	var out, errb bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errb
	done := make(chan error, 1)
	go func() { done <- sess.Run(command) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		r.t.Fatalf("%q with a terminal did not end", command)
	}
	code := 0
	if ee, ok := err.(*gossh.ExitError); ok {
		code = ee.ExitStatus()
	} else if err != nil {
		r.t.Fatalf("run %q: %v", command, err)
	}
	return out.String(), errb.String(), code
}
