package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// Under a two-person policy alice votes and bob denies, signed: the
// proposal is denied. The agent's user marks it consumed and stores a
// second approval beside (carol's, replayed or got by asking again): a
// valid signed denial over exactly this proposal refuses it. A denial
// over another payload changes nothing.
func TestVerifySignedDenialVetoes(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	r.setSignedPolicy(t, o, "carol", twoPersonPolicy)
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	deny := func(payload string) {
		t.Helper()
		sig, err := r.set.SignDecision(r.signers["bob"], trust.Statement{Decision: trust.DecisionDeny, ApprovalID: id,
			PayloadSHA256: payload, Risk: string(rec.RiskLevel)}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rawDB(t, o).Exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES (?, 'deny', ?, ?, ?, ?, 0)`,
			id, sig.Principal, sig.Key, string(sig.Statement), sig.Armored); err != nil {
			t.Fatal(err)
		}
	}
	deny(strings.Repeat("0", 64)) // over another payload: not this proposal's
	forgeConsume(t, rawDB(t, o), id, r.sign(t, r.set, "alice", rec), r.sign(t, r.set, "carol", rec))
	self := Self{Requesters: []string{"agent"}}
	if _, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); err != nil {
		t.Fatalf("two approvals, a denial of something else: %v", err)
	}
	deny(rec.PayloadSHA256)
	_, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self)
	var se *SignatureError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "denied by bob (signed") {
		t.Fatalf("a signed denial of this proposal: %v", err)
	}
}
