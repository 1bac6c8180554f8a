package serve_test

import (
	"strings"
	"testing"
)

// A session's console asks its client's terminal nothing (no background
// colour, no cursor position): the test's client, like some terminals and
// scripts, never answers, and the console must neither wait for it nor
// read a late answer as keys.
func TestSessionAsksTheTerminalNothing(t *testing.T) {
	r := startRig(t)
	submit(t, r.s, "rm -rf /tmp/scratch")
	c := r.console("alice")
	c.waitFor("rm -rf /tmp/scratch")
	for _, q := range []string{"\x1b]11;?", "\x1b]10;?", "\x1b[6n"} {
		if strings.Contains(c.out.String(), q) {
			t.Errorf("the session's console asked its terminal %q", q)
		}
	}
}
