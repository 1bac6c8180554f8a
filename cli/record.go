package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/impact"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// writeShow prints every field of a proposal for a human; every agent
// string is sanitised. j, when not nil, is the command's judgement: why it
// got its level (writeWhy).
func writeShow(w io.Writer, rec *storage.Record, waiter *storage.WaiterStatus, now time.Time, j *risk.Judgement) {
	p := &rec.Proposal
	field := func(name, value string) { fmt.Fprintf(w, "%-14s %s\n", name+":", value) }
	if rec.Hardline {
		fmt.Fprintf(w, "*** HARDLINE: Hermes never runs this command; it cannot be approved: deny it ***\n")
	}
	if b := approvals.RiskBanner(rec, approvals.Text); b != "" {
		fmt.Fprintf(w, "*** %s ***\n", b)
	}
	switch {
	case rec.Tampered != "":
		fmt.Fprintf(w, "*** TAMPERED: the payload differs from its submit record; cannot be approved; deny it ***\n")
	case rec.Corrupt != "":
		fmt.Fprintf(w, "*** CORRUPT: cannot be approved; deny it ***\n")
	}
	if rec.Suspicious() {
		fmt.Fprintf(w, "*** SUSPICIOUS: hidden characters shown escaped ***\n")
	}
	if ran := approvals.RanWithoutApprovalWords(rec); ran != "" {
		fmt.Fprintf(w, "*** RAN WITHOUT APPROVAL: its agent reported the call as run; it was not approved ***\n")
	}
	if p.Impact != nil {
		writeImpact(w, p.Impact, impact.Marked(p.Impact, p.Command, p.RiskLevel))
	}
	field("id", line(p.ApprovalID))
	if n := len([]rune(p.ApprovalID)); n < storage.MinApprovableID {
		fmt.Fprintf(w, "%-14s %s\n", "", fmt.Sprintf("shorter than %d characters: it can only be denied", storage.MinApprovableID))
	}
	status := line(string(rec.EffectiveStatus))
	if rec.EffectiveStatus != p.Status {
		status += " (stored: " + line(string(p.Status)) + ")"
	}
	switch rec.EffectiveStatus {
	case model.StatusPendingConfirm:
		status += " (armed: Hermes showed its text confirm and waits for the phrase)"
	case model.StatusBlocked:
		status += " (terminal: it can no longer be approved)"
	}
	field("status", status)
	if p.TerminalReason != "" {
		field("ended", line(p.TerminalReason))
	}
	if p.RequiresTextConfirm {
		field("tier-2", "approved only by typing the phrase: "+line(p.Phrase()))
		field("attempts", fmt.Sprintf("%d wrong phrase(s) so far", p.InvalidAttempts))
	}
	if p.ApprovalEventID != "" || p.ApprovalEventTsMs != nil {
		ev := line(p.ApprovalEventID)
		if p.ApprovalEventTsMs != nil {
			ev += " " + when(float64(*p.ApprovalEventTsMs)/1000, now)
		}
		field("armed by", ev)
	}
	field("created", when(p.CreatedAt, now))
	switch {
	case p.ExpiresAt == nil:
		field("expires", "never")
	default:
		field("expires", when(*p.ExpiresAt, now))
	}
	if p.Status == model.StatusConsumed || p.Status == model.StatusDenied {
		d := p.Status.Decision()
		if p.ConsumedBy != "" {
			d += " by " + line(p.ConsumedBy)
		}
		if p.ConsumedAt != nil {
			d += " " + when(*p.ConsumedAt, now)
		}
		field("decided", d)
	}
	field("risk", fmt.Sprintf("%s (effective; pinned %s, classifier now %s)",
		rec.EffectiveRisk.Short(), line(string(p.RiskLevel)), rec.ClassifierRisk))
	field("risk reason", line(p.RiskReason))
	if p.RequesterContext != "" {
		// The requester's words, not approve-tui's verdict: quoted and
		// attributed.
		field(p.SaysLabel(), `"`+line(p.RequesterContext)+`" (its own words, not the verdict)`)
	}
	v := risk.Classify(p.Command)
	if len(v.Matches) == 0 {
		field("classifier", "no dangerous pattern matched")
	}
	for i, m := range v.Matches {
		name := ""
		if i == 0 {
			name = "classifier:"
		}
		fmt.Fprintf(w, "%-14s %s %s: %s\n", name, m.Level.Short(), m.Kind, m.Description)
	}
	if j != nil {
		writeWhy(w, *j)
	}
	field("policy", fmt.Sprintf("%s (version %s), default %s, explicit approval %v",
		line(p.PolicyDecision), orDash(line(p.PolicyVersion)), line(p.DefaultDecision), p.RequiresExplicitApproval))
	field("session", line(p.SessionKey))
	field("requester", orDash(line(p.Requester)))
	if h := p.Hermes; h != nil {
		hermes, pats := h.Words(line)
		if h.Deadline > 0 {
			hermes += "; Hermes stops waiting " + when(h.Deadline, now)
		}
		field("hermes", hermes)
		field("patterns", orDash(pats))
		field("command text", model.HermesRedacted)
	}
	field("cwd", orDash(line(p.Cwd)))
	field("backend", orDash(line(p.Backend)))
	if len(p.EnvOverrides) > 0 {
		names := make([]string, 0, len(p.EnvOverrides))
		for k := range p.EnvOverrides {
			names = append(names, k)
		}
		sort.Strings(names)
		for i, k := range names {
			name := ""
			if i == 0 {
				name = "env:"
			}
			fmt.Fprintf(w, "%-14s %s=%s\n", name, line(k), line(p.EnvOverrides[k]))
		}
	}
	field("execution", approvals.ExecutionWords(rec, waiter, now))
	if waiter != nil {
		_, words := approvals.WaiterWords(rec, waiter, now, approvals.Text)
		field("waiter", words)
	}
	if pk := approvals.ParkWords(rec, waiter, now); pk != "" {
		field("parked", pk)
	}
	if rec.Corrupt != "" {
		field("corrupt", line(rec.Corrupt))
	}
	if rec.Suspicious() {
		field("suspicious", strings.Join(rec.Findings, "; "))
	}
	field("payload", "sha256 "+rec.PayloadSHA256)
	// The command and the diff are shown exactly, each line whole: on a
	// terminal, the terminal wraps them, so no space is lost at a break.
	exact := func(label, text string) {
		fmt.Fprintf(w, "%s:\n", label)
		verbatim(w, func() { fmt.Fprintf(w, "    %s\n", indent(block(text), "    ")) })
	}
	if p.DisplayText != "" {
		exact("display text", p.DisplayText)
	}
	exact("command", p.Command)
	switch {
	case p.Impact != nil && p.DiffSummary == model.ImpactDiffSummary(p.Impact):
		fmt.Fprintln(w, "diff summary: the impact line above (written for Hermes' prompt)")
	case p.DiffSummary != "":
		exact("diff summary", p.DiffSummary)
	}
	if p.DiffText != "" {
		exact("diff", p.DiffText)
	}
	if p.DiffText == "" && p.DiffSummary == "" {
		fmt.Fprintln(w, "no diff available: approving means you have reviewed the change some other way")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeQuorum prints where a proposal stands against the policy
// (approvals.QuorumFields), in show's columns.
func writeQuorum(w io.Writer, rec *storage.Record, v *approvals.Quorum, now time.Time) {
	for _, f := range approvals.QuorumFields(rec, v, now) {
		label := f.Label
		if label != "" {
			label += ":"
		}
		fmt.Fprintf(w, "%-14s %s\n", label, f.Text)
	}
}

// writeImpact is the impact preview first, as the console shows it: the
// summary, each target that exists, what reaches something live, why it
// is incomplete (the counts are then at least) and what could not be
// previewed. Paths are the agent host's: sanitised.
func writeImpact(w io.Writer, m *model.Impact, marked bool) {
	fmt.Fprintf(w, "%-14s %s\n", "impact:", line(m.Summary))
	for _, l := range approvals.ImpactLines(m, marked, approvals.Text) {
		if l.Kind == approvals.ImpactTarget {
			fmt.Fprintf(w, "%-14s %s %s: %s\n", "", line(l.Op), line(l.Path), line(l.Text))
			continue
		}
		fmt.Fprintf(w, "%-14s %s%s\n", "", l.Lead, line(l.Text))
	}
}
