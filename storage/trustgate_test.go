package storage

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"github.com/approve-tui/approve-tui/internal/sshtest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
	"golang.org/x/crypto/ssh"
)

// Signed decisions where the trust configuration requires them: verified
// inside the deciding transaction, counted for the key's principal, the
// policy in force the newest one a policy signer signed. Real ed25519 keys
// (and one held by a real ssh-agent); every test runs on both backends.

// testStore is the store identity the trust tests sign for.
const testStore = "store:trust-test"

// tkey is one test key with the principal it is trusted under.
type tkey struct {
	principal string
	signer    *trust.StatementSigner
}

func newKey(t testing.TB, principal string) *tkey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return &tkey{principal: principal, signer: trust.NewStatementSigner(s)}
}

// line is k's allowed_signers line under principal (k's own by default).
func (k *tkey) line(principal ...string) string {
	p := k.principal
	if len(principal) > 0 {
		p = principal[0]
	}
	return p + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k.signer.PublicKey())))
}

// trustOf is a required trust configuration for testStore: the keys on
// their lines, policy signers as named.
func trustOf(t testing.TB, policySigners []string, lines ...string) *trust.Settings {
	t.Helper()
	path := filepath.Join(t.TempDir(), "allowed_signers")
	text := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	signers, err := trust.ParseAllowedSigners(path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return &trust.Settings{Mode: trust.ModeRequired, Path: path, Signers: signers, PolicySigners: policySigners, Store: testStore}
}

func openTrusted(t testing.TB, path string, c *clock, ts *trust.Settings) *Store {
	t.Helper()
	s, err := Open(ctx, path, Options{Create: true, BusyTimeout: 2 * time.Second, Now: c.Now, Trust: ts})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// signed is k's signature over st, completed as a surface completes it
// (store, principal) unless st sets them.
func (k *tkey) signed(t testing.TB, st trust.Statement) *model.Signature {
	t.Helper()
	if st.Store == "" {
		st.Store = testStore
	}
	if st.Principal == "" {
		st.Principal = k.principal
	}
	b, err := st.Encode()
	if err != nil {
		t.Fatal(err)
	}
	armored, err := k.signer.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	return &model.Signature{Principal: st.Principal, Key: k.signer.Fingerprint(), Statement: b, Armored: string(armored)}
}

// approval is k's approve statement over rec at time at.
func approval(rec *Record, at time.Time) trust.Statement {
	return trust.Statement{Decision: trust.DecisionApprove, ApprovalID: rec.ApprovalID, PayloadSHA256: rec.PayloadSHA256,
		Risk: string(rec.RiskLevel), Time: at}
}

// osActor is the process's own idea of who it is: the same OS user for
// everyone, which the store must not count.
func osActor(sig *model.Signature) model.Actor {
	return model.Actor{Surface: model.SurfaceCLI, Name: "root@shared-host", Person: "root", Signature: sig}
}

func wantRefusal(t testing.TB, err error, code string, words ...string) {
	t.Helper()
	var rf *RefusedError
	if !errors.As(err, &rf) || rf.Code != code {
		t.Fatalf("want refusal %s, got %v", code, err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("refusal %q does not say %q", err, w)
		}
	}
}

func wantPending(t testing.TB, s *Store, id string) {
	t.Helper()
	rec, err := s.Get(ctx, id)
	if err != nil || rec.Status != model.StatusPending || rec.ConsumedBy != "" {
		t.Fatalf("%s: %+v %v", id, rec, err)
	}
}

// An approval without a signature is refused, audited, and leaves the row
// pending; a signed one consumes it, for the key's principal.
func TestTrustApprovalSigned(t *testing.T) {
	alice := newKey(t, "alice")
	ts := trustOf(t, nil, alice.line())
	c := newClock()
	path := tempDB(t)
	s := openTrusted(t, path, c, ts)
	rec := submitHigh(t, s, c, "trust-approve-01")

	_, err := approve(s, rec, osActor(nil))
	wantRefusal(t, err, RefusedSignatureRequired, "under trust required every approval is signed with the approver's SSH key")
	wantPending(t, s, rec.ApprovalID)
	db := rawDB(t, s.DSN())
	if n := countAudit(t, db, `approval_id = ? AND outcome = 'refused' AND reason = ?`, rec.ApprovalID, RefusedSignatureRequired); n != 1 {
		t.Fatalf("%d refusals audited", n)
	}

	sig := alice.signed(t, approval(rec, c.Now()))
	sig.Principal, sig.Key = "mallory", "SHA256:claimed" // claims are not kept
	got, err := approve(s, rec, osActor(sig))
	if err != nil {
		t.Fatal(err)
	}
	fp := alice.signer.Fingerprint()
	if want := "alice (" + fp[:15] + ") via cli"; got.ConsumedBy != want {
		t.Fatalf("consumed_by %q, want %q", got.ConsumedBy, want)
	}
	kept, err := s.Signatures(ctx, rec.ApprovalID)
	if err != nil || len(kept) != 1 || kept[0].Principal != "alice" || kept[0].Key != fp || kept[0].Event != EventApprove {
		t.Fatalf("kept %+v %v", kept, err)
	}
	if n := countAudit(t, db, `approval_id = ? AND event = 'approve' AND outcome = 'ok' AND detail LIKE ?`, rec.ApprovalID, `%"signed_by":"alice"%`); n != 1 {
		t.Fatal("the approve event does not name the signer")
	}
	// Trust off: today's behaviour, nothing asked.
	plain := openAt(t, tempDB(t), c)
	r2 := submitHigh(t, plain, c, "trust-off-000001")
	if _, err := approve(plain, r2, osActor(nil)); err != nil {
		t.Fatalf("trust off: %v", err)
	}
}

// Every forgery a hostile agent can make of an approval is refused with
// signature_invalid (or as a self-approval), audited, and nothing runs.
func TestTrustForgeriesRefused(t *testing.T) {
	alice, bob, mallory, tester := newKey(t, "alice"), newKey(t, "bob"), newKey(t, "mallory"), newKey(t, "tester")
	ts := trustOf(t, nil, alice.line(), bob.line(), tester.line())
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)
	rec := submitHigh(t, s, c, "trust-forged-001")
	other := submitHigh(t, s, c, "trust-forged-002")
	now := c.Now()
	cases := []struct {
		name  string
		sig   func() *model.Signature
		code  string
		words string
	}{
		{"statement swapped under a good signature", func() *model.Signature {
			sig := alice.signed(t, approval(rec, now))
			st := approval(rec, now)
			st.Store, st.Principal = testStore, "bob"
			sig.Statement, _ = st.Encode()
			return sig
		}, RefusedSignatureInvalid, "bad_signature"},
		{"signature bytes altered", func() *model.Signature {
			sig := alice.signed(t, approval(rec, now))
			b := []byte(sig.Armored)
			i := bytes.IndexByte(b, '\n') + 40
			b[i] ^= 'A' ^ 'B'
			sig.Armored = string(b)
			return sig
		}, RefusedSignatureInvalid, "signature refused"},
		{"other id", func() *model.Signature { return alice.signed(t, approval(other, now)) }, RefusedSignatureInvalid, "statement_mismatch"},
		{"other payload", func() *model.Signature {
			st := approval(rec, now)
			st.PayloadSHA256 = strings.Repeat("ab", 32)
			return alice.signed(t, st)
		}, RefusedSignatureInvalid, "payload_sha256"},
		{"other store", func() *model.Signature {
			st := approval(rec, now)
			st.Store = "sqlite:/elsewhere.db"
			return alice.signed(t, st)
		}, RefusedSignatureInvalid, "signed for store"},
		{"other risk", func() *model.Signature {
			st := approval(rec, now)
			st.Risk = trust.RiskLow
			return alice.signed(t, st)
		}, RefusedSignatureInvalid, "risk"},
		{"unknown key", func() *model.Signature { return mallory.signed(t, approval(rec, now)) }, RefusedSignatureInvalid, "unknown_key"},
		{"a trusted key signing as another principal", func() *model.Signature {
			st := approval(rec, now)
			st.Principal = "bob"
			return alice.signed(t, st)
		}, RefusedSignatureInvalid, "principal_mismatch"},
		{"statement from the future", func() *model.Signature {
			return alice.signed(t, approval(rec, now.Add(5*time.Minute)))
		}, RefusedSignatureInvalid, "after now"},
		{"a denial presented as an approval", func() *model.Signature {
			st := approval(rec, now)
			st.Decision = trust.DecisionDeny
			return alice.signed(t, st)
		}, RefusedSignatureInvalid, "signed as deny, and here only approve or vote counts"},
		{"not a signature at all", func() *model.Signature {
			return &model.Signature{Principal: "alice", Statement: []byte("approve"), Armored: "trust me"}
		}, RefusedSignatureInvalid, "malformed"},
		{"the requester's own key", func() *model.Signature { return tester.signed(t, approval(rec, now)) }, RefusedSelfApproval, "tester"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := approve(s, rec, osActor(tc.sig()))
			wantRefusal(t, err, tc.code, tc.words)
			wantPending(t, s, rec.ApprovalID)
		})
	}
	// A statement kept from earlier is stale.
	c.Advance(StatementMaxAge + time.Minute)
	_, err := approve(s, rec, osActor(alice.signed(t, approval(rec, now))))
	wantRefusal(t, err, RefusedSignatureInvalid, "more than 15m0s ago")
	// A statement signed before the proposal existed was not signed for it.
	late := submitHigh(t, s, c, "trust-forged-003")
	st := approval(late, now)
	_, err = approve(s, late, osActor(bob.signed(t, st)))
	wantRefusal(t, err, RefusedSignatureInvalid, "before the proposal was made")
	if kept, _ := s.Signatures(ctx, rec.ApprovalID); len(kept) != 0 {
		t.Fatalf("refused signatures kept: %+v", kept)
	}
	db := rawDB(t, s.DSN())
	if n := countAudit(t, db, `approval_id = ? AND outcome = 'refused' AND reason = ?`, rec.ApprovalID, RefusedSignatureInvalid); n != len(cases) {
		t.Fatalf("%d signature_invalid refusals audited, want %d", n, len(cases))
	}
	// The submitting person's key, whatever the proposal's requester says.
	dave := newKey(t, "dave")
	ts2 := trustOf(t, nil, dave.line(), alice.line())
	s2 := openTrusted(t, tempDB(t), c, ts2)
	p := proposal("trust-forged-004", "systemctl stop postgresql", model.RiskHigh, c.Now(), time.Hour)
	if err := s2.Submit(ctx, p, model.Actor{Surface: model.SurfaceRunner, Name: "dave@laptop", Person: "dave"}); err != nil {
		t.Fatal(err)
	}
	r4, _ := s2.Get(ctx, p.ApprovalID)
	_, err = approve(s2, r4, osActor(dave.signed(t, approval(r4, c.Now()))))
	wantRefusal(t, err, RefusedSelfApproval, "dave")
	if _, err := approve(s2, r4, osActor(alice.signed(t, approval(r4, c.Now())))); err != nil {
		t.Fatal(err)
	}
}

// Under a two-person policy two principals are needed: two keys of one
// principal count once, the OS user counts for nothing, and consumed_by
// names the signers.
func TestTrustQuorumByPrincipal(t *testing.T) {
	carol, alice, bob1, bob2 := newKey(t, "carol"), newKey(t, "alice"), newKey(t, "bob"), newKey(t, "bob")
	ts := trustOf(t, []string{"carol"}, carol.line(), alice.line(), bob1.line(), bob2.line())
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)
	src := highNeeds(2)
	setSigned(t, s, carol, src, c.Now())
	rec := submitHigh(t, s, c, "trust-quorum-001")

	_, err := approve(s, rec, osActor(bob1.signed(t, approval(rec, c.Now()))))
	v := wantVote(t, err, 1, 1)
	if v.Quorum.Policy == nil || v.Quorum.Policy.SignedBy != "carol" {
		t.Fatalf("the vote's policy: %+v", v.Quorum.Policy)
	}
	_, err = approve(s, rec, osActor(bob2.signed(t, approval(rec, c.Now()))))
	wantRefusal(t, err, RefusedDuplicateApprover, "bob")
	q, err := s.Quorum(ctx, rec)
	if err != nil || q == nil || len(q.Votes) != 1 || q.Votes[0].Person != "bob" || q.Votes[0].Key != bob1.signer.Fingerprint() ||
		q.Policy.SignedBy != "carol" || q.Policy.SignedKey != carol.signer.Fingerprint() {
		t.Fatalf("quorum %+v %v", q, err)
	}
	kept, _ := s.Signatures(ctx, rec.ApprovalID)
	if len(kept) != 1 || kept[0].Event != EventVote || kept[0].Principal != "bob" {
		t.Fatalf("kept %+v", kept)
	}
	got, err := approve(s, rec, osActor(alice.signed(t, approval(rec, c.Now()))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.ConsumedBy, "bob (SHA256:") || !strings.Contains(got.ConsumedBy, "alice (SHA256:") || strings.Contains(got.ConsumedBy, "root") {
		t.Fatalf("consumed_by %q", got.ConsumedBy)
	}
	if kept, _ := s.Signatures(ctx, rec.ApprovalID); len(kept) != 2 || kept[1].Event != EventApprove || kept[1].Principal != "alice" {
		t.Fatalf("kept %+v", kept)
	}
}

// setSigned sets src as the policy, signed by k at time at.
func setSigned(t testing.TB, s *Store, k *tkey, src string, at time.Time) *PolicyVersion {
	t.Helper()
	v, err := trySetSigned(s, k.signed(t, policyStatement(src, at)), src)
	if err != nil {
		t.Fatalf("set policy: %v", err)
	}
	return v
}

func policyStatement(src string, at time.Time) trust.Statement {
	return trust.Statement{Decision: trust.DecisionPolicy, PolicySHA256: trust.SHA256Hex([]byte(src)), Time: at}
}

func trySetSigned(s *Store, sig *model.Signature, src string) (*PolicyVersion, error) {
	p, err := config.ParsePolicy("policy.yaml", []byte(src))
	if err != nil {
		return nil, err
	}
	v, _, err := s.SetPolicy(ctx, []byte(src), p, osActor(sig))
	return v, err
}

// A policy is set only with a policy signer's signature over its file; the
// store enforces the newest signed version, read from its signed file, and
// a version inserted or changed by hand (as the agent can) changes nothing.
func TestTrustPolicySigned(t *testing.T) {
	carol, alice, bob := newKey(t, "carol"), newKey(t, "alice"), newKey(t, "bob")
	ts := trustOf(t, []string{"carol"}, carol.line(), alice.line(), bob.line())
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)
	src := highNeeds(2)
	now := c.Now()

	_, err := trySetSigned(s, nil, src)
	wantRefusal(t, err, RefusedSignatureRequired, "policy signer", "the policy cannot be set")
	_, err = trySetSigned(s, alice.signed(t, policyStatement(src, now)), src)
	wantRefusal(t, err, RefusedNotPolicySigner, "alice is not a policy signer")
	_, err = trySetSigned(s, carol.signed(t, policyStatement(highNeeds(1), now)), src)
	wantRefusal(t, err, RefusedSignatureInvalid, "policy_sha256")
	_, err = trySetSigned(s, carol.signed(t, policyStatement(src, now.Add(-time.Hour))), src)
	wantRefusal(t, err, RefusedSignatureInvalid, "sign the policy again")
	st := policyStatement(src, now)
	st.Store = "sqlite:/elsewhere.db"
	_, err = trySetSigned(s, carol.signed(t, st), src)
	wantRefusal(t, err, RefusedSignatureInvalid, "signed for store")
	p1, _ := config.ParsePolicy("p", []byte(highNeeds(1)))
	if _, _, err := s.SetPolicy(ctx, []byte(src), p1, osActor(carol.signed(t, policyStatement(src, now)))); !errors.As(err, new(*model.ValidationError)) {
		t.Fatalf("rules other than the file's: %v", err)
	}
	if v, err := s.Policy(ctx); err != nil || v != nil {
		t.Fatalf("policy after refusals: %+v %v", v, err)
	}

	v1 := setSigned(t, s, carol, src, now)
	if v1.Version != 1 || v1.SignedBy != "carol" || !strings.HasPrefix(v1.SetBy, "carol (SHA256:") {
		t.Fatalf("v1 %+v", v1)
	}
	// The agent inserts a version of its own, then rewrites the signed
	// version's rules: neither changes what is enforced.
	db := rawDB(t, s.DSN())
	empty := "# nothing needs approval\n"
	mustExec(t, db, `INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by) VALUES (2, ?, ?, ?, ?, 'root@host via cli')`,
		sha256Hex([]byte(empty)), empty, `{"rules":[]}`, model.Epoch(now))
	mustExec(t, db, `UPDATE approve_tui_policy SET rules = '{"rules":[]}' WHERE version = 1`)
	cur, err := s.Policy(ctx)
	if err != nil || cur == nil || cur.Version != 1 || cur.SignedBy != "carol" || len(cur.Policy.Rules) != 1 {
		t.Fatalf("policy in force %+v %v", cur, err)
	}
	rec := submitHigh(t, s, c, "trust-policy-001")
	q, err := s.Quorum(ctx, rec)
	if err != nil || q == nil || q.Approvals != 2 || q.Policy.Version != 1 || !slices.Equal(q.Unsigned, []int64{2}) {
		t.Fatalf("quorum %+v %v", q, err)
	}
	_, err = approve(s, rec, osActor(alice.signed(t, approval(rec, c.Now()))))
	wantVote(t, err, 1, 1)
	// A policy signed by a policy signer, copied onto the agent's row, is
	// not the agent's to re-date: re-inserting the older file as a newer
	// version does not bring it back over a newer signed one.
	c.Advance(time.Minute)
	v3 := setSigned(t, s, carol, highNeeds(3), c.Now())
	if v3.Version != 3 {
		t.Fatalf("v3 %+v", v3)
	}
	mustExec(t, db, `INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by) SELECT 4, sha256, source, rules, set_at, set_by FROM approve_tui_policy WHERE version = 1`)
	if cur, err := s.Policy(ctx); err != nil || cur.Version != 3 {
		t.Fatalf("policy in force after a replay: %+v %v", cur, err)
	}
	// Changing the signed file itself breaks its signature: that is not
	// taken for an older policy, nor for none.
	mustExec(t, db, `UPDATE approve_tui_policy SET source = ? WHERE version = 3`, empty)
	_, err = approve(s, rec, osActor(bob.signed(t, approval(rec, c.Now()))))
	wantRefusal(t, err, RefusedPolicyUnreadable, "removed or changed outside approve-tui")
	if err := s.PolicyAsks(ctx, &PolicyRecord{Ref: "x", Command: "systemctl stop postgresql", Risk: model.RiskHigh, Decision: PolicyAllow}); !errors.As(err, new(*RefusedError)) {
		t.Fatalf("policy asks with the signed policy gone: %v", err)
	}
	// Set again by a policy signer, it holds.
	c.Advance(time.Minute)
	setSigned(t, s, carol, highNeeds(2), c.Now())
	_, err = approve(s, rec, osActor(bob.signed(t, approval(rec, c.Now()))))
	if err != nil {
		t.Fatalf("after the policy was set again: %v", err)
	}
}

// With no signed policy, one valid signature approves: a policy inserted
// by hand, asking for two, is not in force.
func TestTrustUnsignedPolicyIgnored(t *testing.T) {
	alice := newKey(t, "alice")
	ts := trustOf(t, []string{"carol"}, alice.line())
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)
	db := rawDB(t, s.DSN())
	src := "policy:\n  - match: {}\n    approvals: 5\n"
	mustExec(t, db, `INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by) VALUES (1, ?, ?, '{"rules":[]}', 1, 'x')`,
		sha256Hex([]byte(src)), src)
	if v, err := s.Policy(ctx); err != nil || v != nil {
		t.Fatalf("an unsigned policy in force: %+v %v", v, err)
	}
	rec := submitHigh(t, s, c, "trust-nopolicy-01")
	if _, err := approve(s, rec, osActor(alice.signed(t, approval(rec, c.Now())))); err != nil {
		t.Fatal(err)
	}
}

// A signed deny is verified; an unsigned one is allowed and says so.
func TestTrustDeny(t *testing.T) {
	alice := newKey(t, "alice")
	ts := trustOf(t, nil, alice.line())
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)
	rec := submitHigh(t, s, c, "trust-deny-00001")
	_, err := s.Deny(ctx, rec.ApprovalID, osActor(alice.signed(t, approval(rec, c.Now()))), "")
	wantRefusal(t, err, RefusedSignatureInvalid, "signed as approve, and here only deny counts", "cannot be denied")
	st := approval(rec, c.Now())
	st.Decision = trust.DecisionDeny
	got, err := s.Deny(ctx, rec.ApprovalID, osActor(alice.signed(t, st)), "no")
	if err != nil || !strings.HasPrefix(got.ConsumedBy, "alice (SHA256:") {
		t.Fatalf("signed deny: %+v %v", got, err)
	}
	if kept, _ := s.Signatures(ctx, rec.ApprovalID); len(kept) != 1 || kept[0].Event != EventDeny {
		t.Fatalf("kept %+v", kept)
	}
	r2 := submitHigh(t, s, c, "trust-deny-00002")
	if got, err := s.Deny(ctx, r2.ApprovalID, osActor(nil), "withdrawn"); err != nil || got.ConsumedBy != "root@shared-host via cli" {
		t.Fatalf("unsigned deny: %+v %v", got, err)
	}
	db := rawDB(t, s.DSN())
	if n := countAudit(t, db, `approval_id = ? AND event = 'deny' AND outcome = 'ok' AND detail LIKE '%"unsigned":true%'`, r2.ApprovalID); n != 1 {
		t.Fatal("the unsigned deny is not marked unsigned")
	}
}

// A key held by a real ssh-agent signs; the store takes it, and the real
// ssh-keygen -Y verify accepts the signature the store kept.
func TestTrustRealAgentAndOracle(t *testing.T) {
	for _, tool := range []string{"ssh-agent", "ssh-add", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (package openssh-client): the real agent and the OpenSSH oracle are needed", tool)
		}
	}
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice@laptop", "-f", keyPath).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	sock := startAgent(t, dir)
	add := exec.Command("ssh-add", keyPath)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v\n%s", err, out)
	}
	signer, err := trust.DialAgent(sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer signer.Close()
	pub, err := os.ReadFile(keyPath + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(pub))
	ts := trustOf(t, nil, "alice "+f[0]+" "+f[1])
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)
	rec := submitHigh(t, s, c, "trust-agent-0001")
	sig, err := ts.SignDecision(signer, approval(rec, time.Time{}), c.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := approve(s, rec, osActor(sig)); err != nil {
		t.Fatal(err)
	}
	kept, err := s.Signatures(ctx, rec.ApprovalID)
	if err != nil || len(kept) != 1 {
		t.Fatalf("kept %+v %v", kept, err)
	}
	sigPath := filepath.Join(dir, "approval.sig")
	if err := os.WriteFile(sigPath, []byte(kept[0].Armored), 0o600); err != nil {
		t.Fatal(err)
	}
	verify := exec.Command("ssh-keygen", "-Y", "verify", "-f", ts.Path, "-I", kept[0].Principal, "-n", trust.Namespace, "-s", sigPath)
	verify.Stdin = bytes.NewReader(kept[0].Statement)
	if out, err := verify.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify refused the kept signature: %v\n%s", err, out)
	}
	// The oracle refuses the same signature over other bytes.
	verify = exec.Command("ssh-keygen", "-Y", "verify", "-f", ts.Path, "-I", "alice", "-n", trust.Namespace, "-s", sigPath)
	verify.Stdin = strings.NewReader(strings.Replace(string(kept[0].Statement), "risk=high", "risk=low", 1))
	if out, err := verify.CombinedOutput(); err == nil {
		t.Fatalf("ssh-keygen -Y verify accepted other bytes:\n%s", out)
	}
}

// startAgent runs a real ssh-agent on a socket in dir until the test ends.
func startAgent(t testing.TB, dir string) string {
	t.Helper()
	sock := filepath.Join(dir, "agent.sock")
	sshtest.StartAgent(t, sock)
	return sock
}

// A copy carries the signatures: the signed policy is in force in the copy
// (the same store identity configured), and the approvals' signatures are
// there to verify. SQLite to the backend under test and back.
func TestTrustCopyCarriesSignatures(t *testing.T) {
	carol, alice, bob := newKey(t, "carol"), newKey(t, "alice"), newKey(t, "bob")
	ts := trustOf(t, []string{"carol"}, carol.line(), alice.line(), bob.line())
	c := newClock()
	src := openTrusted(t, filepath.Join(t.TempDir(), "from.db"), c, ts)
	setSigned(t, src, carol, highNeeds(2), c.Now())
	rec := submitHigh(t, src, c, "trust-copy-00001")
	_, err := approve(src, rec, osActor(alice.signed(t, approval(rec, c.Now()))))
	wantVote(t, err, 1, 1)
	want, _ := src.Signatures(ctx, rec.ApprovalID)
	wantPol, _ := src.Signatures(ctx, PolicyRef)
	from := src
	for i, to := range []string{tempDB(t), filepath.Join(t.TempDir(), "back.db")} {
		dst := openTrusted(t, to, c, ts)
		res, err := Copy(ctx, from, dst, CopyOptions{}, alice0())
		if err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		if res.Signatures != 2 {
			t.Fatalf("copy %d: %d signatures copied", i, res.Signatures)
		}
		got, _ := dst.Signatures(ctx, rec.ApprovalID)
		gotPol, _ := dst.Signatures(ctx, PolicyRef)
		if len(got) != 1 || len(gotPol) != 1 || got[0].Armored != want[0].Armored || !bytes.Equal(got[0].Statement, want[0].Statement) ||
			gotPol[0].Armored != wantPol[0].Armored {
			t.Fatalf("copy %d: signatures %+v %+v", i, got, gotPol)
		}
		if pv, err := dst.Policy(ctx); err != nil || pv == nil || pv.SignedBy != "carol" {
			t.Fatalf("copy %d: policy %+v %v", i, pv, err)
		}
		from = dst
	}
	r, _ := from.Get(ctx, rec.ApprovalID)
	if _, err := approve(from, r, osActor(bob.signed(t, approval(r, c.Now())))); err != nil {
		t.Fatalf("the quorum completed in the copy: %v", err)
	}
	if kept, _ := from.Signatures(ctx, rec.ApprovalID); len(kept) != 2 || kept[1].Seq <= kept[0].Seq {
		t.Fatalf("kept after the copy %+v", kept)
	}
}

func alice0() model.Actor {
	return model.Actor{Surface: model.SurfaceCLI, Name: "root@ops-1", Person: "root"}
}

// A vote row written by hand (as the agent can, with sqlite3 or psql)
// counts for nothing under trust required: not in the quorum the console
// shows, not toward the consume, and it is voided when a real vote comes.
func TestTrustForgedVoteRowIgnored(t *testing.T) {
	carol, alice, bob := newKey(t, "carol"), newKey(t, "alice"), newKey(t, "bob")
	ts := trustOf(t, []string{"carol"}, carol.line(), alice.line(), bob.line())
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)
	setSigned(t, s, carol, highNeeds(2), c.Now())
	rec := submitHigh(t, s, c, "trust-forgedvote1")
	db := rawDB(t, s.DSN())
	mustExec(t, db, `INSERT INTO approve_tui_votes (approval_id, actor, surface, person, key_fp, payload_sha256, at, ended)
		VALUES (?, 'bob (SHA256:x) via cli', 'cli', 'bob', ?, ?, ?, '')`, rec.ApprovalID, bob.signer.Fingerprint(), rec.PayloadSHA256, model.Epoch(c.Now()))
	if q, err := s.Quorum(ctx, rec); err != nil || q == nil || len(q.Votes) != 0 || q.Short != 2 {
		t.Fatalf("the console's quorum counts a forged vote: %+v %v", q, err)
	}
	// A signature row copied from another proposal does not make it count.
	other := submitHigh(t, s, c, "trust-forgedvote2")
	_, err := approve(s, other, osActor(bob.signed(t, approval(other, c.Now()))))
	wantVote(t, err, 1, 1)
	mustExec(t, db, `INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at)
		SELECT ?, event, principal, key_fp, statement, signature, at FROM approve_tui_signatures WHERE approval_id = ?`, rec.ApprovalID, other.ApprovalID)
	if q, err := s.Quorum(ctx, rec); err != nil || len(q.Votes) != 0 {
		t.Fatalf("a copied signature counts: %+v %v", q, err)
	}
	_, err = approve(s, rec, osActor(alice.signed(t, approval(rec, c.Now()))))
	wantVote(t, err, 1, 1)
	if n := countAudit(t, db, `approval_id = ? AND event = ? AND reason = ?`, rec.ApprovalID, EventVoteVoid, VoteUnsigned); n != 1 {
		t.Fatalf("%d forged votes voided", n)
	}
	// The real bob still votes, and completes the quorum.
	if _, err := approve(s, rec, osActor(bob.signed(t, approval(rec, c.Now())))); err != nil {
		t.Fatal(err)
	}
}

// The phrase gate verifies the signature before it arms or counts: an
// unsigned phrase approval is refused and leaves the row as it was; a
// signed one consumes, for the signer, and its signature is kept.
func TestTrustPhraseGate(t *testing.T) {
	alice := newKey(t, "alice")
	ts := trustOf(t, nil, alice.line())
	path := tempDB(t)
	openAt(t, path, newClock()).Close()
	py := newTier2Py(t, path)
	py.run("upgrade")
	c := newClock()
	s := openTrusted(t, path, c, ts)
	p := proposal("trust-phrase-001", "systemctl restart vaultwarden", model.RiskHigh, c.Now(), time.Hour)
	p.RequiresTextConfirm, p.Verb, p.Target, p.Nonce = true, "restart", "vaultwarden", "0427"
	mustSubmit(t, s, p)
	rec, err := s.Get(ctx, p.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	phrase := "RESTART VAULTWARDEN 0427"
	_, err = s.ConsumePhrase(ctx, rec.ApprovalID, phrase, rec.PayloadSHA256, PhraseOptions{}, osActor(nil))
	wantRefusal(t, err, RefusedSignatureRequired)
	if m := py.get(rec.ApprovalID); m["status"] != "pending" || m["invalid_attempts"].(float64) != 0 {
		t.Fatalf("an unsigned attempt armed or counted: %v", m)
	}
	st := approval(rec, c.Now())
	st.Risk = trust.RiskLow
	_, err = s.ConsumePhrase(ctx, rec.ApprovalID, phrase, rec.PayloadSHA256, PhraseOptions{}, osActor(alice.signed(t, st)))
	wantRefusal(t, err, RefusedSignatureInvalid, "risk")
	got, err := s.ConsumePhrase(ctx, rec.ApprovalID, phrase, rec.PayloadSHA256, PhraseOptions{}, osActor(alice.signed(t, approval(rec, c.Now()))))
	if err != nil || !strings.HasPrefix(got.ConsumedBy, "alice (SHA256:") {
		t.Fatalf("signed phrase approval: %+v %v", got, err)
	}
	if kept, _ := s.Signatures(ctx, rec.ApprovalID); len(kept) != 1 || kept[0].Event != EventApprove || kept[0].Principal != "alice" {
		t.Fatalf("kept %+v", kept)
	}
	// Hermes' tier-2 level is signed as it is pinned.
	p2 := proposal("trust-phrase-002", "systemctl stop vaultwarden", model.RiskTier2, c.Now(), time.Hour)
	p2.RequiresTextConfirm, p2.Verb, p2.Target, p2.Nonce = true, "stop", "vaultwarden", "0428"
	mustSubmit(t, s, p2)
	rec2, err := s.Get(ctx, p2.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsumePhrase(ctx, rec2.ApprovalID, "STOP VAULTWARDEN 0428", rec2.PayloadSHA256, PhraseOptions{},
		osActor(alice.signed(t, approval(rec2, c.Now())))); err != nil {
		t.Fatalf("signed tier-2 approval: %v", err)
	}
}

// A proposal is pinned to the signed policy in force at its submit: a
// lower one signed later does not ask less of it, and a version inserted
// by hand after the signed one is not what it is pinned to.
func TestTrustPinnedToSignedPolicy(t *testing.T) {
	carol, alice, bob := newKey(t, "carol"), newKey(t, "alice"), newKey(t, "bob")
	ts := trustOf(t, []string{"carol"}, carol.line(), alice.line(), bob.line())
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)
	setSigned(t, s, carol, highNeeds(2), c.Now())
	db := rawDB(t, s.DSN())
	empty := "# nothing\n"
	mustExec(t, db, `INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by) VALUES (2, ?, ?, '{"rules":[]}', 1, 'x')`,
		sha256Hex([]byte(empty)), empty)
	rec := submitHigh(t, s, c, "trust-pinned-0001")
	if n := countAudit(t, db, `approval_id = ? AND event = 'submit' AND detail LIKE '%"policy_version":1%'`, rec.ApprovalID); n != 1 {
		t.Fatal("the submit is not pinned to the signed version")
	}
	c.Advance(time.Minute)
	setSigned(t, s, carol, highNeeds(1), c.Now())
	q, err := s.Quorum(ctx, rec)
	if err != nil || q == nil || q.Approvals != 2 || !slices.Contains(q.Versions, 1) || q.Policy.SignedBy != "carol" {
		t.Fatalf("quorum %+v %v", q, err)
	}
	_, err = approve(s, rec, osActor(alice.signed(t, approval(rec, c.Now()))))
	wantVote(t, err, 1, 1)
	if _, err := approve(s, rec, osActor(bob.signed(t, approval(rec, c.Now())))); err != nil {
		t.Fatal(err)
	}
}

// A key whose trust line has expired (valid-before) decides nothing, and
// a required trust configuration without a trust file approves nothing.
func TestTrustExpiredKeyAndNoTrustFile(t *testing.T) {
	alice, bob := newKey(t, "alice"), newKey(t, "bob")
	c := newClock() // 2026-05-28
	ts := trustOf(t, nil, `alice valid-before="20260501Z" `+strings.TrimPrefix(alice.line(), "alice "), bob.line())
	s := openTrusted(t, tempDB(t), c, ts)
	rec := submitHigh(t, s, c, "trust-expired-001")
	_, err := approve(s, rec, osActor(alice.signed(t, approval(rec, c.Now()))))
	wantRefusal(t, err, RefusedSignatureInvalid, "expired")
	if _, err := approve(s, rec, osActor(bob.signed(t, approval(rec, c.Now())))); err != nil {
		t.Fatal(err)
	}

	none := &trust.Settings{Mode: trust.ModeRequired, Store: testStore}
	s2 := openTrusted(t, tempDB(t), c, none)
	r2 := submitHigh(t, s2, c, "trust-nofile-0001")
	_, err = approve(s2, r2, osActor(bob.signed(t, approval(r2, c.Now()))))
	wantRefusal(t, err, RefusedSignatureInvalid, "no trust file")
	wantPending(t, s2, r2.ApprovalID)
}

// Two operators, each with a real ssh-agent of their own, approve under a
// two-person policy that a third set with a key file: the second signature
// consumes, and the real ssh-keygen -Y verify accepts all three kept
// signatures against the trust file.
func TestTrustTwoAgentsTwoPersonRule(t *testing.T) {
	for _, tool := range []string{"ssh-agent", "ssh-add", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (package openssh-client): real agents and the OpenSSH oracle are needed", tool)
		}
	}
	dir := t.TempDir()
	keygen := func(name string) (path, line string) {
		path = filepath.Join(dir, name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name+"@desk", "-f", path).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
		pub, err := os.ReadFile(path + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(pub))
		return path, name + " " + f[0] + " " + f[1]
	}
	agentFor := func(name, key string) *trust.StatementSigner {
		home := filepath.Join(dir, name+"-agent")
		if err := os.Mkdir(home, 0o700); err != nil {
			t.Fatal(err)
		}
		sock := startAgent(t, home)
		add := exec.Command("ssh-add", key)
		add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("ssh-add: %v\n%s", err, out)
		}
		sg, err := trust.DialAgent(sock, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sg.Close() })
		return sg
	}
	carolKey, carolLine := keygen("carol")
	aliceKey, aliceLine := keygen("alice")
	bobKey, bobLine := keygen("bob")
	ts := trustOf(t, []string{"carol"}, carolLine, aliceLine, bobLine)
	c := newClock()
	s := openTrusted(t, tempDB(t), c, ts)

	carol, err := trust.KeyFileSigner(carolKey)
	if err != nil {
		t.Fatal(err)
	}
	src := highNeeds(2)
	psig, err := ts.SignDecision(carol, policyStatement(src, time.Time{}), c.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trySetSigned(s, psig, src); err != nil {
		t.Fatal(err)
	}
	rec := submitHigh(t, s, c, "trust-two-agents-1")
	for i, op := range []*trust.StatementSigner{agentFor("alice", aliceKey), agentFor("bob", bobKey)} {
		sig, err := ts.SignDecision(op, approval(rec, time.Time{}), c.Now())
		if err != nil {
			t.Fatal(err)
		}
		got, err := approve(s, rec, osActor(sig))
		if i == 0 {
			wantVote(t, err, 1, 1)
			continue
		}
		if err != nil || got.Status != model.StatusConsumed {
			t.Fatalf("second operator: %+v %v", got, err)
		}
	}
	kept, _ := s.Signatures(ctx, rec.ApprovalID)
	pol, _ := s.Signatures(ctx, PolicyRef)
	all := append(kept, pol...)
	if len(all) != 3 {
		t.Fatalf("kept %+v", all)
	}
	for i, k := range all {
		sigPath := filepath.Join(dir, "kept.sig")
		if err := os.WriteFile(sigPath, []byte(k.Armored), 0o600); err != nil {
			t.Fatal(err)
		}
		verify := exec.Command("ssh-keygen", "-Y", "verify", "-f", ts.Path, "-I", k.Principal, "-n", trust.Namespace, "-s", sigPath)
		verify.Stdin = bytes.NewReader(k.Statement)
		if out, err := verify.CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen -Y verify refused kept signature %d (%s): %v\n%s", i, k.Principal, err, out)
		}
	}
}
