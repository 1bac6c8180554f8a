package tui

import (
	"strings"
	"testing"
)

// The help line keeps ? help at every width, on every screen that offers
// it: other keys give way first (the ? page lists them all).
func TestFooterKeepsHelp(t *testing.T) {
	f := newFixture(t)
	for _, w := range []int{80, 90, 100, 120, 160, 200} {
		m := console(t, f, operator, w, 24)
		screens := []struct {
			name string
			keys []string
			want []string
		}{
			{"list", nil, []string{"? help", "tab pending/history", "a approve", "d deny"}},
			{"detail", []string{"enter"}, []string{"? help", "a approve"}},
			{"history", []string{"esc", "tab"}, []string{"? help", "enter details"}},
			{"event", []string{"enter"}, []string{"? help", "esc back"}},
			{"help page", []string{"?"}, []string{"?/esc close this page"}},
		}
		for _, sc := range screens {
			press(m, sc.keys...)
			line := footer(m)
			for _, want := range sc.want {
				if !strings.Contains(line, want) {
					t.Fatalf("%d columns, %s: the help line lacks %q: %q", w, sc.name, want, line)
				}
			}
			linesFit(t, m)
		}
	}
}
