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
