package storage

import (
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// A proposal the policy covers, approved by its own requester, is refused
// as a self-approval (an audited refusal, exit 1 on the command line). With
// the votes table gone from the file (a hostile writer dropped it), the
// refusal must stay the same: the requester is refused before any vote is
// read, as it always was. The one-statement deciding read (getOpen) reads
// the votes table first, so the approval fails instead as a store error
// ("no such table: approve_tui_votes", exit 6, no self_approval refusal in
// the audit log).
func TestReviewSelfApprovalRefusedWithVotesTableGone(t *testing.T) {
	c := newClock()
	path := tempDB(t)
	s := openAt(t, path, c)
	putPolicy(t, s, highNeeds(2))
	mine := submitHigh(t, s, c, "review-self-novotes", func(p *model.Proposal) { p.Requester = "bob@laptop" })
	mustExec(t, rawDB(t, path), `DROP TABLE approve_tui_votes`)
	_, err := approve(s, mine, who("bob"))
	wantRefused(t, err, RefusedSelfApproval)
}

// A policy table that is not the store's (a hostile writer replaced it by
// a table of another shape, empty) cannot say whether a policy is in force:
// the decision fails closed, as the policy read always made it fail ("no
// such column"). The deciding read now asks only whether the table has a
// row (EXISTS), finds none, skips the policy read and approves.
func TestReviewReshapedPolicyTableFailsClosed(t *testing.T) {
	c := newClock()
	path := tempDB(t)
	s := openAt(t, path, c)
	rec := submitHigh(t, s, c, "review-policy-reshaped")
	db := rawDB(t, path)
	mustExec(t, db, `DROP TABLE approve_tui_policy`)
	mustExec(t, db, `CREATE TABLE approve_tui_policy (x TEXT)`)
	if r, err := approve(s, rec, who("alice")); err == nil {
		t.Fatalf("approved (%s by %s) with a policy table the store cannot read", r.Status, r.ConsumedBy)
	}
}

// The same with the votes table replaced by one of another shape, empty,
// and no policy: the consume ended the proposal's votes, which failed on
// the table it could not use; the deciding read now finds no counting vote
// (the table has no row), skips ending them, and approves.
func TestReviewReshapedVotesTableFailsClosed(t *testing.T) {
	c := newClock()
	path := tempDB(t)
	s := openAt(t, path, c)
	rec := submitHigh(t, s, c, "review-votes-reshaped")
	db := rawDB(t, path)
	mustExec(t, db, `DROP TABLE approve_tui_votes`)
	mustExec(t, db, `CREATE TABLE approve_tui_votes (approval_id TEXT, ended TEXT)`)
	if r, err := approve(s, rec, who("alice")); err == nil {
		t.Fatalf("approved (%s by %s) with a votes table the store cannot read", r.Status, r.ConsumedBy)
	}
}
