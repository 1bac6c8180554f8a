package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	tea "github.com/charmbracelet/bubbletea"
)

// --bell: a proposal at or above the bell's risk arriving after the first
// load rings (BEL and the desktop-notification escapes), with the
// program's own words only; what was listed at start, and lower risks, do
// not.
func TestBellRingsForNewRiskyProposals(t *testing.T) {
	f := newFixture(t)
	m := New(Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, Bell: model.RiskHigh})
	var out syncbuf.Buffer
	m.UseScreen(&out)
	t.Cleanup(m.closeScreen)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	Settle(m, m.Init())
	if strings.Contains(out.Take(), "\a") {
		t.Fatal("rang for what was there at start")
	}
	submit := func(cmd string) {
		submitDraft(t, f, m, risk.Draft{Command: cmd, SessionKey: "agent:\x1b]0;evil\x07", TTL: time.Hour})
	}
	submit("ls -la /srv")
	if strings.Contains(out.Take(), "\a") {
		t.Fatal("rang for a low-risk proposal")
	}
	submit("rm -rf /srv/app/releases/old \x1b]9;fake\a")
	got := out.Take()
	want := "\a\x1b]9;approve-tui: HIGH proposal waiting\a\x1b]777;notify;approve-tui;approve-tui: HIGH proposal waiting\a"
	if !strings.Contains(got, want) {
		t.Fatalf("no alert in %q", got)
	}
	// Every notification escape written carries the program's words only
	// (the agent's text is on screen, made visible, never in an escape).
	for _, part := range strings.Split(got, "\x1b]")[1:] {
		payload, _, _ := strings.Cut(part, "\a")
		if payload != "9;approve-tui: HIGH proposal waiting" && payload != "777;notify;approve-tui;approve-tui: HIGH proposal waiting" {
			t.Fatalf("an escape of foreign text: %q", payload)
		}
	}
	Settle(m, m.reload())
	if strings.Contains(out.Take(), "\a") {
		t.Fatal("rang twice for one proposal")
	}
}
