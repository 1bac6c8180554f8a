package tui

import (
	"strings"
	"testing"
)

// An agent's words about its command (a hook's tool description) are shown
// apart from the verdict (the risk reason and why), quoted and labelled as the agent's: a
// description that says "(approved by security)" reads as what the agent
// claims, never as part of the verdict.
func TestAgentWordsApartFromTheReason(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 100, 40)
	selectThenPress(t, m, f.ids["escapes"], "enter")
	view := m.View()
	// The verdict's lines: the reason (when it says more than the why)
	// and the why, up to the agent's words.
	var verdict []string
	var says string
	in := false
	for _, l := range strings.Split(view, "\n") {
		switch {
		case strings.HasPrefix(l, "reason "), strings.HasPrefix(l, "why "):
			in = true
			verdict = append(verdict, l)
		case strings.HasPrefix(l, "agent says "):
			in = false
			says = l
		case in && strings.HasPrefix(l, "  "):
			verdict = append(verdict, l)
		default:
			in = false
		}
	}
	joined := strings.Join(verdict, "\n")
	if !strings.Contains(joined, "why ") || strings.Contains(joined, "approved by security") || strings.Contains(joined, "routine test run") {
		t.Fatalf("the verdict holds the agent's words, or is missing: %q\n%s", joined, view)
	}
	if !strings.Contains(says, `"routine test run \x1b]0;nothing to see here\x07\x1b[31m(approved by security)\x1b[0m"`) {
		t.Fatalf("the agent's words are not shown apart, escaped and labelled: %q\n%s", says, view)
	}
}
