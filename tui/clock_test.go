package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// The clock's arithmetic agrees with the texts it is for: the text stays
// the same until the moment given, and is another just after it.
func TestClockKnowsWhenTextsChange(t *testing.T) {
	var samples []time.Duration
	for _, base := range []time.Duration{0, time.Minute, time.Hour, 24 * time.Hour, 3*24*time.Hour + 5*time.Hour} {
		for _, off := range []time.Duration{-1500 * time.Millisecond, -time.Second, -500 * time.Millisecond, -499 * time.Millisecond,
			-1, 0, 1, 300 * time.Millisecond, 499 * time.Millisecond, 500 * time.Millisecond, 501 * time.Millisecond,
			time.Second, 29*time.Second + 700*time.Millisecond, 59 * time.Second, 61 * time.Second} {
			if d := base + off; d > 0 {
				samples = append(samples, d)
			}
		}
	}
	for _, left := range samples {
		w := untilCountdownChanges(left)
		if w < tickSlack || w > time.Hour+tickSlack {
			t.Fatalf("countdown %v: next change in %v", left, w)
		}
		now := human.Duration(left)
		if still := left - (w - tickSlack) + 1; still > 0 && human.Duration(still) != now {
			t.Fatalf("countdown %v (%s) shows %s at %v, before the change %v later", left, now, human.Duration(still), still, w)
		}
		if after := left - w; after > 0 && human.Duration(after) == now {
			t.Fatalf("countdown %v (%s) still shows it %v later", left, now, w)
		}
	}
	at := time.Unix(1_800_000_000, 0)
	for _, age := range append(samples, 0, 200*time.Millisecond) {
		w := untilAgoChanges(age)
		if w < tickSlack || w > time.Hour+tickSlack {
			t.Fatalf("age %v: next change in %v", age, w)
		}
		now := human.Ago(at, at.Add(age))
		if still := human.Ago(at, at.Add(age+w-tickSlack-1)); still != now {
			t.Fatalf("age %v (%s) shows %s before the change %v later", age, now, still, w)
		}
		if after := human.Ago(at, at.Add(age+w)); after == now {
			t.Fatalf("age %v (%s) still shows it %v later", age, now, w)
		}
	}
}

// oldFile holds two proposals made two hours before t0 that expire five
// hours after it: nothing on their screen changes within the second.
func oldFile(t *testing.T) *fixture { t.Helper(); return agedFile(t, 2*time.Hour) }

// agedFile holds two proposals made age before t0 that expire five hours
// after it.
func agedFile(t *testing.T, age time.Duration) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ids := map[string]string{}
	for _, name := range []string{"old-one", "old-two"} {
		p, _, err := risk.Propose(risk.Draft{Command: "rm -rf /srv/" + name, SessionKey: "agent:old",
			TTL: 5*time.Hour + 30*time.Second + age}, t0.Add(-age))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Submit(context.Background(), p, rival); err != nil {
			t.Fatal(err)
		}
		ids[name] = p.ApprovalID
	}
	return &fixture{path: path, s: s, ids: ids}
}

// The clock wakes the console for what changes on screen, not every second.
func TestClockWaitsForTheScreenToChange(t *testing.T) {
	// Two hours old, five hours left: the detail's age changes in 59.5 s
	// ("2h00m ago" → "2h01m ago"), the countdowns in 30.5 s.
	m := console(t, oldFile(t), operator, 120, 40)
	if m.selID == "" {
		t.Fatal("nothing selected")
	}
	if d := m.untilScreenChanges(); d < 30*time.Second || d > 31*time.Second {
		t.Fatalf("old proposals: next change in %v, want 30.5 s", d)
	}
	// Five minutes old: "5m ago" until the sixth minute, not to the second.
	if d := console(t, agedFile(t, 5*time.Minute), operator, 120, 40).untilScreenChanges(); d < 30*time.Second || d > 31*time.Second {
		t.Fatalf("proposals five minutes old: next change in %v, want 30.5 s", d)
	}
	// Nothing to show, nothing changes.
	empty := console(t, &fixture{s: openEmpty(t)}, operator, 120, 40)
	if d := empty.untilScreenChanges(); d != maxTickGap {
		t.Fatalf("empty list: next change in %v, want %v", d, maxTickGap)
	}
	// The demo set (made at t0, one about to expire): the second's texts.
	demo := console(t, newFixture(t), operator, 120, 40)
	if d := demo.untilScreenChanges(); d > time.Second+tickSlack {
		t.Fatalf("fresh proposals: next change in %v", d)
	}
}

func openEmpty(t *testing.T) *storage.Store {
	t.Helper()
	s, err := storage.Open(context.Background(), filepath.Join(t.TempDir(), "empty.db"), storage.Options{Create: true, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The live clock: one pending tick, due when the screen next changes and
// at least a second after the last; replaced when something sooner comes
// on screen; with the selected waiter read every other second.
func TestClockSchedule(t *testing.T) {
	f := oldFile(t)
	now := t0
	m := consoleOnClock(f.s, &now, "clock", 120, 40)
	m.opt.NoWatch, m.clockOn = false, true // live from here on; commands are not run

	if m.scheduleTick() == nil {
		t.Fatal("no tick scheduled")
	}
	first, stop := m.tickAt, m.tickStop
	if d := first.Sub(now); d < 30*time.Second || d > 31*time.Second {
		t.Fatalf("tick in %v, want 30.5 s", d)
	}
	if m.scheduleTick() != nil {
		t.Fatal("a second tick while the first is pending")
	}
	// A proposal made just now arrives: its age ticks every second.
	p, _, err := risk.Propose(risk.Draft{Command: "rm -rf /srv/new", SessionKey: "agent:new", TTL: 7 * time.Hour}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Submit(context.Background(), p, rival); err != nil {
		t.Fatal(err)
	}
	m.opt.NoWatch = true // Settle runs every command: not the clock's
	Settle(m, m.reload())
	selectID(t, m, p.ApprovalID)
	m.opt.NoWatch = false
	if m.scheduleTick() == nil {
		t.Fatal("not rescheduled for the new proposal's age")
	}
	select {
	case <-stop:
	default:
		t.Fatal("the later tick was not cancelled")
	}
	if d := m.tickAt.Sub(now); d > time.Second+tickSlack {
		t.Fatalf("tick in %v with a proposal made just now on screen", d)
	}
	// It fires: the next one is a second later, whatever is due sooner.
	now = now.Add(time.Second)
	m.Update(tickMsg{at: now, gen: m.tickGen})
	if !m.tickPending {
		t.Fatal("no tick after a tick")
	}
	if d := m.tickAt.Sub(now); d < minTickGap || d > 2*time.Second {
		t.Fatalf("next tick in %v", d)
	}
	// The tick reads the selected live waiter every waiterPollEvery: not
	// on the tick a second after the last read, on the one two seconds
	// after. Without a live waiter, not at all.
	if m.tickWaiter != "" {
		t.Fatal("the clock reads a waiter the proposal does not have")
	}
	m.waiters[m.selID] = storage.WaiterStatus{State: storage.WaiterLive}
	m.waiterPolled = now
	m.stopClock()
	m.scheduleTick()
	if m.tickAt.Sub(m.waiterPolled) < waiterPollEvery && m.tickWaiter != "" {
		t.Fatal("the waiter read again within a second")
	}
	now = now.Add(time.Second)
	m.Update(tickMsg{at: now, gen: m.tickGen})
	if m.tickWaiter != m.selID {
		t.Fatalf("the tick two seconds after the last read does not read the waiter (%q)", m.tickWaiter)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if msg := tick(ctx, f.s, 1, time.Millisecond, make(chan struct{}), m.selID)().(tickMsg); msg.waiter == nil || msg.waiter.id != m.selID {
		t.Fatalf("a tick asked for a waiter brought %+v", msg.waiter)
	}
	stopped := make(chan struct{})
	close(stopped)
	if msg := tick(ctx, f.s, 1, time.Hour, stopped, "")(); msg != nil {
		t.Fatalf("a cancelled tick sent %v", msg)
	}
}

// A waiter that starts heartbeating is a commit: the load it causes shows
// it, without waiting for the clock.
func TestLoadAfterCommitShowsTheWaiter(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	id := m.selID
	if id == "" {
		t.Fatal("nothing selected")
	}
	screenHas(t, m, "○ none")
	host, _ := os.Hostname()
	if err := f.s.Heartbeat(context.Background(), storage.Waiter{ApprovalID: id, Host: host, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	Settle(m, m.reload())
	if v := m.View(); !strings.Contains(v, "● live") {
		t.Fatalf("the waiter's first heartbeat did not show:\n%s", v)
	}
}

// Run by RunTerminal, the clock's timer sends its tick to the program
// itself, and a cancelled tick sends nothing.
func TestClockSendsItsTicks(t *testing.T) {
	m := console(t, newFixture(t), operator, 120, 40)
	got := make(chan tea.Msg, 4)
	m.send = func(msg tea.Msg) { got <- msg }
	m.opt.NoWatch, m.clockOn = false, true
	if cmd := m.scheduleTick(); cmd != nil {
		t.Fatal("a command for the clock although it can send its ticks")
	}
	select {
	case msg := <-got:
		if tm, ok := msg.(tickMsg); !ok || tm.gen != m.tickGen {
			t.Fatalf("sent %#v", msg)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no tick sent")
	}
	m.Update(tickMsg{at: t0, gen: m.tickGen}) // schedules the next
	if !m.tickPending || m.tickTimer == nil {
		t.Fatal("no next tick")
	}
	m.stopClock()
	select {
	case msg := <-got:
		t.Fatalf("a cancelled tick sent %#v", msg)
	case <-time.After(1500 * time.Millisecond):
	}
}

// A commit's wake-up draws nothing by itself, even when the clock has moved
// since the last frame: the countdowns wait for the clock's tick or for the
// list the wake-up reads, so that the frame showing the commit is not held
// behind a redraw of the countdowns (the terminal writes at most two frames
// per 2/60 s).
func TestWakeUpDrawsNothing(t *testing.T) {
	f := newFixture(t)
	now := t0
	s, err := storage.Open(context.Background(), f.path, storage.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := New(Options{Store: s, Actor: operator, Renderer: asciiRenderer(), Now: func() time.Time { return now }, NoWatch: true, NoPresence: true, Label: "wake"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	Settle(m, m.Init())
	before := m.View()
	now = now.Add(3 * time.Second)
	m.Update(reloadDueMsg{}) // the load is not run: only the frame after the message matters
	if m.View() != before {
		t.Fatal("a wake-up redrew the countdowns")
	}
	m.Update(keyMsg("j"))
	if m.View() == before {
		t.Fatal("a key did not draw the time it came at")
	}
}
