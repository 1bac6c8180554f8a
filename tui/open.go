package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Opening one proposal from a page (Options.Open: approve-tui --open ID,
// ssh -t HOST open ID): the console starts with that proposal selected and
// its detail on screen, as enter on it in the list shows it. A proposal no
// longer pending is said so in the note (by whom and when it was decided,
// or that it expired unanswered), and shown as its event in the history
// when the audit log has one. A page can race the console's first load (it
// is sent when the proposal is written, and a fast operator may beat the
// commit to the file): an id the store does not have yet is looked up
// again for a few seconds (Options.OpenWait) before the console says there
// is no such proposal.
//
// The id is the page's text, which anyone able to send a page (or to run
// ssh with a key) wrote: every note that quotes it goes through the
// sanitiser (say), and it is only ever compared, never interpreted.

// DefaultOpenWait is how long an id that is not in the store yet is waited
// for; openPoll, how often the store is asked for it meanwhile.
const (
	DefaultOpenWait = 5 * time.Second
	openPoll        = 200 * time.Millisecond
)

// opening is a proposal to open that is not on screen yet.
type opening struct {
	id string
	// until: the moment (wall clock) the console stops waiting for it.
	until time.Time
	// What the last lookup found: looked once one came back; rec (nil
	// when the store has no such row) or err.
	looked bool
	rec    *storage.Record
	err    error
	// polling: a lookup is on its way; waiting: the note says the console
	// waits for the id.
	polling, waiting bool
}

// openMsg is what a lookup of the proposal to open found: the row, and for
// one no longer pending, the audit event that ended it (nil when the log
// has none).
type openMsg struct {
	id  string
	rec *storage.Record
	ev  *storage.AuditEvent
	err error
}

// startOpen begins opening opt.Open (Init).
func (m *Model) startOpen() tea.Cmd {
	if m.opt.Open == "" {
		return nil
	}
	wait := m.opt.OpenWait
	if wait <= 0 {
		wait = DefaultOpenWait
	}
	m.opening = &opening{id: m.opt.Open, until: time.Now().Add(wait)}
	return m.lookOpen(0)
}

// lookOpen asks the store for the proposal to open, after a pause.
func (m *Model) lookOpen(after time.Duration) tea.Cmd {
	m.opening.polling = true
	return m.oneOff(lookupOpen(m.ctx, m.opt.Store, m.opening.id, after))
}

func lookupOpen(ctx context.Context, s *storage.Store, id string, after time.Duration) tea.Cmd {
	return func() tea.Msg {
		if !pause(ctx, after) {
			return nil
		}
		rec, err := s.Get(ctx, id)
		if ctx.Err() != nil {
			return nil
		}
		msg := openMsg{id: id, rec: rec, err: err}
		if errors.Is(err, storage.ErrNotFound) {
			msg.rec, msg.err = nil, nil
		}
		if msg.err == nil && rec != nil && !listable(rec) {
			msg.ev = endingEvent(ctx, s, rec)
		}
		return msg
	}
}

// listable: the pending list may hold rec (applyFilter's test of status).
func listable(rec *storage.Record) bool {
	return rec.EffectiveStatus.Open() || rec.EffectiveStatus == ""
}

// endingEvent is the audit event that ended rec, as the history lists it:
// its decision (or expiry) in the chain, else the decision the table
// records that approve-tui did not make (OutsideDecisions), else, for a
// row ended some other way (a tier-2 block), the last decision attempt.
func endingEvent(ctx context.Context, s *storage.Store, rec *storage.Record) *storage.AuditEvent {
	want := map[model.Status]string{model.StatusConsumed: storage.EventApprove, model.StatusDenied: storage.EventDeny,
		model.StatusExpired: storage.EventExpire}[rec.EffectiveStatus]
	decision := func(e storage.AuditEvent) bool {
		return e.Event == storage.EventApprove || e.Event == storage.EventDeny || e.Event == storage.EventExpire
	}
	evs, err := s.Audit(ctx, storage.AuditQuery{ApprovalID: rec.ApprovalID, Limit: 100})
	if err == nil {
		for i := range evs { // newest first
			if e := evs[i]; e.Outcome == storage.OutcomeOK && (e.Event == want || want == "" && decision(e)) {
				return &evs[i]
			}
		}
	}
	if out, err := s.OutsideDecisions(ctx, 200); err == nil {
		for i := range out {
			if out[i].ApprovalID == rec.ApprovalID {
				return &out[i]
			}
		}
	}
	if want == "" && err == nil {
		for i := range evs {
			if decision(evs[i]) {
				return &evs[i]
			}
		}
	}
	return nil
}

// onOpen takes a lookup's result.
func (m *Model) onOpen(msg openMsg) tea.Cmd {
	o := m.opening
	if o == nil || msg.id != o.id {
		return nil // opened already, or the operator took over
	}
	o.polling, o.looked, o.rec, o.err = false, true, msg.rec, msg.err
	if rec := msg.rec; rec != nil && listable(rec) && rec.Status == model.StatusPending {
		if left, ok := rec.TimeLeft(m.now); ok && left <= 0 {
			// Pending in the table, past its expiry by the console's clock
			// (applyFilter leaves it out of the list): it expired.
			r := *rec
			r.EffectiveStatus = model.StatusExpired
			return m.openEnded(&r, msg.ev)
		}
	}
	if msg.rec != nil && !listable(msg.rec) {
		return m.openEnded(msg.rec, msg.ev)
	}
	return m.tryOpen()
}

// tryOpen opens the proposal once the list holds it; until the lookup
// says otherwise, or the wait is over, it asks again.
func (m *Model) tryOpen() tea.Cmd {
	o := m.opening
	if o == nil {
		return nil
	}
	for i, ri := range m.list.visible {
		if m.rows[ri].rec.ApprovalID == o.id {
			return m.openAt(i)
		}
	}
	if !o.looked || o.polling || (o.rec != nil && !m.loaded) {
		return nil // the lookup, or the list, is on its way
	}
	id := o.id
	if time.Now().Before(o.until) {
		var cmds []tea.Cmd
		switch {
		case o.err == nil && o.rec == nil && !o.waiting:
			o.waiting = true
			m.setNote("opening "+id+": no such proposal yet; waiting a few seconds for it", m.st.Subtle)
		case o.rec != nil && m.loaded && !m.loading && !m.restOwed:
			// Pending, and not in the list read so far: the list was read
			// before its commit. Read it again.
			cmds = append(cmds, m.reload())
		}
		return tea.Batch(append(cmds, m.lookOpen(openPoll))...)
	}
	m.opening = nil
	switch {
	case o.err != nil:
		m.setNote("could not open "+id+": "+storeAdvice(o.err), m.st.Error)
		m.emit("open", id, "error", m.note.text)
	case o.rec == nil:
		m.setNote("no proposal "+id, m.st.Warning)
		m.emit("open", id, "not_found", m.note.text)
	default:
		m.setNote(fmt.Sprintf("%s is pending, but not among the %d most urgent proposals the console holds", id, MaxLoaded), m.st.Warning)
		m.emit("open", id, "not_listed", m.note.text)
	}
	return nil
}

// openAt selects the list's visible row i and shows it whole, as enter
// does: the operator asked for it by name, so what it draws counts as read.
func (m *Model) openAt(i int) tea.Cmd {
	o := m.opening
	m.opening = nil
	if o.waiting {
		m.note = note{}
	}
	m.mode, m.event = viewPending, nil
	m.list.cursor = i
	m.list.scroll()
	cmd := m.selectionChanged(true)
	m.setDetailOpen(true)
	m.detail.Touch()
	m.emit("open", o.id, "opened", "")
	return cmd
}

// openEnded says how the proposal to open ended, and shows the event that
// ended it in the history, when there is one.
func (m *Model) openEnded(rec *storage.Record, ev *storage.AuditEvent) tea.Cmd {
	m.opening = nil
	w, outcome := endedWords(rec)
	m.say(w, m.st.Warning)
	m.emit("open", rec.ApprovalID, outcome, m.note.text)
	if ev == nil {
		return nil
	}
	m.mode = viewHistory
	m.event = &eventPage{ev: *ev}
	m.buildEventPage()
	// The history list, under the page, selects the event once loaded.
	e := *ev
	m.selectEvent = &e
	return m.reloadHistory()
}

// endedWords says how a proposal that is no longer pending ended: "ID was
// approved by alice 3m ago", "ID expired 1m ago, unanswered".
func endedWords(rec *storage.Record) (words, string) {
	id, st := rec.ApprovalID, rec.EffectiveStatus
	switch st {
	case model.StatusExpired:
		if rec.ExpiresAt == nil {
			return said(id + " expired, unanswered"), "expired"
		}
		return words{text: id + " expired", at: rec.ExpiresAt, tail: ", unanswered"}, "expired"
	case model.StatusConsumed, model.StatusDenied, model.StatusBlocked:
		text := id + " was " + st.Decision()
		if by := model.Sanitize(rec.ConsumedBy, model.Line); by != "" {
			text += " by " + by
		}
		if rec.ConsumedAt == nil {
			return said(text), st.Decision()
		}
		return saidAgo(text, rec.ConsumedAt), st.Decision()
	}
	return said(fmt.Sprintf("%s is not pending: its status is %q", id, model.Sanitize(string(st), model.Line))), "unknown"
}

// stopOpening: a key of the operator's own takes over from a proposal
// still to open.
func (m *Model) stopOpening() {
	if o := m.opening; o != nil {
		m.opening = nil
		if o.waiting {
			m.note = note{}
		}
	}
}
