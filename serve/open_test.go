package serve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// Opening one proposal from a page: ssh -t HOST open ID.

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
	alice.approveShown(r, "alice", id)
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
