// The screen's layout, and the list's filter, cursor and selection.

package tui

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/storage"
)

// syncDetailVisible tells the detail pane whether it is on screen: beside
// the list when wide, as a page when narrow, never under the help page or
// the history.
func (m *Model) syncDetailVisible() {
	on := m.mode == viewPending && !m.showHelp && (m.wide || m.pageOpen || m.prompt != nil)
	m.detail.SetVisible(on && m.width >= MinWidth && m.height >= MinHeight)
}

// setDetailOpen opens the detail (open) or closes it: beside the list
// when wide, where it takes the keys from the list; as a page of its own
// when narrow.
func (m *Model) setDetailOpen(open bool) {
	if m.wide {
		m.focusList = !open
	} else {
		m.pageOpen = open
	}
	m.syncDetailVisible()
}

func (m *Model) setSize(w, h int) {
	m.width, m.height = w, h
	m.wide = w >= wideWidth
	m.help.Width = w
	m.filter.Width = max(w-4, 10)
	m.layout()
	m.header.setSize(w, h)
	m.list.setSize(m.listWidth(), m.listRows())
	m.hist.setSize(w, m.listRows())
	if m.prompt != nil {
		m.prompt.setSize(w, m.bodyHeight())
	}
	m.layoutHistory()
	m.buildEventPage()
	m.syncDetailVisible()
}

// layout sizes the detail pane for the current screen.
func (m *Model) layout() {
	w, h := m.detailSize()
	m.detail.setSize(w, h)
	m.detail.Refresh(m.now)
}

// Heights of the fixed parts: header (2 lines), note (1), help (1).
const chromeHeight = 4

func (m *Model) bodyHeight() int { return max(m.height-chromeHeight, 1) }

func (m *Model) listWidth() int {
	if m.wide {
		return m.width / 2
	}
	return m.width
}

// detailSize is the detail's text area: beside the list in a bordered pane
// (one column of padding) when wide, the whole body when narrow.
func (m *Model) detailSize() (int, int) {
	if m.wide {
		return m.width - m.listWidth() - 4, m.bodyHeight() - 2
	}
	return m.width, m.bodyHeight()
}

// listRows is how many list rows fit.
func (m *Model) listRows() int { return max(m.bodyHeight()-1, 1) }

// applyFilter recomputes the visible rows and keeps the selection on the
// same proposal where it still shows.
func (m *Model) applyFilter() {
	raw := strings.TrimSpace(m.filter.Value())
	q := strings.ToLower(raw)
	// A filter that is exactly an id shows that proposal only: another one
	// whose command or reason mentions the id must not rank above it.
	exact := -1
	if raw != "" {
		exact = m.indexOf(raw)
	}
	m.list.visible = m.list.visible[:0]
	sel := -1
	soonest := time.Duration(-1)
	for i, r := range m.rows {
		if exact >= 0 && i != exact {
			continue
		}
		if !r.rec.EffectiveStatus.Open() && r.rec.EffectiveStatus != "" {
			continue
		}
		left, expires := r.rec.TimeLeft(m.now)
		if expires && left <= 0 {
			continue // expired while loaded: gone from the pending list
		}
		if q != "" && !strings.Contains(r.search, q) {
			continue
		}
		if expires && (soonest < 0 || left < soonest) {
			soonest = left
		}
		if r.rec.ApprovalID == m.selID {
			sel = len(m.list.visible)
		}
		m.list.visible = append(m.list.visible, i)
	}
	// The clock ticks when the first of them leaves the list.
	m.nextExpiry = time.Time{}
	if soonest >= 0 {
		m.nextExpiry = m.now.Add(soonest)
	}
	switch {
	case sel >= 0:
		m.list.cursor = sel
	case m.list.cursor >= len(m.list.visible):
		m.list.cursor = max(len(m.list.visible)-1, 0)
	}
	m.list.scroll()
}

func (m *Model) selected() *storage.Record {
	i := m.list.at()
	if i < 0 {
		return nil
	}
	return m.rows[i].rec
}

// selectionChanged refreshes the detail pane for the selected proposal
// and asks for its waiter state.
// selectionChanged shows the selected proposal in the detail. byOperator:
// the operator moved the selection (a key), rather than a reload or the
// clock moving it under them.
func (m *Model) selectionChanged(byOperator bool) tea.Cmd {
	rec := m.selected()
	if rec == nil {
		m.selID = ""
		m.detail.Show(nil, nil, m.now, byOperator)
		return nil
	}
	changed := rec.ApprovalID != m.selID
	m.selID = rec.ApprovalID
	var ws *storage.WaiterStatus
	if w, ok := m.waiters[rec.ApprovalID]; ok {
		ws = &w
	}
	m.detail.votes = m.votesFor(rec.ApprovalID)
	j, judging := m.judgementFor(rec)
	m.detail.judgement = j
	m.detail.Show(rec, ws, m.now, byOperator)
	if changed || ws == nil {
		return tea.Batch(judging, m.oneOff(loadWaiter(m.ctx, m.opt.Store, shownOf(rec))))
	}
	return judging
}
