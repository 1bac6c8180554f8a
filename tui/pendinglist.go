package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/human"
)

// pendingList is the pending list on screen: its cursor (list) and its
// rows, drawn from what the console shows of them (listShown, handed to
// update before each frame). A row drawn in the last frame is kept while
// everything it is drawn from is the same (memo), so that an idle console
// redrawing a countdown lays out that row alone.
type pendingList struct {
	rowList[listShown]
	memo listMemo
}

// listShown is what the pending list is drawn from: the rows loaded
// (visible indexes them), whether they are loaded yet and a filter is set,
// whether the VOTE column shows, the console's clock, who else shows a
// proposal (othersOn) and where it stands against the policy (progress).
type listShown struct {
	rows                      []row
	loaded, filtered, voteCol bool
	now                       time.Time
	others                    func(id string) (names []string, approving bool)
	votes                     func(id string) string
}

// listMemo is the list as last drawn: its rows from the top, the list
// they made (under the heading listFor), and the heading.
type listMemo struct {
	rows     []rowMemo
	list     string
	listFor  string
	listHead struct {
		width, sessW int
		votes        bool
		s            string
	}
}

func newPendingList(st Styles, keys KeyMap) pendingList {
	return pendingList{rowList: rowList[listShown]{list: newList(keys, 0), st: st}}
}

// view draws the visible rows of the list.
func (p *pendingList) view() string {
	st, width, sh := p.st, p.width, &p.shown
	if !sh.loaded {
		return st.Subtle.Render("Loading proposals…")
	}
	if len(p.visible) == 0 {
		if sh.filtered {
			return st.Subtle.Render("No pending proposal matches the filter.")
		}
		return st.Subtle.Render("No pending proposals. New ones appear here as agents submit them.")
	}
	sessW := min(max(width/5, 10), 24)
	cmdW := max(width-2-4-1-7-1-1-1-sessW-1, 8)
	votes := ""
	if sh.voteCol {
		// Approvals so far of those the policy asks for: "1/2".
		votes = "VOTE "
		cmdW = max(cmdW-len(votes), 8)
	}
	mm := &p.memo
	if mm.listHead.width != width || mm.listHead.sessW != sessW || mm.listHead.votes != sh.voteCol || mm.listHead.s == "" {
		mm.listHead.width, mm.listHead.sessW, mm.listHead.votes = width, sessW, sh.voteCol
		mm.listHead.s = st.Header.Render(fitWidth("  RISK    LEFT ! "+votes+padRight("SESSION", sessW)+" COMMAND", width))
	}
	end := min(p.top+p.pageRows(), len(p.visible))
	// A row drawn in the last frame at the same place, with the same
	// countdown, cursor and marks is taken from it; so is its countdown,
	// until it changes; so is the whole list when every row is.
	if n := end - p.top; len(mm.rows) != n {
		mm.rows, mm.list = make([]rowMemo, n), ""
	}
	same := mm.list != "" && mm.listHead.s == mm.listFor
	for i := p.top; i < end; i++ {
		r, at := sh.rows[p.visible[i]], &mm.rows[i-p.top]
		k := p.rowKey(r, i == p.cursor, width, sessW, cmdW, at)
		if at.line == "" || at.key != k {
			at.key, at.line, same = k, p.rowView(r, k, at), false
		}
	}
	if !same {
		out := make([]string, 0, len(mm.rows)+1)
		out = append(out, mm.listHead.s)
		for _, r := range mm.rows {
			out = append(out, r.line)
		}
		mm.list, mm.listFor = strings.Join(out, "\n"), mm.listHead.s
	}
	return mm.list
}

// rowKey says what a row shows: its countdown, flag, cursor and the marks
// of other consoles.
func (p *pendingList) rowKey(r row, selected bool, width, sessW, cmdW int, at *rowMemo) rowKey {
	rec, now := r.rec, p.shown.now
	k := rowKey{rec: rec, selected: selected, width: width, sessW: sessW, cmdW: cmdW, left: "never", flag: " ", cursor: " ", other: " "}
	if tl, ok := rec.TimeLeft(now); ok {
		c := &at.left
		if at.key.rec != rec || c.text == "" || now.Before(c.from) || !now.Before(c.until) {
			*c = countdown{text: human.Duration(tl), from: now, until: now.Add(untilCountdownChanges(tl) - tickSlack)}
		}
		k.left = c.text
		k.urgency = clamp01(1 - tl.Seconds()/300)
	}
	switch {
	case rec.Corrupt != "":
		k.flag = "X"
	case rec.Suspicious():
		k.flag = "!"
	case approvals.ParkMark(approvals.ParkStateOf(rec, r.parkWS, now)) != "":
		// Parked: approving it runs nothing now; the call asked again
		// takes the approval (the detail says until when).
		k.flag = "P"
	case r.marked:
		k.flag = "I"
	}
	// The cursor's column, then who else shows this proposal: @ another
	// console reviews it, * another has its approve prompt open.
	if selected {
		k.cursor = "▶"
	}
	if names, approving := p.shown.others(rec.ApprovalID); approving {
		k.other = "*"
	} else if len(names) > 0 {
		k.other = "@"
	}
	if p.shown.voteCol {
		votes := ""
		if !rec.Hardline && rec.Corrupt == "" { // never approved: no votes to count
			votes = p.shown.votes(rec.ApprovalID)
		}
		k.votes = fmt.Sprintf("%4s ", votes)
	}
	return k
}

// rowView draws a list row: cursor and marks, marker, countdown, flag,
// then the session and command cut to their columns, which at keeps
// (rowMemo.bodyOf): a row redrawn because its countdown changed only lays
// out its first cells again.
func (p *pendingList) rowView(r row, k rowKey, at *rowMemo) string {
	st := p.st
	rec := r.rec
	body, bodyW := at.bodyOf(r, k.sessW, k.cmdW)
	lead := k.cursor + k.other
	left := fmt.Sprintf("%7s", k.left)
	if k.selected {
		return st.Selected.Render(fitWidth(lead+markerText(rec)+" "+left+" "+k.flag+" "+k.votes+body, k.width))
	}
	flag := k.flag
	switch flag {
	case "!":
		flag = st.Suspicious.Render(flag)
	case "X":
		flag = st.Corrupt.Render(flag)
	case "I", "P":
		flag = st.Warning.Render(flag)
	}
	head := lead + st.Marker(rec, k.urgency) + " " + left + " " + flag + " " + k.votes
	switch w := lipgloss.Width(head) + bodyW; {
	case w == k.width:
		return head + body
	case w < k.width:
		return head + body + strings.Repeat(" ", k.width-w)
	}
	return fitWidth(head+body, k.width)
}
