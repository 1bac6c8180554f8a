package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
)

// The approval policy (SPEC §3.13) as the console shows it: where each
// proposal stands against the version in force (storage.Quorum, read with
// the pending list by one Store.Quorums call), in the list (votes so far of
// those required), the detail (the votes block), the approve prompt (which
// vote this approval is) and the header (the version in force). The store
// decides, in the transaction that approves; the console only tells, and
// never pretends: a policy it could not read is said so, never taken for
// no policy.

// quorumState is what the last load of the pending list said of the
// policy and the votes.
type quorumState struct {
	// byID: where each loaded proposal a rule applies to stands.
	byID map[string]*storage.Quorum
	// policy is the version in force (nil: none set, or none read yet).
	policy *storage.PolicyVersion
	// problem says why the policy or the votes could not be read ("" when
	// they could), sanitised; unreadable: the policy itself cannot be used
	// (storage.RefusedPolicyUnreadable), so the store approves nothing.
	problem    string
	unreadable bool
}

// key names the policy a load read: the rows below a first page keep
// where they stood only under the same one.
func (q *quorumState) key() string {
	k := "none"
	if q.policy != nil {
		k = q.policy.Label()
	}
	if q.problem != "" {
		k += " failed"
	}
	return k
}

// of is where proposal id stands (nil: no rule applies, or not known).
func (q *quorumState) of(id string) *storage.Quorum { return q.byID[id] }

// policyProblem says in words why the policy or the votes could not be
// read, and whether the policy itself is unusable.
func policyProblem(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	var rf *storage.RefusedError
	if errors.As(err, &rf) && rf.Code == storage.RefusedPolicyUnreadable {
		return model.Sanitize(rf.Reason, model.Line), true
	}
	return "the policy and votes could not be read: " + storeReason(err), false
}

// take keeps what a load read of the policy: rows is the list the load
// made, partial whether it read a first page only (the rows below it keep
// what the last full read said, unless the policy changed since).
func (q *quorumState) take(msg pendingMsg, rows []row, partial bool) {
	if !msg.qread {
		return
	}
	before := q.key()
	old := q.byID
	q.problem, q.unreadable = policyProblem(msg.qerr)
	if q.problem != "" && !q.unreadable {
		// A failure to read (the store busy, say): what the last read
		// said stays, said to be perhaps out of date.
		return
	}
	q.policy = msg.policy
	by := msg.quorums
	if by == nil {
		by = map[string]*storage.Quorum{}
	}
	if partial && q.key() == before {
		// The rows below the page are the last full read's: so is where
		// they stand, until the rest is read.
		page := make(map[string]bool, len(msg.rows))
		for _, rec := range msg.rows {
			page[rec.ApprovalID] = true
		}
		for _, r := range rows {
			if id := r.rec.ApprovalID; !page[id] && old[id] != nil {
				by[id] = old[id]
			}
		}
	}
	q.byID = by
}

// progress is a row's votes so far of those required: "1/2".
func progress(q *storage.Quorum) string {
	if q == nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", q.Standing.Votes, q.Standing.Votes+q.Short)
}

// votesView is what the detail and the prompt show of one proposal's
// standing: where it stands as the approvals read model holds it for a
// page (Policy in force; Q nil when no rule applies or the policy could not
// be read; Votes, those that count; Broken, sanitised, why the policy
// itself cannot be used), and what the console adds.
type votesView struct {
	approvals.Quorum
	// stale says why the last read of the policy and votes failed (""
	// when it did not): Q is what the read before said.
	stale string
	me    policy.Voter
	// signed: the store requires signatures (each vote says signed or
	// unsigned); sigs, the proposal's signatures as read and checked.
	signed bool
	sigs   []approvals.Signer
}

// votesFor is what the console knows of proposal id's standing.
func (m *Model) votesFor(id string) votesView {
	v := votesView{Quorum: approvals.Quorum{Policy: m.quorum.policy, Q: m.quorum.of(id)}, me: m.me, signed: m.opt.Store.Trust().Required()}
	if v.Q != nil {
		v.Votes = v.Q.Votes
	}
	if m.quorum.unreadable {
		v.Broken = m.quorum.problem
	} else {
		v.stale = m.quorum.problem
	}
	if m.sigsID == id {
		v.sigs = m.sigs
	}
	return v
}

// problem says why the policy could not be used, or read ("" when it
// could).
func (v votesView) problem() string { return v.Broken + v.stale }

// empty: nothing to say (no policy in force, or not read yet).
func (v votesView) empty() bool {
	return v.Q == nil && v.problem() == "" && (v.Policy == nil || v.Policy.Policy == nil || len(v.Policy.Policy.Rules) == 0)
}

// voteLine is a line of the detail's votes block: its label ("" goes on
// under the one before), its text and how it is styled. One style per
// line, applied to each line it wraps to: a style open across a wrap
// would not be the same line from one frame to the next (viewMemo).
type voteLine struct {
	label, text string
	kind        lineKind
}

type lineKind int

const (
	linePlain lineKind = iota
	lineSubtle
	lineOK
	lineWarn
	lineBad
)

func (k lineKind) style(st Styles) lipgloss.Style {
	switch k {
	case lineSubtle:
		return st.Subtle
	case lineOK:
		return st.OK
	case lineWarn:
		return st.Warning
	case lineBad:
		return st.Error
	}
	return st.Value
}

// lines are the detail's votes block at now.
func (v votesView) lines(now time.Time) (out []voteLine) {
	switch {
	case v.Broken != "" || v.stale != "" && v.Q == nil:
		return []voteLine{{"votes", v.problem(), lineBad}}
	case v.stale != "":
		defer func() { out = append(out, voteLine{"", v.stale + ": this may be out of date", lineBad}) }()
	case v.Q == nil:
		return []voteLine{{"votes", "one approver: no rule of policy " + v.Policy.Label() + " applies", lineSubtle}}
	}
	q := v.Q
	out = []voteLine{{"votes", "needs " + describe(q.Standing) + " (policy " + q.Policy.Label() + ")", linePlain}}
	if len(v.Votes) == 0 {
		out = append(out, voteLine{"", "no votes yet", lineSubtle})
	}
	for _, vt := range v.Votes {
		// The actor as consumed_by will name them ("alice@laptop via cli").
		s := "✓ " + model.Sanitize(vt.Actor, model.Line) + ", " + human.Ago(model.FromEpoch(vt.At), now)
		if v.me.Same(policy.Voter{Person: vt.Person, Key: vt.Key}) {
			s += " (you)"
		}
		kind := linePlain
		if v.signed || len(v.sigs) > 0 {
			var words string
			words, kind = voteSignature(vt, v.sigs)
			s += " — " + words
		}
		out = append(out, voteLine{"", s, kind})
	}
	if q.Met() {
		out = append(out, voteLine{"", q.Progress() + ": the next approval consumes it", lineOK})
	} else {
		out = append(out, voteLine{"", "still needed: " + needed(q.Standing) + " (" + q.Progress() + " so far)", lineWarn})
	}
	if len(q.Requesters) > 0 {
		s := "not by " + approvals.Names(q.Requesters) + " (who asked for it)"
		if policy.RequesterOf(q.Requesters, v.me) != "" {
			s += ": that is you"
		}
		out = append(out, voteLine{"", s, lineSubtle})
	}
	return out
}

// promptLine is a line the approve prompt says of the vote, and its style.
type promptLine struct {
	text  string
	style func(...string) string
}

// promptLines is what the approve prompt says of the policy: which vote
// this approval would be and what it leaves, or that the store will refuse
// it (the operator asked for it, voted already, or cannot count toward
// what is left; the policy cannot be read). Nothing when no rule applies.
func (v votesView) promptLines(st Styles) (lines []promptLine) {
	warn, bad, ok := st.Warning.Render, st.Error.Render, st.OK.Render
	if v.Broken != "" {
		return []promptLine{{"the store refuses every approval: " + v.Broken, bad}}
	}
	if v.stale != "" {
		defer func() { lines = append(lines, promptLine{v.stale + ": what this says may be out of date", warn}) }()
	}
	q := v.Q
	if q == nil || q.Policy == nil || q.Policy.Policy == nil {
		return nil
	}
	pol := q.Policy.Policy
	label := "policy " + q.Policy.Label()
	voted := ""
	if len(v.Votes) > 0 {
		voted = persons(v.Votes) + " voted; "
	}
	cast := approvals.Cast(v.Votes)
	switch r, at := eligibility(v.me, q, cast); r {
	case policy.OwnProposal:
		return []promptLine{{fmt.Sprintf("you asked for it: under %s nobody approves their own agent's proposal; the store will refuse, another approver must", label), bad}}
	case policy.VotedAlready:
		return []promptLine{{fmt.Sprintf("you voted already (as %s): one person counts once; the store will refuse. Still needed: %s",
			model.Sanitize(v.Votes[at].Actor, model.Line), needed(q.Standing)), bad}}
	case policy.WouldNotCount:
		return []promptLine{{fmt.Sprintf("your vote would not count: still needed is %s; the store will refuse", needed(q.Standing)), bad}}
	}
	after := pol.Stand(q.Requirement, append(cast, v.me))
	n, of := len(v.Votes)+1, len(v.Votes)+1+after.Short
	if after.Met() {
		return []promptLine{{fmt.Sprintf("vote %d of %d: %syours completes the approval (%s)", n, of, voted, label), ok}}
	}
	return []promptLine{{fmt.Sprintf("vote %d of %d: %safter you, %s still needed; it stays pending (%s)", n, of, voted,
		human.Plural(after.Short, needed(after)+" is", needed(after)+" are"), label), warn}}
}

// eligibility is whether me's approval may count as a vote on the
// proposal q is of (policy.Eligibility). The prompt has never singled out
// an operator with no established person (the store refuses them, and says
// why): for it, the vote is judged on the rest, a vote already cast by its
// key or a vote that would not count, else taken as eligible.
func eligibility(me policy.Voter, q *storage.Quorum, cast []policy.Voter) (policy.Refusal, int) {
	helps, met := q.Policy.Policy.Helps(q.Standing, me.Person), q.Met()
	r, at := policy.Eligibility(me, q.Requesters, cast, helps, met)
	if r != policy.NoPerson {
		return r, at
	}
	if i := policy.VoteOf(cast, me); i >= 0 {
		return policy.VotedAlready, i
	}
	if !helps && !met {
		return policy.WouldNotCount, -1
	}
	return policy.Eligible, -1
}

// denyLines is what the deny prompt says of the votes cast: a deny vetoes
// them (the store ends them with it).
func (v votesView) denyLines(st Styles) []promptLine {
	n := len(v.Votes)
	if n == 0 {
		return nil
	}
	return []promptLine{{fmt.Sprintf("a deny vetoes the %s cast (%s): one deny ends it, whatever the votes",
		human.Plural(n, "vote", fmt.Sprintf("%d votes", n)), persons(v.Votes)), st.Warning.Render}}
}

// persons names the votes' people as the quorum counts them, sanitised.
func persons(vs []storage.Vote) string {
	who := make([]string, len(vs))
	for i, vt := range vs {
		who[i] = vt.Person
	}
	return approvals.Names(who)
}

// votesAges are the ages the votes block shows (the clock ticks for them).
func (v votesView) votesAges(now time.Time) []time.Duration {
	out := make([]time.Duration, len(v.Votes))
	for i, vt := range v.Votes {
		out[i] = now.Sub(model.FromEpoch(vt.At))
	}
	return out
}

// describe and needed are what a standing asks and lacks in words: group
// names are the policy file's, sanitised.
func describe(st policy.Standing) string { return model.Sanitize(st.Describe(), model.Line) }
func needed(st policy.Standing) string   { return model.Sanitize(st.Needed(), model.Line) }

// votesChanged passes what the last load (or vote) said of the policy to
// what shows it: the list's VOTE column, the detail and an open prompt.
// The caller lays out the detail again.
func (m *Model) votesChanged() {
	m.voteCol = len(m.quorum.byID) > 0
	if r := m.detail.rec; r != nil {
		m.detail.votes = m.votesFor(r.ApprovalID)
	}
	if p := m.prompt; p != nil {
		p.setVotes(m.votesFor(p.id))
	}
}

// fieldStyled is fieldLines for a value of one style: wrapped first, then
// each line styled on its own.
func fieldStyled(st Styles, label, value string, style lipgloss.Style, width int) []string {
	const lw = 11
	avail := max(width-lw, 8)
	out := []string{}
	for i, l := range strings.Split(ansi.Wrap(value, avail, ""), "\n") {
		prefix := strings.Repeat(" ", lw)
		if i == 0 {
			prefix = st.Label.Render(padRight(label, lw))
		}
		out = append(out, prefix+style.Render(l))
	}
	return out
}

// voteSignature says whether vote vt is signed (approvals.VoteSignature,
// over the proposal's signatures as the console read and checked them),
// and how the words are styled.
func voteSignature(vt storage.Vote, sigs []approvals.Signer) (string, lineKind) {
	words, state := approvals.VoteSignature(vt.Key, sigs, shortKey)
	switch state {
	case approvals.SigVerified:
		return words, linePlain
	case approvals.SigBad:
		return words, lineBad
	case approvals.SigNotChecked:
		return words, lineSubtle
	}
	return words, lineWarn
}
