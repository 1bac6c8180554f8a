package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// ProposalsOfMatch lists the proposals of one call that have a parks row,
// checked against their own fields; the reads of calls run without
// approval list each once, after a seq or since a time.
func TestRanReads(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	mk := func(prefix, command string) *model.Proposal {
		p := proposal(prefix+"-"+model.NewID(), command, model.RiskHigh, c.Now(), time.Hour)
		mustSubmit(t, s, p)
		return p
	}
	a, b, other, unparked := mk("rr-a", "rm -rf /srv/app/cache"), mk("rr-b", "rm -rf /srv/app/cache"), mk("rr-o", "rm -rf /srv/other"), mk("rr-u", "rm -rf /srv/app/cache")
	m := model.MatchOf(a)
	if recs, err := s.ProposalsOfMatch(ctx, m, 0); err != nil || len(recs) != 0 {
		t.Fatalf("before parking: %d %v", len(recs), err)
	}
	for _, p := range []*model.Proposal{a, b, other} {
		if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(time.Hour), "hook timeout", agent); err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Second)
	}
	recs, err := s.ProposalsOfMatch(ctx, m, 0)
	if err != nil || len(recs) != 2 || recs[0].ApprovalID != b.ApprovalID || recs[1].ApprovalID != a.ApprovalID {
		t.Fatalf("parked: %+v %v", recs, err)
	}
	if recs, err := s.ProposalsOfMatch(ctx, m, 1); err != nil || len(recs) != 1 {
		t.Fatalf("limit 1: %d %v", len(recs), err)
	}
	// A parks row that names another call under this call's key: left out.
	if _, err := db.Exec(`UPDATE approve_tui_parks SET match_sha256 = ? WHERE approval_id = ?`, m.Key(), other.ApprovalID); err != nil {
		t.Fatal(err)
	}
	if recs, err := s.ProposalsOfMatch(ctx, m, 0); err != nil || len(recs) != 2 {
		t.Fatalf("forged row: %d %v", len(recs), err)
	}
	_ = unparked

	seq, err := s.AuditSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	since := model.Epoch(c.Now())
	for _, p := range []*model.Proposal{a, unparked} {
		if _, err := s.RecordRanWithoutApproval(ctx, p.ApprovalID, "reported run", agent); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RecordRanWithoutApproval(ctx, a.ApprovalID, "again", agent); err == nil {
		t.Fatal("recorded twice")
	}
	rs, err := s.RanWithoutApprovalAfter(ctx, seq, 0)
	if err != nil || len(rs) != 2 || rs[0].ApprovalID != a.ApprovalID || rs[1].ApprovalID != unparked.ApprovalID ||
		rs[0].Requester != a.Requester || rs[0].Seq <= seq || rs[1].Seq <= rs[0].Seq {
		t.Fatalf("after %d: %+v %v", seq, rs, err)
	}
	if rs, err := s.RanWithoutApprovalAfter(ctx, rs[1].Seq, 0); err != nil || len(rs) != 0 {
		t.Fatalf("after the last: %+v %v", rs, err)
	}
	c.Advance(time.Second)
	if _, err := s.RecordRanWithoutApproval(ctx, b.ApprovalID, "reported run", agent); err != nil {
		t.Fatal(err)
	}
	ids, err := s.RanWithoutApprovalSince(ctx, since, 2)
	if err != nil || len(ids) != 2 || ids[0] != b.ApprovalID {
		t.Fatalf("since: %v %v", ids, err)
	}
	if ids, err := s.RanWithoutApprovalSince(ctx, since+2, 0); err != nil || len(ids) != 0 {
		t.Fatalf("since later: %v %v", ids, err)
	}
}

// An approved proposal whose approval no call took (parked, or reserved
// and its waiter gone: every allow of it takes it first) whose call is
// reported run ran without approval: recorded so, its park closed in the
// same transaction, so that neither the retry nor anyone else takes the
// approval afterwards. One whose approval was taken, or that has no parks
// row, is refused: its run is the approved one.
func TestRanWithoutApprovalOfAnUntakenApproval(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	mk := func(prefix string) *model.Proposal {
		p := proposal(prefix+"-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
		if prefix == "rwu-unparked" {
			mustSubmit(t, s, p) // its own waiter answers it: no reservation
		} else {
			mustSubmitReserved(t, s, p)
		}
		return p
	}
	untaken, taken, unparked := mk("rwu-untaken"), mk("rwu-taken"), mk("rwu-unparked")
	for _, p := range []*model.Proposal{untaken, taken} {
		if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(time.Hour), "hook timeout", agent); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*model.Proposal{untaken, taken, unparked} {
		if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Take(ctx, taken.ApprovalID, model.MatchOf(taken), agent); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	rec, err := s.RecordRanWithoutApproval(ctx, untaken.ApprovalID, "PostToolUse: exit 0", agent)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != model.StatusConsumed || rec.ExecutionStatus != model.ExecRanWithoutApproval {
		t.Fatalf("%s / %s", rec.Status, rec.ExecutionStatus)
	}
	p, err := s.ParkOf(ctx, untaken.ApprovalID)
	if err != nil || p == nil || p.Open(c.Now()) || p.TakenBy != "" {
		t.Fatalf("the park is not closed: %+v %v", p, err)
	}
	if _, err := s.Take(ctx, untaken.ApprovalID, model.MatchOf(untaken), agent); err == nil {
		t.Fatal("taken after its call ran without it")
	}
	if _, _, err := s.FindParked(ctx, model.MatchOf(untaken)); err == nil {
		t.Fatal("found for a retry after its call ran without it")
	}
	if _, err := s.RecordRanWithoutApproval(ctx, untaken.ApprovalID, "again", agent); err == nil {
		t.Fatal("recorded twice")
	}
	if err := s.RecordExecution(ctx, untaken.ApprovalID, model.ExecExecuted, "", agent); err == nil {
		t.Fatal("recorded executed after it ran without approval")
	}
	var it *InvalidTransitionError
	for _, p := range []*model.Proposal{taken, unparked} {
		if _, err := s.RecordRanWithoutApproval(ctx, p.ApprovalID, "", agent); !errors.As(err, &it) {
			t.Fatalf("%s: %v", p.ApprovalID, err)
		}
	}
	if n := countAudit(t, db, `event = 'park' AND outcome = 'ok' AND reason = 'ran_without_approval' AND approval_id = ?`, untaken.ApprovalID); n != 1 {
		t.Fatalf("%d park-closing events", n)
	}
	if n := countAudit(t, db, `event = 'execution' AND outcome = 'ok' AND reason = 'ran_without_approval'`); n != 1 {
		t.Fatalf("%d execution events", n)
	}
}
