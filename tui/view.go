package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// View is the screen. It is pure: it returns the frame the last update
// laid out (render), reads no store and changes nothing. Drivers call it
// after every update, as Bubble Tea does (TestViewIsPure).
func (m *Model) View() string { return strings.Join(m.frame, "\n") }

// render lays out the frame for the state an update left, the one View
// returns until the next update, and hands it on. It runs at the end of
// every Update, where Bubble Tea calls View: the frame is the same. It
// reads no store, sorts and diffs nothing: everything was prepared by the
// update; only the visible rows are formatted here.
//
// The frame goes through model.TerminalSafe on its way out: every string
// from the file is sanitised where it is laid out, and this guard makes sure
// that a string someone forgot still cannot reach the terminal raw.
//
// The guard works line by line (model.TerminalSafe): the lines that did
// not change since the last frame were let through already.
//
// What the frame shows of the command and diff counts as read once the
// frame is drawn, which the next update learns first thing (drainDrawn):
//   - under UseScreen (RunTerminal, SSH sessions) the frame goes to the
//     screen, which writes its changed lines to the terminal at once or
//     when its turn comes (terminal.go), and records what the frames it
//     wrote showed. That write is the one I/O of an update; it stands where
//     Bubble Tea's renderer writes, which the console runs without, and
//     blocks as that renderer's did when the terminal stops reading;
//   - else the frame goes to the caller, who draws it after the update
//     (Bubble Tea's renderer, the headless driver and the tests all call
//     View after every update): it is drawn by the time the next message
//     arrives (drawn).
func (m *Model) render() {
	lines := m.memo.safe.apply(m.frameLines(), 0, model.TerminalSafe)
	m.frame, m.drawn = lines, nil
	s, ok := m.detail.onScreen()
	switch {
	case m.screen != nil && ok:
		m.screen.frame(lines, m.width, m.height, &s)
	case m.screen != nil:
		m.screen.frame(lines, m.width, m.height, nil)
	case ok:
		m.drawn = &s
	}
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
		count = fmt.Sprintf("%d pending", len(m.list.visible))
		if len(m.list.visible) != len(m.rows) {
			count = fmt.Sprintf("%d of %d pending", len(m.list.visible), len(m.rows))
		}
	}
	key := headerKey{width: m.width, mode: m.mode, count: count, who: m.opt.name(),
		readOnly: m.opt.Actor.ReadOnly || m.opt.Store.ReadOnlyReason() != "", damaged: m.damaged != "",
		policyBad: m.quorum.problem != "", policyUnreadable: m.quorum.unreadable}
	if pv := m.quorum.policy; pv != nil {
		key.policy = fmt.Sprintf("policy v%d", pv.Version)
	}
	m.header.update(key)
	return m.header.view()
}

// presenceView is who else is here and whom this console follows, for the
// right of the header's second line ("" when nobody else is and it follows
// nobody). Whom it follows is said whole; the others' names give way.
func (m *Model) presenceView() string {
	follow := ""
	if m.following != "" {
		name := model.Sanitize(m.following, model.Line)
		if m.loaded && !m.followHere {
			follow = m.st.Warning.Render("[following " + name + " (not connected)]")
		} else {
			follow = m.st.OK.Render("[following " + name + "]")
		}
	}
	if len(m.connected) == 0 {
		return follow
	}
	with := "with " + strings.Join(m.connected, ", ") // sanitised by setPresences
	if follow == "" {
		return m.st.Subtle.Render(with)
	}
	room := m.width - lipgloss.Width(follow) - 1
	if room < lipgloss.Width("with x…") {
		return follow
	}
	if lipgloss.Width(with) > room {
		with = fitWidth(with, room)
	}
	return m.st.Subtle.Render(with) + " " + follow
}

// pagerView says whether paging works: "pager on" while a notifier runs
// with no trouble; its oldest trouble while one has some ("pager: push
// (ntfy) failing for 3m: HTTP 503"); "" when no notifier runs (paging is
// not set up, or stopped: the console cannot tell which).
func (m *Model) pagerView() string {
	if len(m.notifiers) == 0 {
		return ""
	}
	for _, n := range m.notifiers {
		if n.Trouble != "" {
			what, why, _ := strings.Cut(model.Sanitize(n.Trouble, model.Line), ": ")
			s := "pager: " + what + " failing"
			if n.TroubleSince > 0 {
				s += " for " + human.Duration(m.now.Sub(model.FromEpoch(n.TroubleSince)))
			}
			if why != "" {
				s += ": " + why
			}
			return m.st.Error.Render(fitWidth(s, min(lipgloss.Width(s), max(m.width/2, 20))))
		}
	}
	return m.st.OK.Render("pager on")
}

// subHeaderView is the header's second line: the filter, a store error or
// the database's label on the left; who else is here and whom this console
// follows on the right (presenceView), which the left gives way to.
func (m *Model) subHeaderView() string {
	if m.filtering {
		return fitWidth(m.filter.View(), m.width)
	}
	right := m.presenceView()
	if p := m.pagerView(); p != "" {
		if right == "" {
			right = p
		} else if m.width-lipgloss.Width(right)-lipgloss.Width(p)-1 > 20 {
			right = p + " " + right
		}
	}
	if v := m.filter.Value(); v != "" {
		return besideRight(m.st.Subtle.Render("filter: ")+model.Sanitize(v, model.Line)+m.st.Faint.Render("  (/ to change, esc to clear)"), right, m.width)
	}
	if m.storeErr != "" {
		return besideRight(m.st.Error.Render(m.storeErr), right, m.width)
	}
	if p := m.quorum.problem; p != "" {
		return besideRight(m.st.Error.Render(p), right, m.width)
	}
	label := m.opt.Label
	if label == "" {
		label = m.opt.Store.Path()
	}
	if mm := &m.memo.label; mm.s == "" || mm.label != label || mm.width != m.width || mm.right != right {
		mm.label, mm.width, mm.right = label, m.width, right
		mm.s = besideRight(m.st.Faint.Render(model.Sanitize(label, model.Line)), right, m.width)
	}
	return m.memo.label.s
}

// besideRight is left and right on one line of width cells, right at its
// end: left is cut first to make room, then right.
func besideRight(left, right string, width int) string {
	if right == "" {
		return fitWidth(left, width)
	}
	rw := min(lipgloss.Width(right), width)
	return fitWidth(left, max(width-rw-1, 0)) + strings.Repeat(" ", min(width-rw, 1)) + fitWidth(right, rw)
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
	if list, bh := m.listView(), m.bodyHeight(); list != mm.left.list || lw != mm.left.w || bh != mm.left.h || mm.left.lines == nil {
		mm.left.list, mm.left.w, mm.left.h = list, lw, bh
		mm.left.lines = strings.Split(fitBlock(list, lw, bh), "\n")
	}
	right := mm.borderedPane(pane, fitLines(&mm.detail, m.detail.viewLines(), dw, dh), dw, dh, m.focusList)
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
		return m.prompt.view() + "\n" + m.detail.view()
	}
	// (The list beside the detail, on a wide screen, is bodyLines'.)
	if m.pageOpen {
		return m.detail.view()
	}
	return m.listView()
}

// listView is the pending list, drawn from what the console shows of it
// now (listShown).
func (m *Model) listView() string {
	m.list.update(m.listShown())
	return m.list.view()
}

// listShown is what the pending list is drawn from.
func (m *Model) listShown() listShown {
	return listShown{rows: m.rows, loaded: m.loaded, filtered: m.filter.Value() != "", voteCol: m.voteCol, now: m.now,
		others: m.othersOn, votes: func(id string) string { return progress(m.quorum.of(id)) }}
}

func (m *Model) historyView() string {
	if m.event != nil {
		return m.event.view(m.st, m.width, m.bodyHeight())
	}
	m.hist.update(histShown{events: m.history, rows: m.hrows, cols: m.hcols, runs: m.runs, now: m.now})
	return m.hist.view()
}

// runWords says what is known of a started command's run
// (approvals.RunStateWords, the console's form): the outcome column's
// words and the detail, with its runner's pid and host, then detail.
func runWords(r runInfo, now time.Time, detail string) (string, string) {
	outcome, words := approvals.RunStateWords(r.state, r.waiter, now, approvals.Console)
	return outcome, words + "; " + detail
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
	case storage.RefusedSelfApproval:
		return "own proposal"
	case storage.RefusedDuplicateApprover:
		return "voted already"
	case storage.RefusedNotEligible:
		return "vote would not count"
	case storage.RefusedPolicyUnreadable:
		return "policy unreadable"
	case storage.VoteContentChanged:
		return "content changed"
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
			parts = append(parts, k+"="+rowString(fmt.Sprint(v)))
		}
	}
	return strings.Join(parts, " ")
}

func (m *Model) helpPage() string {
	st := m.st
	keys, title, text := m.keys.FullHelp(), "How approving works", []string{
		"Approve means this command, once. Select a proposal, read it to the end (the",
		"detail pane says how many lines are left), press a, then type the approval id",
		"shown in the prompt: approve stays disabled until it matches exactly, and pasted",
		"text is refused. d denies, with an optional reason. Markers HIGH/MED/LOW read",
		"without colour; ! marks hidden characters made visible, X a corrupt row that",
		"can only be denied, I an impact that raised the risk (the detail says why). A",
		"waiter is the agent process waiting: without a live one, approving runs nothing.",
		"P: parked, its agent stopped waiting; an approval runs it when it asks again.",
	}
	if m.mode == viewHistory {
		keys, title, text = m.keys.HistoryFullHelp(), "The history", []string{
			"The audit log, newest first: every proposal submitted, approved, denied or",
			"expired, every refused attempt, policy decision and command run, every SSH",
			"session, each event chained to the one before by its hash (approve-tui audit",
			"--verify checks the chain). Decisions made outside approve-tui are read from",
			"the table and marked outside the chain. enter shows one event whole: every",
			"field, its whole detail and its hashes. Nothing is decided here: tab goes",
			"back to the pending proposals.",
		}
	}
	out := []string{st.Title.Render("Keys"), "", m.help.FullHelpView(keys), "", st.Title.Render(title)}
	out = append(out, text...)
	// Who this console decides as, whole (the header names it short): an
	// SSH key's fingerprint, the surface.
	you := "You are " + model.Sanitize(m.opt.Actor.String(), model.Line)
	if m.opt.Actor.ReadOnly {
		you += ", watching read-only"
	}
	if pv := m.quorum.policy; pv != nil && m.mode == viewPending {
		// The policy's words only where one is in force (in the place of
		// the blank line: the page fits 80x24 still).
		out = append(out, strings.Split(ansi.Wrap(fmt.Sprintf("Policy v%d: VOTE 1/2 counts approvals so far; the last one needed approves.",
			pv.Version), m.width, ""), "\n")...)
	} else {
		out = append(out, "")
	}
	out = append(out, strings.Split(ansi.Wrap(you+".", m.width, ""), "\n")...)
	return strings.Join(out, "\n")
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

// helpView is the help line: the keys of what is on screen.
func (m *Model) helpView() string {
	switch {
	case m.prompt != nil:
		return m.help.ShortHelpView(m.prompt.keys.ShortHelp())
	case m.filtering:
		return m.help.ShortHelpView([]key.Binding{m.keys.Submit, m.keys.Cancel})
	}
	// The same line until the width or the screen changes.
	scr := m.helpScreen()
	if mm := &m.memo.help; mm.width != m.width || mm.screen != scr || mm.s == "" {
		var items []helpItem
		switch scr {
		case helpOnHelp:
			items = m.keys.HelpPageShortHelp()
		case helpOnHistory:
			items = m.keys.HistoryShortHelp()
		case helpOnEvent:
			items = m.keys.EventShortHelp()
		default:
			items = m.keys.ShortHelp()
		}
		mm.width, mm.screen, mm.s = m.width, scr, m.shortHelp(items)
	}
	return m.memo.help.s
}

// helpScreen says which keys the help line offers.
type helpScreen int

const (
	helpOnPending helpScreen = iota
	helpOnHistory
	helpOnEvent
	helpOnHelp
)

func (m *Model) helpScreen() helpScreen {
	switch {
	case m.showHelp:
		return helpOnHelp
	case m.mode == viewHistory && m.event != nil:
		return helpOnEvent
	case m.mode == viewHistory:
		return helpOnHistory
	}
	return helpOnPending
}

// shortHelp is the help line of items at the screen's width: all of them
// when they fit, else without those that give way first (helpItem.drop)
// and with an ellipsis for them: the ? page lists every key, and the key
// that opens it stays.
func (m *Model) shortHelp(items []helpItem) string {
	h := m.help
	h.Width = 0 // measured here: help would cut the line's end, wherever ? is
	most := 0
	for _, it := range items {
		most = max(most, it.drop)
	}
	// The items of a drop under keep stay: all of them first, then fewer.
	for keep := most + 1; ; keep-- {
		var bs []key.Binding
		for _, it := range items {
			if it.drop < keep {
				bs = append(bs, it.Binding)
			}
		}
		line := h.ShortHelpView(bs)
		if len(bs) < len(items) {
			line += " " + h.Styles.Ellipsis.Inline(true).Render(h.Ellipsis)
		}
		if w := lipgloss.Width(line); w <= m.width || keep <= 1 {
			if w > m.width {
				line = fitWidth(line, m.width)
			}
			return line
		}
	}
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
