package storage

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// mustSubmitReserved submits p with its reservation, as every waiter
// that may park it does (a park counts only on a reserved proposal).
func mustSubmitReserved(t *testing.T, s *Store, p *model.Proposal) {
	t.Helper()
	if err := s.SubmitReserved(context.Background(), p, model.FromEpoch(*p.ExpiresAt), agent); err != nil {
		t.Fatal(err)
	}
}

// appendForgedEvent is what an agent that can write the store does to add
// an audit event: the hash is SHA-256 of public fields (no key), so it
// appends one that links to the head, and moves the head. Nothing is
// rewritten: `audit --verify` finds an intact chain.
func appendForgedEvent(t *testing.T, db *pool, e AuditEvent) {
	t.Helper()
	var head string
	if err := db.QueryRow(`SELECT value FROM approve_tui_meta WHERE key = 'audit_head'`).Scan(&head); err != nil {
		t.Fatal(err)
	}
	seq, prev, err := parseHead(head)
	if err != nil {
		t.Fatal(err)
	}
	e.Seq, e.PrevHash = seq+1, prev
	e.Hash = eventHash(&e)
	if _, err := db.Exec(`INSERT INTO approve_tui_audit (seq, at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.Seq, e.At, e.ApprovalID, e.Event, e.Outcome, e.Reason, e.Actor, e.Surface,
		e.DetailRaw, e.PrevHash, e.Hash); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE approve_tui_meta SET value = ? WHERE key = 'audit_head'`,
		strconv.FormatInt(e.Seq, 10)+":"+e.Hash); err != nil {
		t.Fatal(err)
	}
}

// A parks row written by the agent, one step further: an approved
// proposal that was never reserved or parked (its own waiter answered it,
// parking off or no TTL; no take is recorded for such an allow). The agent
// writes the parks row with the call's own key AND appends a `park` event
// for it to the audit chain: the chain's hash is unkeyed, so an appended
// event verifies, and `approve-tui audit --verify` says the log is intact.
// Take believes a park only on a proposal whose verified submit reserved
// it (every waiter that parks submitted with its reservation): the
// appended park is not believed. What the store cannot see (docs/parking.md,
// "What the audit check cannot do"): a chain rewritten from the submit on.
func TestAttackTakeThroughForgedParkAppendedToTheChain(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	p := proposal("attack-append-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
	mustSubmit(t, s, p)
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	// Its own waiter let the call through here (no parks row: no take).
	m := model.MatchOf(p)
	until := model.Epoch(c.Now().Add(30 * time.Minute))
	if _, err := db.Exec(`INSERT INTO approve_tui_parks (approval_id, match_sha256, stopped_at, park_until, why) VALUES (?, ?, ?, ?, ?)`,
		p.ApprovalID, m.Key(), model.Epoch(c.Now()), until, "hook timeout"); err != nil {
		t.Fatal(err)
	}
	appendForgedEvent(t, db, AuditEvent{At: model.Epoch(c.Now()), ApprovalID: p.ApprovalID, Event: EventPark, Outcome: OutcomeOK,
		Actor: "dev@laptop", Surface: "hook", DetailRaw: `{"until":` + strconv.FormatFloat(until, 'g', -1, 64) + `}`})
	verifyOK(t, s) // the forgery is invisible to the chain check
	if _, err := s.Take(ctx, p.ApprovalID, m, asker1); refusedCode(err) != RefusedNotParked {
		t.Fatalf("%s, allowed once by its own waiter, taken again through a parks row and one appended park event "+
			"(both written by the agent, the audit chain verifies): %v", p.ApprovalID, err)
	}
	if _, _, err := s.FindParked(ctx, m); !errors.Is(err, ErrNotFound) {
		t.Fatalf("FindParked: %v", err)
	}
}

// RecordRanWithoutApproval decides "approved, never taken" from the parks
// row alone (taken_by), not from the audit log that Take and FindParked
// now believe. The agent's parks row decides what the record says:
//   - hide: the agent ran the command while its parked approval was
//     untaken (it ran without approval) and writes taken_by on the row;
//     the report is refused ("handed to a call") and the agent side falls
//     back to RecordExecution(executed), which accepts it: the record says
//     the operator's approval let it through, no page, no metric.
//   - frame: a call let through on a take and run writes taken_by NULL;
//     its truthful report becomes "ran without approval" and is paged.
func TestAttackRanWithoutApprovalBelievesTheRawParksRow(t *testing.T) {
	ctx := context.Background()
	parked := func(t *testing.T) (*Store, *pool, *model.Proposal) {
		s, c, db := newRawStore(t)
		p := proposal("attack-rwa-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
		if err := s.SubmitReserved(ctx, p, model.FromEpoch(*p.ExpiresAt), agent); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(30*time.Minute), "hook timeout", agent); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
			t.Fatal(err)
		}
		return s, db, p
	}
	t.Run("hide", func(t *testing.T) {
		s, db, p := parked(t)
		if _, err := db.Exec(`UPDATE approve_tui_parks SET taken_by = 'claude-code (call x)', taken_at = 1 WHERE approval_id = ?`, p.ApprovalID); err != nil {
			t.Fatal(err)
		}
		if _, rerr := s.RecordRanWithoutApproval(ctx, p.ApprovalID, "ran in Claude Code (PostToolUse)", agent); rerr != nil {
			if err := s.RecordExecution(ctx, p.ApprovalID, model.ExecExecuted, "ran in Claude Code (PostToolUse)", agent); err == nil {
				t.Fatalf("%s ran while its approval was untaken (the audit log records no take); a taken_by the agent wrote "+
					"turns it into an approved execution: RecordRanWithoutApproval refused (%v), RecordExecution(executed) accepted", p.ApprovalID, rerr)
			}
			t.Fatalf("refused: %v", rerr)
		}
	})
	t.Run("frame", func(t *testing.T) {
		s, db, p := parked(t)
		if _, err := s.Take(ctx, p.ApprovalID, model.MatchOf(p), asker1); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`UPDATE approve_tui_parks SET taken_by = NULL, taken_at = NULL WHERE approval_id = ?`, p.ApprovalID); err != nil {
			t.Fatal(err)
		}
		if rec, err := s.RecordRanWithoutApproval(ctx, p.ApprovalID, "ran in Claude Code (PostToolUse)", agent); err == nil {
			t.Fatalf("%s was taken (the audit log says so) and ran on its approval; with taken_by cleared it is recorded %s",
				p.ApprovalID, rec.ExecutionStatus)
		}
	})
}

// The allow of a proposal its own waiter answers (no parks row) is one
// take: the second is refused as taken, by whom the take event says,
// whatever the parks table holds; one with a parks row is taken with Take.
func TestTakeAnsweredOnce(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	p := proposal("answered-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
	mustSubmit(t, s, p)
	if err := s.TakeAnswered(ctx, p.ApprovalID, asker1); refusedCode(err) != RefusedNotApproved {
		t.Fatalf("pending: %v", err)
	}
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	if err := s.TakeAnswered(ctx, p.ApprovalID, asker1); err != nil {
		t.Fatal(err)
	}
	var tk *TakenError
	if err := s.TakeAnswered(ctx, p.ApprovalID, asker2); !errors.As(err, &tk) || tk.By != asker1.String() {
		t.Fatalf("second: %v", err)
	}
	// A parks row the agent writes afterwards changes nothing.
	if _, err := db.Exec(`INSERT INTO approve_tui_parks (approval_id, match_sha256, stopped_at, park_until, why) VALUES (?, ?, ?, ?, ?)`,
		p.ApprovalID, model.MatchOf(p).Key(), model.Epoch(c.Now()), model.Epoch(c.Now().Add(time.Hour)), "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, p.ApprovalID, model.MatchOf(p), asker2); !errors.As(err, &tk) || tk.By != asker1.String() {
		t.Fatalf("take through a forged row: %v", err)
	}
	verifyOK(t, s)
}
