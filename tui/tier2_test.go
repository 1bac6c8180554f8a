package tui

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// tier2Fixture is the demo file upgraded to Hermes' tier-2 revision (by
// the Python stand-in, as Hermes would), with tier-2 rows written the way
// Hermes writes them, at fixed times: t2-plain (pending), t2-armed (armed,
// one wrong phrase), t2-blocked (blocked at the limit), t2-locked (pending,
// its (verb, target) locked out).
func tier2Fixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	f.s.Close()
	script, _ := filepath.Abs("../storage/testdata/hermes_tier2.py")
	if out, err := exec.Command("python3", script, f.path, "upgrade").CombinedOutput(); err != nil {
		t.Skipf("python3: %v %s", err, out)
	}
	rows := []struct {
		id, verb, target, nonce, status, reason, event string
		attempts                                       int
	}{
		{"t2-plain-0001", "restart-tier2", "vaultwarden", "0427", "pending", "", "", 0},
		{"t2-armed-0001", "diag", "cloudflared", "1234", "pending_confirm", "", "$arm:example.org", 1},
		{"t2-blocked-01", "restart-tier2", "postgres", "5555", "blocked", "invalid_confirm_limit", "$b:example.org", 3},
		{"t2-locked-001", "restart-tier2", "postgres", "7777", "pending", "", "", 0},
	}
	created := model.Epoch(t0.Add(-time.Minute))
	for _, r := range rows {
		exp := model.Epoch(t0.Add(20 * time.Minute))
		p := &model.Proposal{ApprovalID: r.id, CreatedAt: created, ExpiresAt: &exp, Status: model.StatusPending,
			SessionKey: "agent:main:matrix:room", Requester: "@ops:example.org", Command: "systemctl restart " + r.target,
			Backend: "bash", RiskLevel: model.RiskTier2, RiskReason: "restart of a tier-2 service", PolicyDecision: "needs_approval",
			RequiresExplicitApproval: true, DefaultDecision: "deny", ExecutionStatus: model.ExecNotStarted,
			DisplayText: fmt.Sprintf("TIER 2: %s %s", r.verb, r.target), RequiresTextConfirm: true, Nonce: r.nonce, Verb: r.verb, Target: r.target}
		rawExec(t, f.path, `INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, terminal_reason,
			approval_event_id, approval_event_ts_ms, invalid_attempts, payload_json) VALUES (?, ?, ?, ?, NULLIF(?, ''), NULLIF(?, ''), ?, ?, ?)`,
			r.id, fmt.Sprint(created), fmt.Sprint(exp), r.status, r.reason, r.event, fmt.Sprint(t0.Add(-30*time.Second).UnixMilli()),
			fmt.Sprint(r.attempts), string(model.EncodePayload(p)))
	}
	rawExec(t, f.path, `INSERT INTO gateway_approval_lockouts (verb, target, expires_at, reason, created_at) VALUES (?, ?, ?, ?, ?)`,
		"restart-tier2", "postgres", fmt.Sprint(model.Epoch(t0.Add(10*time.Minute))), "invalid_confirm_limit", fmt.Sprint(model.Epoch(t0)))
	s, err := storage.Open(context.Background(), f.path, storage.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.s = s
	return f
}

// The console's tier-2 gate: the phrase prompt takes the phrase typed key
// by key (paste refused); a wrong phrase is counted and the prompt stays;
// the right one approves; a bare id never does; a locked-out pair says
// until when.
func TestTier2PhraseInTheConsole(t *testing.T) {
	f := tier2Fixture(t)
	m := console(t, f, operator, 120, 40)
	selectID(t, m, "t2-plain-0001")
	readAll(m)
	screenHas(t, m, "CRIT", "approved only by typing", "RESTART-TIER2", "VAULTWARDEN 0427")
	press(m, "a")
	if m.prompt == nil || m.prompt.phrase != "RESTART-TIER2 VAULTWARDEN 0427" {
		t.Fatalf("no phrase prompt:\n%s", m.View())
	}
	screenHas(t, m, "Tier-2: type the phrase to approve")
	paste(m, "RESTART-TIER2 VAULTWARDEN 0427")
	if m.prompt.input.Value() != "" {
		t.Fatal("a pasted phrase was taken")
	}
	typeText(m, "restart-tier2 vaultwarden 9999")
	press(m, "enter")
	if m.prompt == nil {
		t.Fatalf("a wrong phrase closed the prompt:\n%s", m.View())
	}
	screenHas(t, m, "wrong phrase 1 of 3")
	for range "9999" {
		press(m, "backspace")
	}
	typeText(m, "0427")
	press(m, "enter")
	screenHas(t, m, "approved t2-plain-0001")
	if r, _ := f.s.Get(context.Background(), "t2-plain-0001"); r.Status != model.StatusConsumed {
		t.Fatalf("status %s", r.Status)
	}

	// Locked out: the right phrase is refused, and says until when.
	readThenPress(t, m, "t2-locked-001", "a")
	typeText(m, "RESTART-TIER2 POSTGRES 7777")
	press(m, "enter")
	screenHas(t, m, "locked out until 03:10:00Z")
}

func TestGoldenTier2(t *testing.T) {
	scenes := []struct {
		name string
		run  func(t *testing.T, m *Model)
	}{
		{"tier2-phrase-prompt", func(t *testing.T, m *Model) {
			readThenPress(t, m, "t2-plain-0001", "a")
			typeText(m, "restart-tier2 vault")
		}},
		{"tier2-armed", func(t *testing.T, m *Model) {
			selectThenPress(t, m, "t2-armed-0001", "enter")
		}},
		{"tier2-blocked-in-history", func(t *testing.T, m *Model) { press(m, "tab") }},
		{"tier2-lockout", func(t *testing.T, m *Model) {
			readThenPress(t, m, "t2-locked-001", "a")
			typeText(m, "RESTART-TIER2 POSTGRES 7777")
			press(m, "enter")
		}},
	}
	for _, sc := range scenes {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			name := fmt.Sprintf("%s-%dx%d", sc.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				f := tier2Fixture(t)
				m := console(t, f, operator, size[0], size[1])
				sc.run(t, m)
				golden.Assert(t, name, m.View())
			})
		}
	}
}

// Decisions made outside approve-tui (Hermes' own block here, and a deny
// written straight into the table) show in the history, marked as outside
// the audit chain.
func TestHistoryShowsDecisionsMadeOutside(t *testing.T) {
	f := tier2Fixture(t)
	rawExec(t, f.path, `UPDATE gateway_approvals SET status = 'denied', consumed_at = ?, consumed_by = 'hermes:@ops', terminal_reason = 'denied_explicit' WHERE approval_id = 't2-armed-0001'`,
		fmt.Sprint(model.Epoch(t0)))
	m := console(t, f, operator, 200, 50)
	press(m, "tab")
	screenHas(t, m, "blocked outside the chain", "t2-blocked-01", "deny    outside the chain", "t2-armed-0001", "hermes:@ops",
		"decided outside approve-tui (read from the table) reason=denied_explicit")
}
