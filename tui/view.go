package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// View renders the screen. It reads no store, sorts and diffs nothing:
// everything was prepared in Update; only the visible rows are formatted
// here.
//
// The frame goes through model.TerminalSafe on its way out: every string
// from the file is sanitised where it is laid out, and this guard makes sure
// that a string someone forgot still cannot reach the terminal raw.
//
// Under UseScreen (RunTerminal, SSH sessions) View also hands the frame to
// the screen, which writes its changed lines to the terminal at once or
// when its turn comes (terminal.go). That write is the one I/O here; it
// stands where Bubble Tea's renderer writes, which the console runs
// without, and blocks as that renderer's did when the terminal stops
// reading.
func (m *Model) View() string {
	// The guard works line by line (model.TerminalSafe): the lines that
	// did not change since the last frame were let through already.
	lines := m.memo.safe.apply(m.frameLines(), 0, model.TerminalSafe)
	if m.screen != nil {
		m.screen.frame(lines, m.width, m.height)
	}
	return strings.Join(lines, "\n")
}

// frameLines is the frame, line by line. The lines that did not change
// since the last frame are the very strings of the last one (viewMemo), so
// that the steps after this one find them unchanged at no cost.
func (m *Model) frameLines() []string {
	if m.width == 0 {
		return []string{""}
	}
	if m.width < MinWidth || m.height < MinHeight {
		return strings.Split(m.tooSmallView(), "\n")
	}
	out := appendLines(nil, m.headerView(), m.subHeaderView())
	out = append(out, m.fitBody(m.bodyLines())...)
	if note := m.noteLines(); len(note) > 1 {
		// A note too long for one line takes the help line's place: what
		// happened to a decision matters more than the key hints.
		out = appendLines(out, note...)
	} else {
		out = appendLines(out, m.noteView(), m.helpView())
	}
	return out
}

// appendLines appends the lines of each of parts.
func appendLines(out []string, parts ...string) []string {
	for _, p := range parts {
		if strings.IndexByte(p, '\n') < 0 {
			out = append(out, p)
		} else {
			out = append(out, strings.Split(p, "\n")...)
		}
	}
	return out
}

func (m *Model) tooSmallView() string {
	msg := fmt.Sprintf("Terminal too small: %dx%d.\napprove-tui needs at least %dx%d.\nResize the window, or press q to quit.",
		m.width, m.height, MinWidth, MinHeight)
	return lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center, m.st.Warning.Render(msg))
}

func (m *Model) headerView() string {
	st := m.st
	count := ""
	switch {
	case !m.loaded:
		count = "loading…"
	case m.ranking.Filling:
		// The first open of a large file: the rows are the soonest to
		// expire until every pending row is ranked.
		count = fmt.Sprintf("ranking %d%% · soonest first · %d pending", m.ranking.Percent(), m.total)
	case m.ranking.Provisional:
		count = fmt.Sprintf("ranking stopped · soonest first · %d pending", m.total)
	case m.total > len(m.rows):
		count = fmt.Sprintf("%d most urgent of %d pending", len(m.rows), m.total)
	default:
		count = fmt.Sprintf("%d pending", len(m.visible))
		if len(m.visible) != len(m.rows) {
			count = fmt.Sprintf("%d of %d pending", len(m.visible), len(m.rows))
		}
	}
	key := headerKey{width: m.width, mode: m.mode, count: count, who: m.opt.Actor.Name, with: strings.Join(m.connected, ", "),
		follow: m.following, readOnly: m.opt.Actor.ReadOnly || m.opt.Store.ReadOnlyReason() != "", damaged: m.damaged != ""}
	if mm := &m.memo.header; mm.s != "" && mm.key == key {
		return mm.s
	}
	left := st.Title.Render("approve-tui")
	tabs := " " + m.tab("pending", m.mode == viewPending) + " " + m.tab("history", m.mode == viewHistory)
	who := model.Sanitize(key.who, model.Line)
	if key.readOnly {
		who += " " + st.Warning.Render("[read-only]")
	}
	if key.damaged {
		who += " " + st.Error.Render("[DAMAGED FILE]")
	}
	if key.with != "" {
		who += st.Subtle.Render(" · with " + key.with)
	}
	if key.follow != "" {
		who += " " + st.OK.Render("[following "+model.Sanitize(key.follow, model.Line)+"]")
	}
	right := st.Subtle.Render(count+" · ") + who
	gap := m.width - lipgloss.Width(left+tabs) - lipgloss.Width(right)
	h := left + tabs + strings.Repeat(" ", max(gap, 0)) + right
	if gap < 1 {
		h = fitWidth(left+tabs+" "+right, m.width)
	}
	m.memo.header.key, m.memo.header.s = key, h
	return h
}

func (m *Model) tab(name string, on bool) string {
	if on {
		return m.st.Selected.Render(" " + name + " ")
	}
	return m.st.Subtle.Render(" " + name + " ")
}

func (m *Model) subHeaderView() string {
	if m.filtering {
		return fitWidth(m.filter.View(), m.width)
	}
	if v := m.filter.Value(); v != "" {
		return fitWidth(m.st.Subtle.Render("filter: ")+model.Sanitize(v, model.Line)+m.st.Faint.Render("  (/ to change, esc to clear)"), m.width)
	}
	if m.storeErr != "" {
		return fitWidth(m.st.Error.Render(m.storeErr), m.width)
	}
	label := m.opt.Label
	if label == "" {
		label = m.opt.Store.Path()
	}
	if mm := &m.memo.label; mm.s == "" || mm.label != label || mm.width != m.width {
		mm.label, mm.width = label, m.width
		mm.s = fitWidth(m.st.Faint.Render(model.Sanitize(label, model.Line)), m.width)
	}
	return m.memo.label.s
}

// bodyLines is the body's lines: the list and the detail side by side
// from the parts of the last frame that did not change, anything else as
// bodyView draws it.
func (m *Model) bodyLines() []string {
	if !m.wide || m.showHelp || m.mode == viewHistory || m.prompt != nil {
		return strings.Split(m.bodyView(), "\n")
	}
	lw := m.listWidth()
	dw, dh := m.detailSize()
	pane := m.st.PaneBorder
	if !m.focusList {
		pane = m.st.PaneBorderFocus
	}
	// The list and the pane are drawn again only when they changed: a tick
	// of the detail's age leaves the list as it was, and the other way
	// round.
	mm := &m.memo
	if list, bh := m.listView(lw), m.bodyHeight(); list != mm.left.list || lw != mm.left.w || bh != mm.left.h || mm.left.lines == nil {
		mm.left.list, mm.left.w, mm.left.h = list, lw, bh
		mm.left.lines = strings.Split(fitBlock(list, lw, bh), "\n")
	}
	right := mm.borderedPane(pane, fitLines(&mm.detail, m.detail.ViewLines(), dw, dh), dw, dh, m.focusList)
	return mm.beside(mm.left.lines, right)
}

func (m *Model) bodyView() string {
	if m.showHelp {
		return m.helpPage()
	}
	if m.mode == viewHistory {
		return m.historyView()
	}
	if m.prompt != nil {
		return m.prompt.view(m.width) + "\n" + m.detail.View()
	}
	// (The list beside the detail, on a wide screen, is bodyLines'.)
	if m.pageOpen {
		return m.detail.View()
	}
	return m.listView(m.width)
}

// listView formats the visible rows of the pending list.
func (m *Model) listView(width int) string {
	st := m.st
	if !m.loaded {
		return st.Subtle.Render("Loading proposals…")
	}
	if len(m.visible) == 0 {
		if m.filter.Value() != "" {
			return st.Subtle.Render("No pending proposal matches the filter.")
		}
		return st.Subtle.Render("No pending proposals. New ones appear here as agents submit them.")
	}
	sessW := min(max(width/5, 10), 24)
	cmdW := max(width-2-4-1-7-1-1-1-sessW-1, 8)
	mm := &m.memo
	if mm.listHead.width != width || mm.listHead.sessW != sessW || mm.listHead.s == "" {
		mm.listHead.width, mm.listHead.sessW = width, sessW
		mm.listHead.s = st.Header.Render(fitWidth("  RISK    LEFT ! "+padRight("SESSION", sessW)+" COMMAND", width))
	}
	end := min(m.top+m.listRows(), len(m.visible))
	// A row drawn in the last frame at the same place, with the same
	// countdown, cursor and marks is taken from it; so is its countdown,
	// until it changes; so is the whole list when every row is.
	if n := end - m.top; len(mm.rows) != n {
		mm.rows, mm.list = make([]rowMemo, n), ""
	}
	same := mm.list != "" && mm.listHead.s == mm.listFor
	for i := m.top; i < end; i++ {
		r, at := m.rows[m.visible[i]], &mm.rows[i-m.top]
		k := m.rowKey(r, i == m.cursor, width, sessW, cmdW, at)
		if at.line == "" || at.key != k {
			at.key, at.line, same = k, m.rowView(r, k, at), false
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
func (m *Model) rowKey(r row, selected bool, width, sessW, cmdW int, at *rowMemo) rowKey {
	rec := r.rec
	k := rowKey{rec: rec, selected: selected, width: width, sessW: sessW, cmdW: cmdW, left: "never", flag: " ", cursor: " ", other: " "}
	if tl, ok := rec.TimeLeft(m.now); ok {
		c := &at.left
		if at.key.rec != rec || c.text == "" || m.now.Before(c.from) || !m.now.Before(c.until) {
			*c = countdown{text: shortDur(tl), from: m.now, until: m.now.Add(untilCountdownChanges(tl) - tickSlack)}
		}
		k.left = c.text
		k.urgency = clamp01(1 - tl.Seconds()/300)
	}
	switch {
	case rec.Corrupt != "":
		k.flag = "X"
	case rec.Suspicious():
		k.flag = "!"
	}
	// The cursor's column, then who else shows this proposal: @ another
	// console reviews it, * another has its approve prompt open.
	if selected {
		k.cursor = "▶"
	}
	if names, approving := m.othersOn(rec.ApprovalID); approving {
		k.other = "*"
	} else if len(names) > 0 {
		k.other = "@"
	}
	return k
}

// rowView draws a list row: cursor and marks, marker, countdown, flag,
// then the session and command cut to their columns, which at keeps
// (rowMemo.bodyOf): a row redrawn because its countdown changed only lays
// out its first cells again.
func (m *Model) rowView(r row, k rowKey, at *rowMemo) string {
	st := m.st
	rec := r.rec
	body, bodyW := at.bodyOf(r, k.sessW, k.cmdW)
	lead := k.cursor + k.other
	left := fmt.Sprintf("%7s", k.left)
	if k.selected {
		return st.Selected.Render(fitWidth(lead+markerText(rec)+" "+left+" "+k.flag+" "+body, k.width))
	}
	flag := k.flag
	switch flag {
	case "!":
		flag = st.Suspicious.Render(flag)
	case "X":
		flag = st.Corrupt.Render(flag)
	}
	head := lead + st.Marker(rec, k.urgency) + " " + left + " " + flag + " "
	switch w := lipgloss.Width(head) + bodyW; {
	case w == k.width:
		return head + body
	case w < k.width:
		return head + body + strings.Repeat(" ", k.width-w)
	}
	return fitWidth(head+body, k.width)
}

func (m *Model) historyView() string {
	st := m.st
	if len(m.hvisible) == 0 {
		return st.Subtle.Render("No audit events yet.")
	}
	const idW, outW = 12, 18
	rest := m.width - 2 - 8 - 2 - 9 - 1 - outW - 1 - idW - 1
	actorW := min(max(rest*2/5, 12), 30)
	out := []string{st.Header.Render(fitWidth("  "+padRight("TIME", 8)+"  "+padRight("EVENT", 9)+" "+padRight("OUTCOME", outW)+" "+
		padRight("ID", idW)+" "+padRight("ACTOR", actorW)+" DETAIL", m.width))}
	n := m.listRows() - 1
	end := min(m.htop+n, len(m.hvisible))
	for i := m.htop; i < end; i++ {
		e := m.history[m.hvisible[i]]
		// Every audit column comes from the file, which any process that
		// can write it can forge: all of it goes through the sanitiser.
		outcome := model.Sanitize(e.Outcome, model.Line)
		if e.Outcome != storage.OutcomeOK {
			outcome += ": " + model.Sanitize(refusalWords(e.Reason), model.Line)
		}
		detail := historyDetail(e)
		runDied := false
		if e.Outside {
			outcome = "outside the chain"
		}
		if e.Event == storage.EventExecution || e.Event == storage.EventPolicy {
			outcome = model.Sanitize(e.Reason, model.Line)
			if r, ok := m.runs[e.ApprovalID]; ok && e.Event == storage.EventExecution && e.Reason == string(model.ExecStarted) {
				outcome, detail = runWords(r, m.now, detail)
				runDied = r.state != storage.RunRunning
			}
		}
		at := model.FromEpoch(e.At).UTC().Format("15:04:05")
		actor := model.Sanitize(e.Actor, model.Line)
		if e.Surface != "" {
			actor += " via " + model.Sanitize(e.Surface, model.Line)
		}
		line := at + "  " + fitWidth(model.Sanitize(e.Event, model.Line), 9) + " " + fitWidth(outcome, outW) + " " +
			fitWidth(model.Sanitize(e.ApprovalID, model.Line), idW) + " " + fitWidth(actor, actorW) + " " + detail
		if i == m.hcursor {
			out = append(out, st.Selected.Render(fitWidth("▶ "+line, m.width)))
			continue
		}
		style := st.HistoryOK
		if e.Outcome != storage.OutcomeOK || runDied {
			style = st.HistoryRefused
		}
		out = append(out, fitWidth("  "+style.Render(line), m.width))
	}
	return strings.Join(out, "\n")
}

// runWords says what is known of a started command's run: the outcome
// column's words and the detail, with its runner's pid and host.
func runWords(r runInfo, now time.Time, detail string) (string, string) {
	w := r.waiter
	switch r.state {
	case storage.RunRunning:
		return "started, running", fmt.Sprintf("runner pid %d on %s, heartbeat %s; %s", w.PID,
			model.Sanitize(w.Host, model.Line), ago(model.FromEpoch(w.HeartbeatAt), now), detail)
	case storage.RunDied:
		return "runner died", fmt.Sprintf("outcome unknown: runner pid %d on %s is gone (last heartbeat %s); %s", w.PID,
			model.Sanitize(w.Host, model.Line), ago(model.FromEpoch(w.HeartbeatAt), now), detail)
	}
	return "outcome unknown", r.state.Words() + "; " + detail
}

// refusalWords says a refusal reason code in a few words.
func refusalWords(code string) string {
	switch code {
	case "confirmation_mismatch":
		return "wrong id"
	case "not_pending":
		return "lost race"
	case "read_only":
		return "read-only"
	case "store_error":
		return "store error"
	case "not_found":
		return "not found"
	}
	return code
}

// historyDetail is the short, sanitised detail of an audit event.
func historyDetail(e storage.AuditEvent) string {
	var parts []string
	if e.Outside {
		parts = append(parts, "decided outside approve-tui (read from the table)")
	}
	for _, k := range []string{"reason", "risk", "error", "from", "to", "expires_at"} {
		if v, ok := e.Detail[k]; ok {
			parts = append(parts, k+"="+model.Sanitize(fmt.Sprint(v), model.Line))
		}
	}
	return strings.Join(parts, " ")
}

func (m *Model) helpPage() string {
	st := m.st
	intro := []string{
		st.Title.Render("Keys"),
		"",
		m.help.FullHelpView(m.keys.FullHelp()),
		"",
		st.Title.Render("How approving works"),
		"Approve means this command, once. Select a proposal, read it to the end (the",
		"detail pane says how many lines are left), press a, then type the approval id",
		"shown in the prompt: approve stays disabled until it matches exactly, and pasted",
		"text is refused. d denies, with an optional reason. Markers HIGH/MED/LOW read",
		"without colour; ! marks hidden characters made visible, X a corrupt row that",
		"can only be denied. A waiter is the agent process waiting for the decision:",
		"without a live one, approving runs nothing.",
		"",
		st.Subtle.Render("? or esc closes this page."),
	}
	return strings.Join(intro, "\n")
}

func (m *Model) noteView() string {
	if m.note.text == "" {
		return ""
	}
	return m.note.style.Render(fitWidth(m.note.text, m.width))
}

// noteLines is the note on at most two lines: wrapped at word boundaries,
// and cut with an ellipsis only if two lines do not hold it.
func (m *Model) noteLines() []string {
	if m.note.text == "" || lipgloss.Width(m.note.text) <= m.width {
		return []string{m.noteView()}
	}
	lines := strings.SplitN(ansi.Wrap(m.note.text, m.width, ""), "\n", 2)
	out := make([]string, len(lines))
	for i, l := range lines {
		if i == 1 {
			l = strings.ReplaceAll(l, "\n", " ")
		}
		out[i] = m.note.style.Render(fitWidth(l, m.width))
	}
	return out
}

func (m *Model) helpView() string {
	if m.prompt == nil && !m.filtering {
		// The list's keys: the same line until the width changes.
		if mm := &m.memo.help; mm.width != m.help.Width || mm.s == "" {
			mm.width, mm.s = m.help.Width, m.help.ShortHelpView(m.keys.ShortHelp())
		}
		return m.memo.help.s
	}
	if m.prompt != nil {
		return m.help.ShortHelpView(m.prompt.keys.ShortHelp())
	}
	if m.filtering {
		return m.help.ShortHelpView([]key.Binding{m.keys.Submit, m.keys.Cancel})
	}
	return m.help.ShortHelpView(m.keys.ShortHelp())
}

// fitBody is fitBlock of the body's lines to m.width x m.bodyHeight(),
// reusing the last frame's lines.
func (m *Model) fitBody(body []string) []string {
	return fitLines(&m.memo.body, body, m.width, m.bodyHeight())
}

// fitBlock makes s exactly h lines of at most w cells.
func fitBlock(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if lipgloss.Width(l) > w {
			lines[i] = fitWidth(l, w)
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
