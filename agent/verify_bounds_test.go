package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/storage"
)

// Rows of any size the agent's user writes are read cut, and rows without
// end are not read at all: a hook must not hold gigabytes (an agent runs
// the command of a hook killed for its memory). The two-person policy
// carol signed stays in force, and the approval's own signatures count.
func TestVerifyReadsHostileRowsBounded(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	r.setSignedPolicy(t, o, "carol", twoPersonPolicy)
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	db := rawDB(t, o)
	forgeConsume(t, db, id, r.sign(t, r.set, "alice", rec), r.sign(t, r.set, "bob", rec))
	const big = 8 << 20
	// Huge policy signature rows, a huge approval signature row, and a
	// huge policy version claiming the signed policy's hash.
	if _, err := db.Exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at)
		VALUES ('policy', 'policy_set', printf('%.*c', ?, 'p'), 'k', printf('%.*c', ?, 's'), printf('%.*c', ?, 'a'), 0),
		       (?, 'approve', 'x', 'k', printf('%.*c', ?, 's'), printf('%.*c', ?, 'a'), 0)`, big, big, big, id, big, big); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{storage.PolicyRef, id} {
		rows, err := s.SignaturesUpTo(context.Background(), ref, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if len(row.Statement) > storage.MaxStatementBytes+1 || len(row.Armored) > storage.MaxArmoredBytes+1 || len(row.Principal) > 1025 {
				t.Fatalf("%s: a row read whole: statement %d, signature %d, principal %d bytes", ref, len(row.Statement), len(row.Armored), len(row.Principal))
			}
		}
	}
	chk, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{Requesters: []string{"agent"}})
	if err != nil || chk.Need != 2 || len(chk.Principals) != 2 {
		t.Fatalf("with huge rows beside them, alice's and bob's signatures under the two-person policy: %+v %v", chk, err)
	}

	// Policy rows without end: the policy in force cannot be known.
	if _, err := db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?)
		INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at)
		SELECT 'policy', 'policy_set', 'x', 'k', 'junk', 'junk', 0 FROM n`, maxPolicyRows+1); err != nil {
		t.Fatal(err)
	}
	_, err = VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{Requesters: []string{"agent"}})
	var se *SignatureError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "the policy in force cannot be known") {
		t.Fatalf("%d junk policy rows: %v", maxPolicyRows+1, err)
	}
}
