package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
)

// The approval policy (SPEC §3.13) is the store's: it is kept in
// approve_tui_policy, one row per version, and every approval reads the
// version in force in its own transaction. Where a rule asks for more than
// one approver, an approval is a vote (approve_tui_votes): audited, the
// Hermes row left pending; the vote that completes the quorum performs the
// one compare-and-set consume in the same transaction.

// Audit events of the policy and of votes.
const (
	// EventPolicySet: a new policy version was put in force (detail: the
	// old and new SHA-256 of the file, the version).
	EventPolicySet = "policy_set"
	// EventVote: an approval recorded as a vote that does not yet reach
	// the quorum.
	EventVote = "vote"
	// EventVoteVoid: a vote stopped counting (reason content_changed: the
	// payload is no longer the one it named).
	EventVoteVoid = "vote_void"
)

// votesSchema is the approve-tui migration that made the policy and votes
// tables.
const votesSchema = 4

// PolicyRef is the approval_id of the policy's audit events.
const PolicyRef = "policy"

// Refusal codes of the quorum.
const (
	// RefusedDuplicateApprover: this person (by name, or by key) has voted
	// on the proposal already.
	RefusedDuplicateApprover = "duplicate_approver"
	// RefusedSelfApproval: the person is the proposal's requester (its
	// agent runs as them).
	RefusedSelfApproval = "self_approval"
	// RefusedNotEligible: the vote could not count toward what is still
	// needed (the places left are kept for a group the person is not in).
	RefusedNotEligible = "not_eligible"
	// RefusedPolicyUnreadable: the policy in the store cannot be read, so
	// nothing is approved until it is set again.
	RefusedPolicyUnreadable = "policy_unreadable"
)

// Why a vote stopped counting (approve_tui_votes.ended; "" while it
// counts).
const (
	VoteConsumed       = "consumed"
	VoteDenied         = "denied"
	VoteExpired        = "expired"
	VoteBlocked        = "blocked"
	VoteContentChanged = "content_changed"
	// VoteUnsigned: under trust required, a vote row no verified signature
	// of its voter stands behind (written outside approve-tui, or before
	// trust was required): it never counted.
	VoteUnsigned = "unsigned"
)

// PolicyVersion is one version of the policy, as the store keeps it.
type PolicyVersion struct {
	Version int64
	// SHA256 is the hex SHA-256 of Source, the file as it was set.
	SHA256 string
	Source string
	SetAt  float64
	SetBy  string
	Policy *policy.Policy
	// SignedBy, SignedKey and SignedAt, under trust required, are the
	// policy signer whose verified signature over Source puts the version
	// in force, their key's fingerprint and the statement's time (the
	// latest such signature).
	SignedBy, SignedKey string
	SignedAt            time.Time
}

// Label is how the console names the version: "v3 1a2b3c4d".
func (v *PolicyVersion) Label() string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("v%d %s", v.Version, v.SHA256[:min(8, len(v.SHA256))])
}

// Vote is one approval counted toward a quorum.
type Vote struct {
	ApprovalID string
	// Actor is who voted, as consumed_by names them.
	Actor   string
	Surface string
	// Person and Key are how the quorum tells people apart: the person's
	// name (folded to lower case) and the SSH key fingerprint, if any.
	Person, Key string
	// PayloadSHA256 is the payload the voter read.
	PayloadSHA256 string
	At            float64
	// Ended says why the vote stopped counting ("" while it counts):
	// consumed, denied, expired, blocked, content_changed.
	Ended   string
	EndedAt *float64
}

// Quorum is where a proposal stands against the policy in force.
type Quorum struct {
	policy.Standing
	// Policy is the version in force (nil: none set).
	Policy *PolicyVersion
	// Votes are the votes that count: cast on the payload as it is now.
	Votes []Vote
	// Requesters are the people who may not approve it (the requester and
	// the person whose agent submitted it), when a rule applies.
	Requesters []string
	// Versions are the policy versions whose rules apply to it: the one in
	// force at its submit and at each vote cast on it, and the one in force
	// now. Every one of them must be met; Standing and Policy are the one
	// that asks the most still. Under trust required these are versions a
	// policy signer signed (Policy.SignedBy says who): the newest signed
	// one is in force, whatever version is newer in the store.
	Versions []int64
	// Unsigned, under trust required, are the versions newer than the one
	// in force (or all, with none in force): no policy signer's newest
	// signature is over them, so they change nothing.
	Unsigned []int64
}

// Voters names the votes' actors, in order.
func (q *Quorum) Voters() []string {
	out := make([]string, len(q.Votes))
	for i, v := range q.Votes {
		out[i] = v.Actor
	}
	return out
}

// VoteRecorded is what an approval returns when it was recorded as a vote
// and the proposal still needs more: not a failure (the vote is committed
// and audited), but not a consume either, so that a caller that does not
// know of votes never takes it for an approval.
type VoteRecorded struct {
	ID     string
	Quorum *Quorum
}

func (e *VoteRecorded) Error() string {
	return fmt.Sprintf("vote recorded on %s: %s; still needed: %s", model.Sanitize(e.ID, model.Line),
		e.Quorum.Progress(), e.Quorum.Needed())
}

// Requester is who among q's requesters me is ("" when none): the store
// refuses that person's vote (self_approval).
func (q *Quorum) Requester(me policy.Voter) string { return policy.RequesterOf(q.Requesters, me) }

// VoteOf is me's vote among q's, if any (by name or by key, as the store
// tells one person from another): the store refuses a second one
// (duplicate_approver).
func (q *Quorum) VoteOf(me policy.Voter) *Vote {
	if i := policy.VoteOf(votersOf(q.Votes), me); i >= 0 {
		return &q.Votes[i]
	}
	return nil
}

// requesters are the people a proposal's approval may not come from
// (policy.Requesters): its requester, the person whose agent submitted it
// as the store recorded the submitting actor's structured Person (pins),
// and its origin.
func requesters(p *model.Proposal, pn *pins) []string {
	return policy.Requesters(p.Requester, pn.submitterOf(), p.Origin)
}

// submitterOf is the submitter's person the pins hold ("" for none).
func (pn *pins) submitterOf() string {
	if pn == nil {
		return ""
	}
	return pn.submitter
}

// subjectOf is what the policy's rules are matched against.
func subjectOf(rec *Record) policy.Subject {
	return policy.Subject{Risk: rec.EffectiveRisk, Session: rec.SessionKey, Requester: rec.Requester,
		Command: rec.Command, Patterns: rec.patterns, Effects: rec.Effects}
}

// SubjectOf is what the policy's rules see of rec (for explain).
func SubjectOf(rec *Record) policy.Subject { return subjectOf(rec) }

const selectPolicy = `SELECT version, sha256, source, rules, set_at, set_by FROM approve_tui_policy ORDER BY version DESC LIMIT 1`

// policyCache keeps decoded policies by SHA-256 of their rules: a version
// is decoded once per process.
var policyCache sync.Map

// readPolicy reads the version in force through q (nil, nil: none set).
func readPolicy(ctx context.Context, q policyQuerier) (*PolicyVersion, error) {
	return scanPolicy(q.QueryRowPrepared(ctx, selectPolicy))
}

// readPolicyVersion reads version v through q: a version a proposal is
// pinned to. One that is missing or cannot be read refuses (it is never
// taken for no rule).
func readPolicyVersion(ctx context.Context, q querier, v int64) (*PolicyVersion, error) {
	pv, err := scanPolicy(q.QueryRowContext(ctx, `SELECT version, sha256, source, rules, set_at, set_by
		FROM approve_tui_policy WHERE version = ?`, v))
	if err == nil && pv == nil {
		return nil, &RefusedError{ID: PolicyRef, Code: RefusedPolicyUnreadable, Reason: fmt.Sprintf(
			"policy v%d, in force when the proposal was submitted or voted on, is missing from the store: nothing it covered is approved", v)}
	}
	return pv, err
}

func scanPolicy(row rowScanner) (*PolicyVersion, error) {
	var v PolicyVersion
	var rules string
	err := row.Scan(&v.Version, &v.SHA256, &v.Source, &rules, &v.SetAt, &v.SetBy)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256([]byte(rules))
	key := hex.EncodeToString(h[:])
	if p, ok := policyCache.Load(key); ok {
		v.Policy = p.(*policy.Policy)
		return &v, nil
	}
	p, err := policy.Decode([]byte(rules))
	if err != nil {
		return &v, &RefusedError{ID: PolicyRef, Code: RefusedPolicyUnreadable, Reason: fmt.Sprintf(
			"policy v%d in the store cannot be used (%v): nothing is approved until `approve-tui policy set` puts a good one in force", v.Version, err)}
	}
	policyCache.Store(key, p)
	v.Policy = p
	return &v, nil
}

// pins is what the audit log holds of a proposal that binds its quorum:
// the policy versions in force when it was submitted and when each vote
// on it was cast, and the structured person of the actor that submitted it.
type pins struct {
	versions  []int64
	submitter string
}

// pinDetail is the part of a submit or vote event's detail that pins.
type pinDetail struct {
	PolicyVersion *float64 `json:"policy_version"`
	Submitter     string   `json:"submitter_person"`
}

// readPins reads the pins of ids through q, by id (an id with none is
// absent). Events whose detail is not JSON pin nothing.
func readPins(ctx context.Context, q querier, ids []string) (map[string]*pins, error) {
	out := map[string]*pins{}
	err := inLists(ids, func(in string, args []any) error {
		rows, err := q.QueryContext(ctx, `SELECT approval_id, event, detail FROM approve_tui_audit
			WHERE approval_id IN (`+in+`) AND outcome = 'ok' AND event IN ('`+EventSubmit+`', '`+EventVote+`')
			ORDER BY seq`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, event, detail string
			if err := rows.Scan(&id, &event, &detail); err != nil {
				return err
			}
			var d pinDetail
			if json.Unmarshal([]byte(detail), &d) != nil {
				continue
			}
			pn := out[id]
			if pn == nil {
				pn = &pins{}
				out[id] = pn
			}
			if d.PolicyVersion != nil && *d.PolicyVersion >= 1 {
				if v := int64(*d.PolicyVersion); !slices.Contains(pn.versions, v) {
					pn.versions = append(pn.versions, v)
				}
			}
			if event == EventSubmit && d.Submitter != "" {
				pn.submitter = d.Submitter
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// inLists calls fn with each run of at most 200 of ids, as an IN list's
// placeholders ("?, ?, ?") and its arguments, until fn fails.
func inLists(ids []string, fn func(in string, args []any) error) error {
	const chunk = 200
	for i := 0; i < len(ids); i += chunk {
		part := ids[i:min(i+chunk, len(ids))]
		args := make([]any, len(part))
		for j, id := range part {
			args[j] = id
		}
		if err := fn(strings.TrimSuffix(strings.Repeat("?, ", len(part)), ", "), args); err != nil {
			return err
		}
	}
	return nil
}

// gate is what one policy version asks of a proposal.
type gate struct {
	pv  *PolicyVersion
	req policy.Requirement
}

// gatesOf are the demands on rec of the version in force now and of every
// version it is pinned to, those whose rules match it: the quorum is met
// only when each of them is, so that a policy set after the proposal was
// submitted, or after a vote on it, never asks less than was asked then.
func gatesOf(ctx context.Context, q querier, rec *Record, ps *policies, pn *pins) ([]gate, error) {
	var out []gate
	now := ps.now
	seen := map[int64]bool{}
	add := func(pv *PolicyVersion) {
		seen[pv.Version] = true
		if req := pv.Policy.Requirement(subjectOf(rec)); req.Ruled() {
			out = append(out, gate{pv: pv, req: req})
		}
	}
	if now != nil {
		add(now)
	}
	if pn != nil {
		for _, v := range pn.versions {
			if seen[v] {
				continue
			}
			pv, err := ps.version(ctx, q, v)
			if err != nil {
				return nil, err
			}
			if pv != nil {
				add(pv)
			}
		}
	}
	return out, nil
}

// standAll stands voters against every gate: met when each one is; the
// standing and version returned are the unmet one that still needs the
// most (ties: the earliest gate, the version in force now first), or, all
// met, the one that asks the most approvals.
func standAll(gs []gate, voters []policy.Voter) (st policy.Standing, pv *PolicyVersion, all []policy.Standing) {
	best := -1
	for i, g := range gs {
		s := g.pv.Policy.Stand(g.req, voters)
		all = append(all, s)
		switch {
		case best < 0:
			best = i
		case all[best].Met() && !s.Met():
			best = i
		case all[best].Met() == s.Met() && (s.Short > all[best].Short || s.Short == all[best].Short && s.Approvals > all[best].Approvals):
			best = i
		}
	}
	return all[best], gs[best].pv, all
}

func versionsOf(gs []gate) []int64 {
	out := make([]int64, len(gs))
	for i, g := range gs {
		out[i] = g.pv.Version
	}
	return out
}

// policyQuerier is what readPolicy reads through: the writer in a
// transaction, or the reader pool.
type policyQuerier interface {
	querier
	rowQuerier
}

// Policy is the version of the policy in force (nil when none was ever
// set: one approver for everything).
func (st *Store) Policy(ctx context.Context) (*PolicyVersion, error) {
	s := st.bind()
	v, err := s.readPolicyInForce(ctx, s.rdb)
	if err != nil && s.eng.noTable(err) {
		return nil, nil // a file not migrated yet (opened read-only)
	}
	var rf *RefusedError
	if errors.As(err, &rf) {
		return v, err
	}
	if err != nil {
		return nil, s.classify("policy", err)
	}
	return v, nil
}

// SetPolicy puts p, read from source (the file's bytes), in force: a new
// version, audited with who set it and the old and new SHA-256. A policy
// equal to the one in force changes nothing (changed false).
func (st *Store) SetPolicy(ctx context.Context, source []byte, p *policy.Policy, actor model.Actor) (v *PolicyVersion, changed bool, err error) {
	if p == nil {
		return nil, false, &model.ValidationError{Problems: []string{"no policy given"}}
	}
	if probs := p.Validate(); len(probs) > 0 {
		return nil, false, &model.ValidationError{Problems: probs}
	}
	// The file is kept as it was read, so that its SHA-256 is the hash of
	// what the store shows: text only (neither backend keeps a NUL, and
	// PostgreSQL no invalid UTF-8).
	if !utf8.Valid(source) || bytes.IndexByte(source, 0) >= 0 {
		return nil, false, &model.ValidationError{Problems: []string{"the policy file is not UTF-8 text"}}
	}
	s := st.bind()
	sum := sha256Hex(source)
	if s.trusted() != nil {
		// What is enforced is read from the signed file: p must be it.
		if err := sameRules(string(source), p); err != nil {
			return nil, false, &model.ValidationError{Problems: []string{err.Error()}}
		}
	}
	err = s.run(ctx, transition{event: EventPolicySet, id: PolicyRef, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		signed, err := s.checkPolicySigned(actor, sum)
		if err != nil {
			return nil, err
		}
		who, sig := actor, actor.Signature
		if signed != nil {
			who, sig = signed.actor, signed.sig
		}
		old, err := readPolicy(ctx, s.w)
		var rf *RefusedError
		if err != nil && !errors.As(err, &rf) {
			return nil, err // an unreadable old version may be replaced
		}
		oldSum, next := "", int64(1)
		if old != nil {
			oldSum, next = old.SHA256, old.Version+1
		}
		if signed != nil {
			// The version in force is the signed one, whatever is newer.
			old, err = s.readPolicyInForce(ctx, s.w)
			if err != nil && !errors.As(err, &rf) {
				return nil, err
			}
			oldSum = ""
			if old != nil {
				oldSum = old.SHA256
			}
		}
		if old != nil && old.SHA256 == sum && old.Policy != nil {
			v, changed = old, false
			return nil, nil
		}
		now := model.Epoch(s.now())
		by := columnText(who.String())
		if _, err := s.w.ExecContext(ctx, `INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by)
			VALUES (?, ?, ?, ?, ?, ?)`, next, sum, string(source), string(p.Encode()), now, by); err != nil {
			return nil, err
		}
		if err := s.insertSignature(ctx, PolicyRef, EventPolicySet, sig); err != nil {
			return nil, err
		}
		v = &PolicyVersion{Version: next, SHA256: sum, Source: string(source), SetAt: now, SetBy: by, Policy: p}
		changed = true
		d := map[string]any{
			"version": next, "old_sha256": oldSum, "new_sha256": sum, "rules": len(p.Rules), "groups": len(p.Groups),
		}
		if signed != nil {
			v.SignedBy, v.SignedKey, v.SignedAt = signed.v.Principal, signed.v.Fingerprint, signed.v.Statement.Time
			signed.detail(d)
		}
		return []auditEntry{{id: PolicyRef, event: EventPolicySet, outcome: OutcomeOK, detail: d}}, nil
	}})
	if err != nil {
		return nil, false, err
	}
	return v, changed, nil
}

const selectVotes = `SELECT approval_id, actor, surface, person, key_fp, payload_sha256, at, ended, ended_at
	FROM approve_tui_votes WHERE approval_id = ? ORDER BY at, person`

func scanVotes(rows *sql.Rows) ([]Vote, error) {
	defer rows.Close()
	var out []Vote
	for rows.Next() {
		var v Vote
		var ended sql.NullFloat64
		if err := rows.Scan(&v.ApprovalID, &v.Actor, &v.Surface, &v.Person, &v.Key, &v.PayloadSHA256, &v.At, &v.Ended, &ended); err != nil {
			return nil, err
		}
		if ended.Valid {
			v.EndedAt = model.F64(ended.Float64)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Votes lists every vote cast on proposal id, those that ended too, oldest
// first.
func (st *Store) Votes(ctx context.Context, id string) ([]Vote, error) {
	return readRows(ctx, st, "votes", scanVotes, selectVotes, id)
}

// Quorums says where each open record stands against the policy, by
// approval id: the version in force and, for an open record, every version
// it is pinned to (gatesOf). Records no rule applies to are left out (one
// approver, as without a policy). One read of the policy, one of the pins
// and one of the votes.
func (st *Store) Quorums(ctx context.Context, recs []*Record) (map[string]*Quorum, *PolicyVersion, error) {
	s := st.bind()
	ps, err := s.readPolicies(ctx, s.rdb)
	if err != nil && s.eng.noTable(err) {
		return nil, nil, nil // a file not migrated yet (opened read-only)
	}
	var pv *PolicyVersion
	if ps != nil {
		pv = ps.now
	}
	var rf *RefusedError
	if err != nil && !errors.As(err, &rf) {
		err = s.classify("policy", err)
	}
	if err != nil {
		return nil, pv, err
	}
	if pv == nil || !ps.several() && len(pv.Policy.Rules) == 0 {
		// No version with a rule was ever in force.
		return nil, pv, nil
	}
	var open []string
	for _, rec := range recs {
		if rec.Corrupt == "" && rec.EffectiveStatus.Open() {
			// With one version ever set, a record is pinned to it or to
			// none: only those its rules take need their pins (the
			// submitter).
			if ps.several() || pv.Policy.Requirement(subjectOf(rec)).Ruled() {
				open = append(open, rec.ApprovalID)
			}
		}
	}
	pinsOf := map[string]*pins{}
	if len(open) > 0 {
		pinsOf, err = readPins(ctx, s.rdb, open)
		if err != nil {
			if !s.eng.noTable(err) {
				return nil, pv, classify("policy", err)
			}
			pinsOf = map[string]*pins{}
		}
	}
	out := map[string]*Quorum{}
	gatesBy := map[string][]gate{}
	var ruled []*Record
	for _, rec := range recs {
		if rec.Corrupt != "" {
			continue
		}
		var pn *pins
		if rec.EffectiveStatus.Open() {
			pn = pinsOf[rec.ApprovalID]
		}
		gs, err := gatesOf(ctx, s.rdb, rec, ps, pn)
		if errors.As(err, &rf) {
			rf.ID = rec.ApprovalID
			return nil, pv, err
		}
		if err != nil {
			return nil, pv, classify("policy", err)
		}
		if len(gs) == 0 {
			continue
		}
		gatesBy[rec.ApprovalID] = gs
		q := &Quorum{Requesters: requesters(&rec.Proposal, pn), Versions: versionsOf(gs), Unsigned: ps.unsigned}
		q.Standing, q.Policy, _ = standAll(gs, nil)
		out[rec.ApprovalID] = q
		if rec.EffectiveStatus.Open() {
			ruled = append(ruled, rec)
		}
	}
	if len(ruled) == 0 {
		return out, pv, nil
	}
	votes := map[string][]Vote{}
	ids := make([]string, len(ruled))
	for i, r := range ruled {
		ids[i] = r.ApprovalID
	}
	err = inLists(ids, func(in string, args []any) error {
		rows, err := s.rdb.QueryContext(ctx, `SELECT approval_id, actor, surface, person, key_fp, payload_sha256, at, ended, ended_at
			FROM approve_tui_votes WHERE ended = '' AND approval_id IN (`+in+`) ORDER BY at, person`, args...)
		if err != nil {
			return err
		}
		vs, err := scanVotes(rows)
		if err != nil {
			return err
		}
		for _, v := range vs {
			votes[v.ApprovalID] = append(votes[v.ApprovalID], v)
		}
		return nil
	})
	if err != nil && !s.eng.noTable(err) {
		return nil, pv, s.classify("votes", err)
	}
	var signed map[string]map[signedVoter]bool
	if s.trusted() != nil {
		byID := map[string]*Record{}
		for _, rec := range ruled {
			if len(votes[rec.ApprovalID]) > 0 {
				byID[rec.ApprovalID] = rec
			}
		}
		if signed, err = s.signedVotes(ctx, s.rdb, byID); err != nil {
			return nil, pv, s.classify("signatures", err)
		}
	}
	for _, rec := range ruled {
		q := out[rec.ApprovalID]
		for _, v := range votes[rec.ApprovalID] {
			if policy.Counts(v.Ended, v.PayloadSHA256, rec.PayloadSHA256, rec.EffectiveStatus.Open()) && (signed == nil || signed[rec.ApprovalID][signedVoter{v.Person, v.Key}]) {
				q.Votes = append(q.Votes, v)
			}
		}
		q.Standing, q.Policy, _ = standAll(gatesBy[rec.ApprovalID], votersOf(q.Votes))
	}
	return out, pv, nil
}

// Requesters are the people who may not approve rec where a rule applies
// (lower case): who submitted it, as the store recorded the submitting
// actor's person, and the names its requester and origin give.
func (st *Store) Requesters(ctx context.Context, rec *Record) ([]string, error) {
	s := st.bind()
	all, err := readPins(ctx, s.rdb, []string{rec.ApprovalID})
	if err != nil && !s.eng.noTable(err) {
		return nil, classify("audit", err)
	}
	return requesters(&rec.Proposal, all[rec.ApprovalID]), nil
}

// Quorum is Quorums for one record (nil: no rule applies).
func (st *Store) Quorum(ctx context.Context, rec *Record) (*Quorum, error) {
	qs, _, err := st.Quorums(ctx, []*Record{rec})
	if err != nil {
		return nil, err
	}
	return qs[rec.ApprovalID], nil
}

func votersOf(vs []Vote) []policy.Voter {
	out := make([]policy.Voter, len(vs))
	for i, v := range vs {
		out[i] = policy.Voter{Person: v.Person, Key: v.Key}
	}
	return out
}

// ballot is an approval's standing inside its transaction.
type ballot struct {
	q *Quorum
	// entries are events to append whatever follows (votes voided).
	entries []auditEntry
	// met: this approval completes the quorum (or no rule applies: q nil).
	met bool
	// by is consumed_by when met by votes: every approver.
	by string
}

// vote is the quorum's part of an approval, inside its transaction, after
// every other gate passed: it reads the policy in force, the versions the
// proposal is pinned to (at its submit and at each vote cast on it) and the
// votes, and either lets the approval consume (met under every version),
// or records it as a vote, or refuses it (self-approval, a second vote by
// one person, an actor that names no person, a vote that cannot count).
// Who votes is the actor's structured Person and Key (policy.VoterOf),
// never anything read from its name.
func (s bound) vote(ctx context.Context, rec *Record, actor model.Actor) (*ballot, error) {
	refused := func(err error) error {
		var rf *RefusedError
		if errors.As(err, &rf) {
			rf.ID = rec.ApprovalID // the proposal refused, not "policy"
		}
		return err
	}
	ps, err := s.readPolicies(ctx, s.w)
	if err != nil {
		return nil, refused(err)
	}
	// The policies the approvals name ask too (trustgate_policy.go).
	named, err := s.namedPolicies(ctx, s.w, rec, ps, actor)
	if err != nil {
		return nil, refused(err)
	}
	pv := ps.now
	if pv == nil {
		return &ballot{met: true}, nil
	}
	all, err := readPins(ctx, s.w, []string{rec.ApprovalID})
	if err != nil {
		return nil, err
	}
	pn := all[rec.ApprovalID]
	gs, err := gatesOf(ctx, s.w, rec, ps, pn)
	if err != nil {
		return nil, refused(err)
	}
	gs = namedGates(gs, rec, named)
	if len(gs) == 0 {
		return &ballot{met: true}, nil
	}
	b := &ballot{q: &Quorum{Policy: gs[0].pv, Requesters: requesters(&rec.Proposal, pn), Versions: versionsOf(gs), Unsigned: ps.unsigned}}
	label := func() string {
		if len(gs) == 1 {
			return gs[0].pv.Label()
		}
		ls := make([]string, len(gs))
		for i, g := range gs {
			ls[i] = g.pv.Label()
		}
		return strings.Join(ls, " and ")
	}
	me := policy.VoterOf(actor)
	// Who the voter is decides first, before any vote is read
	// (policy.Eligibility); what the votes leave decides after.
	switch r, at := policy.Eligibility(me, b.q.Requesters, nil, true, true); r {
	case policy.NoPerson:
		return nil, &RefusedError{ID: rec.ApprovalID, Code: RefusedNotEligible, Reason: fmt.Sprintf(
			"%s names no person approve-tui established (an OS user, or an SSH key the server verified): under policy %s its vote cannot be counted",
			model.Sanitize(actor.String(), model.Line), label())}
	case policy.OwnProposal:
		return nil, &RefusedError{ID: rec.ApprovalID, Code: RefusedSelfApproval, Reason: fmt.Sprintf(
			"%s asked for it (%s): under policy %s, nobody approves a proposal of their own agent; another approver must",
			model.Sanitize(b.q.Requesters[at], model.Line), model.Sanitize(requesterWords(&rec.Proposal, pn), model.Line), label())}
	}
	rows, err := s.w.QueryPrepared(ctx, `SELECT approval_id, actor, surface, person, key_fp, payload_sha256, at, ended, ended_at
		FROM approve_tui_votes WHERE approval_id = ? AND ended = '' ORDER BY at, person`, rec.ApprovalID)
	if err != nil {
		return nil, err
	}
	cast, err := scanVotes(rows)
	if err != nil {
		return nil, err
	}
	now := model.Epoch(s.now())
	var stale []Vote
	var signed map[string]map[signedVoter]bool
	if s.trusted() != nil {
		// Under trust required a vote counts only with its signature.
		if signed, err = s.signedVotes(ctx, s.w, map[string]*Record{rec.ApprovalID: rec}); err != nil {
			return nil, err
		}
	}
	for _, v := range cast {
		if v.PayloadSHA256 != rec.PayloadSHA256 {
			v.Ended = VoteContentChanged
			stale = append(stale, v) // cast on other content: it no longer counts
			continue
		}
		if signed != nil && !signed[rec.ApprovalID][signedVoter{v.Person, v.Key}] {
			v.Ended = VoteUnsigned
			stale = append(stale, v) // no signature of its voter holds: never counted
			continue
		}
		b.q.Votes = append(b.q.Votes, v)
	}
	before, _, each := standAll(gs, votersOf(b.q.Votes))
	helps := false
	for i, g := range gs {
		if !each[i].Met() && g.pv.Policy.Helps(each[i], me.Person) {
			helps = true
		}
	}
	switch r, at := policy.Eligibility(me, b.q.Requesters, votersOf(b.q.Votes), helps, before.Met()); r {
	case policy.VotedAlready:
		v := b.q.Votes[at]
		how := "by name"
		if v.Person != me.Person {
			how = "by key " + me.Key
		}
		return nil, &RefusedError{ID: rec.ApprovalID, Code: RefusedDuplicateApprover, Reason: fmt.Sprintf(
			"%s voted already (as %s, %s): one person counts once, whatever the surface, key or host; %s still needs %s",
			model.Sanitize(me.Person, model.Line), model.Sanitize(v.Actor, model.Line), how,
			model.Sanitize(rec.ApprovalID, model.Line), before.Needed())}
	case policy.WouldNotCount:
		return nil, &RefusedError{ID: rec.ApprovalID, Code: RefusedNotEligible, Reason: fmt.Sprintf(
			"%s still needs %s, and %s is not in that group: the vote would not count",
			model.Sanitize(rec.ApprovalID, model.Line), before.Needed(), model.Sanitize(me.Person, model.Line))}
	}
	// The vote counts: the stale ones end now, each with its record (a
	// refusal above leaves them as they were: they count for nothing).
	for _, v := range stale {
		if _, err := s.w.ExecContext(ctx, `UPDATE approve_tui_votes SET ended = ?, ended_at = ?
			WHERE approval_id = ? AND person = ? AND ended = ''`, v.Ended, now, v.ApprovalID, v.Person); err != nil {
			return nil, err
		}
		b.entries = append(b.entries, auditEntry{id: rec.ApprovalID, event: EventVoteVoid, outcome: OutcomeOK,
			reason: v.Ended, detail: map[string]any{"voter": v.Actor, "payload_sha256": v.PayloadSHA256, "now_sha256": rec.PayloadSHA256}})
	}
	mine := Vote{ApprovalID: rec.ApprovalID, Actor: columnText(actor.String()), Surface: string(actor.Surface),
		Person: me.Person, Key: me.Key, PayloadSHA256: rec.PayloadSHA256, At: now}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO approve_tui_votes (approval_id, actor, surface, person, key_fp, payload_sha256, at, ended)
		VALUES (?, ?, ?, ?, ?, ?, ?, '')`, mine.ApprovalID, mine.Actor, mine.Surface, mine.Person, mine.Key, mine.PayloadSHA256, mine.At); err != nil {
		return nil, err
	}
	b.q.Votes = append(b.q.Votes, mine)
	b.q.Standing, b.q.Policy, _ = standAll(gs, votersOf(b.q.Votes))
	if !b.q.Met() {
		// policy_version is the version in force now: it pins this
		// proposal from here on (readPins), whatever is set later.
		b.entries = append(b.entries, auditEntry{id: rec.ApprovalID, event: EventVote, outcome: OutcomeOK, detail: map[string]any{
			"payload_sha256": rec.PayloadSHA256, "policy_version": pv.Version, "policy_versions": b.q.Versions,
			"voters": b.q.Voters(), "progress": b.q.Progress(), "needed": b.q.Needed(),
		}})
		return b, nil
	}
	b.met = true
	b.by = strings.Join(b.q.Voters(), ", ")
	return b, nil
}

// requesterWords names who asked: the requester, and the person whose
// agent submitted it.
func requesterWords(p *model.Proposal, pn *pins) string {
	return policy.RequesterWords(p.Requester, pn.submitterOf(), p.Origin)
}

// endVotes ends every counting vote on id, for why (consumed, denied,
// expired, blocked), and returns their actors.
func (s bound) endVotes(ctx context.Context, id, why string) ([]string, error) {
	rows, err := s.w.QueryPrepared(ctx, `UPDATE approve_tui_votes SET ended = ?, ended_at = ?
		WHERE approval_id = ? AND ended = '' RETURNING actor`, why, model.Epoch(s.now()), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	sort.Strings(out)
	return out, rows.Err()
}

// quorumDetail adds the quorum to an approval's audit detail.
func (b *ballot) quorumDetail(d map[string]any) {
	if b.q == nil {
		return
	}
	d["approvers"] = b.q.Voters()
	d["policy_version"] = b.q.Policy.Version
	d["policy_versions"] = b.q.Versions
	d["quorum"] = b.q.Approvals
}
