package storage

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// hostile runs a python3 sqlite3 script against the store's file, as the
// agent (any process of the user's) can.
func hostile(t *testing.T, path, script string, args ...any) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	py := "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], timeout=5)\nargs = sys.argv[2:]\n" + script + "\nc.commit()\n"
	cmd := []string{"-c", py, path}
	for _, a := range args {
		cmd = append(cmd, fmtArg(a))
	}
	if out, err := exec.Command("python3", cmd...).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v: %s", err, out)
	}
}

func fmtArg(a any) string {
	switch v := a.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		return v
	}
	panic("arg")
}

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
	s, c, _ := newRawStore(t)
	p := proposal("attack-forged-own-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
	mustSubmit(t, s, p)
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	m := model.MatchOf(p)
	hostile(t, s.Path(), `c.execute("INSERT INTO approve_tui_parks (approval_id, match_sha256, stopped_at, park_until, why) VALUES (?, ?, ?, ?, ?)",
    (args[0], args[1], float(args[2]), float(args[3]), "hook timeout"))`,
		p.ApprovalID, m.Key(), model.Epoch(c.Now()), model.Epoch(c.Now().Add(30*time.Minute)))
	if rec, _, err := s.FindParked(ctx, m); err == nil {
		t.Logf("FindParked hands the approved proposal %s to the retry", rec.ApprovalID)
	}
	if _, err := s.Take(ctx, p.ApprovalID, m, asker1); err == nil {
		t.Fatalf("%s was taken through a parks row the agent wrote: no audited reservation or park exists", p.ApprovalID)
	}
}

// A parked approval is taken; the agent sets taken_by back to NULL (the
// documented defence: Take reads the audit log's earlier take event) and
// renames that event (one more UPDATE on a table it can reach, with no
// trigger, read by Take without its chain). The same call asked again
// takes the approval a second time.
func TestAttackTakeTwiceAfterAuditRewrite(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newRawStore(t)
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
	hostile(t, s.Path(), `c.execute("UPDATE approve_tui_parks SET taken_by = NULL, taken_at = NULL WHERE approval_id = ?", (args[0],))
c.execute("UPDATE approve_tui_audit SET outcome = 'refused' WHERE approval_id = ? AND event = 'take'", (args[0],))`, p.ApprovalID)
	if _, err := s.Take(ctx, p.ApprovalID, m, asker2); err == nil {
		t.Fatalf("%s was taken twice: the parks row and the take event were rewritten, and Take believed both", p.ApprovalID)
	}
}
