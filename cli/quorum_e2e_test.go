package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// The two-person rule over the real OpenSSH client, each person in a
// terminal of their own (tmux): a policy asks for two approvers of a HIGH
// command; alice approves and it waits, showing her vote; alice with her
// second key is refused (one person counts once); a watcher cannot vote;
// bob completes it, and the row is consumed naming both.
func TestTwoPersonRuleOverOpenSSHInTmux(t *testing.T) {
	r := newSSHRig(t)
	aliceKey := r.key("alice", "alice@laptop", false)
	alice2Key := r.key("alice2", "alice@desktop", false)
	bobKey := r.key("bob", "bob@desk", false)
	carolKey := r.key("carol", "carol@watch", true)
	policyFile := filepath.Join(r.dir, "policy.yaml")
	if err := os.WriteFile(policyFile, []byte("policy:\n  - match: {risk: high, session: \"agent:prod:*\"}\n    approvals: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.run("policy", "set", policyFile)
	id := r.submit("rm -rf /srv/two-person", "--session", "agent:prod:db")
	r.serve()
	connect := func(who, key string) *demoInTmux {
		tm := r.connect(who, key, 100, 30)
		tm.waitFor("pending")
		return tm
	}
	// Approving needs the whole detail read: G goes to its end (the
	// votes and the explanation of the HIGH make it longer than 30 rows).
	approve := func(tm *demoInTmux) {
		tm.key("/")
		tm.typeID(id)
		tm.key("Enter", "Enter", "G", "a")
		tm.waitFor("Type the approval id")
		tm.typeID(id)
		tm.waitFor("press enter")
		tm.key("Enter")
	}
	get, run, srvLog := r.get, r.run, r.log

	a := connect("alice", aliceKey)
	approve(a)
	a.waitFor("vote recorded")
	if rec := get(id); rec.Status != model.StatusPending || rec.ConsumedBy != "" {
		t.Fatalf("after alice's vote: %s by %q, want pending\nserver log:\n%s", rec.Status, rec.ConsumedBy, srvLog.String())
	}

	a2 := connect("alice2", alice2Key)
	a2.waitFor("1/2")
	approve(a2)
	a2.waitFor("voted already")
	if rec := get(id); rec.Status != model.StatusPending {
		t.Fatalf("alice's second key pushed it through: %s by %q", rec.Status, rec.ConsumedBy)
	}

	c := connect("carol", carolKey)
	c.key("/")
	c.typeID(id)
	c.key("Enter", "Enter", "a")
	c.waitFor("watcher")
	if rec := get(id); rec.Status != model.StatusPending {
		t.Fatalf("a watcher changed it: %s", rec.Status)
	}

	b := connect("bob", bobKey)
	b.waitFor("1/2")
	approve(b)
	b.waitFor("approved " + id)
	rec := get(id)
	if rec.Status != model.StatusConsumed || !strings.Contains(rec.ConsumedBy, "alice@laptop (SHA256:") || !strings.Contains(rec.ConsumedBy, "bob@desk (SHA256:") {
		t.Fatalf("after bob: %s by %q, want consumed naming alice and bob\nserver log:\n%s", rec.Status, rec.ConsumedBy, srvLog.String())
	}
	out := run("show", "--json", id)
	for _, want := range []string{`"votes"`, `"alice@laptop (SHA256:`, `"bob@desk (SHA256:`} {
		if !strings.Contains(out, want) {
			t.Fatalf("show --json lacks %s:\n%s", want, out)
		}
	}
	if v := run("audit", "--verify"); !strings.Contains(v, "audit log intact") {
		t.Fatalf("audit --verify: %s", v)
	}
}
