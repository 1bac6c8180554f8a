package notify

import (
	"context"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// Signer is one signature kept for a decision on a proposal, as checked
// against the trust file of the process that reads it. A row of the
// signatures table is a claim (the agent side can write it): only a
// Verified signer's Principal and Key are the verifier's.
type Signer struct {
	Principal string // sanitised; the trust file's when Verified
	Key       string // SHA256:... fingerprint, sanitised
	Event     string // approve, vote or deny
	Verified  bool
	// Reason says why it does not verify ("" when it does): a trust.Reason,
	// or "no trust file" where none is configured.
	Reason string
}

// signatureSkew is how far a statement may be dated after the clock that
// checks it, or before the proposal it decides was made.
const signatureSkew = time.Minute

// Signers reads the signatures kept for rec's decisions and checks each
// against s's trust file: over this store, this proposal, its payload and
// pinned risk, a decision that fits the event it was kept with, dated no
// earlier than the proposal.
func Signers(ctx context.Context, s *storage.Store, rec *storage.Record) ([]Signer, error) {
	recs, err := s.Signatures(ctx, rec.ApprovalID)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	ts := s.Trust()
	out := make([]Signer, 0, len(recs))
	for _, r := range recs {
		sg := Signer{Principal: model.Sanitize(r.Principal, model.Line), Key: model.Sanitize(r.Key, model.Line), Event: model.Sanitize(r.Event, model.Line)}
		want := trust.Expect{Store: s.Identity(), ApprovalID: rec.ApprovalID, PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel),
			NotBefore: model.FromEpoch(rec.CreatedAt).Add(-signatureSkew), Skew: signatureSkew}
		switch r.Event {
		case storage.EventApprove, storage.EventVote:
			want.Decisions = trust.CountingDecisions
		case storage.EventDeny:
			want.Decisions = []trust.Decision{trust.DecisionDeny}
		}
		switch {
		case ts == nil || ts.Signers == nil:
			sg.Reason = "no trust file"
		case want.Decisions == nil:
			sg.Reason = "kept with an event that is no decision"
		default:
			v, err := trust.Verify([]byte(r.Armored), r.Statement, ts.Signers, want, s.Now())
			if err != nil {
				sg.Reason = string(trust.ReasonOf(err))
				if sg.Reason == "" {
					sg.Reason = "unreadable"
				}
				break
			}
			sg.Verified, sg.Principal, sg.Key = true, model.Sanitize(v.Principal, model.Line), v.Fingerprint
		}
		out = append(out, sg)
	}
	return out, nil
}

// VerifiedPrincipals are the principals of the verified signers whose
// event is one of events, each once, in order.
func VerifiedPrincipals(signers []Signer, events ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, sg := range signers {
		if !sg.Verified || seen[sg.Principal] {
			continue
		}
		for _, e := range events {
			if sg.Event == e {
				seen[sg.Principal] = true
				out = append(out, sg.Principal)
				break
			}
		}
	}
	return out
}
