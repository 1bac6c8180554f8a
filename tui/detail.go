package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/diffview"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/impact"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// detail is the pane that shows one proposal whole. Its lines are built in
// update (when the proposal, its waiter, the width or the clock change);
// view only slices them. It remembers how far the operator has scrolled, so
// that approve opens only once everything was on screen (invariant 8).
type detail struct {
	st            Styles
	keys          KeyMap
	width, height int

	rec    *storage.Record
	waiter *storage.WaiterStatus
	// deliveries: who was paged about it, when (storage.DeliveriesOf).
	deliveries []storage.Delivery
	// votes: where it stands against the policy (the votes block, after
	// the risk line), laid out again only when its text changed.
	votes      votesView
	votesAt    int // where in fixed the block goes
	votesText  string
	votesWidth int
	votesLines []string
	// judgement: the command's (nil while it is being judged): the "why"
	// lines after the reason (why.go).
	judgement *risk.Judgement

	head, body []string // head: the fields; body: command and diff
	bodyKey    string   // id, payload and width the body was built for
	// fixed: the head's fields that do not change with the clock, for
	// fixedRec at fixedWidth.
	fixed      []string
	fixedRec   *storage.Record
	fixedWidth int
	fixedJudge *risk.Judgement
	timed      map[string]timedLines // by label
	lines      []string
	offset     int
	// drawn marks the body lines that have been on screen since this
	// content was selected; unread counts the others. Only lines actually
	// drawn count: a jump (End, G) reads nothing of what it skips, and a
	// line counts once a frame that shows it has been written (markDrawn),
	// not when the pane is laid out: a layout that no frame showed (two
	// updates within one frame's time, the head growing under a line)
	// reads nothing. gen names the content drawn is for.
	drawn  []bool
	unread int
	gen    int
	// held: the content on screen arrived without the operator's doing (it
	// was rewritten, or the selection slid when a row left the list):
	// nothing of it counts as read until the operator acts on the pane.
	held    bool
	visible bool // the pane is on screen (narrow screens show it as a page)
}

func newDetail(st Styles, keys KeyMap) detail { return detail{st: st, keys: keys} }

// update scrolls the pane with a navigation key: the operator acts on it
// (Touch), and what it draws from now on counts as read.
func (d *detail) update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	page := max(d.height-1, 1)
	d.Touch()
	switch {
	case key.Matches(k, d.keys.Up):
		d.Scroll(-1)
	case key.Matches(k, d.keys.Down):
		d.Scroll(1)
	case key.Matches(k, d.keys.PageUp):
		d.Scroll(-page)
	case key.Matches(k, d.keys.PageDown):
		d.Scroll(page)
	case key.Matches(k, d.keys.Top):
		d.ScrollTo(false)
	case key.Matches(k, d.keys.Bottom):
		d.ScrollTo(true)
	}
	return nil
}

// setSize sets the pane's inner size.
func (d *detail) setSize(w, h int) {
	d.width, d.height = w, max(h, 1)
	d.clampOffset()
}

// Show selects a proposal (nil clears). Selecting another one, or this one
// rewritten, resets the scroll position and what has been read; when the
// operator did not ask for it (byOperator false: a reload brought it),
// nothing of it counts as read until Touch.
func (d *detail) Show(rec *storage.Record, ws *storage.WaiterStatus, now time.Time, byOperator bool) {
	if rec == nil || d.rec == nil || rec.ApprovalID != d.rec.ApprovalID || rec.PayloadSHA256 != d.rec.PayloadSHA256 {
		// Held only when it replaced something else on screen: the first
		// proposal shown when the console opens is there to be read.
		d.held = !byOperator && rec != nil && d.rec != nil
		d.offset, d.drawn = 0, nil
	}
	d.rec, d.waiter = rec, ws
	d.rebuild(now)
}

// Touch: the operator acts on the pane (selects it, scrolls it): from now
// on what it draws counts as read.
func (d *detail) Touch() { d.held = false }

// Held reports whether the content on screen arrived by itself and has not
// been looked at yet.
func (d *detail) Held() bool { return d.held && d.rec != nil }

// Refresh rebuilds the lines that change with time.
func (d *detail) Refresh(now time.Time) { d.rebuild(now) }

func (d *detail) rebuild(now time.Time) {
	if d.rec == nil || d.width <= 0 {
		d.lines, d.head, d.body = nil, nil, nil
		return
	}
	if d.fixedRec != d.rec || d.fixedWidth != d.width || d.fixedJudge != d.judgement {
		d.fixed, d.fixedRec, d.fixedWidth, d.fixedJudge = d.buildFixed(), d.rec, d.width, d.judgement
	}
	votes := d.buildVotes(now)
	d.head = make([]string, 0, len(d.fixed)+len(votes)+8)
	d.head = append(append(append(d.head, d.fixed[:d.votesAt]...), votes...), d.fixed[d.votesAt:]...)
	d.head = append(d.head, d.buildTimed(now)...)
	key := fmt.Sprintf("%s/%s/%d", d.rec.ApprovalID, d.rec.PayloadSHA256, d.width)
	if key != d.bodyKey {
		d.body = d.buildBody()
		d.bodyKey = key
		d.drawn = nil
	}
	if d.drawn == nil {
		d.drawn, d.unread = make([]bool, len(d.body)), len(d.body)
		d.gen++
	}
	d.lines = append(append(make([]string, 0, len(d.head)+len(d.body)), d.head...), d.body...)
	d.clampOffset()
}

// Scroll moves by n lines (negative: up).
func (d *detail) Scroll(n int) {
	d.offset += n
	d.clampOffset()
}

// ScrollTo jumps to the top (false) or the end (true).
func (d *detail) ScrollTo(end bool) {
	if end {
		d.offset = len(d.lines)
	} else {
		d.offset = 0
	}
	d.clampOffset()
}

func (d *detail) clampOffset() {
	d.offset = min(d.offset, max(len(d.lines)-d.height, 0))
	d.offset = max(d.offset, 0)
}

// SetVisible says whether the pane is on screen: only what was on screen
// counts as seen.
func (d *detail) SetVisible(v bool) { d.visible = v }

// shown is the body lines a frame shows: [from, to) of the content gen.
type shown struct{ gen, from, to int }

// onScreen is the body lines the pane shows as laid out now, when what it
// shows counts as read (on screen, looked at: not held, its head
// settled). The last row of the pane shows the "more lines" marker instead
// of a line when there are more.
func (d *detail) onScreen() (shown, bool) {
	if !d.visible || d.rec == nil || d.held || d.drawn == nil || d.settling() {
		return shown{}, false
	}
	end := min(d.offset+d.height, len(d.lines))
	if d.Remaining() > 0 {
		end-- // the marker's row
	}
	first := len(d.lines) - len(d.body)
	from, to := max(d.offset, first)-first, end-first
	if to <= from {
		return shown{}, false
	}
	return shown{gen: d.gen, from: from, to: to}, true
}

// settling reports whether the proposal's head is still being worked out
// (its "why", or its waiter's state, has not arrived): until both are
// there the proposal is not all on screen, and what the pane draws
// meanwhile (a layout their lines will push down) counts as read by none,
// so that what counts does not hang on how fast they came.
func (d *detail) settling() bool {
	return d.waiter == nil || d.judgement == nil && d.rec.Tampered == "" && d.rec.Corrupt == ""
}

// stillLoading names, for an operator, the parts of the proposal's head
// that have not arrived yet (the explanation, "why"; the waiter's state),
// "" when none is loading: settling's parts, in words.
func (d *detail) stillLoading() string {
	if d.rec == nil || !d.settling() {
		return ""
	}
	var parts []string
	if d.judgement == nil && d.rec.Tampered == "" && d.rec.Corrupt == "" {
		parts = append(parts, "the explanation of its risk (why)")
	}
	if d.waiter == nil {
		parts = append(parts, "whether anything waits on it (waiter)")
	}
	return strings.Join(parts, " and ")
}

// markDrawn marks as read the body lines of a frame that has been written,
// if they are still of the content on screen.
func (d *detail) markDrawn(s shown) {
	if s.gen != d.gen || d.drawn == nil || s.to > len(d.drawn) {
		return
	}
	for b := s.from; b < s.to; b++ {
		if !d.drawn[b] {
			d.drawn[b] = true
			d.unread--
		}
	}
}

// unreadAfterThisFrame is how many lines of the command and diff will not
// have been on screen once the frame being laid out now is written: the
// one count of them, which the pane's marker and a refused approve both
// say (nLines).
func (d *detail) unreadAfterThisFrame() int {
	n := d.unread
	if s, ok := d.onScreen(); ok {
		for b := s.from; b < s.to; b++ {
			if !d.drawn[b] {
				n--
			}
		}
	}
	return n
}

// Remaining is how many lines are not on screen below the visible part:
// when there are any, the pane's last row is the marker that says so, and
// the line it stands over is one of them.
func (d *detail) Remaining() int { return hiddenBelow(len(d.lines), d.offset, d.height) }

// hiddenBelow is how many of n lines a pane of height rows scrolled to
// offset does not show below what it shows: none, or at least two (when
// the lines go on past the pane, its last row is a marker that says so).
func hiddenBelow(n, offset, height int) int {
	if n-offset <= height {
		return 0
	}
	return n - offset - (height - 1)
}

// SeenAll reports whether every line of the command and diff has been
// drawn.
func (d *detail) SeenAll() bool { return d.rec != nil && d.drawn != nil && d.unread == 0 }

// view renders the visible lines.
func (d *detail) view() string { return strings.Join(d.viewLines(), "\n") }

// viewLines is view's lines: the pane's lines themselves (the same strings
// from one frame to the next while they do not change).
func (d *detail) viewLines() []string {
	if d.rec == nil {
		return strings.Split(d.st.Subtle.Render("No proposal selected."), "\n")
	}
	end := min(d.offset+d.height, len(d.lines))
	out := make([]string, 0, d.height)
	out = append(out, d.lines[d.offset:end]...)
	switch r, unread := d.Remaining(), d.unreadAfterThisFrame(); {
	case d.Held() && len(out) > 0:
		out[len(out)-1] = d.st.Warning.Render(fitWidth("● came on screen by itself: enter to read it", d.width))
	case r > 0 && len(out) > 0 && unread > 0:
		out[len(out)-1] = d.st.Warning.Render(fitWidth("▼ "+nLines(unread)+" not yet on screen: read before approving", d.width))
	case r > 0 && len(out) > 0:
		out[len(out)-1] = d.st.Subtle.Render(fitWidth(moreBelow(r), d.width))
	}
	for _, l := range out {
		if strings.IndexByte(l, '\n') >= 0 {
			// A line of several: as View's string would split.
			return strings.Split(strings.Join(out, "\n"), "\n")
		}
	}
	return out
}

func (d *detail) field(label, value string) []string { return fieldLines(d.st, label, value, d.width) }

// fieldLabelWidth is the width of a field's label column.
const fieldLabelWidth = 11

// fieldLines is a labelled field of a page that shows one thing whole (a
// proposal, an audit event): the label in its column, the value after it,
// wrapped under itself to the width.
func fieldLines(st Styles, label, value string, width int) []string {
	return wrapIndented(st.Label.Render(padRight(label, fieldLabelWidth)), value, fieldLabelWidth, width)
}

// timedField is field for the fields that change with the clock: laid out
// again only when its text changed (an age to the minute, a waiter
// without one: not every second).
func (d *detail) timedField(label, value string) []string {
	if d.timed == nil {
		d.timed = map[string]timedLines{}
	}
	if t, ok := d.timed[label]; ok && t.value == value && t.width == d.width {
		return t.lines
	}
	lines := d.field(label, value)
	d.timed[label] = timedLines{value: value, width: d.width, lines: lines}
	return lines
}

// timedLines is a timed field as last laid out.
type timedLines struct {
	value string
	width int
	lines []string
}

// agent renders an agent string inert, escapes set apart.
func (d *detail) agent(s string, mode model.SanitizeMode) string { return agentText(d.st, s, mode) }

// agentText renders a string the program did not write inert
// (model.SanitizeSegments), what was escaped set apart in its style.
func agentText(st Styles, s string, mode model.SanitizeMode) string {
	var b strings.Builder
	for _, seg := range model.SanitizeSegments(s, mode) {
		if seg.Escaped {
			b.WriteString(st.Escaped.Render(seg.Text))
		} else {
			b.WriteString(seg.Text)
		}
	}
	return b.String()
}

// buildFixed is the head but its last fields, which change with the clock
// (buildTimed): everything in it comes from the record (never changed
// once loaded) and the width.
func (d *detail) buildFixed() []string {
	r := d.rec
	st := d.st
	var out []string
	if r.Hardline {
		out = append(out, st.Banner.Render(fitWidth(" HARDLINE — Hermes never runs this; it cannot be approved: deny it ", d.width)))
	}
	if b := approvals.RiskBanner(r, approvals.Console); b != "" {
		out = append(out, st.Banner.Render(fitWidth(" "+b+" ", d.width)))
	}
	if r.Tampered != "" {
		out = append(out, wrapIndented(st.Corrupt.Render(" TAMPERED "), " "+model.Sanitize(r.Tampered, model.Line)+" — it can be denied, never approved", 10, d.width)...)
	} else if r.Corrupt != "" {
		out = append(out, wrapIndented(st.Corrupt.Render(" CORRUPT "), " "+model.Sanitize(r.Corrupt, model.Line)+" — it can be denied, never approved", 9, d.width)...)
	}
	if r.Suspicious() {
		out = append(out, wrapIndented(st.Suspicious.Render("! SUSPICIOUS"), " hidden content made visible: "+strings.Join(r.Findings, ", "), 12, d.width)...)
	}
	if r.Impact != nil {
		out = append(out, d.impactLines(r.Impact, impact.Marked(r.Impact, r.Command, r.RiskLevel))...)
	}
	out = append(out, d.field("id", st.Bold.Render(d.agent(r.ApprovalID, model.Line)))...)
	if why := model.UntypableID(r.ApprovalID); why != "" && !r.RequiresTextConfirm {
		out = append(out, d.field("", st.Warning.Render(why+": deny only"))...)
	} else if !r.RequiresTextConfirm && len([]rune(r.ApprovalID)) < storage.MinApprovableID {
		out = append(out, d.field("", st.Warning.Render(fmt.Sprintf("under %d characters: deny only", storage.MinApprovableID)))...)
	}
	riskText := st.Marker(r, 0)
	switch {
	case r.Tampered != "":
		riskText += st.Subtle.Render(" unknown: the payload was changed after submit")
	case r.Corrupt != "":
		riskText += st.Subtle.Render(" unknown: the row is corrupt")
	case r.EffectiveRisk != r.RiskLevel:
		riskText += st.Warning.Render(fmt.Sprintf(" pinned %s, but the classifier now says %s: the higher one holds", r.RiskLevel, r.ClassifierRisk))
	default:
		riskText += st.Subtle.Render(" pinned " + string(r.RiskLevel))
	}
	out = append(out, d.field("risk", riskText)...)
	d.votesAt = len(out) // the votes block goes here (buildVotes)
	if reason := d.reasonLeft(); reason != "" {
		out = append(out, d.field("reason", d.agent(reason, model.Line))...)
	}
	if r.Tampered == "" && r.Corrupt == "" {
		// (Not for a row whose risk is unknown: it can only be denied.)
		out = append(out, d.whyLines()...)
	}
	if r.RequesterContext != "" {
		// The agent's words about its command: quoted, labelled as its
		// own, apart from the verdict above.
		out = append(out, d.field("agent says", `"`+d.agent(r.RequesterContext, model.Line)+`"`)...)
	}
	out = append(out, d.field("policy", fmt.Sprintf("%s · default %s%s", model.Sanitize(r.PolicyDecision, model.Line),
		model.Sanitize(r.DefaultDecision, model.Line), map[bool]string{true: " · explicit approval required"}[r.RequiresExplicitApproval]))...)
	if r.RequiresTextConfirm {
		out = append(out, d.field("tier-2", st.Warning.Render("approved only by typing ")+st.Bold.Render(d.agent(r.Phrase(), model.Line)))...)
		out = append(out, d.field("attempts", fmt.Sprintf("%d wrong phrase(s); at %d it is blocked and %s %s locked out",
			r.InvalidAttempts, storage.DefaultPhraseLimit, d.agent(r.Verb, model.Line), d.agent(r.Target, model.Line)))...)
	}
	if r.Status == model.StatusPendingConfirm {
		armed := "armed: the phrase prompt was shown, waiting for the phrase"
		if r.ApprovalEventID != "" {
			armed += " (" + d.agent(r.ApprovalEventID, model.Line) + ")"
		}
		out = append(out, d.field("status", armed)...)
	}
	out = append(out, d.field("session", d.agent(r.SessionKey, model.Line))...)
	if r.Requester != "" {
		out = append(out, d.field("requester", d.agent(r.Requester, model.Line))...)
	}
	if h := r.Hermes; h != nil {
		hermes, pats := h.Words(func(s string) string { return d.agent(s, model.Line) })
		if h.Deadline > 0 {
			hermes += "; Hermes stops waiting at " + model.FromEpoch(h.Deadline).UTC().Format("15:04:05Z")
		}
		out = append(out, d.field("hermes", hermes)...)
		out = append(out, d.field("patterns", orDash(pats))...)
	}
	out = append(out, d.field("cwd", orDash(d.agent(r.Cwd, model.Line)))...)
	out = append(out, d.field("backend", orDash(d.agent(r.Backend, model.Line)))...)
	for _, k := range sortedKeys(r.EnvOverrides) {
		out = append(out, d.field("env", d.agent(k, model.Line)+"="+d.agent(r.EnvOverrides[k], model.Line))...)
	}
	return out
}

// buildVotes is the votes block: what the policy asks of the proposal,
// each vote and its age, what is still needed and who may not approve.
func (d *detail) buildVotes(now time.Time) []string {
	if d.votes.empty() || d.rec.Hardline || d.rec.Corrupt != "" {
		return nil // nothing to count: it can only be denied
	}
	lines := d.votes.lines(now)
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s\x00%s\x00%d\x00", l.label, l.text, l.kind)
	}
	if text := b.String(); text != d.votesText || d.width != d.votesWidth {
		d.votesText, d.votesWidth, d.votesLines = text, d.width, nil
		for _, l := range lines {
			d.votesLines = append(d.votesLines, fieldStyled(d.st, l.label, l.text, l.kind.style(d.st), d.width)...)
		}
	}
	return d.votesLines
}

// buildTimed is the end of the head: the ages and times left, and the
// waiter.
func (d *detail) buildTimed(now time.Time) []string {
	r := d.rec
	var out []string
	out = append(out, d.timedField("created", human.Ago(model.FromEpoch(r.CreatedAt), now))...)
	out = append(out, d.timedField("expires", expiryText(r, now))...)
	out = append(out, d.timedField("waiter", d.waiterText(now))...)
	if pk := approvals.ParkWords(r, d.waiter, now); pk != "" {
		// Its agent stopped waiting: what an approval does now, and until
		// when (approvals.ParkWords).
		out = append(out, d.timedField("parked", d.st.Warning.Render(pk))...)
	}
	if len(d.deliveries) > 0 {
		out = append(out, d.timedField("paged", pagedText(d.st, d.deliveries, now))...)
	}
	return out
}

// pagedText says who was paged about a proposal, and how each delivery
// stands (approvals.PageWords), styled by its state: sent, failed, not
// sent, or waiting to be tried again.
func pagedText(st Styles, ds []storage.Delivery, now time.Time) string {
	var parts []string
	for _, dl := range ds {
		pg := approvals.PageWords(dl, now)
		switch pg.State {
		case storage.DeliveryDelivered:
			parts = append(parts, st.OK.Render(pg.Mark)+" "+pg.Text)
		case storage.DeliveryFailed:
			parts = append(parts, st.Error.Render(pg.Mark+" "+pg.Text))
		case storage.DeliveryCancelled:
			parts = append(parts, st.Subtle.Render(pg.Text))
		default:
			parts = append(parts, st.Warning.Render(pg.Text))
		}
	}
	return strings.Join(parts, ", ")
}

// waiterText is who waits on the proposal (approvals.WaiterWords, the
// console's form), its mark styled by state: not read yet, live, gone,
// none.
func (d *detail) waiterText(now time.Time) string {
	mark, words := approvals.WaiterWords(d.rec, d.waiter, now, approvals.Console)
	style := d.st.Warning
	switch {
	case d.waiter == nil:
		style = d.st.Subtle
	case d.waiter.State == storage.WaiterLive:
		style = d.st.OK
	case d.waiter.State == storage.WaiterDead:
		style = d.st.Error
	}
	return style.Render(mark) + words
}

func (d *detail) buildBody() []string {
	r := d.rec
	st := d.st
	var out []string
	title := st.Title.Render("command")
	if r.Hermes != nil {
		title += st.Subtle.Render("  " + model.HermesRedacted)
	}
	out = append(out, "", fitWidth(title, d.width))
	out = append(out, indentWrap(d.agent(r.Command, model.Block), d.width, true)...)
	if r.DisplayText != "" {
		out = append(out, "", st.Title.Render("display text (from the agent)"))
		out = append(out, indentWrap(d.agent(r.DisplayText, model.Block), d.width, false)...)
	}
	out = append(out, "")
	switch {
	case r.DiffText != "":
		df, _ := diffview.Parse(r.DiffText)
		files, add, del := diffview.Stats(df)
		out = append(out, st.Title.Render("diff")+st.Subtle.Render(fmt.Sprintf("  %d file(s), +%d −%d", files, add, del)))
		out = append(out, diffview.Render(df, d.width, st.Diff)...)
	case r.Impact != nil && r.DiffSummary == model.ImpactDiffSummary(r.Impact):
		// The summary is the impact line shown first: not twice.
		out = append(out, diffview.RenderNote(impactAsSummary, d.width, st.Diff)...)
	case r.DiffSummary != "":
		out = append(out, diffview.RenderSummary(r.DiffSummary, d.width, st.Diff)...)
	default:
		out = append(out, diffview.RenderMissing(d.width, st.Diff)...)
	}
	out = append(out, st.Faint.Render("— end of proposal —"))
	return out
}

func expiryText(r *storage.Record, now time.Time) string {
	left, ok := r.TimeLeft(now)
	if !ok {
		return "never"
	}
	at := model.FromEpoch(*r.ExpiresAt).UTC().Format("15:04:05Z")
	if left <= 0 {
		return "expired " + human.Ago(model.FromEpoch(*r.ExpiresAt), now) + " (" + at + ")"
	}
	return "in " + human.Duration(left) + " (" + at + ")"
}

// indentWrap indents text by two columns and wraps it to width. Commands
// are wrapped hard, at the width, so that every byte stays where it is;
// prose wraps at spaces.
func indentWrap(text string, width int, hard bool) []string {
	var out []string
	w := max(width-2, 1)
	for _, l := range strings.Split(text, "\n") {
		wrapped := ansi.Hardwrap(l, w, true)
		if !hard {
			wrapped = ansi.Wrap(l, w, "")
		}
		for _, part := range strings.Split(wrapped, "\n") {
			out = append(out, "  "+part)
		}
	}
	return out
}

// impactAsSummary stands where the diff summary would, when it is the
// impact preview's line (which Hermes' own prompt shows as the summary).
const impactAsSummary = "diff summary only: the impact line above (written for Hermes' prompt); no full diff"

// impactLines are the impact preview, first: its summary, then its lines
// in the console's form (approvals.ImpactLines): each target the command
// touches, what reaches something live, why it is incomplete (the counts
// are then at least), what could not be previewed. Paths are the agent
// host's: foreign text.
func (d *detail) impactLines(m *model.Impact, marked bool) []string {
	st := d.st
	sum := d.agent(m.Summary, model.Line)
	if m.Live() {
		sum = st.Warning.Render(sum)
	}
	out := d.field("impact", sum)
	for _, l := range approvals.ImpactLines(m, marked, approvals.Console) {
		var s string
		switch l.Kind {
		case approvals.ImpactTarget:
			s = d.agent(l.Op, model.Line) + " " + d.agent(l.Path, model.Line) + st.Subtle.Render(": "+d.agent(l.Text, model.Line))
		case approvals.ImpactDetail:
			s = st.Subtle.Render(l.Lead) + d.agent(l.Text, model.Line)
		case approvals.ImpactMore:
			s = st.Subtle.Render(l.Lead)
		default:
			s = st.Warning.Render(l.Lead) + d.agent(l.Text, model.Line)
		}
		out = append(out, d.field("", s)...)
	}
	return out
}
