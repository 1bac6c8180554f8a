package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// t0 is the fixed clock of every console test.
var t0 = golden.Clock

var operator, watcher, rival = golden.Operator, golden.Watcher, golden.Rival

// fixture is a real store file seeded with the demo set for seed 1 at t0.
type fixture struct {
	path string
	s    *storage.Store
	ids  map[string]string // demo name -> approval id
}

func fixedNow() time.Time { return t0 }

func newFixture(t testing.TB) *fixture {
	t.Helper()
	path, s, ids := golden.DemoFile(t, t0)
	return &fixture{path: path, s: s, ids: ids}
}

// asciiRenderer renders without colour, as golden screens are kept.
func asciiRenderer() *lipgloss.Renderer { return golden.AsciiRenderer() }

// console opens the console on f at w x h, loaded and settled.
func console(t testing.TB, f *fixture, actor model.Actor, w, h int) *Model {
	t.Helper()
	m := New(Options{Store: f.s, Actor: actor, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, Label: "demo seed 1 (test)"})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	Settle(m, m.Init())
	return m
}

// consoleOnClock is a console on s whose clock is *now, which the test
// moves; nothing watches the store, and it says nothing of itself.
func consoleOnClock(s *storage.Store, now *time.Time, label string, w, h int) *Model {
	m := New(Options{Store: s, Actor: operator, Renderer: asciiRenderer(), Now: func() time.Time { return *now },
		NoWatch: true, NoPresence: true, Label: label})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	Settle(m, m.Init())
	return m
}

// keyMsg makes the message a terminal sends for a named key or one rune.
func keyMsg(k string) tea.KeyMsg {
	names := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "up": tea.KeyUp, "down": tea.KeyDown,
		"pgdown": tea.KeyPgDown, "pgup": tea.KeyPgUp, "home": tea.KeyHome, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace, "ctrl+c": tea.KeyCtrlC, "left": tea.KeyLeft, "right": tea.KeyRight,
	}
	if kt, ok := names[k]; ok {
		return tea.KeyMsg{Type: kt}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// press sends keys one by one and settles after each, then draws the frame
// as a terminal would (so that every test draws through the frames before,
// see viewMemo).
func press(m *Model, keys ...string) {
	for _, k := range keys {
		_, cmd := m.Update(keyMsg(k))
		Settle(m, cmd)
		m.View()
	}
}

// typeText types s a character at a time, as a person does.
func typeText(m *Model, s string) {
	for _, r := range s {
		press(m, string(r))
	}
}

// paste delivers s the way a terminal with bracketed paste does.
func paste(m *Model, s string) {
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s), Paste: true})
	Settle(m, cmd)
}

// selectID moves the cursor to the proposal id.
func selectID(t testing.TB, m *Model, id string) {
	t.Helper()
	press(m, "home")
	for i := 0; i < 200 && m.selID != id; i++ {
		press(m, "down")
	}
	if m.selID != id {
		t.Fatalf("proposal %s is not in the list", id)
	}
}

// selectThenPress selects the proposal id, then presses keys.
func selectThenPress(t testing.TB, m *Model, id string, keys ...string) {
	t.Helper()
	selectID(t, m, id)
	press(m, keys...)
}

// readThenPress selects the proposal id, shows all of it (readAll), then
// presses keys.
func readThenPress(t testing.TB, m *Model, id string, keys ...string) {
	t.Helper()
	selectID(t, m, id)
	readAll(m)
	press(m, keys...)
}

// typedApproval opens the approve prompt on the proposal id, read, and
// types its id (enter not pressed).
func typedApproval(t testing.TB, m *Model, id string) {
	t.Helper()
	readThenPress(t, m, id, "a")
	typeText(m, id)
}

func screenHas(t testing.TB, m *Model, want ...string) {
	t.Helper()
	v := m.View()
	for _, w := range want {
		if !strings.Contains(v, w) {
			t.Fatalf("screen lacks %q:\n%s", w, v)
		}
	}
}
