package approvals

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
)

// Quorum is where a proposal stands against the approval policy in
// force, as a surface shows it.
type Quorum struct {
	Policy *storage.PolicyVersion // nil: no policy set
	Q      *storage.Quorum        // nil: no rule applies
	// Votes: read for one proposal (ReadQuorum), every vote cast on it,
	// those that ended too; for a page (ReadQuorums), the votes that count
	// (storage.Quorum's).
	Votes []storage.Vote
	// Broken says why the policy in force cannot be used ("" when it can):
	// nothing is approved until a good one is set.
	Broken string
}

// ReadQuorum reads where rec stands, with every vote cast on it. A policy
// in the store that cannot be read is said (Broken), not an error: the
// proposal is still shown.
func ReadQuorum(ctx context.Context, s *storage.Store, rec *storage.Record) (*Quorum, error) {
	qs, pv, err := s.Quorums(ctx, []*storage.Record{rec})
	v := &Quorum{Policy: pv}
	var rf *storage.RefusedError
	switch {
	case errors.As(err, &rf):
		v.Broken = rf.Reason
	case err != nil:
		return nil, err
	default:
		v.Q = qs[rec.ApprovalID]
	}
	if v.Votes, err = s.Votes(ctx, rec.ApprovalID); err != nil {
		return nil, err
	}
	return v, nil
}

// ReadQuorums is ReadQuorum for a page of records (list): one read of the
// policy and of the votes; each has the votes that count.
func ReadQuorums(ctx context.Context, s *storage.Store, recs []*storage.Record) (map[string]*Quorum, error) {
	qs, pv, err := s.Quorums(ctx, recs)
	broken := ""
	var rf *storage.RefusedError
	switch {
	case errors.As(err, &rf):
		broken = rf.Reason
	case err != nil:
		return nil, err
	}
	out := make(map[string]*Quorum, len(recs))
	for _, r := range recs {
		v := &Quorum{Policy: pv, Broken: broken}
		if q := qs[r.ApprovalID]; q != nil {
			v.Q, v.Votes = q, q.Votes
		}
		out[r.ApprovalID] = v
	}
	return out, nil
}

// VoteCounts reports whether vote v still counts toward rec's quorum
// (policy.Counts): not ended, cast on the payload as it is now, and rec
// still open.
func VoteCounts(rec *storage.Record, v storage.Vote) bool {
	return policy.Counts(v.Ended, v.PayloadSHA256, rec.PayloadSHA256, rec.EffectiveStatus.Open())
}

// Cast are the votes' voters as the quorum tells people apart.
func Cast(vs []storage.Vote) []policy.Voter {
	out := make([]policy.Voter, len(vs))
	for i, v := range vs {
		out[i] = policy.Voter{Person: v.Person, Key: v.Key}
	}
	return out
}

// VoteJSON is one vote as --json gives it, with whether it counts.
func VoteJSON(rec *storage.Record, v storage.Vote) *model.JSONObject {
	return model.NewJSONObject().Str("actor", v.Actor).Num("at", v.At).Str("payload_sha256", v.PayloadSHA256).
		Str("surface", v.Surface).Str("person", v.Person).Str("ended", v.Ended).OptNum("ended_at", v.EndedAt).
		Bool("counts", VoteCounts(rec, v))
}

// WithQuorumJSON adds the quorum's keys to a proposal's JSON: votes,
// approvals_needed (still needed; 0 when met, decided, or no rule
// applies), approvals_required (the quorum), needed (in words, "" when
// nothing is) and approval_policy_version (null: no policy; the payload's
// policy_version is Hermes' own). A policy that cannot be used leaves the
// counts null and says why in needed. v nil adds nothing.
func WithQuorumJSON(o *model.JSONObject, rec *storage.Record, v *Quorum) *model.JSONObject {
	if v == nil {
		return o
	}
	vs := make([]*model.JSONObject, len(v.Votes))
	for i, vote := range v.Votes {
		vs[i] = VoteJSON(rec, vote)
	}
	o.Raw("votes", model.JSONObjects(vs))
	switch {
	case v.Broken != "":
		o.Raw("approvals_needed", "null").Raw("approvals_required", "null").Str("needed", v.Broken)
	case v.Q != nil:
		needed, words := 0, ""
		if rec.EffectiveStatus.Open() {
			needed, words = v.Q.Short, v.Q.Needed()
		}
		o.Int("approvals_needed", int64(needed)).Int("approvals_required", int64(v.Q.Approvals)).Str("needed", words)
	default:
		o.Int("approvals_needed", 0).Int("approvals_required", 1).Str("needed", "")
	}
	if v.Policy != nil {
		o.Int("approval_policy_version", v.Policy.Version)
	} else {
		o.Raw("approval_policy_version", "null")
	}
	return o
}

// Field is one labelled line of a proposal as show prints it: Label ""
// goes on under the one before.
type Field struct {
	Label, Text string
}

// QuorumFields are where a proposal stands against the policy, for a
// human: the quorum, what is still needed, who may not approve it, and
// every vote with whether it still counts. None when no policy was ever
// set and nobody voted.
func QuorumFields(rec *storage.Record, v *Quorum, now time.Time) []Field {
	if v == nil || v.Policy == nil && v.Broken == "" && len(v.Votes) == 0 {
		return nil
	}
	var out []Field
	field := func(name, value string) { out = append(out, Field{name, value}) }
	open := rec.EffectiveStatus.Open()
	switch {
	case v.Broken != "":
		field("quorum", "nothing can be approved: "+line(v.Broken))
	case v.Q != nil:
		field("quorum", fmt.Sprintf("%s (policy %s, %s)", line(v.Q.Describe()), v.Policy.Label(), RuleList(v.Q.Rules)))
		if open {
			if v.Q.Met() {
				field("needs", "nothing more: the next approval approves it ("+v.Q.Progress()+")")
			} else {
				field("needs", fmt.Sprintf("%s (%s so far)", line(v.Q.Needed()), v.Q.Progress()))
			}
			if len(v.Q.Requesters) > 0 {
				field("not by", Names(v.Q.Requesters)+" (who asked for it: nobody approves their own agent's proposal)")
			}
		}
	case v.Policy != nil:
		field("quorum", fmt.Sprintf("one approver (no rule of policy %s applies)", v.Policy.Label()))
	}
	for i, vote := range v.Votes {
		name := ""
		if i == 0 {
			name = "votes"
		}
		field(name, VoteWho(vote)+" "+when(vote.At, now)+": "+VoteState(rec, vote, now))
	}
	return out
}

// VoteState says whether a vote still counts, and if not why: "counts",
// "ended: consumed 2m ago", "does not count: cast on another payload
// (sha256 ...)", "does not count: the proposal is denied".
func VoteState(rec *storage.Record, vote storage.Vote, now time.Time) string {
	switch {
	case vote.Ended != "":
		state := "ended: " + line(vote.Ended)
		if vote.EndedAt != nil {
			state += " " + rel(*vote.EndedAt, now, Text)
		}
		return state
	case vote.PayloadSHA256 != rec.PayloadSHA256:
		return "does not count: cast on another payload (sha256 " + line(vote.PayloadSHA256) + ")"
	case !rec.EffectiveStatus.Open():
		return "does not count: the proposal is " + line(string(rec.EffectiveStatus))
	}
	return "counts"
}

// VoteWho is who cast a vote, sanitised: its actor, and the person it
// counted as when the actor's name does not say (sudo, an SSH key's
// comment): "root@laptop via cli (as alice)".
func VoteWho(v storage.Vote) string {
	who := line(v.Actor)
	signed := strings.HasPrefix(strings.ToLower(v.Actor), strings.ToLower(v.Person)+" (sha256:") // the store's words for a signed vote
	if v.Person != "" && !signed && !policy.SamePerson(v.Actor, v.Person) {
		who += " (as " + line(v.Person) + ")"
	}
	return who
}

// Voters names the votes' voters (VoteWho), joined.
func Voters(vs []storage.Vote) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = VoteWho(v)
	}
	return strings.Join(out, ", ")
}

// RuleList names the rules that matched (indexes from 0) as "rule 1" or
// "rules 1, 3".
func RuleList(idx []int) string {
	nums := make([]string, len(idx))
	for i, n := range idx {
		nums[i] = strconv.Itoa(n + 1)
	}
	if len(nums) == 1 {
		return "rule " + nums[0]
	}
	return "rules " + strings.Join(nums, ", ")
}

// Names joins names from the store, each sanitised.
func Names(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = line(n)
	}
	return strings.Join(out, ", ")
}
