package storage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/trust"
	"golang.org/x/crypto/ssh"
)

// Signed decisions (SPEC: signed approvals). Where the store's trust
// configuration requires signatures (Options.Trust.Required()), the
// deciding transaction verifies them: an approval or vote, a policy set,
// and a signed deny are checked against the trust file before anything is
// written, and the person a vote counts for is the verified key's
// principal, never the OS user or the environment. The policy the store
// enforces is the newest one a policy signer signed: a version inserted or
// replaced by any other means changes nothing.

// Refusal codes of signed decisions.
const (
	// RefusedSignatureRequired: trust is required and the decision carries
	// no signature.
	RefusedSignatureRequired = "signature_required"
	// RefusedSignatureInvalid: the signature does not verify against the
	// trust file, or is about another store, proposal, payload, risk or
	// decision, or is stale.
	RefusedSignatureInvalid = "signature_invalid"
	// RefusedNotPolicySigner: a policy signed by a principal the trust
	// configuration does not let set policy.
	RefusedNotPolicySigner = "not_policy_signer"
)

// How far a statement's time may be from the verifier's clock.
const (
	// StatementSkew is how far after now (a fast clock), or before the
	// proposal was made, a statement may be dated.
	StatementSkew = time.Minute
	// StatementMaxAge is how old a statement may be when the decision it
	// signs is made: an older one is signed again, so that a signature
	// kept from an earlier decision is not replayed.
	StatementMaxAge = 15 * time.Minute
)

// trusted is the trust configuration when it requires signatures, else nil.
func (s bound) trusted() *trust.Settings {
	if t := s.opt.Trust; t.Required() {
		return t
	}
	return nil
}

// signedDecision is a verified signature on a decision: the actor it
// counts as, and the signature as it is kept.
type signedDecision struct {
	actor model.Actor
	sig   *model.Signature
	v     trust.Verified
}

// detail adds the signer to an audit event's detail.
func (d *signedDecision) detail(m map[string]any) {
	if d == nil || m == nil {
		return
	}
	m["signed_by"] = d.v.Principal
	m["signed_key"] = d.v.Fingerprint
}

// signedDetail adds d to the detail of each entry of event in entries.
func signedDetail(d *signedDecision, entries []auditEntry, event string) {
	for _, e := range entries {
		if e.event == event {
			d.detail(e.detail)
		}
	}
}

// checkSigned verifies, under trust required, the signature actor carries
// for decision (approve, or deny) on rec, inside the deciding transaction.
// It returns nil when trust is off, or for an unsigned deny (a deny never
// lets anything run). An approval without a signature is refused
// (signature_required); one that does not verify as this store's approve
// or vote, over this proposal's id, payload and pinned risk, by a key of
// the trust file under its one principal, dated between the proposal's
// making and now and not older than StatementMaxAge, is refused
// (signature_invalid). An approval whose key the trust file admits for one
// of the proposal's requesters, or whose principal is one of them, is
// refused as a self-approval. readSHA256, when given, must be the payload
// the statement names.
func (s bound) checkSigned(ctx context.Context, rec *Record, actor model.Actor, readSHA256 string, deny bool) (*signedDecision, error) {
	ts := s.trusted()
	if ts == nil {
		return nil, nil
	}
	id := rec.ApprovalID
	verb, what := "", "approval"
	if deny {
		verb, what = "denied", "denial"
	}
	refuse := func(code, reason string) (*signedDecision, error) {
		return nil, &RefusedError{ID: id, Code: code, Reason: reason, Verb: verb}
	}
	sig := actor.Signature
	if sig == nil {
		if deny {
			return nil, nil
		}
		return refuse(RefusedSignatureRequired, "under trust required every approval is signed with the approver's SSH key: "+
			"approve with a key the trust file names (from ssh-agent, or --key FILE); an unsigned approval is not taken")
	}
	now := s.now()
	want := trust.Expect{Store: s.Identity(), ApprovalID: id, PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel),
		Decisions: trust.CountingDecisions}
	if deny {
		want.Decisions = []trust.Decision{trust.DecisionDeny}
	}
	v, err := trust.Verify([]byte(sig.Armored), sig.Statement, ts.Signers, want, now)
	if err != nil {
		return refuse(RefusedSignatureInvalid, "the "+what+"'s signature does not hold: "+model.Sanitize(err.Error(), model.Line))
	}
	st := v.Statement
	switch d := st.Decision; {
	case deny && d != trust.DecisionDeny, !deny && d != trust.DecisionApprove && d != trust.DecisionVote:
		return refuse(RefusedSignatureInvalid, fmt.Sprintf("the signature is over a %s decision, not this %s", d, what))
	}
	if p, err := ts.PrincipalOf(v.Key); err != nil {
		return refuse(RefusedSignatureInvalid, "the signing key cannot decide: "+model.Sanitize(err.Error(), model.Line))
	} else if p != v.Principal {
		return refuse(RefusedSignatureInvalid, fmt.Sprintf("the statement is signed as %q, but the trust file names key %s %q",
			model.Sanitize(v.Principal, model.Line), v.Fingerprint, model.Sanitize(p, model.Line)))
	}
	made := model.FromEpoch(rec.CreatedAt)
	switch {
	case st.Time.After(now.Add(StatementSkew)):
		return refuse(RefusedSignatureInvalid, fmt.Sprintf("the statement is dated %s, after now (%s): check the signer's clock",
			stamp(st.Time), stamp(now)))
	case st.Time.Before(made.Add(-StatementSkew)):
		return refuse(RefusedSignatureInvalid, fmt.Sprintf("the statement is dated %s, before the proposal was made (%s): it was not signed for this proposal",
			stamp(st.Time), stamp(made)))
	case now.Sub(st.Time) > StatementMaxAge:
		return refuse(RefusedSignatureInvalid, fmt.Sprintf("the statement was signed at %s, more than %s ago: sign the %s again",
			stamp(st.Time), StatementMaxAge, what))
	}
	if readSHA256 != "" && !strings.EqualFold(readSHA256, st.PayloadSHA256) {
		return refuse(RefusedSignatureInvalid, "the signature is over another payload than the one read: read it again and sign what you read")
	}
	if !deny {
		all, err := readPins(ctx, s.w, []string{id})
		if err != nil {
			return nil, err
		}
		pn := all[id]
		for _, who := range ts.PrincipalsOfUsers(requesters(&rec.Proposal, pn)) {
			if policy.SamePerson(who, v.Principal) || keyAdmits(ts.Signers, v.Fingerprint, who) {
				return refuse(RefusedSelfApproval, fmt.Sprintf(
					"the signing key %s (%s) belongs to %s, who asked for it (%s): nobody approves a proposal of their own agent; another approver must",
					v.Fingerprint, model.Sanitize(v.Principal, model.Line), model.Sanitize(who, model.Line),
					model.Sanitize(requesterWords(&rec.Proposal, pn), model.Line)))
			}
		}
	}
	return &signedDecision{actor: signerActor(actor, v), sig: keptSignature(sig, v), v: v}, nil
}

// keyAdmits reports whether any line of signers with key fp names who
// (compared without regard to case): the requester's own key, under
// whatever name it signs.
func keyAdmits(signers *trust.AllowedSigners, fp, who string) bool {
	if signers == nil || who == "" {
		return false
	}
	who = strings.ToLower(who)
	for _, sg := range signers.Signers {
		if sg.Key != nil && fingerprint(sg) == fp && trust.MatchPatternList(who, strings.ToLower(sg.Principals)) {
			return true
		}
	}
	return false
}

// fingerprint is the SHA256: fingerprint of a trust line's key.
func fingerprint(sg trust.Signer) string { return ssh.FingerprintSHA256(sg.Key) }

// signerActor is actor as a verified signature makes it: named, counted
// and kept as the key's principal, with its key.
func signerActor(actor model.Actor, v trust.Verified) model.Actor {
	a := actor
	a.Person = strings.ToLower(v.Principal)
	a.Key = v.Fingerprint
	a.Name = v.Principal + " (" + shortKey(v.Fingerprint) + ")"
	return a
}

// shortKey is a fingerprint cut for display: "SHA256:AbCdEf12".
func shortKey(fp string) string {
	const keep = len("SHA256:") + 8
	if len(fp) > keep {
		return fp[:keep]
	}
	return fp
}

// keptSignature is sig as the store keeps it: its principal and key those
// the verifier established, not those it claimed.
func keptSignature(sig *model.Signature, v trust.Verified) *model.Signature {
	k := *sig
	k.Principal, k.Key = v.Principal, v.Fingerprint
	return &k
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// checkPolicySigned verifies, under trust required, the signature of a
// policy set over the file whose SHA-256 is sum: a policy statement for
// this store by a principal the trust configuration lets set policy,
// dated no later than now and not older than StatementMaxAge.
func (s bound) checkPolicySigned(actor model.Actor, sum string) (*signedDecision, error) {
	ts := s.trusted()
	if ts == nil {
		return nil, nil
	}
	refuse := func(code, reason string) (*signedDecision, error) {
		return nil, &RefusedError{ID: PolicyRef, Code: code, Reason: reason, Verb: "set"}
	}
	sig := actor.Signature
	if sig == nil {
		return refuse(RefusedSignatureRequired, "under trust required a policy is signed with the SSH key of a policy signer ("+
			signerList(ts)+"): set it with a key the trust file names (from ssh-agent, or --key FILE)")
	}
	now := s.now()
	v, err := trust.Verify([]byte(sig.Armored), sig.Statement, ts.Signers, trust.Expect{Store: s.Identity(), PolicySHA256: sum,
		Decisions: []trust.Decision{trust.DecisionPolicy}}, now)
	if err != nil {
		return refuse(RefusedSignatureInvalid, "the policy's signature does not hold: "+model.Sanitize(err.Error(), model.Line))
	}
	if v.Statement.Decision != trust.DecisionPolicy {
		return refuse(RefusedSignatureInvalid, fmt.Sprintf("the signature is over a %s, not a policy", v.Statement.Decision))
	}
	if p, err := ts.PrincipalOf(v.Key); err != nil {
		return refuse(RefusedSignatureInvalid, "the signing key cannot decide: "+model.Sanitize(err.Error(), model.Line))
	} else if p != v.Principal {
		return refuse(RefusedSignatureInvalid, fmt.Sprintf("the statement is signed as %q, but the trust file names key %s %q",
			model.Sanitize(v.Principal, model.Line), v.Fingerprint, model.Sanitize(p, model.Line)))
	}
	if !ts.PolicySigner(v.Principal) {
		return refuse(RefusedNotPolicySigner, fmt.Sprintf("%s is not a policy signer (the trust configuration's policy_signers: %s)",
			model.Sanitize(v.Principal, model.Line), signerList(ts)))
	}
	switch t := v.Statement.Time; {
	case t.After(now.Add(StatementSkew)):
		return refuse(RefusedSignatureInvalid, fmt.Sprintf("the statement is dated %s, after now (%s): check the signer's clock", stamp(t), stamp(now)))
	case now.Sub(t) > StatementMaxAge:
		return refuse(RefusedSignatureInvalid, fmt.Sprintf("the statement was signed at %s, more than %s ago: sign the policy again", stamp(t), StatementMaxAge))
	}
	return &signedDecision{actor: signerActor(actor, v), sig: keptSignature(sig, v), v: v}, nil
}

func signerList(ts *trust.Settings) string {
	if len(ts.PolicySigners) == 0 {
		return "none are named"
	}
	return model.Sanitize(strings.Join(ts.PolicySigners, ", "), model.Line)
}

// policies is the policy as one decision or view reads it: the version in
// force and, under trust required, what it takes to tell which versions a
// policy signer signed (verified when asked: a signature is checked at
// most once per read, and most reads check one).
type policies struct {
	now *PolicyVersion
	// trusted: only signed versions count.
	trusted bool
	// rows are every version as stored (hash computed from its file);
	// byHash finds them by the hash a statement names.
	rows   map[int64]*PolicyVersion
	byHash map[string][]int64
	// sigs are the policy statements kept, newest statement first.
	sigs []*policySig
	// resolved caches version(): a signed version, or nil.
	resolved map[int64]*PolicyVersion
	bad      map[int64]error
	// unsigned are the versions newer than the one in force (under trust
	// required): they change nothing.
	unsigned []int64
	ts       *trust.Settings
	store    string
	at       time.Time
}

// policySig is one kept policy signature, its statement parsed.
type policySig struct {
	rec     SignatureRecord
	st      trust.Statement
	checked bool
	ok      bool
	v       trust.Verified
}

// readPolicies reads the policy through q: the newest version (trust off),
// or the signed ones (trust required; see signedPolicies).
func (s bound) readPolicies(ctx context.Context, q policyQuerier) (*policies, error) {
	if s.trusted() == nil {
		pv, err := readPolicy(ctx, q)
		return &policies{now: pv}, err
	}
	return s.signedPolicies(ctx, q)
}

// readPolicyInForce is the version in force through q (nil: none).
func (s bound) readPolicyInForce(ctx context.Context, q policyQuerier) (*PolicyVersion, error) {
	ps, err := s.readPolicies(ctx, q)
	if ps == nil {
		return nil, err
	}
	return ps.now, err
}

// version is pinned version v as the quorum reads it. Under trust
// required a version no policy signer signed is nil: it asks nothing.
func (ps *policies) version(ctx context.Context, q querier, v int64) (*PolicyVersion, error) {
	if !ps.trusted {
		return readPolicyVersion(ctx, q, v)
	}
	return ps.signedVersion(v)
}

// several reports whether more than one version can apply to a proposal.
func (ps *policies) several() bool {
	if ps.trusted {
		return len(ps.rows) > 1
	}
	return ps.now != nil && ps.now.Version > 1
}

// valid verifies sg once (CheckSignature): a policy statement for this
// store by a policy signer under the one principal the trust file names
// for its key, dated no later than StatementSkew after now, kept as a
// policy set under the principal and key that signed it.
func (ps *policies) valid(sg *policySig) bool {
	if sg.checked {
		return sg.ok
	}
	sg.checked = true
	c := CheckSignature(sg.rec, ps.ts, trust.Expect{Store: ps.store, PolicySHA256: sg.st.PolicySHA256, Skew: StatementSkew}, ps.at)
	if c.Verified == nil {
		return false
	}
	sg.ok, sg.v = true, *c.Verified
	return true
}

// signedVersion is version v if a policy signer signed its file (the
// latest such signature named), else nil; its rules read from the file.
func (ps *policies) signedVersion(v int64) (*PolicyVersion, error) {
	if pv, ok := ps.resolved[v]; ok {
		return pv, ps.bad[v]
	}
	ps.resolved[v] = nil
	row := ps.rows[v]
	if row == nil {
		return nil, nil
	}
	for _, sg := range ps.sigs {
		if sg.st.PolicySHA256 != row.SHA256 || !ps.valid(sg) {
			continue
		}
		pv := *row
		pv.SignedBy, pv.SignedKey, pv.SignedAt = sg.v.Principal, sg.v.Fingerprint, sg.v.Statement.Time
		p, err := parseSigned(pv.Source, pv.SHA256)
		if err != nil {
			ps.bad[v] = &RefusedError{ID: PolicyRef, Code: RefusedPolicyUnreadable, Reason: fmt.Sprintf(
				"policy v%d, signed by %s, cannot be read (%v): nothing is approved until `approve-tui policy set` puts a good one in force",
				v, model.Sanitize(pv.SignedBy, model.Line), err)}
			return nil, ps.bad[v]
		}
		pv.Policy = p
		ps.resolved[v] = &pv
		return &pv, nil
	}
	return nil, nil
}

// signedPolicies reads, under trust required, every policy version and
// every policy signature. The version in force is the one whose file the
// newest valid policy signature (by the statement's time) is over: a
// policy statement for this store by a policy signer, verified now, the
// version's hash computed from its file, not read from its row (the
// highest version among those with that file). So re-inserting an older
// signed file as a new version does not bring it back, and a version
// inserted or changed by hand is in force for nobody. Its rules are read
// from its signed file, never from the rules column. With none signed,
// nothing is in force: one approver. When the newest valid signature is
// over a file no version holds any more, the signed policy was removed or
// changed: refused, not taken for an older one or for none.
func (s bound) signedPolicies(ctx context.Context, q querier) (*policies, error) {
	ps := &policies{trusted: true, rows: map[int64]*PolicyVersion{}, byHash: map[string][]int64{},
		resolved: map[int64]*PolicyVersion{}, bad: map[int64]error{}, ts: s.trusted(), store: s.Identity(), at: s.now()}
	rows, err := q.QueryContext(ctx, `SELECT version, source, set_at, set_by FROM approve_tui_policy ORDER BY version`)
	if err != nil {
		if s.eng.noTable(err) {
			return ps, nil
		}
		return nil, err
	}
	var versions []int64
	for rows.Next() {
		var pv PolicyVersion
		if err := rows.Scan(&pv.Version, &pv.Source, &pv.SetAt, &pv.SetBy); err != nil {
			rows.Close()
			return nil, err
		}
		pv.SHA256 = sha256Hex([]byte(pv.Source))
		ps.rows[pv.Version] = &pv
		ps.byHash[pv.SHA256] = append(ps.byHash[pv.SHA256], pv.Version)
		versions = append(versions, pv.Version)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	kept, err := s.keptSignatures(ctx, q, PolicyRef)
	if err != nil {
		return nil, err
	}
	for _, r := range kept {
		st, err := trust.ParseStatement(r.Statement)
		if err != nil || st.Decision != trust.DecisionPolicy {
			continue
		}
		ps.sigs = append(ps.sigs, &policySig{rec: r, st: st})
	}
	// Newest statement first; among equals, the one kept last.
	slices.SortStableFunc(ps.sigs, func(a, b *policySig) int {
		if c := b.st.Time.Compare(a.st.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.rec.Seq, a.rec.Seq)
	})
	force, found := int64(0), false
	for _, sg := range ps.sigs {
		if !ps.valid(sg) {
			continue
		}
		vs := ps.byHash[sg.st.PolicySHA256]
		if len(vs) == 0 {
			return ps, &RefusedError{ID: PolicyRef, Code: RefusedPolicyUnreadable, Reason: fmt.Sprintf(
				"the policy %s signed at %s (sha256 %s) is not in the store any more: it was removed or changed outside approve-tui; "+
					"nothing is approved until a policy signer sets the policy again (`approve-tui policy set`)",
				model.Sanitize(sg.v.Principal, model.Line), stamp(sg.v.Statement.Time), sg.st.PolicySHA256[:12])}
		}
		force, found = slices.Max(vs), true
		break
	}
	for _, v := range versions {
		if !found || v > force {
			ps.unsigned = append(ps.unsigned, v)
		}
	}
	if !found {
		return ps, nil
	}
	pv, err := ps.signedVersion(force)
	if err != nil {
		return ps, err
	}
	ps.now = pv
	return ps, nil
}

// signedCache keeps the policies parsed from signed files, by SHA-256.
var signedCache sync.Map

// parseSigned reads a signed policy file as `policy set` read it.
func parseSigned(source, sum string) (*policy.Policy, error) {
	if p, ok := signedCache.Load(sum); ok {
		return p.(*policy.Policy), nil
	}
	p, err := config.ParsePolicy("policy", []byte(source))
	if err != nil {
		return nil, err
	}
	signedCache.Store(sum, p)
	return p, nil
}

// sameRules reports whether p is what source says (SetPolicy under trust
// required: what is enforced is read from the signed file).
func sameRules(source string, p *policy.Policy) error {
	q, err := config.ParsePolicy("policy", []byte(source))
	if err != nil {
		return fmt.Errorf("the policy file does not read as a policy: %v", err)
	}
	if !slices.Equal(q.Encode(), p.Encode()) {
		return fmt.Errorf("the policy given is not the one its file says")
	}
	return nil
}

// signedVoter is a vote's person and key as the store keeps them.
type signedVoter struct{ person, key string }

// signedVotes reads, under trust required, the signatures kept for recs
// (by approval id) and returns, by id, the voters (lower-case principal
// and key fingerprint) whose approve or vote signature verifies now over
// the proposal as it is (CheckSignature, ExpectFor): this store, its id,
// its payload and pinned risk, dated no earlier than the proposal was made.
// A vote row without one (written outside approve-tui) does not count.
// StatementMaxAge is not asked again: it was checked when the vote was
// cast.
func (s bound) signedVotes(ctx context.Context, q querier, recs map[string]*Record) (map[string]map[signedVoter]bool, error) {
	ts := s.trusted()
	out := map[string]map[signedVoter]bool{}
	if ts == nil || len(recs) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(recs))
	for id := range recs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	now, store := s.now(), s.Identity()
	err := inLists(ids, func(in string, args []any) error {
		rows, err := q.QueryContext(ctx, `SELECT seq, approval_id, event, principal, key_fp, statement, signature, at
			FROM approve_tui_signatures WHERE approval_id IN (`+in+`) ORDER BY seq`, args...)
		if err != nil {
			return err
		}
		sigs, err := scanSignatures(rows)
		if err != nil {
			return err
		}
		for _, sg := range sigs {
			rec := recs[sg.ApprovalID]
			if rec == nil {
				continue
			}
			c := CheckSignature(sg, ts, ExpectFor(rec, store), now)
			if !c.Counts() {
				continue
			}
			v := c.Verified
			if out[rec.ApprovalID] == nil {
				out[rec.ApprovalID] = map[signedVoter]bool{}
			}
			out[rec.ApprovalID][signedVoter{strings.ToLower(v.Principal), v.Fingerprint}] = true
		}
		return nil
	})
	if err != nil && s.eng.noTable(err) {
		return out, nil
	}
	return out, err
}
