package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/risk"
)

// Golden screens: the console at fixed sizes, ASCII profile, fixed clock
// and the deterministic demo set. `go test ./tui -update` rewrites them
// (in golden/testdata); review the diff before committing.

type scenario struct {
	name  string
	actor func() (actorName string)
	run   func(t *testing.T, f *fixture, m *Model)
}

// readAll opens the selected proposal and scrolls it to the end.
func readAll(m *Model) { press(m, "enter", "end") }

func scenarios() []scenario {
	sel := func(name string, steps ...string) func(t *testing.T, f *fixture, m *Model) {
		return func(t *testing.T, f *fixture, m *Model) {
			selectThenPress(t, m, f.ids[name], steps...)
		}
	}
	return []scenario{
		{name: "list", run: func(t *testing.T, f *fixture, m *Model) {}},
		{name: "detail-high-no-diff", run: sel("drop", "enter")},
		{name: "detail-medium-diff", run: sel("diff", "enter")},
		{name: "detail-diff-words-end", run: sel("diff", "enter", "end")},
		{name: "detail-low", run: sel("low", "enter")},
		{name: "detail-summary-only", run: sel("summary", "enter")},
		{name: "detail-raised-by-classifier", run: sel("downgraded", "enter")},
		{name: "hostile-escapes", run: sel("escapes", "enter")},
		{name: "hostile-unicode", run: sel("unicode", "enter")},
		{name: "corrupt", run: sel("corrupt", "enter", "end", "a")},
		{name: "not-scrolled-yet", run: sel("long", "a")},
		{name: "approve-prompt-empty", run: func(t *testing.T, f *fixture, m *Model) {
			readThenPress(t, m, f.ids["drop"], "a")
		}},
		{name: "approve-prompt-partly-typed", run: func(t *testing.T, f *fixture, m *Model) {
			readThenPress(t, m, f.ids["drop"], "a")
			typeText(m, f.ids["drop"][:5])
		}},
		{name: "approve-prompt-matching", run: func(t *testing.T, f *fixture, m *Model) {
			typedApproval(t, m, f.ids["drop"])
		}},
		{name: "approve-paste-refused", run: func(t *testing.T, f *fixture, m *Model) {
			readThenPress(t, m, f.ids["drop"], "a")
			paste(m, f.ids["drop"])
		}},
		{name: "approve-lost-race", run: func(t *testing.T, f *fixture, m *Model) {
			id := f.ids["drop"]
			typedApproval(t, m, id)
			if _, err := f.s.Consume(t.Context(), id, id, rival); err != nil {
				t.Fatal(err)
			}
			press(m, "enter")
		}},
		{name: "deny-prompt", run: func(t *testing.T, f *fixture, m *Model) {
			selectThenPress(t, m, f.ids["drop"], "d")
			typeText(m, "not during business hours")
		}},
		{name: "read-only", actor: func() string { return "watcher" }, run: func(t *testing.T, f *fixture, m *Model) {
			readThenPress(t, m, f.ids["drop"], "a")
		}},
		{name: "history", run: func(t *testing.T, f *fixture, m *Model) {
			selectThenPress(t, m, f.ids["drop"], "d")
			typeText(m, "wrong database")
			press(m, "enter", "tab")
		}},
		{name: "history-event", run: func(t *testing.T, f *fixture, m *Model) {
			selectThenPress(t, m, f.ids["drop"], "d")
			typeText(m, "wrong database")
			press(m, "enter", "tab", "enter")
		}},
		{name: "history-help", run: func(t *testing.T, f *fixture, m *Model) { press(m, "tab", "?") }},
		{name: "hardline-refused", run: sel("hardline", "enter", "a")},
		{name: "end-then-approve", run: sel("heredoc", "enter", "end", "a")}, // refused where the diff does not fit
		{name: "short-id-refused", run: func(t *testing.T, f *fixture, m *Model) {
			p, _, err := risk.Propose(risk.Draft{Command: "ls /srv/short", SessionKey: "agent:x", ID: "abc", TTL: time.Minute}, t0)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.s.Submit(t.Context(), p, rival); err != nil {
				t.Fatal(err)
			}
			Settle(m, m.reload())
			readThenPress(t, m, "abc", "a")
		}},
		{name: "slid-after-decided-elsewhere", run: func(t *testing.T, f *fixture, m *Model) {
			id := f.ids["drop"]
			selectID(t, m, id)
			readAll(m)
			if _, err := f.s.Deny(t.Context(), id, rival, "not today"); err != nil {
				t.Fatal(err)
			}
			Settle(m, m.reload())
			press(m, "esc", "a") // back to the list (narrow), then approve what slid in
		}},
		{name: "help", run: func(t *testing.T, f *fixture, m *Model) { press(m, "?") }},
		{name: "filter", run: func(t *testing.T, f *fixture, m *Model) {
			press(m, "/")
			typeText(m, "git")
			press(m, "enter")
		}},
	}
}

// play runs the scenario on a console of the given size over a new
// fixture, as its actor.
func (sc scenario) play(t *testing.T, size [2]int) *Model {
	t.Helper()
	f := newFixture(t)
	actor := operator
	if sc.actor != nil && sc.actor() == "watcher" {
		actor = watcher
	}
	m := console(t, f, actor, size[0], size[1])
	sc.run(t, f, m)
	return m
}

func TestGoldenScreens(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 40}, {200, 50}}
	for _, sc := range scenarios() {
		for _, size := range sizes {
			name := fmt.Sprintf("%s-%dx%d", sc.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				m := sc.play(t, size)
				golden.Assert(t, name, m.View())
			})
		}
	}
}

func TestGoldenTooSmall(t *testing.T) {
	f := newFixture(t)
	for _, size := range [][2]int{{79, 24}, {80, 23}, {40, 10}} {
		m := console(t, f, operator, size[0], size[1])
		golden.Assert(t, fmt.Sprintf("too-small-%dx%d", size[0], size[1]), m.View())
	}
}
