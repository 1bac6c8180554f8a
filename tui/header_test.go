package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/model"
)

// sshFingerprint is a real key's fingerprint, as serve names an SSH
// session's actor: "NAME (SHA256:…)".
const sshFingerprint = "SHA256:KBP3b58KGhZXa/axgylmak/Y+aKlwzrQQb4wgASFk0M"

// sshConsole is the console serve opens for a person's key: the actor
// names the key, the console is called by the person's name.
// readOnly makes it a watcher's.
func sshConsole(t *testing.T, f *fixture, name, follow string, w, h int, readOnly bool) *Model {
	t.Helper()
	m := New(Options{Store: f.s, Actor: model.Actor{Surface: model.SurfaceSSH, Name: name + " (" + sshFingerprint + ")", ReadOnly: readOnly, Person: name, Key: sshFingerprint},
		Name: name, Follow: follow, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, Label: "ssh: " + name})
	_, cmd := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	Settle(m, tea.Batch(cmd, m.Init()))
	return m
}

// linesFit fails when a line of the screen is wider than the terminal.
func linesFit(t *testing.T, m *Model) {
	t.Helper()
	for i, l := range strings.Split(m.View(), "\n") {
		if w := lipgloss.Width(l); w > m.width {
			t.Fatalf("line %d is %d cells wide at %d columns: %q", i+1, w, m.width, l)
		}
	}
}

// headLines is the header's two lines.
func headLines(m *Model) string {
	l := strings.SplitN(m.View(), "\n", 3)
	return l[0] + "\n" + l[1]
}

// Over SSH the header names the person, not the key: who else is here and
// whom this console follows show at 80 columns; the key's fingerprint is on
// the ? page. A follow of someone not connected says so.
func TestHeaderShowsPresenceAndFollowOverSSH(t *testing.T) {
	for _, w := range []int{80, 100, 200} {
		f := newFixture(t)
		alice := sshConsole(t, f, "alice", "", w, 24, false)
		sshConsole(t, f, "bob", "", w, 24, false)
		Settle(alice, alice.reload())
		press(alice, "f")
		h := headLines(alice)
		for _, want := range []string{"15 pending", "alice", "with bob", "[following bob]"} {
			if !strings.Contains(h, want) {
				t.Fatalf("%d columns: the header lacks %q: %q", w, want, h)
			}
		}
		if strings.Contains(h, "SHA256") {
			t.Fatalf("%d columns: the header shows the key: %q", w, h)
		}
		linesFit(t, alice)
		press(alice, "?")
		screenHas(t, alice, "You are alice ("+sshFingerprint+") via ssh")
		linesFit(t, alice)

		// Carol starts following dave, who is not connected: the header
		// says so, and stops saying it once dave is there.
		carol := sshConsole(t, f, "carol", "dave", w, 24, false)
		if h := headLines(carol); !strings.Contains(h, "carol") || !strings.Contains(h, "[following dave (not connected)]") {
			t.Fatalf("%d columns: a follow of someone not connected: %q", w, h)
		}
		linesFit(t, carol)
		sshConsole(t, f, "dave", "", w, 24, false)
		Settle(carol, carol.reload())
		if h := headLines(carol); !strings.Contains(h, "[following dave]") || strings.Contains(h, "not connected") {
			t.Fatalf("%d columns: dave connected: %q", w, h)
		}
	}
}

// When the right of the header does not fit, the console's own name gives
// way first (it is on the ? page whole), then the others' names; the count,
// the flags and whom it follows stay.
func TestHeaderGivesWayNameFirst(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("operator-with-a-long-name-", 3)
	m := sshConsole(t, f, long, "", 80, 24, true)
	for _, n := range []string{"bob", "carol", "dave", "erin", "frank", "grace"} {
		sshConsole(t, f, n, "", 80, 24, false)
	}
	Settle(m, m.reload())
	press(m, "f")
	h := headLines(m)
	for _, want := range []string{"15 pending", "operator", "[read-only]", "with bob", "[following bob]"} {
		if !strings.Contains(h, want) {
			t.Fatalf("the header lacks %q: %q", want, h)
		}
	}
	linesFit(t, m)
}
