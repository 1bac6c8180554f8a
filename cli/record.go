package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/impact"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// recordJSON is a proposal as --json prints it: every payload key of SPEC §2
// in Hermes' order, with status and risk_level the effective values, then
// what the reader concluded. waiter is nil for list.
func recordJSON(rec *storage.Record, waiter *storage.WaiterStatus) *model.JSONObject {
	p := &rec.Proposal
	eff := *p
	eff.Status, eff.RiskLevel = rec.EffectiveStatus, rec.EffectiveRisk
	o := model.PayloadObject(&eff).
		Str("stored_status", string(p.Status)).
		Str("pinned_risk_level", string(p.RiskLevel)).
		Str("classifier_risk_level", string(rec.ClassifierRisk))
	matches := risk.Classify(p.Command).Matches
	ms := make([]string, len(matches))
	for i, m := range matches {
		ms[i] = model.NewJSONObject().Str("kind", m.Kind).Str("level", string(m.Level)).Str("description", m.Description).String()
	}
	o.Str("terminal_reason", p.TerminalReason).Str("approval_event_id", p.ApprovalEventID).
		Int("invalid_attempts", int64(p.InvalidAttempts))
	if p.ApprovalEventTsMs != nil {
		o.Int("approval_event_ts_ms", *p.ApprovalEventTsMs)
	} else {
		o.Raw("approval_event_ts_ms", "null")
	}
	if p.RequiresTextConfirm {
		o.Str("phrase", p.Phrase())
	}
	o.Raw("classifier_matches", "["+strings.Join(ms, ", ")+"]").
		Bool("hardline", rec.Hardline).
		Str("payload_sha256", rec.PayloadSHA256).
		Bool("suspicious", rec.Suspicious()).
		Strs("findings", rec.Findings).
		Str("corrupt", rec.Corrupt)
	if rec.Tampered != "" {
		o.Str("tampered", rec.Tampered)
	}
	if p.Impact != nil {
		o.Obj("impact", model.ImpactJSON(p.Impact))
	}
	if waiter != nil {
		o.Obj("waiter", waiterJSON(*waiter))
		if run := storage.JudgeRun(rec, *waiter); run != storage.RunNone {
			o.Str("run", string(run))
		}
	}
	return o
}

func waiterJSON(ws storage.WaiterStatus) *model.JSONObject {
	o := model.NewJSONObject().Str("state", string(ws.State))
	if w := ws.Waiter; w != nil {
		o.Str("host", w.Host).Int("pid", int64(w.PID)).Str("surface", w.Surface).
			Num("started_at", w.StartedAt).Num("heartbeat_at", w.HeartbeatAt)
	}
	return o
}

// riskBanner is shown above a proposal whose effective risk is high (or
// unknown, which ranks above high).
func riskBanner(rec *storage.Record) string {
	if rec.EffectiveRisk.Rank() >= model.RiskHigh.Rank() {
		return "HIGH RISK — default: deny"
	}
	return ""
}

// writeShow prints every field of a proposal for a human; every agent
// string is sanitised. j, when not nil, is the command's judgement: why it
// got its level (writeWhy).
func writeShow(w io.Writer, rec *storage.Record, waiter *storage.WaiterStatus, now time.Time, j *risk.Judgement) {
	p := &rec.Proposal
	field := func(name, value string) { fmt.Fprintf(w, "%-14s %s\n", name+":", value) }
	if rec.Hardline {
		fmt.Fprintf(w, "*** HARDLINE: Hermes never runs this command; it cannot be approved: deny it ***\n")
	}
	if b := riskBanner(rec); b != "" {
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
	exec := line(string(p.ExecutionStatus))
	if p.ExecutionReason != "" {
		exec += ": " + line(p.ExecutionReason)
	}
	if p.ExecutionRecordedAt != nil {
		exec += " " + when(*p.ExecutionRecordedAt, now)
	}
	if waiter != nil {
		if run := runText(rec, *waiter, now); run != "" {
			exec += "; " + run
		}
	}
	field("execution", exec)
	if waiter != nil {
		field("waiter", waiterText(rec, *waiter, now))
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

// waiterText says who waits on a proposal; only a pending one's waiter
// tells whether approving runs anything.
func waiterText(rec *storage.Record, ws storage.WaiterStatus, now time.Time) string {
	pending := rec.EffectiveStatus.Open()
	switch ws.State {
	case storage.WaiterLive:
		w := ws.Waiter
		return fmt.Sprintf("live: pid %d on %s (%s) waiting since %s", w.PID, line(w.Host), orDash(line(w.Surface)), relTime(w.StartedAt, now))
	case storage.WaiterDead:
		w := ws.Waiter
		s := fmt.Sprintf("gone: pid %d on %s stopped heartbeating %s", w.PID, line(w.Host), relTime(w.HeartbeatAt, now))
		if pending {
			s += "; approving may run nothing"
		}
		return s
	}
	if !pending {
		return "none"
	}
	return "none: no process is waiting on this id; approving may run nothing"
}

// runText says what is known of a started command's run ("" when its
// execution is not started), from its runner's heartbeat: never that it
// ran or failed when nobody recorded that.
func runText(rec *storage.Record, ws storage.WaiterStatus, now time.Time) string {
	run := storage.JudgeRun(rec, ws)
	switch run {
	case storage.RunRunning:
		w := ws.Waiter
		return fmt.Sprintf("running (runner pid %d on %s, heartbeat %s)", w.PID, line(w.Host), relTime(w.HeartbeatAt, now))
	case storage.RunDied:
		w := ws.Waiter
		return fmt.Sprintf("%s (runner pid %d on %s is gone, last heartbeat %s)", run.Words(), w.PID, line(w.Host), relTime(w.HeartbeatAt, now))
	}
	return run.Words()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// quorumView is where a proposal stands against the approval policy in
// force, as show, list and approve print it.
type quorumView struct {
	pv *storage.PolicyVersion // nil: no policy set
	q  *storage.Quorum        // nil: no rule applies
	// votes: show and approve, every vote cast on the proposal, those that
	// ended too; list, the votes that count (Quorum's).
	votes []storage.Vote
	// broken says why the policy in force cannot be used ("" when it can):
	// nothing is approved until a good one is set.
	broken string
}

// quorumOf reads where rec stands, with every vote cast on it. A policy in
// the store that cannot be read is said (broken), not an error: the
// proposal is still shown.
func quorumOf(ctx context.Context, s *storage.Store, rec *storage.Record) (*quorumView, error) {
	qs, pv, err := s.Quorums(ctx, []*storage.Record{rec})
	v := &quorumView{pv: pv}
	var rf *storage.RefusedError
	switch {
	case errors.As(err, &rf):
		v.broken = rf.Reason
	case err != nil:
		return nil, err
	default:
		v.q = qs[rec.ApprovalID]
	}
	if v.votes, err = s.Votes(ctx, rec.ApprovalID); err != nil {
		return nil, err
	}
	return v, nil
}

// quorumsOf is quorumOf for a page of records (list): one read of the
// policy and of the votes; each view has the votes that count.
func quorumsOf(ctx context.Context, s *storage.Store, recs []*storage.Record) (map[string]*quorumView, error) {
	qs, pv, err := s.Quorums(ctx, recs)
	broken := ""
	var rf *storage.RefusedError
	switch {
	case errors.As(err, &rf):
		broken = rf.Reason
	case err != nil:
		return nil, err
	}
	out := make(map[string]*quorumView, len(recs))
	for _, r := range recs {
		v := &quorumView{pv: pv, broken: broken}
		if q := qs[r.ApprovalID]; q != nil {
			v.q, v.votes = q, q.Votes
		}
		out[r.ApprovalID] = v
	}
	return out, nil
}

// voteCounts reports whether vote v still counts toward rec's quorum: not
// ended, cast on the payload as it is now, and rec still open.
func voteCounts(rec *storage.Record, v storage.Vote) bool {
	return v.Ended == "" && v.PayloadSHA256 == rec.PayloadSHA256 && rec.EffectiveStatus.Open()
}

func voteJSON(rec *storage.Record, v storage.Vote) *model.JSONObject {
	return model.NewJSONObject().Str("actor", v.Actor).Num("at", v.At).Str("payload_sha256", v.PayloadSHA256).
		Str("surface", v.Surface).Str("person", v.Person).Str("ended", v.Ended).OptNum("ended_at", v.EndedAt).
		Bool("counts", voteCounts(rec, v))
}

// withQuorum adds the quorum's keys to a proposal's JSON: votes,
// approvals_needed (still needed; 0 when met, decided, or no rule
// applies), approvals_required (the quorum), needed (in words, "" when
// nothing is) and approval_policy_version (null: no policy; the payload's
// policy_version is Hermes' own). A policy that cannot be used leaves the
// counts null and says why in needed.
func withQuorum(o *model.JSONObject, rec *storage.Record, v *quorumView) *model.JSONObject {
	if v == nil {
		return o
	}
	vs := make([]*model.JSONObject, len(v.votes))
	for i, vote := range v.votes {
		vs[i] = voteJSON(rec, vote)
	}
	o.Raw("votes", jsonList(vs))
	switch {
	case v.broken != "":
		o.Raw("approvals_needed", "null").Raw("approvals_required", "null").Str("needed", v.broken)
	case v.q != nil:
		needed, words := 0, ""
		if rec.EffectiveStatus.Open() {
			needed, words = v.q.Short, v.q.Needed()
		}
		o.Int("approvals_needed", int64(needed)).Int("approvals_required", int64(v.q.Approvals)).Str("needed", words)
	default:
		o.Int("approvals_needed", 0).Int("approvals_required", 1).Str("needed", "")
	}
	if v.pv != nil {
		o.Int("approval_policy_version", v.pv.Version)
	} else {
		o.Raw("approval_policy_version", "null")
	}
	return o
}

// writeQuorum prints where a proposal stands against the policy, for a
// human: the quorum, what is still needed, who may not approve it, and
// every vote with whether it still counts. Nothing when no policy was ever
// set and nobody voted.
func writeQuorum(w io.Writer, rec *storage.Record, v *quorumView, now time.Time) {
	if v == nil || v.pv == nil && v.broken == "" && len(v.votes) == 0 {
		return
	}
	field := func(name, value string) { fmt.Fprintf(w, "%-14s %s\n", name+":", value) }
	open := rec.EffectiveStatus.Open()
	switch {
	case v.broken != "":
		field("quorum", "nothing can be approved: "+line(v.broken))
	case v.q != nil:
		field("quorum", fmt.Sprintf("%s (policy %s, %s)", line(v.q.Describe()), v.pv.Label(), ruleList(v.q.Rules)))
		if open {
			if v.q.Met() {
				field("needs", "nothing more: the next approval approves it ("+v.q.Progress()+")")
			} else {
				field("needs", fmt.Sprintf("%s (%s so far)", line(v.q.Needed()), v.q.Progress()))
			}
			if len(v.q.Requesters) > 0 {
				field("not by", sanitizedList(v.q.Requesters)+" (who asked for it: nobody approves their own agent's proposal)")
			}
		}
	case v.pv != nil:
		field("quorum", fmt.Sprintf("one approver (no rule of policy %s applies)", v.pv.Label()))
	}
	for i, vote := range v.votes {
		name := ""
		if i == 0 {
			name = "votes:"
		}
		state := "counts"
		switch {
		case vote.Ended != "":
			state = "ended: " + line(vote.Ended)
			if vote.EndedAt != nil {
				state += " " + relTime(*vote.EndedAt, now)
			}
		case vote.PayloadSHA256 != rec.PayloadSHA256:
			state = "does not count: cast on another payload (sha256 " + line(vote.PayloadSHA256) + ")"
		case !open:
			state = "does not count: the proposal is " + line(string(rec.EffectiveStatus))
		}
		fmt.Fprintf(w, "%-14s %s %s: %s\n", name, voteWho(vote), when(vote.At, now), state)
	}
}

// voteWho is who cast a vote, sanitised: its actor, and the person it
// counted as when the actor's name does not say (sudo, an SSH key's
// comment): "root@laptop via cli (as alice)".
func voteWho(v storage.Vote) string {
	who := line(v.Actor)
	signed := strings.HasPrefix(strings.ToLower(v.Actor), strings.ToLower(v.Person)+" (sha256:") // the store's words for a signed vote
	if v.Person != "" && !signed && !policy.SamePerson(v.Actor, v.Person) {
		who += " (as " + line(v.Person) + ")"
	}
	return who
}

// votersOf names the votes' voters (voteWho), joined.
func votersOf(vs []storage.Vote) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = voteWho(v)
	}
	return strings.Join(out, ", ")
}

// ruleList names the rules that matched (indexes from 0) as "rule 1" or
// "rules 1, 3".
func ruleList(idx []int) string {
	nums := make([]string, len(idx))
	for i, n := range idx {
		nums[i] = strconv.Itoa(n + 1)
	}
	if len(nums) == 1 {
		return "rule " + nums[0]
	}
	return "rules " + strings.Join(nums, ", ")
}

// sanitizedList joins names from the store, each sanitised.
func sanitizedList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = line(n)
	}
	return strings.Join(out, ", ")
}

// writeImpact is the impact preview first, as the console shows it: the
// summary, each target that exists, what reaches something live, why it
// is incomplete (the counts are then at least) and what could not be
// previewed. Paths are the agent host's: sanitised.
func writeImpact(w io.Writer, m *model.Impact, marked bool) {
	fmt.Fprintf(w, "%-14s %s\n", "impact:", line(m.Summary))
	for _, t := range m.Targets {
		desc := impact.Describe(t, true)
		fmt.Fprintf(w, "%-14s %s %s: %s\n", "", line(t.Op), line(t.Path), line(desc.What))
		for _, l := range desc.Live {
			fmt.Fprintf(w, "%-14s ! live: %s\n", "", line(l))
		}
		for _, x := range desc.Details {
			fmt.Fprintf(w, "%-14s   · %s\n", "", line(x))
		}
	}
	for _, why := range impact.IncompleteWhy(m) {
		fmt.Fprintf(w, "%-14s incomplete: %s\n", "", line(why))
	}
	for _, u := range m.Unknown {
		fmt.Fprintf(w, "%-14s could not preview: %s\n", "", line(u))
	}
	if level, why := impact.Raise(m); level != "" {
		mark := ""
		if marked {
			mark = "marked I, " // the impact raised the risk
		}
		fmt.Fprintf(w, "%-14s %sat least %s: %s\n", "", mark, strings.ToUpper(string(level)), line(strings.TrimPrefix(why, "impact: ")))
	}
}
