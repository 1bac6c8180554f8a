package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// An approved proposal that was never parked (its own waiter answers it:
// parking off, or the row was submitted without a reservation) gets a
// parks row written by the agent with its own call's key. The same call
// asked again then takes the approval: Take trusts any parks row with the
// right key, and nothing in the audit log says the proposal was ever
// reserved or parked. With the waiter having allowed the call already
// (nothing records that until the agent's PostToolUse), the one approval
// lets the call run twice. Take should refuse a parks row that no audited
// reservation (submit's reserved_until) or park event wrote.
func TestAttackTakeThroughForgedParkOfOwnKey(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	p := proposal("attack-forged-own-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
	mustSubmit(t, s, p)
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	m := model.MatchOf(p)
	// The agent's own write, straight to the table.
	if _, err := db.Exec(`INSERT INTO approve_tui_parks (approval_id, match_sha256, stopped_at, park_until, why) VALUES (?, ?, ?, ?, ?)`,
		p.ApprovalID, m.Key(), model.Epoch(c.Now()), model.Epoch(c.Now().Add(30*time.Minute)), "hook timeout"); err != nil {
		t.Fatal(err)
	}
	if rec, _, err := s.FindParked(ctx, m); err == nil {
		t.Fatalf("FindParked hands the approved proposal %s to the retry", rec.ApprovalID)
	}
	_, err := s.Take(ctx, p.ApprovalID, m, asker1)
	if err == nil {
		t.Fatalf("%s was taken through a parks row the agent wrote: no audited reservation or park exists", p.ApprovalID)
	}
	var rf *RefusedError
	if !errors.As(err, &rf) || rf.Code != RefusedNotParked {
		t.Fatalf("refused as %v", err)
	}
}

// A parked approval is taken; the agent sets taken_by back to NULL (the
// documented defence: Take reads the audit log's earlier take event) and
// renames that event (one more UPDATE on a table it can reach, with no
// trigger, read by Take without its chain). The same call asked again
// takes the approval a second time.
func TestAttackTakeTwiceAfterAuditRewrite(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	p := proposal("attack-retake-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
	if err := s.SubmitReserved(ctx, p, model.FromEpoch(*p.ExpiresAt), agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(30*time.Minute), "hook timeout", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	m := model.MatchOf(p)
	if _, err := s.Take(ctx, p.ApprovalID, m, asker1); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE approve_tui_parks SET taken_by = NULL, taken_at = NULL WHERE approval_id = ?`,
		`UPDATE approve_tui_audit SET outcome = 'refused' WHERE approval_id = ? AND event = 'take'`} {
		if _, err := db.Exec(q, p.ApprovalID); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Take(ctx, p.ApprovalID, m, asker2)
	if err == nil {
		t.Fatalf("%s was taken twice: the parks row and the take event were rewritten, and Take believed both", p.ApprovalID)
	}
	var rf *RefusedError
	if !errors.As(err, &rf) || rf.Code != RefusedAuditBroken {
		t.Fatalf("refused as %v", err)
	}
	// FindParked refuses it too: neither taken nor not taken is known.
	if _, _, err := s.FindParked(ctx, m); !errors.As(err, &rf) || rf.Code != RefusedAuditBroken {
		t.Fatalf("FindParked: %v", err)
	}
}

// A parks row whose window the agent stretched (park_until later than
// any the audit log recorded) is not believed: the take is refused, and
// FindParked does not hand the proposal over.
func TestTakeRefusesAWindowTheLogNeverRecorded(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	p := proposal("stretched-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
	if err := s.SubmitReserved(ctx, p, model.FromEpoch(*p.ExpiresAt), agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(10*time.Minute), "hook timeout", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE approve_tui_parks SET park_until = ? WHERE approval_id = ?`,
		model.Epoch(c.Now().Add(50*time.Minute)), p.ApprovalID); err != nil {
		t.Fatal(err)
	}
	m := model.MatchOf(p)
	if _, _, err := s.FindParked(ctx, m); !errors.Is(err, ErrNotFound) {
		t.Fatalf("FindParked: %v", err)
	}
	_, err := s.Take(ctx, p.ApprovalID, m, asker1)
	var rf *RefusedError
	if !errors.As(err, &rf) || rf.Code != RefusedParkOver || !strings.Contains(rf.Reason, "never recorded") {
		t.Fatalf("taken through a stretched window: %v", err)
	}
}
