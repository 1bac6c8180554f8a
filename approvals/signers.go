package approvals

import (
	"context"
	"strings"

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

// Checked reports whether anything here checked the signature (a trust
// file is configured): one that was not is neither good nor bad.
func (sg Signer) Checked() bool { return sg.Verified || sg.Reason != storage.CheckNoTrustFile }

// Signers reads the signatures kept for rec's decisions and checks each
// against s's trust file (storage.CheckedSignatures, the one signature
// check): over this store, this proposal, its payload and pinned risk, a
// decision that fits the event it was kept with, dated no earlier than the
// proposal, by the principal the trust file names for its key, as its row
// says.
func Signers(ctx context.Context, s *storage.Store, rec *storage.Record) ([]Signer, error) {
	checked, err := s.CheckedSignatures(ctx, rec)
	if err != nil || len(checked) == 0 {
		return nil, err
	}
	out := make([]Signer, len(checked))
	for i, c := range checked {
		r := c.Row
		sg := Signer{Principal: line(r.Principal), Key: line(r.Key), Event: line(r.Event)}
		if v := c.Verified; v != nil {
			sg.Verified, sg.Principal, sg.Key = true, line(v.Principal), v.Fingerprint
		} else {
			sg.Reason = line(c.Reason)
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

// DecidedBy are the principals whose verified signatures are over the
// decision that made a proposal st: an approval (approve and vote
// signatures) or a deny. decided is false for a status no decision made
// (pending, expired): then nobody signed it.
func DecidedBy(st model.Status, signers []Signer) (who []string, decided bool) {
	switch st {
	case model.StatusConsumed:
		return VerifiedPrincipals(signers, storage.EventApprove, storage.EventVote), true
	case model.StatusDenied:
		return VerifiedPrincipals(signers, storage.EventDeny), true
	}
	return nil, false
}

// SignedWords is what list's WHEN column adds after who decided a
// proposal of status st: "; signed: alice, bob" (whose verified signatures
// decided it), "; unsigned" where signatures are required and none
// verifies, else "".
func SignedWords(st model.Status, signers []Signer, required bool) string {
	who, decided := DecidedBy(st, signers)
	switch {
	case !decided:
		return ""
	case len(who) > 0:
		return "; signed: " + strings.Join(who, ", ")
	case required:
		return "; unsigned"
	}
	return ""
}

// SignersJSON is the signatures kept for a proposal's decisions as show
// --json and list --json give them: [{principal, key, event, verified,
// reason}] (reason: why one does not verify; "" when it does).
func SignersJSON(signers []Signer) string {
	objs := make([]*model.JSONObject, len(signers))
	for i, sg := range signers {
		objs[i] = model.NewJSONObject().Str("principal", sg.Principal).Str("key", sg.Key).Str("event", sg.Event).
			Bool("verified", sg.Verified).Str("reason", sg.Reason)
	}
	return model.JSONObjects(objs)
}

// SignerWords is one signature on one line, as show prints it (Text):
// "approve by alice, key SHA256:...: verifies", or "does NOT verify
// (why)".
func SignerWords(sg Signer) string {
	words, _ := SignatureWords(sg, nil, Text)
	return words
}

// SignatureWords is one signature on one line in form f, and how it
// stands for a surface to style it. Text (show's): "approve by alice, key
// SHA256:...: verifies", or "does NOT verify (why)". Console (the
// history's event page; short shortens the key): "approve signed by alice
// SHA256:abc…, verified", ": does NOT verify (why)", or " (not checked: no
// trust file here)".
func SignatureWords(sg Signer, short func(string) string, f Form) (string, SigState) {
	state := SigVerified
	switch {
	case sg.Verified:
	case sg.Checked():
		state = SigBad
	default:
		state = SigNotChecked
	}
	if f == Text {
		words := "verifies"
		if !sg.Verified {
			words = "does NOT verify (" + sg.Reason + ")"
		}
		return sg.Event + " by " + sg.Principal + ", key " + sg.Key + ": " + words, state
	}
	who := line(sg.Event) + " signed by " + line(sg.Principal) + " " + short(sg.Key)
	switch state {
	case SigVerified:
		return who + ", verified", state
	case SigBad:
		return who + ": does NOT verify (" + line(sg.Reason) + ")", state
	}
	return who + " (not checked: no trust file here)", state
}

// NoSignature is what show says where signatures are required and none is
// kept for a proposal.
const NoSignature = "no signature kept (under trust required nothing it decides runs)"

// SigState is how a vote's signature stands, for a surface to style it.
type SigState int

// Signature states of a vote.
const (
	SigUnsigned   SigState = iota // no signature of the vote's key is kept
	SigVerified                   // it verifies against the trust file
	SigBad                        // it was checked and does not verify
	SigNotChecked                 // kept, but not checked here
)

// VoteSignature says whether a vote by key is signed: by a signature kept
// for an approval of the proposal (a vote or an approve) whose key is the
// vote's (a signed vote counts for its key). short shortens a key
// fingerprint for the words.
func VoteSignature(key string, sigs []Signer, short func(string) string) (string, SigState) {
	for _, sg := range sigs {
		if sg.Event != storage.EventVote && sg.Event != storage.EventApprove {
			continue
		}
		if key == "" || sg.Key != line(key) { // Key is sanitised
			continue
		}
		who := line(sg.Principal) + " " + short(sg.Key)
		switch {
		case sg.Verified:
			return "signed: " + who, SigVerified
		case sg.Checked():
			return "signature does NOT verify (" + line(sg.Reason) + "), claimed by " + who, SigBad
		}
		return "signed (not checked here): " + who, SigNotChecked
	}
	return "unsigned", SigUnsigned
}
