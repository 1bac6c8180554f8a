package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// Why a command got its level: the detail's "why LEVEL" lines, from the
// command's judgement (risk.Judge). A judgement is computed in a tea.Cmd,
// never in Update or View, and kept by what it depends on (the command and
// the directory it runs in; the rest of its context is the console's own),
// so that a result that comes late is still right for its key: a
// proposal rewritten in place has another key, and asks again.

// maxWhyFindings bounds the deciding findings the detail lists one by one
// (show lists them all).
const maxWhyFindings = 3

// maxJudged and maxJudgedBytes bound the judgements kept (their number,
// and the bytes of their commands and directories: a command may be 1 MB);
// past either they are all forgotten, and the one on screen asked again
// when it is selected again.
const (
	maxJudged      = 512
	maxJudgedBytes = 16 << 20
)

// judgeKey is what a judgement depends on besides the console's context.
type judgeKey struct{ command, cwd string }

func judgeKeyOf(rec *storage.Record) judgeKey { return judgeKey{command: rec.Command, cwd: rec.Cwd} }

// judgedMsg carries the judgement of a command in a directory.
type judgedMsg struct {
	key judgeKey
	j   risk.Judgement
}

// judge judges key's command in base with key's directory.
func judge(base risk.Context, key judgeKey) tea.Cmd {
	return func() tea.Msg {
		c := base
		c.Cwd = key.cwd
		return judgedMsg{key: key, j: risk.Judge(key.command, c)}
	}
}

// judgementFor is rec's judgement when it is known (nil otherwise), and
// the command that judges it when it is neither known nor asked for.
func (m *Model) judgementFor(rec *storage.Record) (*risk.Judgement, tea.Cmd) {
	key := judgeKeyOf(rec)
	if j, ok := m.judged[key]; ok {
		return j, nil
	}
	if m.judging[key] {
		return nil, nil
	}
	m.judging[key] = true
	return nil, m.oneOff(judge(m.opt.Judge, key))
}

// onJudged keeps a judgement, and shows it when its proposal is on screen.
func (m *Model) onJudged(msg judgedMsg) tea.Cmd {
	delete(m.judging, msg.key)
	size := len(msg.key.command) + len(msg.key.cwd)
	if len(m.judged) >= maxJudged || m.judgedBytes+size > maxJudgedBytes {
		clear(m.judged)
		m.judgedBytes = 0
	}
	j := msg.j
	m.judged[msg.key] = &j
	m.judgedBytes += size
	if r := m.detail.rec; r != nil && judgeKeyOf(r) == msg.key {
		m.detail.judgement = &j
		m.detail.Refresh(m.now)
		if m.following != "" {
			// The detail's length changed: take the followed scroll again.
			return m.follow()
		}
	}
	return nil
}

// whyLines are the detail's "why LEVEL" lines: the findings that decided
// the level (those at the judgement's level; the LOW ones only when the
// judgement is LOW, where they say what the command does), at most
// maxWhyFindings of them, one line each where it fits, then how many more
// `show` lists; a warning when the judgement is above the risk shown; and
// whether the command is proven read-only. Every string from the command
// is rendered inert.
func (d *detail) whyLines() []string {
	st := d.st
	j := d.judgement
	if j == nil {
		return d.field("why", st.Subtle.Render("judging…"))
	}
	label := "why " + levelWord(j.Level)
	var out []string
	decisive := decidingFindings(j)
	for i, f := range decisive {
		if i == maxWhyFindings {
			out = append(out, d.field("", st.Subtle.Render(fmt.Sprintf("+%d more: approve-tui show %s", len(decisive)-i,
				d.agent(d.rec.ApprovalID, model.Line))))...)
			break
		}
		out = append(out, d.field(label, d.findingText(f))...)
		label = ""
	}
	if r := d.rec; j.Level.Rank() > r.EffectiveRisk.Rank() {
		// The risk above is the record's (pinned, or the pattern table's
		// now); the judgement found more.
		out = append(out, d.field(label, st.Warning.Render("judged "+levelWord(j.Level)+": higher than the risk shown above"))...)
		label = ""
	}
	switch {
	case j.ReadOnly:
		out = append(out, d.field(label, st.OK.Render("proven read-only")+st.Subtle.Render(": every part only reads"))...)
	case len(j.Findings) == 0:
		out = append(out, d.field(label, st.Subtle.Render("nothing found; not proven read-only"))...)
	}
	return out
}

// decidingFindings are j's findings at its level: the ones that decided
// it (below it they are show's to list).
func decidingFindings(j *risk.Judgement) []risk.Finding {
	var out []risk.Finding
	for _, f := range j.Findings {
		if f.Level.Rank() == j.Level.Rank() {
			out = append(out, f)
		}
	}
	return out
}

// reasonLeft is what the pinned reason says that the why lines do not
// ("" nothing): all of it while the judgement is not known (or for a row
// the detail does not judge); otherwise its parts ("; " apart) but those
// that are the why of a finding at the judgement's level (listed, or
// among the "+N more" show lists). A Hermes reason, an older row's, a
// raise by impact or by the submitter are what is left.
func (d *detail) reasonLeft() string {
	r, j := d.rec, d.judgement
	if j == nil || r.Tampered != "" || r.Corrupt != "" {
		return r.RiskReason
	}
	if r.RiskReason == j.Reason() {
		return ""
	}
	deciding := decidingFindings(j)
	var left []string
	for _, part := range strings.Split(r.RiskReason, "; ") {
		if part != "" && !slices.ContainsFunc(deciding, func(f risk.Finding) bool { return f.Why == part }) {
			left = append(left, part)
		}
	}
	return strings.Join(left, "; ")
}

// findingText is one finding on one line where it fits: "hermes: why",
// "effect delete: why", and after it the words that triggered it when
// they add something to the why (a word the why does not already quote).
func (d *detail) findingText(f risk.Finding) string {
	st := d.st
	head := d.agent(f.Rule, model.Line)
	if f.Effect != "" {
		head += " " + d.agent(f.Effect, model.Line)
	}
	s := head + ": " + d.agent(f.Why, model.Line)
	if !wordsAddToWhy(f) {
		return s
	}
	words := make([]string, len(f.Words))
	for i, w := range f.Words {
		words[i] = d.agent(w, model.Line)
		if w == "" || strings.ContainsAny(w, " \t\"") {
			words[i] = `"` + words[i] + `"`
		}
	}
	room := d.width - fieldLabelWidth
	tail := " — " + strings.Join(words, " ")
	switch sw := ansi.StringWidth(s); {
	case sw+ansi.StringWidth(tail) <= room:
	case sw+len(" — ")+8 <= room:
		// The words cut to the line: the command below has them whole.
		tail = ansi.Truncate(tail, room-sw, "…")
	default:
		return s // the why alone wraps; the words would only lengthen it
	}
	return s + st.Subtle.Render(tail)
}

// wordsAddToWhy reports whether f's words say something its why does not:
// some word is not already in it.
func wordsAddToWhy(f risk.Finding) bool {
	for _, w := range f.Words {
		if w == "" || !strings.Contains(f.Why, w) {
			return true
		}
	}
	return false
}

// levelWord is a level in capitals (HIGH, MEDIUM, LOW; CRIT, to fit the
// label's column).
func levelWord(l model.RiskLevel) string {
	if l == model.RiskTier2 {
		return "CRIT"
	}
	return strings.ToUpper(model.Sanitize(string(l), model.Line))
}
