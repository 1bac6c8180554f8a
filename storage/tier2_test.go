package storage

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// tier2Py drives testdata/hermes_tier2.py: Hermes' tier-2 SQL from Python,
// a connection per operation.
type tier2Py struct {
	t      *testing.T
	script string
	db     string
}

// openUpgraded opens a new file that Hermes' Python side then upgraded to
// its tier-2 revision, with the real clock (Python writes with it).
func openUpgraded(t *testing.T) (*Store, *tier2Py) {
	t.Helper()
	path := tempDB(t)
	openAt(t, path, newClock()).Close()
	py := newTier2Py(t, path)
	py.run("upgrade")
	s := openAt(t, path, newClock())
	s.now = time.Now
	return s, py
}

func newTier2Py(t *testing.T, db string) *tier2Py {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is required for the Hermes interop tests: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "hermes_tier2.py"))
	if err != nil {
		t.Fatal(err)
	}
	return &tier2Py{t: t, script: script, db: db}
}

func (p *tier2Py) run(args ...string) string {
	p.t.Helper()
	if IsPostgresURL(p.db) {
		return tier2OnPostgres(p.t, p.db, args...)
	}
	out, err := exec.Command("python3", append([]string{p.script, p.db}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("hermes_tier2.py %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (p *tier2Py) get(id string) map[string]any {
	p.t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(p.run("get", id)), &m); err != nil {
		p.t.Fatal(err)
	}
	return m
}

// A file of the first revision, upgraded by Hermes to the tier-2 one while
// approve-tui is not running: every tier-2 state reads truthfully, a bare
// approve is refused from the store, armed rows are listed and deniable
// (terminal_reason written as Hermes does), armed rows expire with
// expired_no_confirm, and a blocked row is a row, not a corrupt one.
func TestTier2FileFromHermes(t *testing.T) {
	path := tempDB(t)
	c := newClock()
	s := openAt(t, path, c) // approve-tui made it: first revision
	if s.bind().tier2.Load() {
		t.Fatal("a new file is tier-2")
	}
	s.Close()
	py := newTier2Py(t, path)
	py.run("upgrade")
	s = openAt(t, path, newClock())
	s.now = time.Now // Python writes with the real clock
	if !s.bind().tier2.Load() {
		t.Fatal("the upgraded file is not read as tier-2")
	}

	plain := py.run("submit", "restart-tier2", "vaultwarden", "0427")
	armed := py.run("submit", "diag", "cloudflared", "1234")
	if py.run("arm", armed, "$event:example.org", "1796000000000") != "ok" {
		t.Fatal("arm")
	}
	blocked := py.run("submit", "restart-tier2", "postgres", "5555")
	py.run("arm", blocked, "$e2", "1796000000001")
	for i := 0; i < 3; i++ {
		py.run("invalid", blocked, "3")
	}
	py.run("block", blocked, "invalid_confirm_limit")

	r, err := s.Get(ctx, plain)
	if err != nil || r.Corrupt != "" || r.EffectiveRisk != model.RiskTier2 || !r.RequiresTextConfirm || r.Phrase() != "RESTART-TIER2 VAULTWARDEN 0427" {
		t.Fatalf("plain tier-2 row: %+v %v", r, err)
	}
	a, _ := s.Get(ctx, armed)
	if a.Corrupt != "" || a.EffectiveStatus != model.StatusPendingConfirm || a.ApprovalEventID != "$event:example.org" ||
		a.ApprovalEventTsMs == nil || *a.ApprovalEventTsMs != 1796000000000 {
		t.Fatalf("armed row: %+v", a)
	}
	b, _ := s.Get(ctx, blocked)
	if b.Corrupt != "" || b.Status != model.StatusBlocked || b.TerminalReason != "invalid_confirm_limit" || b.InvalidAttempts != 3 {
		t.Fatalf("blocked row: corrupt=%q status=%s reason=%q attempts=%d", b.Corrupt, b.Status, b.TerminalReason, b.InvalidAttempts)
	}

	// Open rows are listed (armed included), counted and signed.
	list, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range list {
		got[r.ApprovalID] = true
	}
	if !got[plain] || !got[armed] || got[blocked] {
		t.Fatalf("listed %v", got)
	}
	if n, err := s.CountPending(ctx); err != nil || n != 2 {
		t.Fatalf("count %d %v", n, err)
	}
	if sig, err := s.PendingSignature(ctx); err != nil || sig.Count != 2 {
		t.Fatalf("signature %+v %v", sig, err)
	}

	// No bare approve of a text-confirm row, pending or armed.
	for _, id := range []string{plain, armed} {
		_, err := s.Consume(ctx, id, id, alice)
		var rf *RefusedError
		if !errors.As(err, &rf) || rf.Code != RefusedTextConfirm {
			t.Fatalf("bare approve of %s: %v", id, err)
		}
		if st := py.get(id)["status"]; st != "pending" && st != "pending_confirm" {
			t.Fatalf("%s is %v after a refused approve", id, st)
		}
	}

	// Deny an armed row: Hermes reads denied, denied_explicit.
	if _, err := s.Deny(ctx, armed, alice, "not now"); err != nil {
		t.Fatal(err)
	}
	if m := py.get(armed); m["status"] != "denied" || m["terminal_reason"] != "denied_explicit" {
		t.Fatalf("python reads %v", m)
	}

	// An armed row past its expiry: approve-tui's expire stamps it.
	short := py.run("submit", "diag", "vault", "4321")
	if py.run("arm", short, "$e3", "1796000000002") != "ok" {
		t.Fatal("arm")
	}
	// Its expiry passes (set back rather than waited for: a loaded machine
	// must not make the arm itself come too late).
	mustExec(t, rawDB(t, s.DSN()), `UPDATE gateway_approvals SET expires_at = ? WHERE approval_id = ?`,
		float64(time.Now().Add(-time.Second).UnixNano())/1e9, short)
	ids, err := s.ExpireDue(ctx, alice)
	if err != nil || len(ids) != 1 || ids[0] != short {
		t.Fatalf("expire: %v %v", ids, err)
	}
	if m := py.get(short); m["status"] != "expired" || m["terminal_reason"] != "expired_no_confirm" {
		t.Fatalf("python reads %v", m)
	}
	// And Hermes' own deny of the plain row reads as denied here.
	if py.run("deny", plain, "@ops:example.org", "denied_explicit") != "ok" {
		t.Fatal("python deny")
	}
	if r, _ := s.Get(ctx, plain); r.Status != model.StatusDenied || r.TerminalReason != "denied_explicit" {
		t.Fatalf("after Hermes' deny: %s %q", r.Status, r.TerminalReason)
	}
}

// The phrase gate against Hermes' Python side: a wrong phrase arms and
// counts, the right one consumes exactly once, three wrong ones block and
// lock out (seen by Python), a lockout refuses even the right phrase until
// cleared, and a race with Python's consume_confirmed has one winner.
func TestTier2PhraseGate(t *testing.T) {
	s, py := openUpgraded(t)

	ok := py.run("submit", "restart-tier2", "vaultwarden", "0427")
	r, _ := s.Get(ctx, ok)
	_, err := s.ConsumePhrase(ctx, ok, "RESTART-TIER2 VAULTWARDEN 9999", r.PayloadSHA256, PhraseOptions{}, alice)
	var rf *RefusedError
	if !errors.As(err, &rf) || rf.Code != RefusedPhraseMismatch || !strings.Contains(rf.Reason, "1 of 3") {
		t.Fatalf("wrong phrase: %v", err)
	}
	if m := py.get(ok); m["status"] != "pending_confirm" || m["invalid_attempts"].(float64) != 1 || !strings.HasPrefix(m["approval_event_id"].(string), "approve-tui:") {
		t.Fatalf("python reads %v", m)
	}
	rec, err := s.ConsumePhrase(ctx, ok, "  restart-tier2  vaultwarden 0427", r.PayloadSHA256, PhraseOptions{}, alice)
	if err != nil || rec.Status != model.StatusConsumed {
		t.Fatalf("right phrase: %v", err)
	}
	if m := py.get(ok); m["status"] != "consumed" {
		t.Fatalf("python reads %v", m)
	}
	if _, err := s.ConsumePhrase(ctx, ok, "RESTART-TIER2 VAULTWARDEN 0427", "", PhraseOptions{}, bob); !errors.As(err, new(*NotPendingError)) {
		t.Fatalf("second approve: %v", err)
	}

	// Three wrong phrases: blocked, locked out, both seen by Python.
	bad := py.run("submit", "restart-tier2", "postgres", "1111")
	for i := 1; i <= 3; i++ {
		_, err := s.ConsumePhrase(ctx, bad, "RESTART-TIER2 POSTGRES 2222", "", PhraseOptions{}, alice)
		want := RefusedPhraseMismatch
		if i == 3 {
			want = RefusedPhraseLimit
		}
		if !errors.As(err, &rf) || rf.Code != want {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	if m := py.get(bad); m["status"] != "blocked" || m["terminal_reason"] != "invalid_confirm_limit" {
		t.Fatalf("python reads %v", m)
	}
	if got := py.run("check", "restart-tier2", "postgres"); got == "none" {
		t.Fatal("python sees no lockout")
	}
	// The lockout refuses another proposal for the same pair, even with
	// its right phrase; clearing it (audited) lets it through.
	next := py.run("submit", "restart-tier2", "postgres", "3333")
	if _, err := s.ConsumePhrase(ctx, next, "RESTART-TIER2 POSTGRES 3333", "", PhraseOptions{}, alice); !errors.As(err, &rf) || rf.Code != RefusedLockedOut {
		t.Fatalf("locked out: %v", err)
	}
	if ls, err := s.Lockouts(ctx); err != nil || len(ls) != 1 || ls[0].Verb != "restart-tier2" || ls[0].Target != "postgres" {
		t.Fatalf("lockouts %+v %v", ls, err)
	}
	if err := s.ClearLockout(ctx, "restart-tier2", "postgres", watcher); !errors.As(err, new(*ReadOnlyError)) {
		t.Fatalf("a watcher cleared a lockout: %v", err)
	}
	if err := s.ClearLockout(ctx, "restart-tier2", "postgres", alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsumePhrase(ctx, next, "RESTART-TIER2 POSTGRES 3333", "", PhraseOptions{}, alice); err != nil {
		t.Fatalf("after clearing: %v", err)
	}

	// A race between Python's consume_confirmed and ours: one winner.
	for i := 0; i < 10; i++ {
		id := py.run("submit", "diag", "race", "0001")
		py.run("arm", id, "$ev", "1796000000000")
		cmd := exec.Command("python3", py.script, py.db, "race", "hermes:@ops", id)
		stdin, _ := cmd.StdinPipe()
		out := &strings.Builder{}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // python is ready
		stdin.Write([]byte("go\n"))
		_, ours := s.ConsumePhrase(ctx, id, "DIAG RACE 0001", "", PhraseOptions{}, alice)
		cmd.Wait()
		theirs := strings.Contains(out.String(), "won")
		if (ours == nil) == theirs {
			t.Fatalf("race %d: ours %v, python %q", i, ours, out.String())
		}
	}
}

// Ids Hermes accepts (a space, non-ASCII) are valid rows, not corrupt ones;
// they are deny-only, saying why.
func TestUntypableIDsAreValidAndDenyOnly(t *testing.T) {
	s, c := newStore(t)
	db := rawDB(t, s.Path())
	for _, id := range []string{"with a space 01", "approval-café-01", "Ω-lookalike-0001"} {
		p := proposal(id, "ls /srv", model.RiskLow, c.Now(), time.Hour)
		mustExec(t, db, `INSERT INTO gateway_approvals (approval_id, created_at, expires_at, payload_json) VALUES (?, ?, ?, ?)`,
			id, p.CreatedAt, *p.ExpiresAt, string(model.EncodePayload(p)))
		r, err := s.Get(ctx, id)
		if err != nil || r.Corrupt != "" {
			t.Fatalf("%q: corrupt %q %v", id, r.Corrupt, err)
		}
		_, err = s.Consume(ctx, id, id, alice)
		var rf *RefusedError
		if !errors.As(err, &rf) || rf.Code != RefusedUntypableID {
			t.Fatalf("%q: %v", id, err)
		}
		if _, err := s.Deny(ctx, id, alice, ""); err != nil {
			t.Fatalf("deny %q: %v", id, err)
		}
	}
}

// Hermes upgrades the file to the tier-2 revision while approve-tui has it
// open: the next listing notices, and armed rows are listed, shown and
// denied as on a file that was tier-2 from the start.
func TestTier2UpgradeWhileOpen(t *testing.T) {
	path := tempDB(t)
	s := openAt(t, path, newClock())
	s.now = time.Now
	if s.Tier2() {
		t.Fatal("tier-2 before the upgrade")
	}
	// Another program's commit first: the store looks at the schema after
	// it, and must look again after the upgrade (schema_version moved).
	raw := rawDB(t, path)
	mustExec(t, raw, `CREATE TABLE another_program (x INTEGER)`)
	raw.Close()
	if _, err := s.List(ctx, ListOptions{}); err != nil || s.Tier2() {
		t.Fatalf("list before the upgrade: %v, tier-2 %v", err, s.Tier2())
	}
	py := newTier2Py(t, path)
	py.run("upgrade")
	armed := py.run("submit", "diag", "cloudflared", "1234")
	py.run("arm", armed, "$ev", "1796000000000")
	list, err := s.List(ctx, ListOptions{})
	if err != nil || len(list) != 1 || list[0].ApprovalID != armed || list[0].Status != model.StatusPendingConfirm {
		t.Fatalf("list after the upgrade: %v %v", list, err)
	}
	if !s.Tier2() {
		t.Fatal("the upgrade was not noticed")
	}
	if r, _ := s.Get(ctx, armed); r.ApprovalEventID != "$ev" {
		t.Fatalf("armed row: %+v", r)
	}
	rec, err := s.Deny(ctx, armed, alice, "")
	if err != nil || rec.TerminalReason != "denied_explicit" {
		t.Fatalf("deny: %v", err)
	}
	if m := py.get(armed); m["terminal_reason"] != "denied_explicit" {
		t.Fatalf("python reads %v", m)
	}
}

// The pending list reads through the rank index on files of both
// revisions (a SELECT list naming tier-2 columns on a first-revision file
// once made every catch-up fail, and every listing a full scan).
func TestRankIndexOnBothRevisions(t *testing.T) {
	path := tempDB(t)
	s := openAt(t, path, newClock())
	mustSubmit(t, s, proposal("rankfirst1", "rm -rf /a", model.RiskHigh, s.Now(), time.Hour))
	if ok, _ := s.bind().syncRankOr(ctx, false); !ok {
		t.Fatal("no rank index on a first-revision file")
	}
	s.Close()
	newTier2Py(t, path).run("upgrade")
	s = openAt(t, path, newClock())
	mustSubmit(t, s, proposal("ranktier21", "rm -rf /b", model.RiskHigh, s.Now(), time.Hour))
	if ok, _ := s.bind().syncRankOr(ctx, false); !ok {
		t.Fatal("no rank index on a tier-2 file")
	}
}
