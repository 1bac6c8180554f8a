package storage

import (
	"bufio"
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// The quorum a proposal needs is the strictest of the policy in force at
// its submit, at each vote cast on it, and now: a policy set mid-vote
// never lowers it. The votes are cast by other processes, as consoles on
// other machines would.

// voteInProcess has worker process n (person "worker-n") approve id once,
// and returns its answer: "voted ID", "won ID", "refused ID CODE", ...
func voteInProcess(t *testing.T, path, worker, id string) string {
	t.Helper()
	cmd := helperProcess(t, "vote-all", path, "STORAGE_TEST_WORKER="+worker)
	cmd.Stdin = strings.NewReader(id + "\ngo\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("worker %s: %v\n%s", worker, err, out.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if sc.Text() != "ready" {
			return sc.Text()
		}
	}
	t.Fatalf("worker %s said nothing", worker)
	return ""
}

func TestQuorumLoweredMidVoteStillCounts(t *testing.T) {
	for _, tc := range []struct{ name, lower string }{
		{"no-rule", "policy: []\n"},
		{"one-approver", highNeeds(1)},
		{"other-rule", "policy:\n  - match: {risk: high, session: \"none:*\"}\n    approvals: 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tempDB(t)
			s := openAt(t, path, nil) // the workers read the real clock
			var c *clock
			db := rawDB(t, path)
			v1 := putPolicy(t, s, highNeeds(2))
			rec := submitHigh(t, s, c, "lowered-"+tc.name)
			if got := voteInProcess(t, path, "1", rec.ApprovalID); got != "voted "+rec.ApprovalID {
				t.Fatalf("the first vote: %q", got)
			}
			// The voter (or anyone) lowers the policy, then approves again.
			v2 := putPolicy(t, s, tc.lower)
			if got := voteInProcess(t, path, "1", rec.ApprovalID); got != "refused "+rec.ApprovalID+" "+RefusedDuplicateApprover {
				t.Fatalf("the same person again, under a lowered policy: %q", got)
			}
			wantPendingRow(t, db, rec.ApprovalID)
			q, err := s.Quorum(ctx, rec)
			if err != nil || q == nil || q.Met() || q.Progress() != "1 of 2 approvals" || q.Policy.Version != v1.Version ||
				!slices.Contains(q.Versions, v1.Version) {
				t.Fatalf("the quorum shown after lowering: %+v %v", q, err)
			}
			// Another person completes it.
			if got := voteInProcess(t, path, "2", rec.ApprovalID); got != "won "+rec.ApprovalID {
				t.Fatalf("a second person: %q", got)
			}
			status, by := rowState(t, db, rec.ApprovalID)
			if status != "consumed" || by.String != "worker-1@host-1 via cli, worker-2@host-2 via cli" {
				t.Fatalf("the row says %s by %q", status, by.String)
			}
			e := lastEvent(t, s, rec.ApprovalID, EventApprove, OutcomeOK)
			if e.Detail["quorum"] != float64(2) || e.Detail["policy_version"] != float64(v1.Version) {
				t.Fatalf("approve detail %v (v2 is %d)", e.Detail, v2.Version)
			}
			verifyOK(t, s)
		})
	}
}

// Submitted under a two-person rule and lowered before anyone voted: the
// submit pinned it. Raised after the submit, then lowered after a vote: the
// vote pinned the raised one. Raised and lowered again with no vote in
// between: what was asked at the submit and now.
func TestQuorumPinnedAtSubmitAndAtEachVote(t *testing.T) {
	path := tempDB(t)
	s := openAt(t, path, nil) // the workers read the real clock
	var c *clock
	db := rawDB(t, path)
	putPolicy(t, s, highNeeds(2))
	early := submitHigh(t, s, c, "pinned-at-submit")
	putPolicy(t, s, "policy: []\n")
	if got := voteInProcess(t, path, "1", early.ApprovalID); got != "voted "+early.ApprovalID {
		t.Fatalf("under a lowered policy, the first approval of a proposal submitted under two: %q", got)
	}
	wantPendingRow(t, db, early.ApprovalID)
	if got := voteInProcess(t, path, "2", early.ApprovalID); got != "won "+early.ApprovalID {
		t.Fatalf("the second person: %q", got)
	}

	// No rule at submit; raised to three; one vote; lowered to one.
	free := submitHigh(t, s, c, "pinned-by-vote")
	putPolicy(t, s, highNeeds(3))
	if got := voteInProcess(t, path, "1", free.ApprovalID); got != "voted "+free.ApprovalID {
		t.Fatalf("under three: %q", got)
	}
	putPolicy(t, s, highNeeds(1))
	if got := voteInProcess(t, path, "2", free.ApprovalID); got != "voted "+free.ApprovalID {
		t.Fatalf("lowered to one after a vote under three: %q", got)
	}
	wantPendingRow(t, db, free.ApprovalID)
	if got := voteInProcess(t, path, "3", free.ApprovalID); got != "won "+free.ApprovalID {
		t.Fatalf("the third person: %q", got)
	}

	// Raised and lowered with nobody voting in between: the submit's
	// (one approver, no rule) and now's (one) are what count.
	putPolicy(t, s, "policy: []\n")
	loose := submitHigh(t, s, c, "raised-and-lowered")
	putPolicy(t, s, highNeeds(3))
	putPolicy(t, s, "policy: []\n")
	if got := voteInProcess(t, path, "1", loose.ApprovalID); got != "won "+loose.ApprovalID {
		t.Fatalf("no rule at submit nor now: %q", got)
	}

	// The submit's audit event names the version and the submitter.
	e := lastEvent(t, s, early.ApprovalID, EventSubmit, OutcomeOK)
	if e.Detail["policy_version"] != float64(1) {
		t.Fatalf("submit detail %v", e.Detail)
	}
	verifyOK(t, s)
}

// A vote stays bound to the payload it read, whatever policy is set
// after: content rewritten behind the store's back is refused (tampered),
// and a lowered policy does not change that; on a row Hermes wrote (no
// submit record), rewritten content voids the vote, and a lowered policy
// does not bring it back.
func TestQuorumPinnedVoteStaysBoundToItsPayload(t *testing.T) {
	t.Run("submitted", func(t *testing.T) { pinnedVoteBound(t, false) })
	t.Run("hermes", func(t *testing.T) { pinnedVoteBound(t, true) })
}

func pinnedVoteBound(t *testing.T, hermes bool) {
	s, c, db := newRawStore(t)
	putPolicy(t, s, highNeeds(2))
	var rec *Record
	if hermes {
		insertRaw(t, db, proposal("pinned-payload", "systemctl stop postgresql", model.RiskHigh, c.Now(), time.Hour))
		r, err := s.Get(ctx, "pinned-payload")
		if err != nil {
			t.Fatal(err)
		}
		rec = r
	} else {
		rec = submitHigh(t, s, c, "pinned-payload")
	}
	_, err := approve(s, rec, who("alice"))
	wantVote(t, err, 1, 1)
	orig := payloadOf(t, db, rec.ApprovalID)
	mustExec(t, db, `UPDATE gateway_approvals SET payload_json = ? WHERE approval_id = ?`,
		strings.Replace(orig, `"cwd":`, `"approve_tui_context":"x","cwd":`, 1), rec.ApprovalID)
	now, err := s.Get(ctx, rec.ApprovalID)
	if err != nil || now.PayloadSHA256 == rec.PayloadSHA256 || (now.Tampered != "") == hermes {
		t.Fatalf("rewrite: tampered %q %v", now.Tampered, err)
	}
	putPolicy(t, s, "policy: []\n")
	_, err = approve(s, now, who("bob"))
	if !hermes {
		wantRefused(t, err, RefusedTampered)
		wantVotes(t, s, rec.ApprovalID, "")
		return
	}
	vr := wantVote(t, err, 1, 1) // alice's vote read other content: bob's is the first
	if vr.Quorum.Votes[0].Person != "bob" {
		t.Fatalf("votes %+v", vr.Quorum.Votes)
	}
	wantVotes(t, s, rec.ApprovalID, VoteContentChanged, "")
}

// Who votes is the actor's structured person and key: names that look
// like a sudo note or a key fingerprint count for nothing.
func TestQuorumIdentityIsStructured(t *testing.T) {
	s, c := newStore(t)
	putPolicy(t, s, highNeeds(2))
	// An agent whose host name claims carol: its own vote is refused as
	// self-approval, and carol's counts.
	agentSelf := model.Actor{Surface: model.SurfaceCLI, Name: "agent@vm (as carol)", Person: "agent"}
	mine := submitHigh(t, s, c, "structured-self", func(p *model.Proposal) {
		p.Requester, p.Origin = "approve-tui-run", "agent@vm (as carol)"
	})
	_, err := approve(s, mine, agentSelf)
	wantRefused(t, err, RefusedSelfApproval)
	_, err = approve(s, mine, who("carol"))
	wantVote(t, err, 1, 1)
	// A local actor whose name carries bob's fingerprint is not bob's key.
	_, err = approve(s, mine, model.Actor{Surface: model.SurfaceCLI, Name: "dave@vm (SHA256:bbb)", Person: "dave"})
	if err != nil {
		t.Fatalf("dave: %v", err)
	}
	vs := wantVotes(t, s, mine.ApprovalID, VoteConsumed, VoteConsumed)
	for _, v := range vs {
		if v.Key != "" {
			t.Fatalf("a local vote recorded a key: %+v", v)
		}
	}
	// An actor that names no person cannot vote where a rule applies.
	other := submitHigh(t, s, c, "structured-nobody")
	_, err = approve(s, other, model.Actor{Surface: model.SurfaceSSH, Name: "alice@laptop (SHA256:aaa)"})
	if rf := wantRefused(t, err, RefusedNotEligible); !strings.Contains(rf.Reason, "names no person") {
		t.Fatalf("reason %q", rf.Reason)
	}
	// The submitter is the submitting actor's person, whatever the origin
	// text says.
	sub := proposal("structured-submitter", "systemctl stop postgresql", model.RiskHigh, c.Now(), 0)
	sub.Origin = "someone-else@vm"
	if err := s.Submit(ctx, sub, model.Actor{Surface: model.SurfaceRunner, Name: "erin@vm", Person: "erin"}); err != nil {
		t.Fatal(err)
	}
	rec, _ := s.Get(ctx, sub.ApprovalID)
	_, err = approve(s, rec, who("erin"))
	wantRefused(t, err, RefusedSelfApproval)
	if q, err := s.Quorum(ctx, rec); err != nil || !slices.Contains(q.Requesters, "erin") {
		t.Fatalf("requesters %+v %v", q, err)
	}
}
