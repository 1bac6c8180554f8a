package tui

import (
	"strings"
	"testing"
)

// An agent's words about its command (a hook's tool description) are shown
// apart from the risk reason, quoted and labelled as the agent's: a
// description that says "(approved by security)" reads as what the agent
// claims, never as part of the verdict.
func TestAgentWordsApartFromTheReason(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 100, 40)
	selectID(t, m, f.ids["escapes"])
	press(m, "enter")
	view := m.View()
	var reason, says string
	for _, l := range strings.Split(view, "\n") {
		switch {
		case strings.HasPrefix(l, "reason "):
			reason = l
		case strings.HasPrefix(l, "agent says "):
			says = l
		}
	}
	if reason == "" || strings.Contains(reason, "approved by security") || strings.Contains(reason, "routine test run") {
		t.Fatalf("the reason holds the agent's words, or is missing: %q\n%s", reason, view)
	}
	if !strings.Contains(says, `"routine test run \x1b]0;nothing to see here\x07\x1b[31m(approved by security)\x1b[0m"`) {
		t.Fatalf("the agent's words are not shown apart, escaped and labelled: %q\n%s", says, view)
	}
}
