package tui

import (
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

// historyList is the history's list of audit events on screen: its cursor
// (list, whose first row on screen is the columns' heading) and its rows,
// drawn from what the console shows of them (histShown, handed to update
// before each frame).
type historyList struct {
	rowList[histShown]
}

// histShown is what the history's list is drawn from: the events (list's
// visible indexes them), their columns (historyRow) and the columns'
// widths (layoutHistory), the runs of started commands not ended yet, and
// the console's clock.
type histShown struct {
	events []storage.AuditEvent
	rows   []histRow
	cols   histCols
	runs   map[string]runInfo
	now    time.Time
}

func newHistoryList(st Styles, keys KeyMap) historyList {
	return historyList{rowList[histShown]{list: newList(keys, 1), st: st}}
}

// view draws the heading and the events on screen.
func (h *historyList) view() string {
	st, sh := h.st, &h.shown
	if len(h.visible) == 0 {
		return st.Subtle.Render("No audit events yet.")
	}
	c := sh.cols
	out := []string{st.Header.Render(fitWidth(c.head(), h.width))}
	n := h.pageRows() - h.head
	end := min(h.top+n, len(h.visible))
	for i := h.top; i < end; i++ {
		r := sh.rows[h.visible[i]]
		outcome, detail, refused := r.outcome, r.detail, r.refused
		if run := runOf(sh.runs, &sh.events[h.visible[i]]); run != nil {
			outcome, detail = runWords(*run, sh.now, detail)
			refused = refused || run.state != storage.RunRunning
		}
		line := c.line(r, outcome, detail)
		if i == h.cursor {
			out = append(out, st.Selected.Render(fitWidth("▶ "+line, h.width)))
			continue
		}
		style := st.HistoryOK
		if refused {
			style = st.HistoryRefused
		}
		out = append(out, fitWidth("  "+style.Render(line), h.width))
	}
	return strings.Join(out, "\n")
}
