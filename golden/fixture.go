package golden

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/approve-tui/approve-tui/demo"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// DemoFile is the fixture the golden screens are made from: a new store
// file in t's temporary directory, seeded with the demo set for seed 1 at
// now, opened with now as its clock (closed when t ends). ids maps each
// demo proposal's name to its approval id.
func DemoFile(t testing.TB, now time.Time) (path string, s *storage.Store, ids map[string]string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "state.db")
	clock := func() time.Time { return now }
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := demo.Seed(context.Background(), s, 1, now); err != nil {
		t.Fatal(err)
	}
	ids = map[string]string{}
	for _, e := range demo.Catalogue(1) {
		ids[e.Name] = e.ID
	}
	return path, s, ids
}

// Record reads proposal id, failing t when it cannot.
func Record(t testing.TB, s *storage.Store, id string) *storage.Record {
	t.Helper()
	rec, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// AuditCount counts proposal id's audit events of event and outcome (and
// reason, when not "").
func AuditCount(t testing.TB, s *storage.Store, id, event, outcome, reason string) int {
	t.Helper()
	evs, err := s.Audit(context.Background(), storage.AuditQuery{ApprovalID: id, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Event == event && e.Outcome == outcome && (reason == "" || e.Reason == reason) {
			n++
		}
	}
	return n
}

// AsciiRenderer renders without colour, as golden screens are kept.
func AsciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

// Clock is the fixed time of every golden screen; Operator decides in
// them, Watcher only looks, Rival is another operator who decides first.
var (
	Clock    = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	Operator = model.Actor{Surface: model.SurfaceTUI, Name: "oncall@ops-1", Person: "oncall"}
	Watcher  = model.Actor{Surface: model.SurfaceSSH, Name: "pairing-guest", ReadOnly: true}
	Rival    = model.Actor{Surface: model.SurfaceCLI, Name: "alice@laptop", Person: "alice"}
)
