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
	short := py.run("submit", "diag", "vault", "4321", "0.3")
	py.run("arm", short, "$e3", "1796000000002")
	time.Sleep(400 * time.Millisecond)
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
