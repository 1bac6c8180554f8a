package storage

import (
	"context"
	"path/filepath"
	"testing"
)

// Whether a console's detail is open goes through the store with its
// scroll, open or closed; a row written with the scroll alone (a console
// from before DetailOpen) reads as open.
func TestPresenceDetailOpen(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"), Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, want := range []Presence{
		{Console: "h:1:1", Actor: "alice", Name: "alice", Viewing: "abc", Scroll: 7, DetailOpen: true},
		{Console: "h:1:1", Actor: "alice", Name: "alice", Viewing: "abc", Scroll: 7},
		{Console: "h:1:1", Actor: "alice", Name: "alice", Viewing: "abc", Scroll: 0},
		{Console: "h:1:1", Actor: "alice", Name: "alice", Viewing: "abc", Scroll: 0, DetailOpen: true},
	} {
		if err := s.SetPresence(ctx, want); err != nil {
			t.Fatal(err)
		}
		ps, err := s.Presences(ctx)
		if err != nil || len(ps) != 1 {
			t.Fatalf("%v %v", ps, err)
		}
		if got := ps[0]; got.Scroll != want.Scroll || got.DetailOpen != want.DetailOpen {
			t.Fatalf("wrote scroll %d, open %v; read %d, %v", want.Scroll, want.DetailOpen, got.Scroll, got.DetailOpen)
		}
	}
	if _, err := s.bind().w.ExecContext(ctx, `UPDATE approve_tui_presence SET scroll = 4`); err != nil {
		t.Fatal(err)
	}
	if ps, err := s.Presences(ctx); err != nil || !ps[0].DetailOpen || ps[0].Scroll != 4 {
		t.Fatalf("a row with the scroll alone: %+v %v", ps, err)
	}
}
