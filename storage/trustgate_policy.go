package storage

import (
	"context"
	"fmt"
	"slices"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// Policies named by approvals (trust required). The version in force is
// the newest a policy signer signed among the rows the store still has,
// and the agent's user can delete rows: deleting the newest policy's
// signature brings an older, laxer one back, deleting them all leaves
// none. So each approval and vote names, in its statement, the signed
// policy its signer's surface held in force (policy_sha256), and the
// deciding transaction applies every policy named by the approval being
// decided and by the signatures kept for the proposal: each must still be
// in the store with a valid policy signer's signature, else the decision
// is refused; and each asks of the quorum what it asks, beside the
// version in force and the pinned ones (gatesOf).

// RefusedPolicyGone: an approval names the signed policy it was made
// under, and that policy (its file, or its policy signer's signature) is
// no longer in the store.
const RefusedPolicyGone = "policy_gone"

// namedPolicies are, under trust required, the signed versions the
// approval signatures of rec name: actor's (verified by checkSigned in
// this transaction) and every approve or vote signature kept for rec that
// verifies over it as it is now. A named policy that is not in the store
// with a valid policy signature refuses.
func (s bound) namedPolicies(ctx context.Context, q querier, rec *Record, ps *policies, actor model.Actor) ([]*PolicyVersion, error) {
	ts := s.trusted()
	if ts == nil || ps == nil || !ps.trusted {
		return nil, nil
	}
	var want []string
	add := func(statement []byte) {
		st, err := trust.ParseStatement(statement)
		if err == nil && st.PolicySHA256 != "" && (st.Decision == trust.DecisionApprove || st.Decision == trust.DecisionVote) &&
			!slices.Contains(want, st.PolicySHA256) {
			want = append(want, st.PolicySHA256)
		}
	}
	if actor.Signature != nil {
		add(actor.Signature.Statement)
	}
	kept, err := s.keptSignatures(ctx, q, rec.ApprovalID)
	if err != nil {
		return nil, err
	}
	expect := ExpectFor(rec, s.Identity())
	for _, sg := range kept {
		// The one check of a kept signature: only approvals that hold
		// over this proposal as it is now name a policy that asks.
		if c := CheckSignature(sg, ts, expect, ps.at); c.Verified != nil && c.Statement.Decision != trust.DecisionDeny {
			add(sg.Statement)
		}
	}
	var out []*PolicyVersion
	for _, sum := range want {
		pv, err := ps.namedVersion(sum)
		if err != nil {
			return nil, err
		}
		if pv == nil {
			return nil, &RefusedError{ID: rec.ApprovalID, Code: RefusedPolicyGone, Reason: fmt.Sprintf(
				"the policy it was approved under (%s) is not in the store any more: rows were deleted; nothing runs, and nothing is approved "+
					"under it, until a policy signer sets the policy again (`approve-tui policy set`)", sum[:12])}
		}
		out = append(out, pv)
	}
	return out, nil
}

// namedVersion is the highest version whose file is sum, if a policy
// signer's valid signature over it is kept; else nil.
func (ps *policies) namedVersion(sum string) (*PolicyVersion, error) {
	vs := ps.byHash[sum]
	if len(vs) == 0 {
		return nil, nil
	}
	return ps.signedVersion(slices.Max(vs))
}

// namedGates adds to gs a gate for each named version that is not there
// yet and whose rules match rec.
func namedGates(gs []gate, rec *Record, named []*PolicyVersion) []gate {
	for _, pv := range named {
		if slices.ContainsFunc(gs, func(g gate) bool { return g.pv.Version == pv.Version }) {
			continue
		}
		if req := pv.Policy.Requirement(subjectOf(rec)); req.Ruled() {
			gs = append(gs, gate{pv: pv, req: req})
		}
	}
	return gs
}
