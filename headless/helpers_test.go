package headless

import (
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The fixture of the console's golden screens (golden.DemoFile), with the
// same actors, clock and colourless renderer as the console's tests, so that
// a tape's screens are the fixtures.
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
	path, s, ids := golden.DemoFile(t, t0)
	return &fixture{path: path, s: s, ids: ids}
}

func asciiRenderer() *lipgloss.Renderer { return golden.AsciiRenderer() }

func status(t *testing.T, f *fixture, id string) *storage.Record { return golden.Record(t, f.s, id) }

func auditCount(t *testing.T, f *fixture, id, event, outcome, reason string) int {
	return golden.AuditCount(t, f.s, id, event, outcome, reason)
}
