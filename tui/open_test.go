package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// Opening one proposal from a page (Options.Open): the console starts on
// it, whole, or says why it cannot.

// openConsole is console() opened on id, at the clock now (t0 when zero),
// waiting at most wait for an id the store does not have yet; events
// collects what it emits.
func openConsole(t testing.TB, f *fixture, actor model.Actor, w, h int, id string, wait time.Duration, now time.Time, events *[]Event) *Model {
	t.Helper()
	if now.IsZero() {
		now = t0
	}
	opt := Options{Store: f.s, Actor: actor, Renderer: asciiRenderer(), Now: func() time.Time { return now }, NoWatch: true,
		Label: "demo seed 1 (test)", Open: id, OpenWait: wait}
	if events != nil {
		opt.OnEvent = func(e Event) { *events = append(*events, e) }
	}
	m := New(opt)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	Settle(m, m.Init())
	return m
}

// noteOf is the screen's note line.
func noteOf(m *Model) string {
	l := strings.Split(m.View(), "\n")
	return l[len(l)-2]
}

func lastOpen(t *testing.T, events []Event) Event {
	t.Helper()
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == "open" {
			return events[i]
		}
	}
	t.Fatalf("no open event in %+v", events)
	return Event{}
}

// A pending proposal opens selected and whole: the very screen enter on it
// in the list shows, narrow and wide; once read, it approves as usual, and
// esc goes back to the list.
func TestOpenPendingShowsItsDetail(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			f := newFixture(t)
			id := f.ids["drop"]
			var events []Event
			m := openConsole(t, f, operator, size[0], size[1], id, 0, time.Time{}, &events)
			got := m.View()

			// The reference on a file of its own (the same demo set): on
			// one file, each console would list the other as present.
			ref := console(t, newFixture(t), operator, size[0], size[1])
			selectThenPress(t, ref, id, "enter")
			if want := ref.View(); got != want {
				t.Fatalf("opened:\n%s\n\nenter in the list:\n%s", got, want)
			}
			if e := lastOpen(t, events); e.ID != id || e.Outcome != "opened" {
				t.Fatalf("open event: %+v", e)
			}

			press(m, "end", "a")
			screenHas(t, m, "Type the approval id")
			typeText(m, id)
			press(m, "enter")
			screenHas(t, m, "approved "+id)
			if rec := status(t, f, id); rec.Status != model.StatusConsumed || rec.ConsumedBy != operator.String() {
				t.Fatalf("after approving: %s by %q", rec.Status, rec.ConsumedBy)
			}
			press(m, "esc")
			if m.pageOpen || !m.focusList || m.mode != viewPending {
				t.Fatalf("esc after the decision: page %v, list focus %v, mode %v", m.pageOpen, m.focusList, m.mode)
			}
		})
	}
}

// openedPage is an 80x24 console for actor opened on the new fixture's
// proposal named key, shown as a page.
func openedPage(t *testing.T, actor model.Actor, key string) (f *fixture, id string, m *Model) {
	t.Helper()
	f = newFixture(t)
	id = f.ids[key]
	m = openConsole(t, f, actor, 80, 24, id, 0, time.Time{}, nil)
	if !m.pageOpen || m.selID != id {
		t.Fatalf("opened: page %v, selected %q", m.pageOpen, m.selID)
	}
	return f, id, m
}

// Esc from an opened proposal goes back to the list, the proposal still
// selected there.
func TestOpenThenEscGoesToTheList(t *testing.T) {
	_, id, m := openedPage(t, operator, "diff")
	press(m, "esc")
	if m.pageOpen || m.selID != id {
		t.Fatalf("after esc: page %v, selected %q", m.pageOpen, m.selID)
	}
	screenHas(t, m, "RISK", "COMMAND")
}

// A watcher gets the same view, and its approve is refused by the store.
func TestOpenAsWatcher(t *testing.T) {
	f, id, m := openedPage(t, watcher, "drop")
	screenHas(t, m, "watching read-only")
	press(m, "end", "a")
	if rec := status(t, f, id); rec.Status != model.StatusPending {
		t.Fatalf("a watcher's approve: %s", rec.Status)
	}
	if n := auditCount(t, f, id, storage.EventApprove, storage.OutcomeRefused, "read_only"); n != 1 {
		t.Fatalf("refusals audited: %d", n)
	}
}

// A proposal decided before the console opened: the note says by whom and
// how long ago, and the history shows the event that decided it, selected
// in its list under the page; esc, esc is the pending list again.
func TestOpenDecided(t *testing.T) {
	for _, tc := range []struct {
		action, want, event string
	}{
		{"approve", "was approved by alice@laptop via cli 3m ago", storage.EventApprove},
		{"deny", "was denied by alice@laptop via cli 3m ago", storage.EventDeny},
	} {
		t.Run(tc.action, func(t *testing.T) {
			f := newFixture(t)
			id := f.ids["drop"]
			var err error
			if tc.action == "approve" {
				_, err = f.s.Consume(context.Background(), id, id, rival)
			} else {
				_, err = f.s.Deny(context.Background(), id, rival, "not today")
			}
			if err != nil {
				t.Fatal(err)
			}
			var events []Event
			m := openConsole(t, f, operator, 80, 24, id, 0, t0.Add(3*time.Minute), &events)
			if n := noteOf(m); !strings.Contains(n, id+" "+tc.want) {
				t.Fatalf("note: %q", n)
			}
			if m.mode != viewHistory || m.event == nil || m.event.ev.ApprovalID != id || m.event.ev.Event != tc.event {
				t.Fatalf("mode %v, event page %+v", m.mode, m.event)
			}
			screenHas(t, m, "audit event")
			if e := lastOpen(t, events); e.Outcome != map[string]string{"approve": "approved", "deny": "denied"}[tc.action] {
				t.Fatalf("open event: %+v", e)
			}
			press(m, "esc")
			if sel, ok := m.selectedAudit(); m.event != nil || !ok || sel.ApprovalID != id || sel.Event != tc.event {
				t.Fatalf("after esc: page %v, selected %+v", m.event != nil, sel)
			}
			press(m, "esc")
			if m.mode != viewPending {
				t.Fatalf("second esc: mode %v", m.mode)
			}
			screenHas(t, m, "14 pending")
		})
	}
}

// Expired unanswered: said so, with how long ago; with an expire event in
// the audit log, that event is shown.
func TestOpenExpired(t *testing.T) {
	f := newFixture(t)
	id := f.ids["expired"]
	m := openConsole(t, f, operator, 80, 24, id, 0, time.Time{}, nil)
	if n := noteOf(m); !strings.Contains(n, id+" expired 10m ago, unanswered") {
		t.Fatalf("note: %q", n)
	}
	if m.mode != viewPending || m.pageOpen {
		t.Fatalf("without an event: mode %v, page %v", m.mode, m.pageOpen)
	}
	if _, err := f.s.ExpireDue(context.Background(), rival); err != nil {
		t.Fatal(err)
	}
	m = openConsole(t, f, operator, 80, 24, id, 0, time.Time{}, nil)
	if m.mode != viewHistory || m.event == nil || m.event.ev.Event != storage.EventExpire {
		t.Fatalf("with its expire event: mode %v, page %+v", m.mode, m.event)
	}
	if n := noteOf(m); !strings.Contains(n, id+" expired 10m ago, unanswered") {
		t.Fatalf("note: %q", n)
	}
}

// An id the store never gets: after the wait, "no proposal ID", on the
// list; the id, the page's text, is shown inert.
func TestOpenUnknown(t *testing.T) {
	f := newFixture(t)
	id := "hm-nope\x1b]0;owned\x07\u202e"
	var events []Event
	start := time.Now()
	m := openConsole(t, f, operator, 80, 24, id, 300*time.Millisecond, time.Time{}, &events)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("gave up after %v, before the wait", d)
	}
	v := m.View()
	if strings.ContainsAny(v, "\x1b\x07\u202e") {
		t.Fatalf("the id reached the screen raw: %q", v)
	}
	want := "no proposal " + model.Sanitize(id, model.Line)
	if n := noteOf(m); !strings.Contains(n, want) {
		t.Fatalf("note %q, want %q", n, want)
	}
	if e := lastOpen(t, events); e.Outcome != "not_found" {
		t.Fatalf("open event: %+v", e)
	}
	if m.mode != viewPending || m.pageOpen || m.Busy() {
		t.Fatalf("mode %v, page %v, busy %v", m.mode, m.pageOpen, m.Busy())
	}
	screenHas(t, m, "15 pending")
}

// lateProposal submits a proposal to f's store after delay, from another
// goroutine (another process's agent, whose page beat its commit).
func lateProposal(t *testing.T, f *fixture, command string, delay time.Duration) (string, <-chan error) {
	t.Helper()
	p, _, err := risk.Propose(risk.Draft{Command: command, SessionKey: "agent:late", TTL: time.Hour}, t0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(delay)
		done <- f.s.Submit(context.Background(), p, rival)
	}()
	return p.ApprovalID, done
}

// The page raced the console: the proposal is written a moment after the
// console looked for it. The console waits, says it does, and opens it.
func TestOpenArrivesLate(t *testing.T) {
	f := newFixture(t)
	id, done := lateProposal(t, f, "rm -rf /srv/paged-too-soon", 500*time.Millisecond)
	var events []Event
	m := openConsole(t, f, operator, 80, 24, id, 5*time.Second, time.Time{}, &events)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m.selID != id || !m.pageOpen {
		t.Fatalf("selected %q, page %v; events %+v", m.selID, m.pageOpen, events)
	}
	waited := false
	for _, e := range events {
		waited = waited || e.Kind == "open" && e.Outcome != "opened"
	}
	if waited {
		t.Fatalf("it gave up: %+v", events)
	}
	if n := noteOf(m); strings.Contains(n, "waiting") {
		t.Fatalf("the note still waits: %q", n)
	}
	screenHas(t, m, "/srv/paged-too-soon", "end of proposal")
	press(m, "a")
	screenHas(t, m, "Type the approval id")
}

// The same live, as a real program with the store watcher running: the
// commit wakes the console, which opens the proposal.
func TestFlowOpenArrivesLate(t *testing.T) {
	f := newFixture(t)
	id, done := lateProposal(t, f, "rm -rf /srv/paged-live", 700*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := New(Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, Context: ctx, Label: "flow", Open: id})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	t.Cleanup(func() { _ = tm.Quit() })
	waitScreen(t, tm, "no such proposal yet")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Read once it stands whole: its why and waiter arrived, all on screen.
	waitScreen(t, tm, "/srv/paged-live", "why ", "approving will not run anything", "end of proposal")
	send(tm, "a")
	waitScreen(t, tm, "Type the approval id")
	tm.Type(id)
	send(tm, "enter")
	waitScreen(t, tm, "approved "+id)
}

// A key of the operator's own while the console still waits for the id
// takes over: the wait ends, and nothing moves the selection afterwards.
func TestOpenGivesWayToKeys(t *testing.T) {
	f := newFixture(t)
	m := New(Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, Open: "hm-later1",
		OpenWait: time.Minute})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	_ = m.startOpen() // the lookup is answered by hand below: no polls
	Settle(m, m.reload())
	m.Update(openMsg{id: "hm-later1"}) // not in the store (yet)
	if m.opening == nil || !strings.Contains(noteOf(m), "waiting") {
		t.Fatalf("not waiting: %+v %q", m.opening, noteOf(m))
	}
	press(m, "down")
	if m.opening != nil || strings.Contains(noteOf(m), "waiting") {
		t.Fatalf("still waiting after a key: %q", noteOf(m))
	}
	if _, cmd := m.Update(openMsg{id: "hm-later1"}); cmd != nil || m.opening != nil {
		t.Fatal("a lookup after the key still acts")
	}
}

// The screens of a proposal no longer pending, and of one that does not
// exist (golden: `go test ./tui -run TestGoldenOpen -update`).
func TestGoldenOpen(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		t.Run("decided-"+name, func(t *testing.T) {
			f := newFixture(t)
			id := f.ids["drop"]
			if _, err := f.s.Deny(context.Background(), id, rival, "not during business hours"); err != nil {
				t.Fatal(err)
			}
			m := openConsole(t, f, operator, size[0], size[1], id, 0, t0.Add(3*time.Minute), nil)
			golden.Assert(t, "open-decided-"+name, m.View())
		})
		t.Run("unknown-"+name, func(t *testing.T) {
			f := newFixture(t)
			m := openConsole(t, f, operator, size[0], size[1], "hm-abc123", time.Millisecond, time.Time{}, nil)
			golden.Assert(t, "open-unknown-"+name, m.View())
		})
	}
}

// A corrupt row is still pending: it opens whole, its banner saying it
// can only be denied, and approve is refused as from the list.
func TestOpenCorrupt(t *testing.T) {
	f := newFixture(t)
	id := f.ids["corrupt"]
	m := openConsole(t, f, operator, 80, 24, id, 0, time.Time{}, nil)
	if !m.pageOpen || m.selID != id {
		t.Fatalf("opened: page %v, selected %q", m.pageOpen, m.selID)
	}
	screenHas(t, m, "CORRUPT", "can be denied, never approved")
	press(m, "end", "a")
	screenHas(t, m, id+" is corrupt: it can be denied (d), never approved")
}
