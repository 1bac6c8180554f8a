package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The history tab: the audit log, newest first, in columns sized to what
// they hold, and one event shown whole (enter). Every column comes from the
// file, which any process that can write it can forge: all of it goes
// through the sanitiser, once, when the events are loaded (historyRow).

// auditKey names an audit event from one load of the history to the next:
// its place in the chain (seq), or, for a decision read from the table
// outside the chain (seq 0), its proposal, event and time.
type auditKey struct {
	seq       int64
	id, event string
	at        float64
}

func keyOf(e storage.AuditEvent) auditKey {
	if e.Seq > 0 && !e.Outside {
		return auditKey{seq: e.Seq}
	}
	return auditKey{id: e.ApprovalID, event: e.Event, at: e.At}
}

// histRow is an audit event's columns in the list, sanitised.
type histRow struct {
	at, event, outcome, id, actor, detail string
	refused                               bool
}

// historyRow lays out one event's columns; a started command's run state
// (runs) is the list's to add, as it changes without a new event.
func historyRow(e storage.AuditEvent) histRow {
	r := histRow{
		at:      model.FromEpoch(e.At).UTC().Format("15:04:05"),
		event:   rowString(e.Event),
		outcome: rowString(e.Outcome),
		id:      rowString(e.ApprovalID),
		actor:   rowString(e.Actor),
		detail:  historyDetail(e),
		refused: e.Outcome != storage.OutcomeOK,
	}
	if e.Outcome != storage.OutcomeOK {
		r.outcome += ": " + rowString(refusalWords(e.Reason))
	}
	if e.Surface != "" {
		r.actor += " via " + rowString(e.Surface)
	}
	switch {
	case e.Outside:
		r.outcome = "outside the chain"
	case e.Event == storage.EventExecution && e.Reason == string(model.ExecHandedOff):
		r.outcome = "handed to Hermes"
	case e.Event == storage.EventExecution && e.Reason == string(model.ExecRanWithoutApproval):
		r.outcome = approvals.ExecWords(model.ExecRanWithoutApproval)
	case e.Event == storage.EventExpire && e.Reason == storage.DetailRanWithoutApproval:
		r.outcome = "closed: " + approvals.ExecWords(model.ExecRanWithoutApproval)
	case e.Event == storage.EventExecution || e.Event == storage.EventPolicy || e.Event == storage.EventReport:
		r.outcome = rowString(e.Reason)
	}
	if outcome, detail := parkEventWords(e); outcome != "" {
		r.outcome, r.detail = outcome, detail
	}
	if outcome, detail := quorumWords(e); outcome != "" || detail != "" {
		if outcome != "" {
			r.outcome = outcome
		}
		r.detail = strings.TrimSpace(detail + " " + r.detail)
	}
	return r
}

// parkEventWords is what a park or take event says in the history's
// columns ("" for any other event): "parked", why its agent stopped
// waiting and until when the call asked again takes an approval;
// "taken", that the call asked again took it. Every value is the file's:
// sanitised.
func parkEventWords(e storage.AuditEvent) (outcome, detail string) {
	if e.Outcome != storage.OutcomeOK || e.Outside {
		return "", ""
	}
	at := func(k string) string {
		if v, ok := e.Detail[k].(float64); ok && v > 0 {
			return model.FromEpoch(v).UTC().Format("15:04:05")
		}
		return "-"
	}
	switch e.Event {
	case storage.EventPark:
		why, _ := e.Detail["why"].(string)
		detail = "its agent stopped waiting"
		if why != "" {
			detail += " (" + rowString(why) + ")"
		}
		return "parked", detail + "; an approval reaches the same call asked again until " + at("until")
	case storage.EventTake:
		return "taken", "the same call, asked again, took its approval (parked at " + at("stopped_at") + ")"
	}
	return "", ""
}

// quorumWords is what an event of the policy or of its votes says in the
// history's columns: the outcome ("" leaves it as it is) and the start of
// the detail. Every value is the file's: sanitised (rowString).
func quorumWords(e storage.AuditEvent) (outcome, detail string) {
	if e.Outcome != storage.OutcomeOK || e.Outside {
		return "", ""
	}
	str := func(k string) string {
		v, ok := e.Detail[k]
		if !ok {
			return ""
		}
		if s, ok := v.(string); ok {
			return rowString(s)
		}
		return rowString(fmt.Sprint(v))
	}
	list := func(k string) string {
		vs, _ := e.Detail[k].([]any)
		out := make([]string, 0, len(vs))
		for _, v := range vs {
			out = append(out, rowString(fmt.Sprint(v)))
		}
		return strings.Join(out, ", ")
	}
	short := func(sum string) string { return sum[:min(8, len(sum))] }
	switch e.Event {
	case storage.EventVote:
		detail = str("progress")
		if n := str("needed"); n != "" {
			detail += "; still needed: " + n
		}
		if v := list("voters"); v != "" {
			detail += "; voters: " + v
		}
		return "vote recorded", strings.TrimPrefix(detail, "; ")
	case storage.EventVoteVoid:
		who := str("voter")
		if who == "" {
			who = "a"
		} else {
			who += "'s"
		}
		return "vote void: " + rowString(refusalWords(e.Reason)), who + " vote no longer counts: the content is not what they read"
	case storage.EventPolicySet:
		count := func(k, what string) string {
			n := orDash(str(k))
			if n != "1" {
				what += "s"
			}
			return n + " " + what
		}
		detail = fmt.Sprintf("%s, %s; sha256 %s", count("rules", "rule"), count("groups", "group"), short(str("new_sha256")))
		if old := str("old_sha256"); old != "" {
			detail += " (was " + short(old) + ")"
		} else {
			detail += " (the first policy)"
		}
		return "policy v" + str("version") + " set", detail
	case storage.EventApprove:
		if a := list("approvers"); a != "" {
			detail = "approvers: " + a
			if v := str("policy_version"); v != "" {
				detail += " (policy v" + v + ")"
			}
		}
		return "", detail
	case storage.EventDeny:
		if v := list("vetoed_votes"); v != "" {
			return "", "vetoed votes: " + v
		}
	}
	return "", ""
}

// runOf is the run state of the command whose start e records, while it
// has not ended (nil for any other event).
func (m *Model) runOf(e *storage.AuditEvent) *runInfo { return runOf(m.runs, e) }

// runOf is e's run among runs when e recorded a start and the run has
// not ended.
func runOf(runs map[string]runInfo, e *storage.AuditEvent) *runInfo {
	if e.Event != storage.EventExecution || e.Reason != string(model.ExecStarted) || e.Outside {
		return nil
	}
	if r, ok := runs[e.ApprovalID]; ok {
		return &r
	}
	return nil
}

// histCols is the width of the history's columns, at width: TIME is
// always 8; DETAIL takes what the others leave.
type histCols struct {
	width, event, outcome, id, actor int
}

// Bounds of the history's short columns: each is as wide as the widest of
// its cells among the rows listed, up to this.
const (
	maxEventCol   = 12
	maxOutcomeCol = 24
	maxIDCol      = 16
	minActorCol   = 12
)

// layoutHistory sizes the columns for the rows listed (hvisible): EVENT,
// OUTCOME and ID as wide as their widest cell (within bounds); ACTOR as
// wide as its widest too, but no more than half of what is left after
// them (and at least minActorCol); DETAIL the rest.
func (m *Model) layoutHistory() {
	c := histCols{width: m.width, event: len("EVENT"), outcome: len("OUTCOME"), id: len("ID"), actor: len("ACTOR")}
	for _, i := range m.hist.visible {
		r := m.hrows[i]
		outcome := r.outcome
		if run := m.runOf(&m.history[i]); run != nil {
			outcome, _ = runWords(*run, m.now, "")
		}
		c.event = max(c.event, ansi.StringWidth(r.event))
		c.outcome = max(c.outcome, ansi.StringWidth(outcome))
		c.id = max(c.id, ansi.StringWidth(r.id))
		c.actor = max(c.actor, ansi.StringWidth(r.actor))
	}
	c.event, c.outcome, c.id = min(c.event, maxEventCol), min(c.outcome, maxOutcomeCol), min(c.id, maxIDCol)
	c.actor = min(c.actor, max(c.shared()/2, minActorCol))
	m.hcols = c
}

// shared is what ACTOR and DETAIL share of the width: the cursor's two
// columns, TIME and the short columns taken, and the spaces between.
func (c histCols) shared() int {
	return c.width - 2 - 8 - 2 - c.event - 1 - c.outcome - 1 - c.id - 1 - 1
}

// head is the history's column titles.
func (c histCols) head() string {
	return "  " + padRight("TIME", 8) + "  " + padRight("EVENT", c.event) + " " + padRight("OUTCOME", c.outcome) + " " +
		padRight("ID", c.id) + " " + padRight("ACTOR", c.actor) + " DETAIL"
}

// line is one row of the history (without the cursor's columns).
func (c histCols) line(r histRow, outcome, detail string) string {
	return r.at + "  " + fitWidth(r.event, c.event) + " " + fitWidth(outcome, c.outcome) + " " + fitWidth(r.id, c.id) + " " +
		fitWidth(r.actor, c.actor) + " " + detail
}

// selectedAudit is the history's selected event, if any.
func (m *Model) selectedAudit() (storage.AuditEvent, bool) {
	i := m.hist.at()
	if i < 0 {
		return storage.AuditEvent{}, false
	}
	return m.history[i], true
}

// eventPage is one audit event shown whole (enter on the history): its
// lines are laid out in Update (buildEventPage); View slices them.
type eventPage struct {
	ev     storage.AuditEvent
	lines  []string
	offset int
	// timeAt is the line of the event's time, which tells its age: the
	// clock writes that line again (ageEventPage), not the whole page.
	timeAt int
	// sigs: the signatures kept for the decisions on the event's proposal,
	// as checked (sigsRead: they were read, or sigErr says why not); read
	// for an approve, vote or deny.
	sigs     []approvals.Signer
	sigsRead bool
	sigErr   error
}

// openEvent shows the selected audit event whole, and reads the
// signatures of its proposal's decisions when it is one.
func (m *Model) openEvent() tea.Cmd {
	e, ok := m.selectedAudit()
	if !ok {
		return nil
	}
	m.event = &eventPage{ev: e}
	m.buildEventPage()
	switch e.Event {
	case storage.EventApprove, storage.EventVote, storage.EventDeny:
		if e.ApprovalID != "" && !e.Outside {
			m.egen++
			return m.oneOff(loadEventSigs(m.ctx, m.opt.Store, m.egen, e.ApprovalID))
		}
	}
	return nil
}

// eventSigsMsg carries the signatures an event page shows.
type eventSigsMsg struct {
	gen  int
	sigs []approvals.Signer
	err  error
}

// loadEventSigs reads proposal id's signatures, checked against the trust
// file for the proposal as it is stored.
func loadEventSigs(ctx context.Context, s *storage.Store, gen int, id string) tea.Cmd {
	return func() tea.Msg {
		rec, err := s.Get(ctx, id)
		if err != nil {
			return eventSigsMsg{gen: gen, err: err}
		}
		sigs, err := readSignatures(ctx, s, shownOf(rec))
		return eventSigsMsg{gen: gen, sigs: sigs, err: err}
	}
}

// signatureLines are the event page's signatures field: each signature
// kept for the proposal's decisions, whose key signed it and whether it
// verifies; nothing where none is kept and none is required.
func (m *Model) signatureLines(p *eventPage) []string {
	st := m.st
	switch {
	case !p.sigsRead:
		if p.sigErr == nil && (m.opt.Store.Trust().Required()) {
			return []string{st.Subtle.Render("reading…")}
		}
		return nil
	case p.sigErr != nil:
		return []string{st.Error.Render("could not be read: " + storeReason(p.sigErr))}
	case len(p.sigs) == 0 && m.opt.Store.Trust().Required():
		return []string{st.Warning.Render("none: unsigned")}
	}
	var out []string
	for _, sg := range p.sigs {
		words, state := approvals.SignatureWords(sg, shortKey, approvals.Console)
		switch state {
		case approvals.SigBad:
			words = st.Error.Render(words)
		case approvals.SigNotChecked:
			words = st.Subtle.Render(words)
		}
		out = append(out, words)
	}
	return out
}

// buildEventPage lays out the event page for the width, the clock (the
// event's age) and what is known of a started command's run.
func (m *Model) buildEventPage() {
	p := m.event
	if p == nil || m.width <= 0 {
		return
	}
	e := p.ev
	st := m.st
	var out []string
	field := func(label, value string) { out = append(out, fieldLines(st, label, value, m.width)...) }
	text := func(s string) string { return orDash(agentText(st, s, model.Line)) }
	out = append(out, st.Title.Render("audit event"))
	if e.Outside {
		field("seq", st.Warning.Render("none: decided outside approve-tui, read from the table (not in the audit chain)"))
	} else {
		field("seq", fmt.Sprint(e.Seq))
	}
	p.timeAt = len(out)
	out = append(out, m.eventTime()...)
	field("event", text(e.Event))
	outcome := text(e.Outcome)
	if e.Outcome != storage.OutcomeOK && e.Outcome != "" {
		outcome = st.Error.Render(outcome)
	}
	field("outcome", outcome)
	reason := text(e.Reason)
	if w := refusalWords(e.Reason); w != e.Reason {
		reason += st.Subtle.Render(" (" + w + ")")
	}
	field("reason", reason)
	field("id", st.Bold.Render(text(e.ApprovalID)))
	field("actor", text(e.Actor))
	field("surface", text(e.Surface))
	for i, l := range m.signatureLines(p) {
		label := ""
		if i == 0 {
			label = "signatures"
		}
		field(label, l)
	}
	if r := m.runOf(&e); r != nil {
		words, detail := runWords(*r, m.now, "")
		field("run", words+": "+strings.TrimSuffix(detail, "; "))
	}
	details := eventDetail(st, e)
	if len(details) == 0 {
		field("detail", "—")
	}
	for i, d := range details {
		label := ""
		if i == 0 {
			label = "detail"
		}
		field(label, d)
	}
	if !e.Outside {
		field("prev hash", text(e.PrevHash))
		field("hash", text(e.Hash))
	}
	out = append(out, "", st.Faint.Render("— end of event —"))
	p.lines = out
	p.scroll(0, m.bodyHeight())
}

// eventTime is the event page's time field: when, and how long ago.
func (m *Model) eventTime() []string {
	at := model.FromEpoch(m.event.ev.At)
	return fieldLines(m.st, "time", at.UTC().Format("2006-01-02 15:04:05.000Z")+" ("+human.Ago(at, m.now)+")", m.width)
}

// ageEventPage writes the event page again for the clock: the line of its
// age, or the whole page when its age takes more than a line or it shows a
// running command (whose heartbeat ages too).
func (m *Model) ageEventPage() {
	p := m.event
	if p == nil {
		return
	}
	if t := m.eventTime(); len(t) == 1 && p.timeAt < len(p.lines) && m.runOf(&p.ev) == nil {
		p.lines[p.timeAt] = t[0]
		return
	}
	m.buildEventPage()
}

// eventDetail is an event's detail whole, a key=value per item, sorted;
// a detail that is not a JSON object is shown as it is stored.
func eventDetail(st Styles, e storage.AuditEvent) []string {
	if e.Detail == nil {
		if strings.TrimSpace(e.DetailRaw) == "" {
			return nil
		}
		return []string{st.Warning.Render("not a JSON object: ") + agentText(st, e.DetailRaw, model.Line)}
	}
	var out []string
	for _, d := range e.DetailItems() {
		out = append(out, agentText(st, d.Key, model.Line)+"="+agentText(st, d.Text(), model.Line))
	}
	return out
}

// scroll moves the page by n lines within a body of height rows.
func (p *eventPage) scroll(n, height int) {
	p.offset = max(min(p.offset+n, len(p.lines)-height), 0)
}

// view is the page's rows for a body of height rows at width: the lines
// from the offset, the last row saying how many more there are.
func (p *eventPage) view(st Styles, width, height int) string {
	end := min(p.offset+height, len(p.lines))
	out := append([]string(nil), p.lines[p.offset:end]...)
	if r := hiddenBelow(len(p.lines), p.offset, height); r > 0 {
		out[len(out)-1] = st.Subtle.Render(fitWidth(moreBelow(r)+" (↓/pgdn)", width))
	}
	return strings.Join(out, "\n")
}

// eventKey scrolls the event page, or closes it (esc).
func (m *Model) eventKey(k tea.KeyMsg) {
	p, h := m.event, m.bodyHeight()
	switch {
	case key.Matches(k, m.keys.Back):
		m.event = nil
	case key.Matches(k, m.keys.Up):
		p.scroll(-1, h)
	case key.Matches(k, m.keys.Down):
		p.scroll(1, h)
	case key.Matches(k, m.keys.PageUp):
		p.scroll(-(h - 1), h)
	case key.Matches(k, m.keys.PageDown):
		p.scroll(h-1, h)
	case key.Matches(k, m.keys.Top):
		p.scroll(-len(p.lines), h)
	case key.Matches(k, m.keys.Bottom):
		p.scroll(len(p.lines), h)
	}
}

// applyHistoryFilter recomputes the history's visible events and keeps the
// selection on keep (when selected is true) where it still shows; when
// events came above it, the rows on screen stay where they were, unless the
// list was scrolled to its top (then the new ones show).
func (m *Model) applyHistoryFilter(keep storage.AuditEvent, selected bool) {
	q := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	want := keyOf(keep)
	m.hist.visible = m.hist.visible[:0]
	at := -1
	for i, e := range m.history {
		if q == "" || strings.Contains(strings.ToLower(historySearch(e)), q) {
			if selected && at < 0 && keyOf(e) == want {
				at = len(m.hist.visible)
			}
			m.hist.visible = append(m.hist.visible, i)
		}
	}
	if at >= 0 {
		if m.hist.top > 0 {
			m.hist.top += at - m.hist.cursor
		}
		m.hist.cursor = at
	}
	m.hist.cursor = max(min(m.hist.cursor, len(m.hist.visible)-1), 0)
	m.hist.scroll()
	m.layoutHistory()
}

func historySearch(e storage.AuditEvent) string {
	return e.ApprovalID + " " + e.Event + " " + e.Outcome + " " + e.Reason + " " + e.Actor + " " + e.Surface + " " + e.DetailRaw
}
