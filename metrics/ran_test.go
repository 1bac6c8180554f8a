package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The calls the store records as run without approval are counted by
// requester, whichever process recorded them, from when the metrics were
// made, each once; a requester outside the bounded set reads "other".
func TestMetricsRanWithoutApproval(t *testing.T) {
	ctx := context.Background()
	s, c := testStore(t)
	other, err := storage.Open(ctx, s.Path(), storage.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	hook := model.Actor{Surface: model.SurfaceHook, Name: "agent@test"}
	ran := func(id, requester string) {
		t.Helper()
		p := &model.Proposal{ApprovalID: id, CreatedAt: model.Epoch(c.Now()), ExpiresAt: model.F64(model.Epoch(c.Now().Add(time.Hour))),
			SessionKey: "agent:s1", Requester: requester, Command: "rm -rf build/", Cwd: "/srv/app", Backend: "local",
			RiskLevel: model.RiskHigh, RiskReason: "test", PolicyDecision: model.PolicyNeedsApproval, PolicyVersion: "test/1",
			RequiresExplicitApproval: true, DefaultDecision: model.DefaultDeny}
		if err := other.Submit(ctx, p, agentActor); err != nil {
			t.Fatal(err)
		}
		if _, err := other.RecordRanWithoutApproval(ctx, id, "reported run", hook); err != nil {
			t.Fatal(err)
		}
	}
	ran("before-start-1", "codex") // before the metrics: not counted
	m := New(Options{Store: s, Version: "test", Channels: []string{"hook"}, DecisionsFromStore: true})
	defer m.Close()
	base := listen(t, m)
	fams := scrape(t, base)
	for _, r := range []string{"claude-code", "codex", "gemini", "hermes"} {
		expect(t, fams, 0, RanWithoutApproval, "requester", r)
	}
	ran("ran-1", "codex")
	ran("ran-2", "codex")
	ran("ran-3", "claude-code")
	ran("ran-4", "evil\x1b[31m{requester=\"x\"}")
	// A second record of one call is refused by the store: not counted.
	if _, err := other.RecordRanWithoutApproval(ctx, "ran-1", "again", hook); err == nil {
		t.Fatal("recorded twice")
	}
	for range 2 { // each counted once, scrape after scrape
		fams = scrape(t, base)
		expect(t, fams, 2, RanWithoutApproval, "requester", "codex")
		expect(t, fams, 1, RanWithoutApproval, "requester", "claude-code")
		expect(t, fams, 1, RanWithoutApproval, "requester", Other)
		expect(t, fams, 0, RanWithoutApproval, "requester", "gemini")
		// Closing an open proposal for it is an expiry.
		expect(t, fams, 4, Decisions, "event", "expire", "outcome", "ok")
		checkLabels(t, fams, "hook")
	}
	// serve counts no such thing: it is not exported there.
	m2 := New(Options{Store: s, Version: "test"})
	defer m2.Close()
	if fams2 := scrape(t, listen(t, m2)); fams2[RanWithoutApproval] != nil {
		t.Fatal("exported without DecisionsFromStore")
	}
}
