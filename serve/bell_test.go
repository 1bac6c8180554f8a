package serve_test

import (
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/serve"
)

// serve --bell: a session's terminal rings (BEL, OSC 9 and 777 in the
// program's words) when a risky proposal arrives while it is open.
func TestSessionBell(t *testing.T) {
	r := startRigWith(t, t.TempDir(), func(c *serve.Config) { c.Bell = model.RiskHigh })
	alice := r.consoleWith("alice", "")
	alice.waitFor("0 pending")
	submit(t, r.s, "rm -rf /srv/rings-the-bell")
	alice.waitFor("rings-the-bell")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(alice.out.String(), "\x1b]9;approve-tui: HIGH proposal waiting\a") {
		if time.Now().After(deadline) {
			t.Fatalf("no bell in the session's output:\n%q", alice.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
