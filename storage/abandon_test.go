package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Abandon ends a pending proposal as expired (nobody decided), audits why
// in the same transaction, and leaves nothing approvable; a proposal no
// longer pending is refused, and what was decided stays.
func TestAbandon(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	hook := model.Actor{Surface: model.SurfaceHook, Name: "requester"}
	op := model.Actor{Surface: model.SurfaceCLI, Name: "op"}
	p := proposal("abandon-me-1", "rm -rf build", model.RiskMedium, c.Now(), time.Hour)
	mustSubmit(t, s, p)

	rec, err := s.Abandon(ctx, p.ApprovalID, "the agent stopped waiting", hook)
	if err != nil {
		t.Fatal(err)
	}
	if rec.EffectiveStatus != model.StatusExpired {
		t.Fatalf("status %s", rec.EffectiveStatus)
	}
	got, err := s.Get(ctx, p.ApprovalID)
	if err != nil || got.EffectiveStatus != model.StatusExpired || got.ExecutionStatus != model.ExecNotStarted {
		t.Fatalf("%+v %v", got, err)
	}
	if why, err := s.AbandonReason(ctx, p.ApprovalID); err != nil || why != "the agent stopped waiting" {
		t.Fatalf("reason %q %v", why, err)
	}
	var np *NotPendingError
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, op); !errors.As(err, &np) || np.Status != model.StatusExpired {
		t.Fatalf("approve after abandon: %v", err)
	}
	if _, err := s.Abandon(ctx, p.ApprovalID, "again", hook); !errors.As(err, &np) {
		t.Fatalf("second abandon: %v", err)
	}
	if v, err := s.VerifyAudit(ctx); err != nil || !v.OK {
		t.Fatalf("audit chain: %+v %v", v, err)
	}

	// A decided proposal is not abandoned: the decision stays.
	q := proposal("abandon-me-2", "rm -rf dist", model.RiskMedium, c.Now(), time.Hour)
	mustSubmit(t, s, q)
	if _, err := s.Deny(ctx, q.ApprovalID, op, "no"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Abandon(ctx, q.ApprovalID, "late", hook); !errors.As(err, &np) || np.Status != model.StatusDenied {
		t.Fatalf("abandon of a denied proposal: %v", err)
	}
	if why, _ := s.AbandonReason(ctx, q.ApprovalID); why != "" {
		t.Fatalf("a denied proposal reads as abandoned: %q", why)
	}
	evs, err := s.Audit(ctx, AuditQuery{ApprovalID: p.ApprovalID})
	if err != nil {
		t.Fatal(err)
	}
	var ok int
	for _, e := range evs {
		if e.Event == EventExpire && e.Outcome == OutcomeOK {
			ok++
			if e.Reason != "abandoned" || !strings.Contains(e.DetailRaw, "the agent stopped waiting") {
				t.Fatalf("expire event %+v", e)
			}
		}
	}
	if ok != 1 {
		t.Fatalf("%d expire events recorded, want 1: %+v", ok, evs)
	}
}
