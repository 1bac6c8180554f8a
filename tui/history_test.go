package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// footer is the screen's last line: the help line.
func footer(m *Model) string {
	l := strings.Split(m.View(), "\n")
	return l[len(l)-1]
}

// The history offers what it does: its help line and its ? page name
// moving, enter and the tabs, not approve or deny, which do nothing there.
func TestHistoryOffersWhatItDoes(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 80, 24)
	press(m, "tab")
	for _, w := range []int{80, 100, 200} {
		press(m, "esc", "tab")
		m.setSize(w, 24)
		line := footer(m)
		if strings.Contains(line, "approve") || strings.Contains(line, "deny") || !strings.Contains(line, "enter details") ||
			!strings.Contains(line, "? help") {
			t.Fatalf("%d columns: the history's help line: %q", w, line)
		}
		press(m, "?")
		v := m.View()
		if strings.Contains(v, "a approve") || strings.Contains(v, "d deny") || !strings.Contains(v, "enter details") ||
			!strings.Contains(v, "The history") {
			t.Fatalf("%d columns: the history's ? page:\n%s", w, v)
		}
		linesFit(t, m)
		press(m, "esc")
	}
	press(m, "a", "d")
	if m.prompt != nil || m.mode != viewHistory {
		t.Fatal("a or d did something in the history")
	}
}

// selectedSeq is the seq of the history's selected event (0: none).
func selectedSeq(m *Model) int64 {
	if m.hist.cursor < 0 || m.hist.cursor >= len(m.hist.visible) {
		return 0
	}
	return m.history[m.hist.visible[m.hist.cursor]].Seq
}

// body is the screen between the header and the note and help lines.
func body(m *Model) []string {
	l := strings.Split(m.View(), "\n")
	return l[2 : len(l)-2]
}

// enter shows one audit event whole: every field, the detail and the
// hashes, all of it from the file made inert, wrapped to the width and
// scrolled; esc goes back to the list, on the same event.
func TestHistoryShowsAnEventWhole(t *testing.T) {
	hostileActor := model.Actor{Surface: model.SurfaceCLI, Name: "mallory\x1b]0;owned\x07@laptop"}
	reason := "not now\x1b[2J\nsee " + strings.Repeat("https://example.invalid/runbook/step ", 12) + "end-of-reason"
	for _, w := range []int{80, 100, 200} {
		f := newFixture(t)
		id := f.ids["drop"]
		if _, err := f.s.Deny(t.Context(), id, hostileActor, reason); err != nil {
			t.Fatal(err)
		}
		evs, err := f.s.Audit(t.Context(), storage.AuditQuery{ApprovalID: id, Limit: 1})
		if err != nil || len(evs) != 1 {
			t.Fatalf("audit: %v %v", evs, err)
		}
		ev := evs[0]
		m := console(t, f, operator, w, 24)
		press(m, "tab")
		if selectedSeq(m) != ev.Seq {
			t.Fatalf("the newest event is not selected: %d, want %d", selectedSeq(m), ev.Seq)
		}
		press(m, "enter")
		screenHas(t, m, "audit event")
		// Scrolled through to its end, every line of it fits and is inert.
		var page []string
		for i := 0; i < 40; i++ {
			for _, bad := range []string{"\x1b]", "\x07", "\x1b[2J"} {
				if strings.Contains(m.View(), bad) {
					t.Fatalf("raw %q on the event page", bad)
				}
			}
			linesFit(t, m)
			b := body(m)
			if strings.Contains(strings.Join(b, "\n"), "— end of event —") {
				page = append(page, b...)
				break
			}
			page = append(page, b[0])
			press(m, "down")
		}
		text := strings.Join(page, "\n")
		if !strings.Contains(text, "— end of event —") {
			t.Fatalf("%d columns: 40 lines down, the page does not end:\n%s", w, text)
		}
		for _, want := range []string{"seq", "time", "event", "outcome", "reason", "actor", "surface", "prev hash", "hash",
			"2026-11-29 03:00:00", ev.Hash, ev.PrevHash, id, `mallory\x1b]0;owned\x07@laptop`, "cli"} {
			if !strings.Contains(text, want) {
				t.Fatalf("%d columns: the event page lacks %q:\n%s", w, want, text)
			}
		}
		// The value column, joined back: the detail's reason whole, sanitised.
		var joined strings.Builder
		for _, l := range page {
			if len(l) > 11 {
				joined.WriteString(strings.TrimSpace(l[11:]))
			}
		}
		nospace := func(s string) string { return strings.ReplaceAll(s, " ", "") }
		if want := model.Sanitize(reason, model.Line); !strings.Contains(nospace(joined.String()), nospace(want)) {
			t.Fatalf("%d columns: the reason is not there whole:\n%s", w, text)
		}
		press(m, "esc")
		if m.mode != viewHistory || strings.Contains(m.View(), "audit event") {
			t.Fatal("esc did not go back to the list")
		}
		if selectedSeq(m) != ev.Seq {
			t.Fatal("back on the list, another event is selected")
		}
	}
}

// The history's short columns are as wide as what they hold; DETAIL gets
// the rest.
func TestHistoryColumnsShareTheRoom(t *testing.T) {
	f := newFixture(t)
	id := f.ids["drop"]
	m := console(t, f, operator, 80, 24)
	selectThenPress(t, m, id, "d")
	typeText(m, "disk full")
	press(m, "enter", "tab")
	v := m.View()
	if !strings.Contains(v, "OUTCOME ID") {
		t.Fatalf("OUTCOME is wider than its cells (all ok):\n%s", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, id) && strings.Contains(l, "deny") && !strings.Contains(l, "reason=disk full") {
			t.Fatalf("DETAIL cut short: %q", l)
		}
	}
	linesFit(t, m)
}

// Events that come while the history is open do not move the selection to
// another event: it stays on the one it was on (by seq), and so does an
// event shown whole.
func TestHistorySelectionStaysOnItsEvent(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	press(m, "tab", "down", "down", "down")
	seq, at := selectedSeq(m), m.hist.cursor
	if seq == 0 {
		t.Fatal("nothing selected")
	}
	for _, name := range []string{"low", "diff"} {
		if _, err := f.s.Deny(t.Context(), f.ids[name], rival, "elsewhere"); err != nil {
			t.Fatal(err)
		}
	}
	Settle(m, m.reload())
	if selectedSeq(m) != seq {
		t.Fatalf("selected seq %d after new events, was %d", selectedSeq(m), seq)
	}
	if m.hist.cursor <= at {
		t.Fatalf("the cursor stayed on row %d although events came above it", m.hist.cursor)
	}
	press(m, "enter")
	shown := strings.Join(body(m), "\n")
	if _, err := f.s.Deny(t.Context(), f.ids["summary"], rival, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	Settle(m, m.reload())
	if now := strings.Join(body(m), "\n"); now != shown {
		t.Fatalf("the event shown whole changed under the operator:\n%s", now)
	}
	press(m, "esc")
	if selectedSeq(m) != seq {
		t.Fatal("back on the list, another event is selected")
	}
}

// The age of an event shown whole moves on with the clock, which ticks for
// it.
func TestHistoryEventAges(t *testing.T) {
	f := oldFile(t)
	now := t0
	m := consoleOnClock(f.s, &now, "aging", 80, 24)
	if _, err := f.s.Deny(t.Context(), f.ids["old-one"], rival, "not today"); err != nil {
		t.Fatal(err)
	}
	press(m, "tab", "enter")
	screenHas(t, m, "03:00:00.000Z (just now)")
	if d := m.untilScreenChanges(); d > time.Second+tickSlack {
		t.Fatalf("the clock ticks in %v while the event says just now", d)
	}
	now = t0.Add(2 * time.Minute)
	m.Update(tickMsg{at: now, gen: m.tickGen})
	screenHas(t, m, "03:00:00.000Z (2m ago)")
}
