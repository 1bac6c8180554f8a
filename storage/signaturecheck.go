package storage

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// One check of a stored signature. A row of approve_tui_signatures is a
// claim (the agent side can write it); CheckSignature is what every
// surface that reads one (the console, list, show, audit, notifications,
// the deciding transaction's reads) asks of it before it names a signer.

// Reasons CheckSignature gives beside the trust.Reason of a signature
// that does not verify.
const (
	// CheckNoTrustFile: nothing could check it (no trust file here).
	CheckNoTrustFile = "no trust file"
	// CheckNoDecision: kept with an event that is no signed decision.
	CheckNoDecision = "no_decision"
	// CheckNotPolicySigner: a policy signed by a principal the trust
	// configuration does not let set policy.
	CheckNotPolicySigner = RefusedNotPolicySigner
	// CheckRowMismatch: the row's principal or key is not the verified one
	// (the row was written or changed outside approve-tui).
	CheckRowMismatch = "row_mismatch"
	// CheckUnreadable: refused by the verifier without a reason of its own.
	CheckUnreadable = "unreadable"
)

// DecisionsFor are the statement decisions a signature kept with event may
// carry: approve and vote (the signer cannot know whether its approval
// completes the quorum) for an approve or vote, deny for a deny, policy for
// a policy set; nil for any other event, which no signature verifies as.
func DecisionsFor(event string) []trust.Decision {
	switch event {
	case EventApprove, EventVote:
		return slices.Clone(trust.CountingDecisions)
	case EventDeny:
		return []trust.Decision{trust.DecisionDeny}
	case EventPolicySet:
		return []trust.Decision{trust.DecisionPolicy}
	}
	return nil
}

// ExpectFor is what a signature over a decision on rec must say, for the
// store named identity: this store, rec's id, payload and pinned risk,
// dated no earlier than StatementSkew before rec was made (when its time
// is known) and no later than StatementSkew after the checking clock.
// Decisions are left to CheckSignature, which takes them from the event
// the signature was kept with.
func ExpectFor(rec *Record, identity string) trust.Expect {
	want := trust.Expect{Store: identity, ApprovalID: rec.ApprovalID, PayloadSHA256: rec.PayloadSHA256,
		Risk: string(rec.RiskLevel), Skew: StatementSkew}
	if rec.CreatedAt > 0 {
		want.NotBefore = model.FromEpoch(rec.CreatedAt).Add(-StatementSkew)
	}
	return want
}

// CheckedSignature is one stored signature and what checking it found.
type CheckedSignature struct {
	Row SignatureRecord
	// Statement is the statement as signed; Parsed is false when the
	// bytes are not one (its fields are then empty). Unverified, it is a
	// claim.
	Statement trust.Statement
	Parsed    bool
	// Verified is set when the signature holds and every check passed: its
	// Principal and Fingerprint are then the verifier's, not the row's.
	Verified *trust.Verified
	// Reason is why it does not verify ("" when it does): a trust.Reason,
	// or one of the Check* reasons.
	Reason string
	// Problem says so in words, sanitised to one line.
	Problem string
	// Err is the verifier's own refusal (a *trust.VerifyError) when it
	// gave one, for a caller that words it its own way; nil otherwise.
	Err error
}

// OK reports whether the signature verified.
func (c CheckedSignature) OK() bool { return c.Verified != nil }

// Counts reports whether it verified as an approval or vote.
func (c CheckedSignature) Counts() bool {
	return c.Verified != nil && slices.Contains(trust.CountingDecisions, c.Verified.Statement.Decision)
}

// Principal is who the signature is by: the verified principal, else the
// statement's, else the row's (the last two are claims).
func (c CheckedSignature) Principal() string {
	switch {
	case c.Verified != nil:
		return c.Verified.Principal
	case c.Parsed:
		return c.Statement.Principal
	}
	return c.Row.Principal
}

// CheckSignature checks stored signature r against the trust file of ts at
// time now, expecting want (its Decisions are replaced by those the row's
// event may carry: DecisionsFor). It verifies when the signature holds over
// its statement by a key of the trust file under the principal its line
// names, the statement says what want says (store, id, payload, risk, or
// the policy's hash; its time within want's bounds), its decision fits the
// event it was kept with, the trust file's one principal for the key is
// the statement's, a policy is signed by a policy signer, and the row's
// principal and key are the verified ones. Anything else is not verified,
// and Reason and Problem say why.
func CheckSignature(r SignatureRecord, ts *trust.Settings, want trust.Expect, now time.Time) CheckedSignature {
	c := CheckedSignature{Row: r}
	if st, err := trust.ParseStatement(r.Statement); err == nil {
		c.Statement, c.Parsed = st, true
	}
	fail := func(reason, problem string) CheckedSignature {
		c.Reason, c.Problem = reason, model.Sanitize(problem, model.Line)
		return c
	}
	if ts == nil || ts.Signers == nil {
		return fail(CheckNoTrustFile, "not checked: no trust file (the configuration's trust: mode is off)")
	}
	want.Decisions = DecisionsFor(r.Event)
	if want.Decisions == nil {
		return fail(CheckNoDecision, fmt.Sprintf("kept with event %q, which is no signed decision", r.Event))
	}
	v, err := trust.Verify([]byte(r.Armored), r.Statement, ts.Signers, want, now)
	if err != nil {
		reason := string(trust.ReasonOf(err))
		if reason == "" {
			reason = CheckUnreadable
		}
		c.Err = err
		return fail(reason, err.Error())
	}
	if !slices.Contains(want.Decisions, v.Statement.Decision) {
		return fail(string(trust.ReasonDecision), fmt.Sprintf("signed decision %s, stored as event %s", v.Statement.Decision, r.Event))
	}
	p, err := ts.PrincipalOf(v.Key)
	switch {
	case err != nil:
		return fail(string(trust.ReasonUnknownKey), err.Error())
	case p != v.Principal:
		return fail(string(trust.ReasonPrincipalMismatch), fmt.Sprintf("the trust file names %s for key %s, the statement %s", p, v.Fingerprint, v.Principal))
	case v.Statement.Decision == trust.DecisionPolicy && !ts.PolicySigner(v.Principal):
		return fail(CheckNotPolicySigner, fmt.Sprintf("%s is not a policy signer (the trust configuration's policy_signers: %s)", v.Principal, signerList(ts)))
	case r.Principal != v.Principal:
		return fail(CheckRowMismatch, fmt.Sprintf("the row says principal %s, the signature %s", r.Principal, v.Principal))
	case r.Key != v.Fingerprint:
		return fail(CheckRowMismatch, fmt.Sprintf("the row says key %s, the signature %s", r.Key, v.Fingerprint))
	}
	c.Verified = &v
	return c
}

// CheckedSignatures reads the signatures kept for rec's decisions and
// checks each (CheckSignature) against the store's trust file, over rec as
// given (ExpectFor), at the store's clock.
func (st *Store) CheckedSignatures(ctx context.Context, rec *Record) ([]CheckedSignature, error) {
	rows, err := st.Signatures(ctx, rec.ApprovalID)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	ts, want, now := st.Trust(), ExpectFor(rec, st.Identity()), st.Now()
	out := make([]CheckedSignature, len(rows))
	for i, r := range rows {
		out[i] = CheckSignature(r, ts, want, now)
	}
	return out, nil
}
