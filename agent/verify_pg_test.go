package agent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/pgtest"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
)

// The check reads the same on PostgreSQL: a two-person policy a policy
// signer signed holds against a policy row inserted with no rules, a vote
// row and a consume written with SQL count for nothing, and two signed
// approvals pass. Runs where the PostgreSQL test server is set.
func TestVerifySignaturesOnPostgreSQL(t *testing.T) {
	pgtest.Require(t)
	url := pgtest.Schema(t)
	ctx := context.Background()
	s, err := storage.Open(ctx, url, storage.Options{Create: true, BusyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := newTrustRig(t, s.Identity(), "alice", "bob", "carol")
	r.setSignedPolicy(t, s, "carol", twoPersonPolicy)
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by)
		SELECT version + 1, $1, '', $2, set_at, set_by FROM approve_tui_policy ORDER BY version DESC LIMIT 1`,
		fmt.Sprintf("%x", [32]byte{}), string((&policy.Policy{}).Encode())); err != nil {
		t.Fatal(err)
	}
	self := Self{Requesters: []string{"agent"}}

	// One signed approval, a forged vote for bob, consumed with SQL.
	one := submitDraft(t, s, xDraft(t))
	rec := get(t, s, one)
	if _, err := s.Consume(ctx, one, one, r.actor("alice", r.sign(t, r.set, "alice", rec))); err != nil && !errors.As(err, new(*storage.VoteRecorded)) {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO approve_tui_votes (approval_id, actor, surface, person, key_fp, payload_sha256, at) VALUES ($1, 'bob@desk', 'cli', 'bob', '', $2, $3)`,
		one, rec.PayloadSHA256, float64(time.Now().Unix())); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE gateway_approvals SET status = 'consumed', consumed_at = $1, consumed_by = 'hermes' WHERE approval_id = $2 AND status = 'pending'`,
		float64(time.Now().Unix()), one); err != nil {
		t.Fatal(err)
	}
	_, err = VerifySignatures(ctx, r.set, s, get(t, s, one), self)
	var se *SignatureError
	if !errors.As(err, &se) || se.Have != 1 || se.Need != 2 || !strings.Contains(err.Error(), "signed by carol") {
		t.Fatalf("one signature and a forged vote: %v", err)
	}

	// Two signed approvals (the store, reading the inserted policy, took
	// alice's alone; bob's is stored beside it).
	two := submitDraft(t, s, xDraft(t))
	rec = get(t, s, two)
	if _, err := s.Consume(ctx, two, two, r.actor("alice", r.sign(t, r.set, "alice", rec))); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifySignatures(ctx, r.set, s, get(t, s, two), self); !errors.As(err, &se) || se.Have != 1 {
		t.Fatalf("alice alone: %v", err)
	}
	b := r.sign(t, r.set, "bob", rec)
	if _, err := raw.Exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES ($1, 'vote', $2, $3, $4, $5, $6)`,
		two, b.Principal, b.Key, string(b.Statement), b.Armored, float64(time.Now().Unix())); err != nil {
		t.Fatal(err)
	}
	chk, err := VerifySignatures(ctx, r.set, s, get(t, s, two), self)
	if err != nil || chk.Words() != "signed by alice, bob (2 of 2)" {
		t.Fatalf("two signatures: %+v %v", chk, err)
	}
}
