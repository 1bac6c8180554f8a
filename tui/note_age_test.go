package tui

import (
	"strings"
	"testing"
	"time"
)

// The note that another operator decided the proposal on screen tells how
// long ago, as the clock moves on ("2m ago", not "just now" for as long as
// it stays), and the clock ticks for it as it ticks for every age on screen.
func TestDecidedElsewhereNoteAges(t *testing.T) {
	f := oldFile(t) // nothing else on its screen changes within 30 s
	now := t0
	m := consoleOnClock(f.s, &now, "aging", 120, 40)
	id := f.ids["old-one"]
	selectThenPress(t, m, id, "enter")
	if _, err := f.s.Deny(t.Context(), id, rival, "not today"); err != nil {
		t.Fatal(err)
	}
	Settle(m, m.reload())
	screenHas(t, m, id+" was denied elsewhere by "+rival.String()+" just now")
	if d := m.untilScreenChanges(); d > time.Second+tickSlack {
		t.Fatalf("the clock ticks in %v while the note says just now", d)
	}
	for _, step := range []struct {
		after time.Duration
		says  string
	}{{5 * time.Second, "5s ago"}, {2 * time.Minute, "2m ago"}} {
		now = t0.Add(step.after)
		m.Update(tickMsg{at: now, gen: m.tickGen})
		v := m.View()
		if !strings.Contains(v, "denied elsewhere by "+rival.String()+" "+step.says+" — esc to dismiss") {
			t.Fatalf("%v later the note does not say %q:\n%s", step.after, step.says, v)
		}
	}
}
