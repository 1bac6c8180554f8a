package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/approve-tui/approve-tui/internal/syncbuf"
)

var ctrlL = tea.KeyMsg{Type: tea.KeyCtrlL}

// ctrl+l paints the whole screen again on the console's own screen (the
// terminal RunTerminal draws on): it erases what another process wrote
// and writes every line, not only those the console changed.
func TestCtrlLRepaintsTheWholeScreen(t *testing.T) {
	f := newFixture(t)
	out := &syncbuf.Buffer{}
	m := New(Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, NoPresence: true, Label: "redraw"})
	m.screen = newScreen(out)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	Settle(m, m.Init())
	m.View()
	time.Sleep(3 * frameGap)
	frame := m.View()
	out.Take()

	time.Sleep(3 * frameGap)
	press(m, "?", "?") // help opened and closed: the same frame again
	time.Sleep(3 * frameGap)
	m.View()
	if got := out.Take(); strings.Contains(got, ansi.EraseEntireScreen) {
		t.Fatalf("the screen was erased without ctrl+l: %q", got)
	}

	_, cmd := m.Update(ctrlL)
	Settle(m, cmd)
	m.View()
	got := out.Take()
	if !strings.Contains(got, ansi.EraseEntireScreen) {
		t.Fatalf("ctrl+l did not erase the screen: %q", got)
	}
	for _, l := range strings.Split(frame, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(got, l) {
			t.Fatalf("ctrl+l did not write the line %q again: %q", l, got)
		}
	}
	if m.showHelp || m.prompt != nil || m.filtering {
		t.Fatal("ctrl+l changed more than the screen")
	}
}

// Under Bubble Tea's own renderer (a console run without a terminal of its
// own, as teatest runs it), ctrl+l clears the screen and repaints it.
func TestFlowCtrlLClearsTheScreen(t *testing.T) {
	f := newFixture(t)
	tm := liveConsole(t, f, operator)
	waitScreen(t, tm, "pending")
	tm.Send(ctrlL)
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		i := bytes.Index(b, []byte(ansi.EraseEntireScreen))
		return i >= 0 && bytes.Contains(b[i:], []byte("pending"))
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// ctrl+l works in a prompt too, and leaves what was typed; following goes
// on (it is not the operator taking over).
func TestCtrlLInAPromptAndWhileFollowing(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	selectThenPress(t, m, f.ids["low"], "d")
	typeText(m, "because")
	_, cmd := m.Update(ctrlL)
	Settle(m, cmd)
	if m.prompt == nil || !strings.Contains(m.View(), "because") {
		t.Fatalf("ctrl+l closed the prompt or lost its text:\n%s", m.View())
	}
	press(m, "esc")
	m.following = "bob"
	_, cmd = m.Update(ctrlL)
	Settle(m, cmd)
	if m.following != "bob" {
		t.Fatal("ctrl+l stopped following")
	}
}

// The help page lists ctrl+l.
func TestHelpListsRedraw(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	press(m, "?")
	screenHas(t, m, "ctrl+l", "redraw the screen")
}

// A terminal's answer to a query that comes after its asker stopped
// waiting (the background colour over a slow link) arrives as keys: alt+],
// its text, then alt+\ (ST) or ctrl+g (BEL). None of them is taken for
// the operator's: "rgb:dddd/aaaa/ffff" would otherwise open the deny
// prompt, try to approve and follow. The operator's next key counts.
func TestLateTerminalAnswerIsNotKeys(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	selectID(t, m, f.ids["low"])
	cursor, before := m.list.cursor, m.View()
	alt := func(r rune) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: true} }
	answers := [][]tea.KeyMsg{
		{alt(']'), keyMsg("11;rgb:dddd/aaaa/ffff"), alt('\\')},
		{alt(']'), keyMsg("11;rgb:"), keyMsg("dd/aa/ff"), {Type: tea.KeyCtrlG}},
		{alt(']'), keyMsg("11;rgb:gggg/dddd/aaaa"), {Type: tea.KeyEsc}, keyMsg("\\")},
	}
	for _, a := range answers {
		for _, k := range a {
			_, cmd := m.Update(k)
			Settle(m, cmd)
		}
		if m.prompt != nil || m.following != "" || m.list.cursor != cursor || m.showHelp || m.View() != before {
			t.Fatalf("a terminal's answer %v was taken for keys:\n%s", a, m.View())
		}
	}
	press(m, "d")
	if m.prompt == nil {
		t.Fatal("the operator's d after the answer did not open the deny prompt")
	}
}

// Two escapes the terminal delivers in one read come as alt+esc: the
// console takes them as the two steps back they were.
func TestTwoEscapesReadAtOnce(t *testing.T) {
	f := newFixture(t)
	twice := console(t, f, operator, 80, 24)
	bunched := console(t, f, operator, 80, 24)
	for _, m := range []*Model{twice, bunched} {
		press(m, "tab", "enter") // the history, one event opened
	}
	if !strings.Contains(twice.View(), "audit event") {
		t.Fatalf("no event page to step back from:\n%s", twice.View())
	}
	press(twice, "esc", "esc")
	_, cmd := bunched.Update(tea.KeyMsg{Type: tea.KeyEsc, Alt: true})
	Settle(bunched, cmd)
	if bunched.mode != twice.mode || bunched.pageOpen != twice.pageOpen || bunched.showHelp != twice.showHelp {
		t.Fatalf("alt+esc left:\n%s\ntwo escapes:\n%s", bunched.View(), twice.View())
	}
	if strings.Contains(bunched.View(), "audit event") {
		t.Fatalf("still on the event:\n%s", bunched.View())
	}
}
