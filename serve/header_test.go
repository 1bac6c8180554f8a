package serve_test

import (
	"strings"
	"testing"
	"time"
)

// An SSH session's header names the person, not the key: at 80 columns it
// still shows who else is here and whom the console follows (the key's
// fingerprint is on the ? page).
func TestHeaderNamesThePersonOverSSH(t *testing.T) {
	r := startRig(t)
	submit(t, r.s, "rm -rf /srv/header")
	alice := r.console("alice")
	bob := r.console("bob")
	for _, c := range []*console{alice, bob} {
		if err := c.sess.WindowChange(24, 80); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // the frames at 80 columns
	mark := len(bob.out.String())
	bob.typeKeys("f")
	deadline := time.Now().Add(10 * time.Second)
	for {
		since := bob.out.String()[mark:]
		if strings.Contains(since, "with alice") && strings.Contains(since, "[following alice]") {
			if strings.Contains(since, "SHA256:") {
				t.Fatalf("the console shows the key's fingerprint: %q", since)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("at 80 columns the header never showed who is here and whom bob follows: %q", since)
		}
		time.Sleep(20 * time.Millisecond)
	}
	bob.typeKeys("?")
	bob.waitFor("You are bob (SHA256:")
}
