package headless

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

// The fixture of the console's golden screens (see tui's helpers): a real
// store file seeded with the demo set for seed 1 at t0, the same actors,
// clock and colourless renderer, so that a tape's screens are the fixtures.
var t0 = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

var (
	operator = model.Actor{Surface: model.SurfaceTUI, Name: "oncall@ops-1"}
	watcher  = model.Actor{Surface: model.SurfaceSSH, Name: "pairing-guest", ReadOnly: true}
	rival    = model.Actor{Surface: model.SurfaceCLI, Name: "alice@laptop"}
)

type fixture struct {
	path string
	s    *storage.Store
	ids  map[string]string
}

func fixedNow() time.Time { return t0 }

func newFixture(t testing.TB) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := demo.Seed(context.Background(), s, 1, t0); err != nil {
		t.Fatal(err)
	}
	f := &fixture{path: path, s: s, ids: map[string]string{}}
	for _, e := range demo.Catalogue(1) {
		f.ids[e.Name] = e.ID
	}
	return f
}

func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

func status(t *testing.T, f *fixture, id string) *storage.Record {
	t.Helper()
	rec, err := f.s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func auditCount(t *testing.T, f *fixture, id, event, outcome, reason string) int {
	t.Helper()
	evs, err := f.s.Audit(context.Background(), storage.AuditQuery{ApprovalID: id, Limit: 100})
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
