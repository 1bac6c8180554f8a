package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The clock. The console redraws for the passing of time only when a text
// on screen changes with it: a countdown or an age shown to the second
// ticks once a second, one shown to the minute once a minute, and a screen
// without either (an empty list, proposals hours from expiry and their
// detail read long ago) does not tick at all, short of the presence
// refresh. Each tick is scheduled for the moment the first text changes,
// and at least minTickGap after the last one.
//
// A console left open used to tick every second whatever the screen showed
// and ask for the selected proposal's waiter every other second, each a
// wake-up and a frame; on a virtual machine each wake-up alone costs about
// 0.1 ms of CPU.

const (
	// minTickGap: the clock redraws at most once a second.
	minTickGap = time.Second
	// maxTickGap bounds the wait when nothing on screen changes with time:
	// a safety net, the presence refresh comes sooner.
	maxTickGap = time.Minute
	// waiterPollEvery: the selected proposal's live waiter is read again
	// this often by the clock (a runner of this host that died leaves no
	// commit behind); every load after a commit reads it too (loadPending).
	waiterPollEvery = 2 * time.Second
	// tickSlack lands a tick just after the change it is for.
	tickSlack = 5 * time.Millisecond
)

// tickMsg is the clock: the time it fired, the schedule it belongs to and,
// when the tick read it, the selected proposal's waiter state.
type tickMsg struct {
	at     time.Time
	gen    int
	waiter *waiterMsg
}

// tick fires once after d, unless stop is closed or ctx ends first.
func tick(ctx context.Context, s *storage.Store, gen int, d time.Duration, stop <-chan struct{}, waiter string) tea.Cmd {
	return func() tea.Msg {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil
		case <-stop:
			return nil
		case <-t.C:
			return tickNow(ctx, s, gen, waiter)
		}
	}
}

// tickNow is the tick: with a waiter id it reads that proposal's waiter
// state on the way (one message, one frame, instead of two).
func tickNow(ctx context.Context, s *storage.Store, gen int, waiter string) tickMsg {
	msg := tickMsg{at: time.Now(), gen: gen}
	if waiter != "" {
		w := readWaiter(ctx, s, waiter)
		msg.waiter = &w
	}
	return msg
}

// scheduleTick makes sure a tick is due by the time the screen next
// changes with the clock (or the presence row needs refreshing); it
// replaces a pending tick that would come too late. Tests that drive
// Update by hand (NoWatch) send their own ticks.
//
// Run by RunTerminal, the tick is a timer that sends its message to the
// program itself (m.send); otherwise it is a command that waits (the
// headless driver, teatest), which costs a goroutine and two hand-offs
// more per tick.
func (m *Model) scheduleTick() tea.Cmd {
	if m.opt.NoWatch || !m.clockOn {
		return nil
	}
	due := m.now.Add(m.untilScreenChanges())
	if !m.lastTick.IsZero() && due.Before(m.lastTick.Add(minTickGap)) {
		due = m.lastTick.Add(minTickGap)
	}
	wall := m.opt.Now()
	d := due.Sub(wall)
	if !m.opt.NoPresence {
		// The presence row is refreshed by the first Update after
		// PresenceEvery (presenceCmd); this tick is that Update when
		// nothing else happens.
		if p := m.presenceAt.Add(storage.PresenceEvery).Sub(time.Now()) + tickSlack; p < d {
			d, due = p, wall.Add(p)
		}
	}
	d = max(d, tickSlack)
	if m.tickPending && !m.tickAt.After(due.Add(tickSlack)) {
		return nil // the pending tick comes soon enough
	}
	m.stopClock()
	m.tickGen++
	m.tickAt, m.tickPending = wall.Add(d), true
	m.tickWaiter = ""
	if ws, ok := m.waiters[m.selID]; ok && ws.State == storage.WaiterLive && m.tickAt.Sub(m.waiterPolled) >= waiterPollEvery {
		// A live waiter may die without a commit (its process gone, its
		// heartbeat going stale): read it again. Any other change is a
		// commit, read with the load it causes.
		m.tickWaiter = m.selID
	}
	if send := m.send; send != nil {
		ctx, s, gen, waiter := m.ctx, m.opt.Store, m.tickGen, m.tickWaiter
		m.tickTimer = time.AfterFunc(d, func() { send(tickNow(ctx, s, gen, waiter)) })
		return nil
	}
	m.tickStop = make(chan struct{})
	return tick(m.ctx, m.opt.Store, m.tickGen, d, m.tickStop, m.tickWaiter)
}

// stopClock cancels the pending tick.
func (m *Model) stopClock() {
	if m.tickStop != nil {
		close(m.tickStop)
		m.tickStop = nil
	}
	if m.tickTimer != nil {
		m.tickTimer.Stop()
		m.tickTimer = nil
	}
	m.tickPending = false
}

// untilScreenChanges is how long after m.now a text on screen changes with
// the clock alone (maxTickGap when none does): the list rows' countdowns, a
// row leaving the list as it expires, the detail's ages and countdown, the
// votes' ages, the waiter's heartbeat, the age a note tells, the age of an
// audit event shown whole, the history's running commands.
func (m *Model) untilScreenChanges() time.Duration {
	now := m.now
	d := maxTickGap
	if !m.nextExpiry.IsZero() {
		d = min(d, m.nextExpiry.Sub(now)+tickSlack)
	}
	if m.mode == viewPending {
		end := min(m.list.top+m.listRows(), len(m.list.visible))
		for i := m.list.top; i < end; i++ {
			if left, ok := m.rows[m.list.visible[i]].rec.TimeLeft(now); ok {
				d = min(d, untilCountdownChanges(left))
			}
		}
	}
	if r := m.detail.rec; r != nil {
		d = min(d, untilAgoChanges(now.Sub(model.FromEpoch(r.CreatedAt))))
		if left, ok := r.TimeLeft(now); ok {
			if left > 0 {
				d = min(d, untilCountdownChanges(left))
			} else {
				d = min(d, untilAgoChanges(-left))
			}
		}
		if ws := m.detail.waiter; ws != nil && ws.Waiter != nil && (ws.State == storage.WaiterLive || ws.State == storage.WaiterDead) {
			d = min(d, untilAgoChanges(now.Sub(model.FromEpoch(ws.Waiter.HeartbeatAt))))
			d = min(d, untilAgoChanges(now.Sub(model.FromEpoch(ws.Waiter.StartedAt))))
		}
		for _, age := range m.detail.votes.votesAges(now) {
			d = min(d, untilAgoChanges(age)) // the votes block's "3m ago"
		}
	}
	if at := m.note.words.at; at != nil {
		d = min(d, untilAgoChanges(now.Sub(model.FromEpoch(*at))))
	}
	if p := m.event; p != nil && m.mode == viewHistory {
		d = min(d, untilAgoChanges(now.Sub(model.FromEpoch(p.ev.At))))
	}
	if m.mode == viewHistory && len(m.runs) > 0 {
		d = min(d, time.Second) // heartbeats' ages, and runs read every other second
	}
	return max(d, 0)
}

// untilCountdownChanges is how long until human.Duration of a
// duration shrinking from left shows another text. The text is left
// rounded to the second, shown to the second under an hour, to the minute
// under a day, to the hour beyond.
func untilCountdownChanges(left time.Duration) time.Duration {
	if left <= 0 {
		return time.Second
	}
	r := left.Round(time.Second)
	u := shownUnit(r)
	// The text changes when left drops below the rounding boundary under
	// the current unit's floor.
	boundary := r/u*u - time.Second/2
	return left - boundary + tickSlack
}

// untilAgoChanges is how long until human.Ago() of an age growing from age
// shows another text (to the minute from a minute on: human.Age).
func untilAgoChanges(age time.Duration) time.Duration {
	if age < 0 {
		return time.Second // in the future (clocks apart): rare, tick plainly
	}
	if age < time.Second {
		return time.Second - age + tickSlack // "just now" until a second
	}
	r := age.Round(time.Second)
	u := shownUnit(r)
	if human.AgeInMinutes(r) {
		u = time.Minute
	}
	boundary := (r/u+1)*u - time.Second/2
	return boundary - age + tickSlack
}

// shownUnit is the last unit human.Duration shows of a duration
// rounded to the second.
func shownUnit(r time.Duration) time.Duration {
	switch {
	case r < time.Hour:
		return time.Second
	case r < 24*time.Hour:
		return time.Minute
	}
	return time.Hour
}
