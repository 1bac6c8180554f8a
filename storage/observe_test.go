package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// A decision observer is told how each run of the decision path under its
// context ended (decided, refused with the audited code), after the
// transaction: what it reads then is the outcome, committed. A context
// without one tells nobody.
func TestDecisionObserver(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("observed-1", "rm -rf /srv/a", model.RiskHigh, c.Now(), time.Hour))
	mustSubmit(t, s, proposal("observed-2", "rm -rf /srv/b", model.RiskHigh, c.Now(), time.Hour))
	var seen []Decision
	octx := WithDecisionObserver(ctx, func(d Decision) {
		if d.Event == EventDeny && d.Outcome == OutcomeOK {
			if r, err := s.Get(context.Background(), d.ID); err != nil || r.Status != model.StatusDenied {
				t.Errorf("the observer ran before the deny committed: %v %v", r, err)
			}
		}
		seen = append(seen, d)
	})
	if _, err := s.Deny(octx, "observed-1", alice, "no"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deny(octx, "observed-2", watcher, ""); err == nil {
		t.Fatal("a watcher denied")
	}
	if _, err := s.Consume(octx, "observed-1", "observed-1", alice); err == nil {
		t.Fatal("a denied proposal was approved")
	}
	if _, err := s.Deny(octx, "no-such-id", alice, ""); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := s.Deny(ctx, "observed-2", alice, ""); err != nil { // no observer
		t.Fatal(err)
	}
	want := []Decision{
		{Event: EventDeny, ID: "observed-1", Actor: alice, Outcome: OutcomeOK},
		{Event: EventDeny, ID: "observed-2", Actor: watcher, Outcome: OutcomeRefused, Reason: "read_only"},
		{Event: EventApprove, ID: "observed-1", Actor: alice, Outcome: OutcomeRefused, Reason: "not_pending"},
		{Event: EventDeny, ID: "no-such-id", Actor: alice, Outcome: OutcomeRefused, Reason: "not_found"},
	}
	if len(seen) != len(want) {
		t.Fatalf("observed %d decisions, want %d: %+v", len(seen), len(want), seen)
	}
	for i, w := range want {
		g := seen[i]
		if g.Event != w.Event || g.ID != w.ID || g.Actor != w.Actor || g.Outcome != w.Outcome || g.Reason != w.Reason || (g.Err == nil) != (w.Outcome == OutcomeOK) {
			t.Errorf("decision %d: %+v, want %+v", i, g, w)
		}
	}
}

// A store that cannot write refuses before any transaction: the observer
// is told that too.
func TestDecisionObserverReadOnlyStore(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("observed-ro", "rm -rf /srv/a", model.RiskHigh, c.Now(), time.Hour))
	ro, err := Open(ctx, s.DSN(), Options{ReadOnly: true, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var seen []Decision
	octx := WithDecisionObserver(ctx, func(d Decision) { seen = append(seen, d) })
	if _, err := ro.Deny(octx, "observed-ro", alice, ""); err == nil {
		t.Fatal("a read-only store denied")
	}
	if len(seen) != 1 || seen[0].Outcome != OutcomeRefused || seen[0].Reason != "read_only" {
		t.Fatalf("observed %+v", seen)
	}
}
