package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// This console's own decision is never reported as made elsewhere: when
// the reload that another commit (or its own) brings arrives before the
// decision's own outcome, the row's leaving the list is not explained as
// "denied elsewhere by" oneself; the outcome says "denied".
func TestOwnDecisionIsNotElsewhere(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 80, 24)
	id := f.ids["drop"]
	selectThenPress(t, m, id, "d")
	typeText(m, "not today")
	_, cmd := m.Update(keyMsg("enter"))
	if cmd == nil {
		t.Fatal("no decision dispatched")
	}
	decided := cmd() // committed in the store; its message not delivered yet
	Settle(m, m.reload())
	m.View()
	if strings.Contains(m.note.text, "elsewhere") {
		t.Fatalf("own deny reported as made elsewhere: %q", m.note.text)
	}
	Settle(m, func() tea.Msg { return decided })
	m.View()
	if !strings.Contains(m.note.text, "denied") || strings.Contains(m.note.text, "elsewhere") {
		t.Fatalf("after the outcome: %q", m.note.text)
	}
	// Decided elsewhere still says so.
	other := f.ids["low"]
	selectID(t, m, other)
	if _, err := f.s.Deny(t.Context(), other, rival, "no"); err != nil {
		t.Fatal(err)
	}
	Settle(m, m.reload())
	m.View()
	if !strings.Contains(m.note.text, "elsewhere by "+rival.String()) {
		t.Fatalf("a deny elsewhere: %q", m.note.text)
	}
}
