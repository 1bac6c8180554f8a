// The messages the console handles, and what each changes.

package tui

import (
	"errors"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case pendingMsg, restDueMsg, reloadDueMsg, historyMsg, runsMsg, waiterMsg, watchReadyMsg, decidedMsg, goneMsg, openMsg, judgedMsg, signerMsg, signedMsg, eventSigsMsg, identityMsg:
		m.inflight = max(m.inflight-1, 0)
	}
	switch msg := msg.(type) {
	case judgedMsg:
		return m, m.onJudged(msg)
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
		return m, nil
	case pendingMsg:
		return m, m.onPending(msg)
	case restDueMsg:
		if !m.restDue() {
			return m, nil // a load is on its way: the rest comes after it (loadDone)
		}
		return m, m.oneOff(m.startRest())
	case presenceWrittenMsg:
		if msg.alone {
			m.ownWrite(msg.before, msg.after)
		}
		return m, nil
	case historyMsg:
		if msg.gen == m.hgen {
			if msg.err != nil {
				m.setNote("history: "+msg.err.Error(), m.st.Error)
			} else {
				// The selection stays on the event it was on, wherever
				// the events that came since put it.
				keep, ok := m.selectedAudit()
				if e := m.selectEvent; e != nil {
					// Opened on the event that ended a proposal (open.go).
					keep, ok, m.selectEvent = *e, true, nil
				}
				m.history, m.runs = msg.events, msg.runs
				m.hrows = make([]histRow, len(msg.events))
				for i, e := range msg.events {
					m.hrows[i] = historyRow(e)
				}
				m.applyHistoryFilter(keep, ok)
				m.buildEventPage()
			}
		}
		return m, nil
	case runsMsg:
		if msg.gen == m.hgen {
			m.runs = msg.runs
			m.layoutHistory()
			m.buildEventPage()
		}
		return m, nil
	case waiterMsg:
		return m, m.applyWaiter(msg)
	case watchReadyMsg:
		if msg.err != nil {
			m.setNote("live updates off: "+msg.err.Error(), m.st.Warning)
			return m, nil
		}
		m.watcher = msg.w
		return m, waitChange(m.ctx, m.watcher)
	case changedMsg:
		if errors.Is(msg.err, storage.ErrMoved) {
			// The file at the path is another one (or none): what is on
			// screen may not be in it. Say so, drop any prompt, read again.
			m.setNote("database file changed: "+storeReason(msg.err), m.st.Error)
			if m.prompt != nil {
				m.emit("prompt", m.prompt.id, "closed", "database file changed")
				m.prompt = nil
			}
			m.emit("store", "", "moved", m.note.text)
			m.moved() // another file: read it in full
			return m, tea.Batch(m.reload(), waitChange(m.ctx, m.watcher))
		}
		if msg.err != nil {
			m.setNote("live updates stopped: "+storeReason(msg.err), m.st.Error)
			return m, nil
		}
		if !m.changed(msg.who) {
			// Woken by our own presence refresh alone, or a load is on its
			// way (another follows it): nothing to read now.
			return m, waitChange(m.ctx, m.watcher)
		}
		return m, tea.Batch(m.reloadSoon(), waitChange(m.ctx, m.watcher))
	case reloadDueMsg:
		m.loading = false
		return m, m.reload()
	case healthMsg:
		switch {
		case msg.err != nil:
			// Keep what the last check that ran found.
			m.setNote("integrity check failed: "+storeReason(msg.err), m.st.Warning)
		case msg.damaged != "" && m.damaged == "":
			m.setNote("the database file is damaged, nothing is approved from it (deny still works): "+
				model.Sanitize(msg.damaged, model.Line), m.st.Error)
			m.emit("store", "", "damaged", m.note.text)
			m.damaged = msg.damaged
		default:
			m.damaged = msg.damaged
		}
		return m, checkHealth(m.ctx, m.opt.Store, storage.HealthMaxAge)
	case tickMsg:
		if msg.gen == m.tickGen {
			// It fired: the next is set after this update.
			m.tickPending, m.tickStop, m.tickTimer = false, nil, nil
		}
		cmd := m.onTick(msg.at)
		m.lastTick = m.now
		if msg.waiter != nil {
			m.waiterPolled = m.now
			cmd = tea.Batch(cmd, m.applyWaiter(*msg.waiter))
		}
		return m, cmd
	case decidedMsg:
		return m, m.onDecided(msg)
	case signerMsg:
		return m, m.onSigner(msg)
	case signedMsg:
		return m, m.onSigned(msg)
	case identityMsg:
		m.onIdentity(msg)
		return m, nil
	case eventSigsMsg:
		if p := m.event; p != nil && msg.gen == m.egen {
			p.sigs, p.sigsRead, p.sigErr = msg.sigs, true, msg.err
			m.buildEventPage()
		}
		return m, nil
	case goneMsg:
		m.onGone(msg)
		return m, nil
	case openMsg:
		return m, m.onOpen(msg)
	case tea.KeyMsg:
		if msg.Type == tea.KeyEsc && msg.Alt && !msg.Paste && !m.reply.on {
			// Two escapes read at once (pressed quickly, or bunched by a
			// slow link) come as one alt+esc: each is one step back.
			esc := tea.KeyMsg{Type: tea.KeyEsc}
			first := m.onKey(esc)
			m.syncDetailVisible()
			second := m.onKey(esc)
			m.syncDetailVisible()
			return m, tea.Batch(first, second)
		}
		cmd := m.onKey(msg)
		m.syncDetailVisible()
		return m, cmd
	}
	return m, nil
}

func (m *Model) onPending(msg pendingMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil // a newer load is on its way
	}
	if msg.err != nil {
		advice := storeAdvice(msg.err)
		if advice != m.storeErr {
			m.emit("load", "", "error", advice)
		}
		m.storeErr = advice
		return m.loadDone()
	}
	m.storeErr = ""
	m.took(msg.took)
	var waiter tea.Cmd
	if msg.waiter != nil {
		waiter = m.applyWaiter(*msg.waiter)
	}
	m.notifiers = msg.notifiers
	if msg.same {
		m.unchanged(msg)
		return tea.Batch(waiter, m.setPresences(msg.presences), m.loadDone())
	}
	if !m.loaded {
		m.emit("loaded", "", "", fmt.Sprintf("%d pending", msg.total))
	}
	selWasListed := m.selID != "" && m.indexOf(m.selID) >= 0
	rows, partial := m.take(msg)
	m.quorum.take(msg, rows, partial)
	m.votesChanged() // the detail is shown again below (selectionChanged)
	if m.ranking.Provisional != msg.ranking.Provisional {
		if msg.ranking.Provisional {
			m.emit("ranking", "", "", fmt.Sprintf("%d pending to rank", msg.ranking.Total))
		} else {
			m.emit("ranked", "", "", "")
		}
	}
	if err := msg.ranking.Err; msg.ranking.Provisional && err != nil && (m.ranking.Err == nil || m.ranking.Err.Error() != err.Error()) {
		m.setNote("ranking the pending proposals stopped: "+storeReason(err)+"; listed soonest first until it is done (tried again every few seconds)", m.st.Warning)
	}
	m.ranking = msg.ranking
	cmds := []tea.Cmd{waiter}
	// A proposal on screen that left the list was decided or expired
	// elsewhere: close its prompt and say how.
	if selWasListed && m.indexOf(m.selID) < 0 && !m.explained[m.selID] && m.deciding[m.selID] == 0 {
		cmds = append(cmds, m.oneOff(explainGone(m.ctx, m.opt.Store, m.selID)))
	}
	// The proposal of an open prompt rewritten under it: what was read is
	// not what would be approved. Close the prompt and say so; the detail
	// shows the new content, unread.
	if p := m.prompt; p != nil {
		if i := m.indexOf(p.id); i >= 0 && m.rows[i].rec.PayloadSHA256 != p.rec.PayloadSHA256 {
			m.prompt = nil
			m.setNote(p.id+" changed while you were reading it: its content is not what you read. Read it again", m.st.Error)
			m.emit("prompt", p.id, "closed", "content changed")
		}
	}
	m.ring(rows)
	m.loaded = true
	m.applyFilter()
	cmds = append(cmds, m.selectionChanged(false), m.setPresences(msg.presences), m.tryOpen())
	m.owe(partial) // the rest comes once the frame is out and on its way (loadDone)
	return tea.Batch(append(cmds, m.loadDone())...)
}

// loadDone ends a load of the pending list: the next one starts if a
// commit was noticed while it ran, the rest of a long list is read
// restDelay later if it is owed (feed.endLoad).
func (m *Model) loadDone() tea.Cmd {
	again, rest := m.endLoad()
	switch {
	case again:
		return m.reloadSoon()
	case rest:
		return m.oneOff(tea.Tick(restDelay, func(time.Time) tea.Msg { return restDueMsg{} }))
	}
	return nil
}

// reloadSoon loads the pending list after another process's commit, once
// the pause after the last load is over (feed.paced).
func (m *Model) reloadSoon() tea.Cmd {
	if wait := m.paced(); wait > 0 {
		return m.oneOff(reloadAfter(wait))
	}
	return m.reload()
}

// applyWaiter takes a waiter state read for proposal msg.id.
func (m *Model) applyWaiter(msg waiterMsg) tea.Cmd {
	if msg.err != nil {
		return nil // the clock asks again
	}
	m.waiters[msg.id] = msg.ws
	if msg.id == m.selID {
		if msg.sigsRead && msg.sigErr == nil {
			m.sigs, m.sigsID = msg.sigs, msg.id
			m.detail.votes = m.votesFor(msg.id)
		}
		ws := msg.ws
		m.detail.waiter = &ws
		m.detail.deliveries = msg.deliveries
		m.detail.Refresh(m.now)
		if m.following != "" {
			// The detail's length changed: take the followed scroll again.
			return m.follow()
		}
	}
	return nil
}

func (m *Model) onTick(t time.Time) tea.Cmd {
	m.now = m.opt.Now()
	before := len(m.list.visible)
	if !m.nextExpiry.IsZero() && !m.now.Before(m.nextExpiry) {
		// A row expired: it leaves the list. (Until then the clock
		// changes nothing applyFilter decides.)
		m.applyFilter()
	}
	var cmds []tea.Cmd
	if sel := m.selected(); sel == nil || sel.ApprovalID != m.selID {
		if m.selID != "" && before != len(m.list.visible) {
			m.setNote(fmt.Sprintf("%s expired", m.selID), m.st.Warning)
			m.emit("gone", m.selID, "expired", m.note.text)
			if m.prompt != nil && m.prompt.id == m.selID {
				m.prompt = nil
				m.emit("prompt", m.selID, "closed", "expired")
			}
		}
		cmds = append(cmds, m.selectionChanged(false))
	} else {
		// The waiter state comes with the tick (clock.go) every
		// waiterPollEvery, and with every load after a commit.
		m.detail.Refresh(m.now)
	}
	if m.mode == viewHistory {
		m.ageEventPage()
	}
	if m.mode == viewHistory && len(m.runs) > 0 && t.Second()%2 == 0 {
		// A runner's death is no commit: its heartbeat goes stale.
		ids := make([]string, 0, len(m.runs))
		for id := range m.runs {
			ids = append(ids, id)
		}
		cmds = append(cmds, m.oneOff(loadRuns(m.ctx, m.opt.Store, m.hgen, ids)))
	}
	return tea.Batch(cmds...)
}

func (m *Model) onDecided(msg decidedMsg) tea.Cmd {
	if m.deciding[msg.id]--; m.deciding[msg.id] <= 0 {
		delete(m.deciding, msg.id)
	}
	closed := false
	var rf *storage.RefusedError
	if m.prompt != nil && m.prompt.id == msg.id {
		keep := errors.Is(msg.err, storage.ErrConfirmMismatch) || (errors.As(msg.err, &rf) && rf.Code == storage.RefusedPhraseMismatch)
		if msg.err == nil || !keep {
			m.prompt, closed = nil, true
		} else if rf != nil {
			m.prompt.message = rf.Reason
		}
	}
	var vr *storage.VoteRecorded
	if errors.As(msg.err, &vr) && vr.Quorum != nil {
		// A vote, committed; the proposal stays pending, and shows where
		// it stands now (the reload below reads it again).
		if m.quorum.byID == nil {
			m.quorum.byID = map[string]*storage.Quorum{}
		}
		m.quorum.byID[msg.id] = vr.Quorum
		m.votesChanged()
		m.detail.Refresh(m.now)
	}
	var np *storage.NotPendingError
	if msg.err == nil || errors.As(msg.err, &np) || errors.Is(msg.err, storage.ErrNotFound) {
		m.explained[msg.id] = true
		// Back to the list: the next proposal must be chosen, not inherited.
		m.pageOpen, m.focusList = false, true
	}
	m.say(outcomeText(msg), outcomeStyle(msg, m.st))
	m.emit(msg.action, msg.id, decisionOutcome(msg), m.note.text)
	if closed {
		m.emit("prompt", msg.id, "closed", "decided")
	}
	return m.reload()
}

func (m *Model) onGone(msg goneMsg) {
	if m.deciding[msg.id] > 0 {
		// This console's own decision on it is in flight: its outcome
		// (decided here, or lost, and to whom) says what happened.
		return
	}
	if msg.err != nil || msg.rec == nil {
		m.setNote(msg.id+" left the pending list", m.st.Warning)
	} else {
		m.say(goneText(msg.rec), m.st.Warning)
	}
	// Why the proposal being read went away stays on screen until the
	// operator dismisses it (esc), whatever opens meanwhile.
	m.note.sticky = true
	m.note.words.tail += " — esc to dismiss"
	m.ageNote()
	outcome := goneOutcome(msg.rec)
	if m.prompt != nil && m.prompt.id == msg.id {
		// Our prompt was open on it: another actor won the race.
		kind := m.prompt.kind.String()
		m.prompt = nil
		if outcome == "approved" || outcome == "denied" {
			m.emit(kind, msg.id, OutcomeLost, m.note.text)
		} else {
			m.emit(kind, msg.id, outcome, m.note.text)
		}
		m.emit("prompt", msg.id, "closed", "decided elsewhere")
		return
	}
	m.emit("gone", msg.id, outcome, m.note.text)
}

// setNote shows text under the list.
func (m *Model) setNote(text string, st lipgloss.Style) { m.say(said(text), st) }

// say shows words under the list. Notes quote ids and reasons that come
// from the file: the whole text goes through the sanitiser (the program's
// own words pass unchanged).
func (m *Model) say(w words, st lipgloss.Style) {
	m.note = note{words: w, style: st}
	m.ageNote()
}

// ageNote writes the note's text at the console's clock: the age it
// tells, if it tells one, as the clock moves on (untilScreenChanges ticks
// for it).
func (m *Model) ageNote() { m.note.text = model.Sanitize(m.note.words.String(m.now), model.Line) }
