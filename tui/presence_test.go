package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

func namedConsole(t *testing.T, f *fixture, name string, w, h int) *Model {
	t.Helper()
	m := New(Options{Store: f.s, Actor: model.Actor{Surface: model.SurfaceSSH, Name: name + " (SHA256:x)", Person: name, Key: "SHA256:x"}, Name: name,
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

	readThenPress(t, alice, id, "a")
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
	readThenPress(t, bob, id, "a")
	screenHas(t, bob, "alice is approving this proposal right now")
	press(bob, "esc", "esc")

	// Bob follows alice: her selection and scroll.
	press(alice, "esc", "esc") // the prompt, then back to the list
	selectThenPress(t, alice, f.ids["heredoc"], "enter", "pgdown")
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

// A follower's detail is open while the leader's is and closed when the
// leader closes it, beside the list (wide) and as a page (narrow), the
// leader and followers each on their own connection to one store file.
func TestFollowMirrorsTheDetailOpenOrClosed(t *testing.T) {
	f := newFixture(t)
	other, err := storage.Open(context.Background(), f.path, storage.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	alice := namedConsole(t, f, "alice", 120, 40)
	on := &fixture{path: f.path, s: other, ids: f.ids}
	bob := namedConsole(t, on, "bob", 120, 40)    // wide: the detail beside the list
	carol := namedConsole(t, on, "carol", 80, 24) // narrow: the detail as a page

	selectThenPress(t, alice, f.ids["heredoc"], "enter", "pgdown")
	for _, c := range []*Model{bob, carol} {
		Settle(c, c.reload())
		c.following = "alice"
		Settle(c, c.reload())
	}
	check := func(when string, open bool) {
		t.Helper()
		for _, c := range []*Model{bob, carol} {
			Settle(c, c.reload())
			if c.following != "alice" || c.selID != f.ids["heredoc"] {
				t.Fatalf("%s: %s follows %q on %s", when, c.opt.Name, c.following, c.selID)
			}
			if c.detailOpen() != open {
				t.Errorf("%s: %s's detail open: %v, alice's: %v", when, c.opt.Name, c.detailOpen(), open)
			}
			if open && c.detail.offset != alice.detail.offset {
				t.Errorf("%s: %s's detail at line %d, alice's at %d", when, c.opt.Name, c.detail.offset, alice.detail.offset)
			}
		}
	}
	check("alice opened the detail", true)
	if alice.detail.offset == 0 {
		t.Fatal("alice's detail did not scroll")
	}
	press(alice, "esc")
	if alice.detailOpen() {
		t.Fatal("esc did not close alice's detail")
	}
	check("alice closed the detail", false)
	if !bob.focusList || carol.pageOpen {
		t.Errorf("closed: bob's list has the keys: %v; carol's page open: %v", bob.focusList, carol.pageOpen)
	}
	press(alice, "enter")
	check("alice opened it again", true)
	press(alice, "esc", "d") // the deny prompt shows the detail
	check("alice's deny prompt", true)
}
