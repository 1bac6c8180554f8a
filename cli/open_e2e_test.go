package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// A page's link, followed with the real OpenSSH client in a real terminal
// (tmux): ssh -t HOST open ID starts the console on that proposal, whole;
// the id is typed and the proposal approved, by the key. Then the local
// console, approve-tui --open ID, on the same proposal, now decided: it
// says by whom, on its event in the history.
func TestOpenWithOpenSSHInTmux(t *testing.T) {
	r := newSSHRig(t)
	key := r.key("id_ed25519", "oncall-alice", false)
	// The first in the list is another one: open must select the paged one.
	r.submit("rm -rf /srv/not-the-paged-one")
	id := r.submit("rm -rf /srv/the-paged-one")
	r.serve()
	tm := r.connect("alice", key, 120, 40, "open", id)
	bin, db, srvLog := r.bin, r.db, r.log
	tm.waitFor("/srv/the-paged-one")
	tm.waitFor("end of proposal")
	if s := tm.screen(); !strings.Contains(s, "id         "+id) {
		t.Fatalf("the detail is not the paged proposal's:\n%s", s)
	}
	tm.waitFor("why HIGH") // what is drawn counts as read once it has arrived
	tm.waitFor("no live waiter")
	tm.key("a")
	tm.waitFor("Type the approval id")
	tm.typeID(id)
	tm.waitFor("approve: press enter")
	tm.key("Enter")
	tm.waitFor("approved " + id)

	rec := r.get(id)
	if rec.Status != model.StatusConsumed || !strings.HasPrefix(rec.ConsumedBy, "oncall-alice (SHA256:") || !strings.HasSuffix(rec.ConsumedBy, " via ssh") {
		t.Fatalf("%s: %s by %q\nserver log:\n%s", id, rec.Status, rec.ConsumedBy, srvLog.String())
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
