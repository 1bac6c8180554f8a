package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
)

// Hermes' own store (Python, its SQL) reads a two-person proposal as
// pending, unconsumed, after the first vote, and consumed, naming both
// approvers, only after the second.
func TestInteropHermesSeesPendingUntilTheFinalVote(t *testing.T) {
	sqliteOnly(t, "Hermes (Python) reads a SQLite file")
	path := tempDB(t)
	s := openAt(t, path, nil)
	py := newPyStore(t, path)
	ctx := context.Background()
	pol := &policy.Policy{Rules: []policy.Rule{{Match: policy.Match{Risk: model.RiskHigh}, Approvals: 2}}}
	if _, _, err := s.SetPolicy(ctx, []byte("two"), pol, model.Actor{Surface: model.SurfaceCLI, Name: "root@ops-1"}); err != nil {
		t.Fatal(err)
	}
	p := proposal(model.NewID(), "psql -c 'DROP TABLE users'", model.RiskHigh, time.Now(), time.Hour)
	mustSubmit(t, s, p)
	id := p.ApprovalID
	var v *VoteRecorded
	if _, err := s.Consume(ctx, id, id, model.Actor{Surface: model.SurfaceSSH, Name: "alice@laptop (SHA256:aaaa)", Person: "alice", Key: "SHA256:aaaa"}); !errors.As(err, &v) {
		t.Fatalf("first approval: %v, want a vote", err)
	}
	got := py.get(id)
	if got.Proposal["status"] != "pending" || got.Proposal["consumed_by"] != nil || got.Proposal["consumed_at"] != nil {
		t.Fatalf("after one vote Hermes reads status %v, consumed_by %v, consumed_at %v; want pending and nothing consumed",
			got.Proposal["status"], got.Proposal["consumed_by"], got.Proposal["consumed_at"])
	}
	if _, err := s.Consume(ctx, id, id, model.Actor{Surface: model.SurfaceSSH, Name: "bob@desk (SHA256:bbbb)", Person: "bob", Key: "SHA256:bbbb"}); err != nil {
		t.Fatalf("second approval: %v", err)
	}
	got = py.get(id)
	by := got.str(t, "consumed_by")
	if got.Proposal["status"] != "consumed" || !strings.Contains(by, "alice@laptop") || !strings.Contains(by, "bob@desk") {
		t.Fatalf("after the second vote Hermes reads status %v, consumed_by %q; want consumed by both", got.Proposal["status"], by)
	}
}
