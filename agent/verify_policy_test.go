package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

// The agent's user deletes the policy's signature rows: the two-person
// policy a policy signer signed must stay in force.
func TestVerifySignedPolicySurvivesDeletedSignatureRows(t *testing.T) {
	for _, c := range []struct {
		name, where string
	}{
		{"every policy signature deleted", `approval_id = 'policy'`},
		{"the newest policy signature deleted (rollback)", `approval_id = 'policy' AND seq = (SELECT MAX(seq) FROM approve_tui_signatures WHERE approval_id = 'policy')`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, o := emptyStore(t)
			r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
			lax := "policy:\n  - match: {risk: high}\n    approvals: 1\n"
			r.setSignedPolicy(t, o, "carol", lax)
			time.Sleep(1100 * time.Millisecond) // statements are dated to the second
			r.setSignedPolicy(t, o, "carol", twoPersonPolicy)
			id := submitDraft(t, s, xDraft(t))
			rec := get(t, o, id)
			db := rawDB(t, o)
			forgeConsume(t, db, id, r.sign(t, r.set, "alice", rec))
			self := Self{Requesters: []string{"agent"}}
			var se *SignatureError
			if _, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); !errors.As(err, &se) || se.Need != 2 {
				t.Fatalf("two-person policy in force: %v", err)
			}
			if _, err := db.Exec(`DELETE FROM approve_tui_signatures WHERE ` + c.where); err != nil {
				t.Fatal(err)
			}
			chk, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self)
			if err == nil {
				t.Fatalf("one signature let through after the policy's signature rows were deleted: %s (policy %q)", chk.Words(), chk.Policy)
			}
			if !strings.Contains(err.Error(), "the policy it was approved under ("+r.policy[:12]+") is not in the store any more") {
				t.Fatalf("refused, but not for the policy gone: %v", err)
			}
		})
	}
}

// The policy two approvals were signed under has its file and its
// signature deleted after the approvals, the older lax policy in force
// again: nothing runs.
func TestVerifyNamedPolicyFileDeleted(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	lax := "policy:\n  - match: {risk: high}\n    approvals: 1\n"
	r.setSignedPolicy(t, o, "carol", lax)
	time.Sleep(1100 * time.Millisecond)
	r.setSignedPolicy(t, o, "carol", twoPersonPolicy)
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	db := rawDB(t, o)
	forgeConsume(t, db, id, r.sign(t, r.set, "alice", rec), r.sign(t, r.set, "bob", rec))
	self := Self{Requesters: []string{"agent"}}
	if chk, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); err != nil || chk.Need != 2 {
		t.Fatalf("two signatures under the two-person policy: %+v %v", chk, err)
	}
	for _, q := range []string{`DELETE FROM approve_tui_policy WHERE version = (SELECT MAX(version) FROM approve_tui_policy)`,
		`DELETE FROM approve_tui_signatures WHERE approval_id = 'policy' AND seq = (SELECT MAX(seq) FROM approve_tui_signatures WHERE approval_id = 'policy')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self)
	var se *SignatureError
	if !errors.As(err, &se) || se.ID != id || !strings.Contains(err.Error(), "the policy it was approved under ("+r.policy[:12]+") is not in the store any more") {
		t.Fatalf("the named policy's file deleted: %v", err)
	}
}

// An approval names a stricter policy than the one in force (a policy
// signer set it, the agent's user then re-inserted an older file as the
// newest signed one): the stricter one still asks.
func TestVerifyNamedPolicyAsksToo(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	r.setSignedPolicy(t, o, "carol", twoPersonPolicy)
	strict := r.policy
	time.Sleep(1100 * time.Millisecond)
	lax := "policy:\n  - match: {risk: high}\n    approvals: 1\n"
	r.setSignedPolicy(t, o, "carol", lax) // the lax one is now the newest signed
	r.policy = strict                     // but alice's console signs under the two-person one
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	forgeConsume(t, rawDB(t, o), id, r.sign(t, r.set, "alice", rec))
	_, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{Requesters: []string{"agent"}})
	var se *SignatureError
	if !errors.As(err, &se) || se.Need != 2 || !strings.Contains(err.Error(), "named by the approval") {
		t.Fatalf("the named two-person policy did not ask: %v", err)
	}
}
