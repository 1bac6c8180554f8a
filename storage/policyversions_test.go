package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
)

// PolicyVersions lists every version as stored, newest first, rules left
// unread; BlockedSince lists the refusals of one execution reason.
func TestPolicyVersionsAndBlockedSince(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	if vs, err := s.PolicyVersions(ctx); err != nil || len(vs) != 0 {
		t.Fatalf("no policy: %v %v", vs, err)
	}
	for _, src := range []string{"one", "two"} {
		p := &policy.Policy{Rules: []policy.Rule{{Approvals: 2}}}
		if src == "two" {
			p.Rules[0].Approvals = 3
		}
		if _, _, err := s.SetPolicy(ctx, []byte(src), p, alice); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := s.PolicyVersions(ctx)
	if err != nil || len(vs) != 2 || vs[0].Version != 2 || vs[0].Source != "two" || vs[0].SHA256 != sha256Hex([]byte("two")) || vs[1].Source != "one" {
		t.Fatalf("versions: %+v %v", vs, err)
	}

	since := model.Epoch(c.Now())
	for i, reason := range []string{"signature_invalid", "impact_grew", "signature_invalid"} {
		id := []string{"blocked-sig-1", "blocked-grew-1", "blocked-sig-2"}[i]
		if err := s.Submit(ctx, proposal(id, "rm -rf /srv/x", model.RiskHigh, c.Now(), time.Hour), agent); err != nil {
			t.Fatal(err)
		}
		// Policy "two" asks three approvers: the third consumes.
		for _, op := range []string{"op1", "op2", "op3"} {
			_, err := s.Consume(ctx, id, id, model.Actor{Surface: model.SurfaceCLI, Name: op, Person: op})
			var v *VoteRecorded
			if err != nil && !errors.As(err, &v) {
				t.Fatal(err)
			}
		}
		if err := s.RecordExecution(ctx, id, model.ExecBlockedAfterConsume, reason, agent); err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Second)
	}
	ids, err := s.BlockedSince(ctx, "signature_invalid", since, 10)
	if err != nil || len(ids) != 2 || ids[0] != "blocked-sig-1" || ids[1] != "blocked-sig-2" {
		t.Fatalf("blocked since: %v %v", ids, err)
	}
	if ids, err := s.BlockedSince(ctx, "signature_invalid", since+1.5, 10); err != nil || len(ids) != 1 || ids[0] != "blocked-sig-2" {
		t.Fatalf("blocked since later: %v %v", ids, err)
	}
}
