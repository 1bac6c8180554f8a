package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/model"
)

func namedConsole(t *testing.T, f *fixture, name string, w, h int) *Model {
	t.Helper()
	m := New(Options{Store: f.s, Actor: model.Actor{Surface: model.SurfaceSSH, Name: name + " (SHA256:x)"}, Name: name,
		Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, Label: "demo seed 1 (test)"})
	_, cmd := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	Settle(m, tea.Batch(cmd, m.Init()))
	return m
}

// Two consoles on one store see each other: who is connected, which
// proposal the other reviews (@) or approves (*), a warning by name when
// both open the approve prompt on one proposal; and one follows the
// other's selection and scroll until a key of its own takes over.
func TestPresenceAndFollow(t *testing.T) {
	f := newFixture(t)
	alice := namedConsole(t, f, "alice", 120, 40)
	bob := namedConsole(t, f, "bob", 120, 40)
	id := f.ids["drop"]

	selectID(t, alice, id)
	readAll(alice)
	press(alice, "a")
	Settle(bob, bob.reload())
	screenHas(t, bob, "with alice")
	row := ""
	for _, l := range strings.Split(bob.View(), "\n") {
		if strings.Contains(l, "psql -h db-prod-1") {
			row = l
		}
	}
	if !strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(row, "▶"), " "), "*") {
		t.Fatalf("alice's open prompt is not marked on bob's list: %q", row)
	}
	selectID(t, bob, id)
	readAll(bob)
	press(bob, "a")
	screenHas(t, bob, "alice is approving this proposal right now")
	press(bob, "esc", "esc")

	// Bob follows alice: her selection and scroll.
	press(alice, "esc", "esc") // the prompt, then back to the list
	selectID(t, alice, f.ids["heredoc"])
	press(alice, "enter", "pgdown")
	Settle(bob, bob.reload())
	press(bob, "f")
	screenHas(t, bob, "following alice")
	if bob.selID != f.ids["heredoc"] || bob.detail.offset != alice.detail.offset || alice.detail.offset == 0 {
		t.Fatalf("bob shows %s at %d, alice %s at %d", bob.selID, bob.detail.offset, alice.selID, alice.detail.offset)
	}
	if bob.detail.SeenAll() {
		t.Fatal("what bob saw by following counts as read")
	}
	press(bob, "j")
	if bob.following != "" {
		t.Fatal("a key of bob's own did not take over")
	}
}
