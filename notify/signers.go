package notify

import (
	"context"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
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
	// or a storage.Check* reason ("no trust file" where none is configured).
	Reason string
}

// Signers reads the signatures kept for rec's decisions and checks each
// against s's trust file (storage.CheckedSignatures): over this store,
// this proposal, its payload and pinned risk, a decision that fits the
// event it was kept with, dated no earlier than the proposal, by the
// principal the trust file names for its key, as its row says.
func Signers(ctx context.Context, s *storage.Store, rec *storage.Record) ([]Signer, error) {
	checked, err := s.CheckedSignatures(ctx, rec)
	if err != nil || len(checked) == 0 {
		return nil, err
	}
	out := make([]Signer, len(checked))
	for i, c := range checked {
		r := c.Row
		sg := Signer{Principal: model.Sanitize(r.Principal, model.Line), Key: model.Sanitize(r.Key, model.Line), Event: model.Sanitize(r.Event, model.Line)}
		if v := c.Verified; v != nil {
			sg.Verified, sg.Principal, sg.Key = true, model.Sanitize(v.Principal, model.Line), v.Fingerprint
		} else {
			sg.Reason = c.Reason
		}
		out[i] = sg
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
