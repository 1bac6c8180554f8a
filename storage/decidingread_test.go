package storage

import (
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// A proposal the policy covers, approved by its own requester, is refused
// as a self-approval (an audited refusal, exit 1 on the command line). With
// the votes table gone from the file (a hostile writer dropped it), the
// refusal stays the same: the requester is refused before any vote is
// read, whether the deciding read is one statement (getOpen, which names
// the votes table) or two.
func TestSelfApprovalRefusedWithVotesTableGone(t *testing.T) {
	c := newClock()
	path := tempDB(t)
	s := openAt(t, path, c)
	putPolicy(t, s, highNeeds(2))
	mine := submitHigh(t, s, c, "self-novotes", func(p *model.Proposal) { p.Requester = "bob@laptop" })
	mustExec(t, rawDB(t, path), `DROP TABLE approve_tui_votes`)
	_, err := approve(s, mine, who("bob"))
	wantRefused(t, err, RefusedSelfApproval)
}

// A policy table of another shape (a hostile writer replaced it with an
// empty one) is not "no policy": the decision fails closed, as the policy
// read fails on it ("no such column"), never approving with one approver.
func TestReshapedPolicyTableFailsClosed(t *testing.T) {
	c := newClock()
	path := tempDB(t)
	s := openAt(t, path, c)
	rec := submitHigh(t, s, c, "policy-reshaped")
	db := rawDB(t, path)
	mustExec(t, db, `DROP TABLE approve_tui_policy`)
	mustExec(t, db, `CREATE TABLE approve_tui_policy (x TEXT)`)
	if r, err := approve(s, rec, who("alice")); err == nil {
		t.Fatalf("approved (%s by %s) with a policy table the store cannot read", r.Status, r.ConsumedBy)
	}
}

// The same with the votes table replaced by one of another shape, empty,
// and no policy: ending the proposal's votes fails on the table it cannot
// use, so the consume fails closed rather than skipping it.
func TestReshapedVotesTableFailsClosed(t *testing.T) {
	c := newClock()
	path := tempDB(t)
	s := openAt(t, path, c)
	rec := submitHigh(t, s, c, "votes-reshaped")
	db := rawDB(t, path)
	mustExec(t, db, `DROP TABLE approve_tui_votes`)
	mustExec(t, db, `CREATE TABLE approve_tui_votes (approval_id TEXT, ended TEXT)`)
	if r, err := approve(s, rec, who("alice")); err == nil {
		t.Fatalf("approved (%s by %s) with a votes table the store cannot read", r.Status, r.ConsumedBy)
	}
}
