// Keys: what each key does where it is pressed, prompt first, then the
// filter, the help page and the screen's own keys.

package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// onKey routes a key press: prompt first, then the filter, then the help
// page, then the screen's own keys.
func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyCtrlC {
		return m.quit()
	}
	if m.replyKey(k) {
		return nil
	}
	if key.Matches(k, m.keys.Redraw) {
		// Anywhere, prompts included, and without taking over from the
		// console followed: it changes nothing but the screen.
		return m.redraw()
	}
	// Keys typed faster than the terminal is read (a fast typist, a slow SSH
	// link, tmux send-keys) arrive as one message of several runes: outside
	// the prompts they are separate commands.
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste && m.prompt == nil && !m.filtering {
		var cmds []tea.Cmd
		for _, r := range k.Runes {
			cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}))
		}
		return tea.Batch(cmds...)
	}
	if m.prompt != nil {
		return m.promptKey(k)
	}
	// A proposal still to open (open.go) gives way to the operator's keys.
	m.stopOpening()
	if m.following != "" && !key.Matches(k, m.keys.Follow) {
		// Any key of the operator's own takes over.
		m.setNote("stopped following "+m.following, m.st.Subtle)
		m.following = ""
	}
	if m.refusal {
		// After a refused approve the operator is probably typing the id
		// they expected to be asked for: those keys must not run as list
		// commands (d denies, q quits). Only esc or enter dismiss it.
		if k.Type == tea.KeyEsc || k.Type == tea.KeyEnter {
			m.refusal = false
			m.note = note{}
		}
		return nil
	}
	if m.filtering {
		return m.filterKey(k)
	}
	if m.showHelp {
		if key.Matches(k, m.keys.Help, m.keys.Back, m.keys.Quit) {
			m.showHelp = false
		}
		return nil
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return m.quit()
	case key.Matches(k, m.keys.Help):
		m.showHelp = true
		return nil
	case key.Matches(k, m.keys.History):
		m.event = nil // the history opens on its list
		if m.mode == viewPending {
			m.mode = viewHistory
			return m.reloadHistory()
		}
		m.mode = viewPending
		return nil
	case key.Matches(k, m.keys.Follow) && m.mode == viewPending:
		return m.startFollowing()
	case key.Matches(k, m.keys.Filter):
		m.event = nil // the filter narrows the list: back to it
		m.filtering = true
		return m.filter.Focus()
	}
	if m.mode == viewHistory {
		return m.historyKey(k)
	}
	return m.pendingKey(k)
}

func (m *Model) pendingKey(k tea.KeyMsg) tea.Cmd {
	detailKeys := (m.wide && !m.focusList) || (!m.wide && m.pageOpen)
	switch {
	case key.Matches(k, m.keys.Back):
		switch {
		case m.note.sticky:
			m.note = note{}
		case !m.wide && m.pageOpen:
			m.pageOpen = false
		case m.wide && !m.focusList:
			m.focusList = true
		case m.filter.Value() != "":
			m.filter.SetValue("")
			m.applyFilter()
			return m.selectionChanged(true)
		}
		return nil
	case key.Matches(k, m.keys.Open):
		if m.selected() != nil {
			m.setDetailOpen(true)
			m.detail.Touch()
		}
		return nil
	case m.wide && key.Matches(k, m.keys.Focus):
		m.focusList = k.String() == "left" || k.String() == "h"
		if !m.focusList {
			m.detail.Touch()
		}
		return nil
	case key.Matches(k, m.keys.Approve):
		return m.startApprove()
	case key.Matches(k, m.keys.Deny):
		return m.startDeny()
	}
	if detailKeys {
		return m.detail.update(k)
	}
	old := m.list.cursor
	if m.list.update(k); m.list.cursor == old {
		return nil
	}
	return m.selectionChanged(true)
}

func (m *Model) filterKey(k tea.KeyMsg) tea.Cmd {
	switch k.Type {
	case tea.KeyEnter:
		m.filtering = false
		m.filter.Blur()
		return nil
	case tea.KeyEsc:
		m.filtering = false
		m.filter.Blur()
		m.filter.SetValue("")
	default:
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(k)
		_ = cmd
	}
	if m.mode == viewHistory {
		m.applyHistoryFilter(m.selectedAudit())
		return nil
	}
	m.applyFilter()
	return m.selectionChanged(true)
}

// startApprove opens the approve prompt once the whole proposal has been
// displayed. The store checks everything again; these checks only spare
// the operator a prompt that cannot succeed.
func (m *Model) startApprove() tea.Cmd {
	rec := m.selected()
	switch {
	case rec == nil:
		return m.refuse("approve", "", "nothing selected", m.st.Warning)
	case m.opt.Actor.ReadOnly || m.opt.Store.ReadOnlyReason() != "":
		// The decision path refuses, and says why; the console only relays.
		return m.decide(rec.ApprovalID, approve(m.ctx, m.opt.Store, rec.ApprovalID, "", rec.PayloadSHA256, m.opt.Actor))
	case rec.Tampered != "":
		return m.refuse("approve", rec.ApprovalID, rec.ApprovalID+" was changed after submit: it can be denied (d), never approved", m.st.Error)
	case rec.Corrupt != "":
		return m.refuse("approve", rec.ApprovalID, rec.ApprovalID+" is corrupt: it can be denied (d), never approved", m.st.Error)
	case rec.Hardline:
		return m.refuse("approve", rec.ApprovalID, "HARDLINE: Hermes never runs this command, whoever approves it; it cannot be approved: deny it (d)", m.st.Error)
	case !rec.RequiresTextConfirm && model.UntypableID(rec.ApprovalID) != "":
		return m.refuse("approve", rec.ApprovalID, model.UntypableID(rec.ApprovalID)+": it cannot be typed for sure, so it can only be denied (d)", m.st.Error)
	case !rec.RequiresTextConfirm && len([]rune(rec.ApprovalID)) < storage.MinApprovableID:
		return m.refuse("approve", rec.ApprovalID, fmt.Sprintf("the id %s is shorter than %d characters, too easy to type by accident: it can only be denied (d)",
			rec.ApprovalID, storage.MinApprovableID), m.st.Error)
	case !m.detail.SeenAll():
		m.setDetailOpen(true)
		if m.detail.Held() {
			return m.refuse("approve", rec.ApprovalID, rec.ApprovalID+" came on screen by itself (the list changed under you): read it first (enter, then scroll)", m.st.Warning)
		}
		if what := m.detail.stillLoading(); what != "" {
			// Nothing on screen counts as read until it has arrived: say
			// what is missing, not lines that are there to read.
			verb := "is"
			if strings.Contains(what, " and ") {
				verb = "are"
			}
			return m.refuse("approve", rec.ApprovalID, "not yet: "+what+" "+verb+" still loading for "+rec.ApprovalID+
				"; read it once it is on screen, then approve again (a)", m.st.Warning)
		}
		// What the frame this key brings shows counts once it is drawn:
		// the note speaks of the screen the operator is about to see.
		n := m.detail.unreadAfterThisFrame()
		if n == 0 {
			// It all fits on the page this key opened: on screen now, not
			// read yet.
			return m.refuse("approve", rec.ApprovalID, "read it first: all of "+rec.ApprovalID+" is on screen now; approve again (a) once you have", m.st.Warning)
		}
		return m.refuse("approve", rec.ApprovalID, "read it all first: "+nLines(n)+" of the command and diff "+human.Plural(n, "has", "have")+
			" not been on screen (scroll through them: ↓/pgdn; End skips them)", m.st.Warning)
	}
	return m.openPrompt(promptApprove, rec)
}

func (m *Model) startDeny() tea.Cmd {
	rec := m.selected()
	switch {
	case rec == nil:
		return m.refuse("deny", "", "nothing selected", m.st.Warning)
	case m.opt.Actor.ReadOnly || m.opt.Store.ReadOnlyReason() != "":
		return m.decide(rec.ApprovalID, deny(m.ctx, m.opt.Store, rec.ApprovalID, "", m.opt.Actor))
	}
	return m.openPrompt(promptDeny, rec)
}

// refuse says why an action did not start, on screen and in the event log.
// A refused approve holds the keyboard until it is dismissed (esc or
// enter): see refusal.
func (m *Model) refuse(action, id, text string, st lipgloss.Style) tea.Cmd {
	if action == "approve" && id != "" {
		text += " — esc or enter to go on"
		m.refusal = true
	}
	m.setNote(text, st)
	m.emit(action, id, OutcomeRefused, text)
	return nil
}

func (m *Model) openPrompt(kind promptKind, rec *storage.Record) tea.Cmd {
	m.signGen++
	m.prompt = newPrompt(kind, rec, m.st, m.width)
	m.prompt.setVotes(m.votesFor(rec.ApprovalID))
	if !m.note.sticky {
		m.note = note{}
	}
	if names, approving := m.othersOn(rec.ApprovalID); approving {
		// Advisory: the store still lets exactly one decision through,
		// and counts each person's vote once.
		text := strings.Join(names, ", ") + " is approving this proposal right now"
		if q := m.quorum.of(rec.ApprovalID); q != nil && kind == promptApprove {
			text = strings.Join(names, ", ") + " is voting on this proposal right now: it needs " + describe(q.Standing) + ", each person counted once"
		}
		m.setNote(text, m.st.Warning)
	}
	m.emit("prompt", rec.ApprovalID, "opened", kind.String())
	return m.prompt.input.Focus()
}

func (m *Model) promptKey(k tea.KeyMsg) tea.Cmd {
	p := m.prompt
	switch {
	case k.Type == tea.KeyEsc:
		m.prompt = nil
		m.signGen++ // a signature on its way is not used
		m.setNote("cancelled", m.st.Subtle)
		m.emit("prompt", p.id, "closed", "cancelled")
		return nil
	case p.signing:
		// The typed text is what is being signed for: it stays as it is
		// until the signature comes (or esc).
		return nil
	case k.Type == tea.KeyEnter:
		p.typed = p.input.Value()
		if m.mustSign(p) {
			return m.startSigning(p)
		}
		return m.submit(p, nil, "")
	}
	if p.refuses(k) {
		m.emit("paste", p.id, OutcomeRefused, pasteRefused)
	}
	return p.update(k)
}

func (m *Model) historyKey(k tea.KeyMsg) tea.Cmd {
	switch {
	case m.event != nil:
		m.eventKey(k)
		return nil
	case key.Matches(k, m.keys.Back):
		m.mode = viewPending
		return nil
	case key.Matches(k, m.keys.Open):
		return m.openEvent()
	}
	m.hist.update(k)
	m.hist.scroll()
	return nil
}
