package headless

import (
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/storage"
)

// The fixture of the console's golden screens (golden.DemoFile), with the
// same actors, clock and colourless renderer as the console's tests, so that
// a tape's screens are the fixtures.
var t0 = golden.Clock

var operator, watcher, rival = golden.Operator, golden.Watcher, golden.Rival

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
