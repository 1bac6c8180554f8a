package storage

import (
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/trust"
)

// approvalUnder is an approve statement over rec at time at naming the
// signed policy src as the one its signer held in force.
func approvalUnder(rec *Record, at time.Time, src string) trust.Statement {
	st := approval(rec, at)
	st.PolicySHA256 = trust.SHA256Hex([]byte(src))
	return st
}

// The agent's user deletes policy signature rows after a vote was cast
// under the two-person policy: the older lax policy (or none) is in force
// again by the rows, but every approval naming the two-person one, and
// every one on a proposal a kept vote names it for, is refused; with the
// policy set again, two approvals consume it.
func TestTrustPolicyRollbackAfterVote(t *testing.T) {
	for _, c := range []struct{ name, where string }{
		{"newest policy signature deleted", `approval_id = 'policy' AND seq = (SELECT MAX(seq) FROM approve_tui_signatures WHERE approval_id = 'policy')`},
		{"every policy signature deleted", `approval_id = 'policy'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			carol, alice, bob, dave := newKey(t, "carol"), newKey(t, "alice"), newKey(t, "bob"), newKey(t, "dave")
			ts := trustOf(t, []string{"carol"}, carol.line(), alice.line(), bob.line(), dave.line())
			clk := newClock()
			s := openTrusted(t, tempDB(t), clk, ts)
			lax, strict := highNeeds(1), highNeeds(2)
			setSigned(t, s, carol, lax, clk.Now())
			clk.Advance(time.Minute)
			setSigned(t, s, carol, strict, clk.Now())
			rec := submitHigh(t, s, clk, "trust-rollback-01")
			_, err := approve(s, rec, osActor(alice.signed(t, approvalUnder(rec, clk.Now(), strict))))
			wantVote(t, err, 1, 1)

			mustExec(t, rawDB(t, s.DSN()), `DELETE FROM approve_tui_signatures WHERE `+c.where)
			// bob's console remembers the two-person policy.
			_, err = approve(s, rec, osActor(bob.signed(t, approvalUnder(rec, clk.Now(), strict))))
			wantRefusal(t, err, RefusedPolicyGone, "the policy it was approved under", "rows were deleted")
			wantPending(t, s, rec.ApprovalID)
			// dave never saw it (his console names the lax one, or none):
			// alice's kept vote names the two-person policy all the same.
			daves := approval(rec, clk.Now())
			if c.name == "newest policy signature deleted" {
				daves = approvalUnder(rec, clk.Now(), lax)
			}
			_, err = approve(s, rec, osActor(dave.signed(t, daves)))
			wantRefusal(t, err, RefusedPolicyGone)
			wantPending(t, s, rec.ApprovalID)

			// A policy signer sets the two-person policy again: it takes
			// alice's vote and one more.
			clk.Advance(time.Minute)
			setSigned(t, s, carol, strict, clk.Now())
			if _, err := approve(s, rec, osActor(bob.signed(t, approvalUnder(rec, clk.Now(), strict)))); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An approval names a two-person policy the store still holds signed,
// but an older file was set again since as the newest: the named one
// still asks for two.
func TestTrustNamedPolicyAsks(t *testing.T) {
	carol, alice, bob := newKey(t, "carol"), newKey(t, "alice"), newKey(t, "bob")
	ts := trustOf(t, []string{"carol"}, carol.line(), alice.line(), bob.line())
	clk := newClock()
	s := openTrusted(t, tempDB(t), clk, ts)
	lax, strict := highNeeds(1), highNeeds(2)
	setSigned(t, s, carol, strict, clk.Now())
	clk.Advance(time.Minute)
	setSigned(t, s, carol, lax, clk.Now())
	rec := submitHigh(t, s, clk, "trust-named-0001")
	_, err := approve(s, rec, osActor(alice.signed(t, approvalUnder(rec, clk.Now(), strict))))
	wantVote(t, err, 1, 1)
	if _, err := approve(s, rec, osActor(bob.signed(t, approvalUnder(rec, clk.Now(), lax)))); err != nil {
		t.Fatal(err)
	}
}
