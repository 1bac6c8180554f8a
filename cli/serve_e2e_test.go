package cli

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// The real OpenSSH client in a real terminal (tmux) against approve-tui
// serve: an approver approves a proposal by typing its id, and denies
// another; both decisions name the key.
func TestServeWithOpenSSHInTmux(t *testing.T) {
	r := newSSHRig(t)
	key := r.key("id_ed25519", "oncall-alice", false)
	approveID, denyID := r.submit("rm -rf /srv/approve-over-openssh"), r.submit("rm -rf /srv/deny-over-openssh")
	r.serve()
	tm := r.connect("alice", key, 120, 40)
	tm.waitFor("pending")

	tm.key("/")
	tm.typeID(approveID)
	tm.key("Enter", "Enter")
	tm.waitFor("why ") // what is drawn counts as read once it has arrived
	tm.key("a")
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

	for id, want := range map[string]model.Status{approveID: model.StatusConsumed, denyID: model.StatusDenied} {
		rec := r.get(id)
		if rec.Status != want || !strings.HasPrefix(rec.ConsumedBy, "oncall-alice (SHA256:") || !strings.HasSuffix(rec.ConsumedBy, " via ssh") {
			t.Fatalf("%s: %s by %q\nserver log:\n%s", id, rec.Status, rec.ConsumedBy, r.log.String())
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
