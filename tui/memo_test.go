package tui

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/approve-tui/approve-tui/model"
)

// colourRenderer renders in 256 colours, as most terminals are.
func colourRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	return r
}

// fresh is the frame drawn from scratch, with nothing kept from the frames
// before.
func fresh(m *Model) string {
	kept, header, list, frame, drawn := m.memo, m.header, m.list, m.frame, m.drawn
	m.memo, m.header.line, m.list.memo = viewMemo{}, "", listMemo{}
	m.render()
	v := m.View()
	m.memo, m.header, m.list, m.frame, m.drawn = kept, header, list, frame, drawn
	return v
}

// memoConsole is a console in 256 colours on a clock the test moves (now),
// its first frame drawn; same fails the test, naming the step, where the
// frame drawn from what the frames before kept differs from a fresh one.
func memoConsole(t *testing.T, f *fixture, actor model.Actor, size [2]int) (m *Model, now *time.Time, same func(step string)) {
	clock := t0
	m = New(Options{Store: f.s, Actor: actor, Renderer: colourRenderer(),
		Now: func() time.Time { return clock }, NoWatch: true, Label: "memo"})
	m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
	Settle(m, m.Init())
	m.View()
	return m, &clock, func(step string) {
		t.Helper()
		if got, want := m.View(), fresh(m); got != want {
			t.Fatalf("%s: the frame differs from one drawn from scratch:\n%s\nwant\n%s", step, got, want)
		}
	}
}

// The frames drawn from parts of the frames before are the frames drawn
// from scratch: every golden scenario in 256 colours, at three sizes, then
// as the clock moves on (a second, a minute, an hour), after a resize and
// a few keys.
func TestViewMemoDrawsWhatAFreshConsoleDraws(t *testing.T) {
	for _, sc := range scenarios() {
		for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				f := newFixture(t)
				actor := operator
				if sc.actor != nil && sc.actor() == "watcher" {
					actor = watcher
				}
				m, now, same := memoConsole(t, f, actor, size)
				sc.run(t, f, m)
				same("scenario")
				for _, d := range []time.Duration{time.Second, time.Second, 59 * time.Second, time.Hour} {
					*now = now.Add(d)
					m.Update(tickMsg{at: *now})
					same(fmt.Sprintf("clock +%v", d))
				}
				m.Update(tea.WindowSizeMsg{Width: size[0] + 7, Height: size[1] + 3})
				same("resized")
				for _, k := range []string{"down", "up", "pgdown", "esc"} {
					_, cmd := m.Update(keyMsg(k))
					Settle(m, cmd)
					same("key " + k)
				}
			})
		}
	}
}

// model.TerminalSafe works line by line: the frame guarded a line at a
// time (View) is the frame guarded whole.
func TestTerminalSafeByLine(t *testing.T) {
	f := newFixture(t)
	m := New(Options{Store: f.s, Actor: operator, Renderer: colourRenderer(),
		Now: fixedNow, NoWatch: true, Label: "memo"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	Settle(m, m.Init())
	for _, name := range []string{"escapes", "unicode", "long", "diff"} {
		selectThenPress(t, m, f.ids[name], "enter")
		raw := strings.Join(m.frameLines(), "\n")
		if got, want := m.View(), model.TerminalSafe(raw); got != want {
			t.Fatalf("%s: by line\n%q\nwhole\n%q", name, got, want)
		}
		if !strings.Contains(raw, "\x1b[") {
			t.Fatal("no colour in the frame: the renderer is not the one meant")
		}
		press(m, "esc")
	}
}
