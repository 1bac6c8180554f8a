package agent

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/internal/sshtest"
	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// A trust rig: real ed25519 keys made by ssh-keygen, a trust file naming
// alice, bob and carol (carol may sign policies), and the settings the
// agent side runs with.
type trustRig struct {
	dir     string
	set     *trust.Settings
	signers map[string]*trust.StatementSigner
	log     *syncbuf.Buffer // the last trusted run's log
	// policy is the SHA-256 of the last policy a policy signer set here:
	// what an operator's surface holds in force, named by approvals.
	policy string
}

func needSSHKeygen(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed (package openssh-client): real keys are needed for these tests")
	}
}

// keyPair makes an ed25519 key with the real ssh-keygen and returns its
// signer and its public line.
func keyPair(t testing.TB, dir, name string) (*trust.StatementSigner, string) {
	t.Helper()
	path := sshtest.Keygen(t, filepath.Join(dir, name), "ed25519", name+"@test")
	sg, err := trust.KeyFileSigner(path)
	if err != nil {
		t.Fatal(err)
	}
	return sg, sshtest.PublicLine(t, path)
}

// newTrustRig makes keys for names (each its own principal) and a trust
// file listing them; store is the identity statements name.
func newTrustRig(t testing.TB, store string, names ...string) *trustRig {
	t.Helper()
	needSSHKeygen(t)
	r := &trustRig{dir: t.TempDir(), signers: map[string]*trust.StatementSigner{}}
	var lines []string
	for _, n := range names {
		sg, pub := keyPair(t, r.dir, n)
		r.signers[n] = sg
		lines = append(lines, n+" "+pub)
	}
	path := filepath.Join(r.dir, "allowed_signers")
	text := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	as, err := trust.ParseAllowedSigners(path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	r.set = &trust.Settings{Mode: trust.ModeRequired, Path: path, Signers: as, PolicySigners: []string{"carol"}, Store: store}
	return r
}

// sign is name's signed approval of rec, under set (its store).
func (r *trustRig) sign(t testing.TB, set *trust.Settings, name string, rec *storage.Record) *model.Signature {
	t.Helper()
	sig, err := set.SignDecision(r.signers[name], trust.Statement{Decision: trust.DecisionApprove, ApprovalID: rec.ApprovalID,
		PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel), PolicySHA256: r.policy}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func (r *trustRig) actor(name string, sig *model.Signature) model.Actor {
	return model.Actor{Surface: model.SurfaceCLI, Name: name + "@desk", Person: name, Key: sig.Key, Signature: sig}
}

// twoPersonPolicy is a policy file asking two approvers for everything.
const twoPersonPolicy = "groups:\n  dba: [alice, bob]\npolicy:\n  - match: {risk: low}\n    approvals: 2\n"

// laxPolicy asks one approver for high risk.
const laxPolicy = "policy:\n  - match: {risk: high}\n    approvals: 1\n"

// laxThenTwoPerson has carol sign the lax policy, then, a second later
// (statements are dated to the second), the two-person one: the lax one is
// the older signed policy a rollback would bring back.
func (r *trustRig) laxThenTwoPerson(t testing.TB, o *storage.Store) {
	t.Helper()
	r.setSignedPolicy(t, o, "carol", laxPolicy)
	time.Sleep(1100 * time.Millisecond)
	r.setSignedPolicy(t, o, "carol", twoPersonPolicy)
}

// setSignedPolicy puts source in force, signed by signer (its principal
// must be a policy signer for it to count).
func (r *trustRig) setSignedPolicy(t testing.TB, o *storage.Store, signer, source string) {
	t.Helper()
	p, err := config.ParsePolicy("policy.yaml", []byte(source))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(source))
	sig, err := r.set.SignDecision(r.signers[signer], trust.Statement{Decision: trust.DecisionPolicy, PolicySHA256: hex.EncodeToString(sum[:])}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.SetPolicy(context.Background(), []byte(source), p, r.actor(signer, sig)); err != nil {
		t.Fatal(err)
	}
	if r.set.PolicySigner(signer) {
		r.policy = hex.EncodeToString(sum[:])
	}
}

// rawDB is the store's file opened as the agent's user would, with
// sqlite3: no approve-tui in the way.
func rawDB(t testing.TB, o *storage.Store) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+o.Path()+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// forgeConsume marks id consumed the way Hermes' own /approve does, with
// SQL, and stores sigs as signature rows beside it.
func forgeConsume(t testing.TB, db *sql.DB, id string, sigs ...*model.Signature) {
	t.Helper()
	for _, s := range sigs {
		if _, err := db.Exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES (?, 'approve', ?, ?, ?, ?, ?)`,
			id, s.Principal, s.Key, string(s.Statement), s.Armored, float64(time.Now().Unix())); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`UPDATE gateway_approvals SET status = 'consumed', consumed_at = ?, consumed_by = 'hermes' WHERE approval_id = ?`,
		float64(time.Now().Unix()), id); err != nil {
		t.Fatal(err)
	}
}

// trustedRun starts `run` of a command that removes a directory, under
// the rig's trust settings and a two-person policy carol signed, and
// returns the pending proposal once run waits on it.
func trustedRun(t *testing.T, r *trustRig, s, o *storage.Store, before ...func()) (<-chan runOut, *storage.Record, string) {
	t.Helper()
	r.setSignedPolicy(t, o, "carol", twoPersonPolicy)
	for _, f := range before {
		f()
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "build")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	req := runReq(dir, "rm", "-rf", target)
	req.Trust = r.set
	r.log = req.Log.(*syncbuf.Buffer)
	ch := startRun(s, req)
	return ch, awaitWaiting(t, o), target
}

func wantRefused(t *testing.T, o *storage.Store, ch <-chan runOut, id, target string, words ...string) {
	t.Helper()
	out := recvRun(t, ch)
	if out.err != nil || out.res.Outcome != RunBlocked || out.res.ExitCode != ExitBlocked {
		t.Fatalf("run: %+v %v, want blocked_after_consume, exit 14", out.res, out.err)
	}
	t.Log(out.res.Message)
	for _, w := range words {
		if !strings.Contains(out.res.Message, w) {
			t.Errorf("message %q does not say %q", out.res.Message, w)
		}
	}
	if !exists(target) {
		t.Fatal("the command ran")
	}
	rec := get(t, o, id)
	if rec.ExecutionStatus != model.ExecBlockedAfterConsume || rec.ExecutionReason != ReasonSignatureInvalid {
		t.Fatalf("recorded %s %q, want blocked_after_consume signature_invalid", rec.ExecutionStatus, rec.ExecutionReason)
	}
	found := false
	for _, e := range auditOf(t, o, id) {
		found = found || strings.HasPrefix(e, "report:signatures: ")
	}
	if !found {
		t.Fatalf("no audit event says why: %v", auditOf(t, o, id))
	}
}

// Two operators sign under a two-person policy: the command runs.
func TestRunTrustedTwoSignaturesRun(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	ch, rec, target := trustedRun(t, r, s, o)
	var v *storage.VoteRecorded
	if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, r.actor("alice", r.sign(t, r.set, "alice", rec))); !errors.As(err, &v) {
		t.Fatalf("alice: %v", err)
	}
	if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, r.actor("bob", r.sign(t, r.set, "bob", rec))); err != nil {
		t.Fatalf("bob: %v", err)
	}
	out := recvRun(t, ch)
	if out.err != nil || out.res.Outcome != RunRan {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if exists(target) {
		t.Fatal("the approved command did not run")
	}
	if log := r.log.String(); !strings.Contains(log, rec.ApprovalID+": signed by alice, bob (2 of 2)") {
		t.Fatalf("run's log does not name the signers: %s", log)
	}
}

// Each forgery of the agent's own user is refused where the command runs.
func TestRunTrustedForgeriesRefused(t *testing.T) {
	t.Run("unsigned approval, consumed in SQL as Hermes' /approve does", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
		ch, rec, target := trustedRun(t, r, s, o)
		forgeConsume(t, rawDB(t, o), rec.ApprovalID)
		wantRefused(t, o, ch, rec.ApprovalID, target, "not signed", "Hermes' own /approve")
	})
	t.Run("a vote row for bob written with sqlite3", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
		ch, rec, target := trustedRun(t, r, s, o)
		var v *storage.VoteRecorded
		if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, r.actor("alice", r.sign(t, r.set, "alice", rec))); !errors.As(err, &v) {
			t.Fatalf("alice: %v", err)
		}
		db := rawDB(t, o)
		if _, err := db.Exec(`INSERT INTO approve_tui_votes (approval_id, actor, surface, person, key_fp, payload_sha256, at) VALUES (?, 'bob@desk', 'cli', 'bob', '', ?, ?)`,
			rec.ApprovalID, rec.PayloadSHA256, float64(time.Now().Unix())); err != nil {
			t.Fatal(err)
		}
		forgeConsume(t, db, rec.ApprovalID)
		wantRefused(t, o, ch, rec.ApprovalID, target, "not enough valid signatures: 1 of 2")
	})
	t.Run("a policy row INSERTed with no rules", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
		db := rawDB(t, o)
		ch, rec, target := trustedRun(t, r, s, o, func() {
			if _, err := db.Exec(`INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by)
			SELECT version + 1, ?, '', ?, set_at, set_by FROM approve_tui_policy ORDER BY version DESC LIMIT 1`,
				fmt.Sprintf("%x", sha256.Sum256(nil)), string((&policy.Policy{}).Encode())); err != nil {
				t.Fatal(err)
			}
		})
		// The store now reads no rule: alice alone completes it.
		if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, r.actor("alice", r.sign(t, r.set, "alice", rec))); err != nil {
			t.Logf("alice (the store refused on its own): %v", err)
			forgeConsume(t, db, rec.ApprovalID)
		}
		wantRefused(t, o, ch, rec.ApprovalID, target, "1 of 2", "signed by carol")
	})
	t.Run("two self-made keys not in the trust file", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
		ch, rec, target := trustedRun(t, r, s, o)
		// Keys of their own, listed in a trust file of their own under
		// the colleagues' names.
		mallory := newTrustRig(t, r.set.Store, "alice", "bob")
		forgeConsume(t, rawDB(t, o), rec.ApprovalID, mallory.sign(t, mallory.set, "alice", rec), mallory.sign(t, mallory.set, "bob", rec))
		wantRefused(t, o, ch, rec.ApprovalID, target, "unknown key", "0 of 2")
	})
	t.Run("signatures copied from another proposal", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
		other := submitDraft(t, o, xDraft(t))
		orec := get(t, o, other)
		a, b := r.sign(t, r.set, "alice", orec), r.sign(t, r.set, "bob", orec)
		if _, err := o.Deny(context.Background(), other, operator, "not this one"); err != nil {
			t.Fatal(err)
		}
		ch, rec, target := trustedRun(t, r, s, o)
		forgeConsume(t, rawDB(t, o), rec.ApprovalID, a, b)
		wantRefused(t, o, ch, rec.ApprovalID, target, "signed for something else", "signed for id")
	})
	t.Run("signatures made for another store", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
		ch, rec, target := trustedRun(t, r, s, o)
		elsewhere := *r.set
		elsewhere.Store = "sqlite:/srv/other/state.db"
		forgeConsume(t, rawDB(t, o), rec.ApprovalID, r.sign(t, &elsewhere, "alice", rec), r.sign(t, &elsewhere, "bob", rec))
		wantRefused(t, o, ch, rec.ApprovalID, target, "signed for store")
	})
	t.Run("the payload rewritten after it was signed", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
		ch, rec, target := trustedRun(t, r, s, o)
		a, b := r.sign(t, r.set, "alice", rec), r.sign(t, r.set, "bob", rec)
		db := rawDB(t, o)
		// The context the operators read is rewritten, and the submit
		// record with it (so the row does not read as tampered).
		// (in one transaction: the runner polling in between would see
		// the row tampered, and refuse it for that)
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`UPDATE gateway_approvals SET payload_json = replace(payload_json, 'run:test', 'run:nothing-to-see') WHERE approval_id = ?`, rec.ApprovalID); err != nil {
			t.Fatal(err)
		}
		var payload string
		if err := tx.QueryRow(`SELECT payload_json FROM gateway_approvals WHERE approval_id = ?`, rec.ApprovalID).Scan(&payload); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(payload))
		if _, err := tx.Exec(`UPDATE approve_tui_audit SET detail = replace(detail, ?, ?) WHERE approval_id = ? AND event = 'submit'`,
			rec.PayloadSHA256, hex.EncodeToString(sum[:]), rec.ApprovalID); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if now := get(t, o, rec.ApprovalID); now.PayloadSHA256 == rec.PayloadSHA256 || now.Corrupt != "" {
			t.Fatalf("payload not rewritten cleanly: %q", now.Corrupt)
		}
		forgeConsume(t, db, rec.ApprovalID, a, b)
		wantRefused(t, o, ch, rec.ApprovalID, target, "signed for payload_sha256")
	})
	t.Run("the requester's own key", func(t *testing.T) {
		me := RequesterNames()
		if len(me) == 0 {
			t.Skip("this user has no name in the user database")
		}
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", me[0], "carol")
		ch, rec, target := trustedRun(t, r, s, o)
		forgeConsume(t, rawDB(t, o), rec.ApprovalID, r.sign(t, r.set, "alice", rec), r.sign(t, r.set, me[0], rec))
		wantRefused(t, o, ch, rec.ApprovalID, target, "is the requester", "1 of 2")
	})
	t.Run("the requester's own key under another principal (trust: users)", func(t *testing.T) {
		me := RequesterNames()
		if len(me) == 0 {
			t.Skip("this user has no name in the user database")
		}
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "asmith", "carol")
		r.set.Users = map[string]string{me[0]: "asmith"}
		ch, rec, target := trustedRun(t, r, s, o)
		forgeConsume(t, rawDB(t, o), rec.ApprovalID, r.sign(t, r.set, "alice", rec), r.sign(t, r.set, "asmith", rec))
		wantRefused(t, o, ch, rec.ApprovalID, target, "is the requester", "1 of 2")
	})
	t.Run("one person's signature twice", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
		ch, rec, target := trustedRun(t, r, s, o)
		forgeConsume(t, rawDB(t, o), rec.ApprovalID, r.sign(t, r.set, "alice", rec), r.sign(t, r.set, "alice", rec))
		wantRefused(t, o, ch, rec.ApprovalID, target, "1 of 2", "counted once")
	})
	t.Run("a policy signed by someone who may not sign policies", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
		ch, rec, target := trustedRun(t, r, s, o)
		// alice signs a laxer policy and puts it in force (as the store on
		// main still lets her): it is not a policy for the verifier.
		r.setSignedPolicy(t, o, "alice", "policy:\n  - match: {risk: high}\n    approvals: 1\n")
		forgeConsume(t, rawDB(t, o), rec.ApprovalID, r.sign(t, r.set, "bob", rec))
		wantRefused(t, o, ch, rec.ApprovalID, target, "1 of 2", "signed by carol")
	})
}

// Without a signed policy one valid signature is enough; unsigned policy
// rows change nothing either way.
func TestVerifyOneSignatureWithoutSignedPolicy(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	forgeConsume(t, rawDB(t, o), id, r.sign(t, r.set, "alice", rec))
	chk, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{Requesters: []string{"agent"}})
	if err != nil || len(chk.Principals) != 1 || chk.Need != 1 || chk.Policy != "" {
		t.Fatalf("one signature, no signed policy: %+v %v", chk, err)
	}
	if w := chk.Words(); w != "signed by alice (1 of 1)" {
		t.Fatalf("words %q", w)
	}
	// Off: nothing is checked.
	if chk, err := VerifySignatures(context.Background(), nil, s, rec, Self{}); chk != nil || err != nil {
		t.Fatalf("off: %+v %v", chk, err)
	}
	off := *r.set
	off.Mode = trust.ModeOff
	if chk, err := VerifySignatures(context.Background(), &off, s, rec, Self{}); chk != nil || err != nil {
		t.Fatalf("mode off: %+v %v", chk, err)
	}
	// A process that does not know who it is counts nothing.
	if _, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{}); err == nil || !strings.Contains(err.Error(), "requester cannot be told") {
		t.Fatalf("no requester: %v", err)
	}
}

// The newest signed policy is the one signed last, whatever the version
// numbers say; one whose text is missing refuses.
func TestVerifySignedPolicyRollbackAndMissingText(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	r.laxThenTwoPerson(t, o)
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	db := rawDB(t, o)
	forgeConsume(t, db, id, r.sign(t, r.set, "alice", rec))
	self := Self{Requesters: []string{"agent"}}
	_, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self)
	var se *SignatureError
	if !errors.As(err, &se) || se.Have != 1 || se.Need != 2 {
		t.Fatalf("two-person policy in force: %v", err)
	}
	// The lax text inserted again as the newest version: still the
	// two-person policy, signed last.
	if _, err := db.Exec(`INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by) VALUES (3, ?, ?, ?, 0, 'x')`,
		fmt.Sprintf("%x", sha256.Sum256([]byte(laxPolicy))), laxPolicy, string((&policy.Policy{}).Encode())); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); !errors.As(err, &se) || se.Need != 2 {
		t.Fatalf("rollback by re-insert: %v", err)
	}
	// The signed text deleted: the policy cannot be known.
	if _, err := db.Exec(`DELETE FROM approve_tui_policy WHERE version = 2`); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); err == nil || !strings.Contains(err.Error(), "is not in the store") {
		t.Fatalf("signed text gone: %v", err)
	}
}

// A statement dated before the proposal was made is a replay.
func TestVerifyRefusesStatementsBeforeTheProposal(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "carol")
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	old, err := r.set.SignDecision(r.signers["alice"], trust.Statement{Decision: trust.DecisionApprove, ApprovalID: id,
		PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel), Time: time.Now().Add(-time.Hour)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	forgeConsume(t, rawDB(t, o), id, old)
	_, err = VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{Requesters: []string{"agent"}})
	if err == nil || !strings.Contains(err.Error(), "stale (a replayed signature)") {
		t.Fatalf("old statement: %v", err)
	}
}

// A hook under trust required denies an unsigned approval, saying why,
// and allows a signed one.
func TestHookTrustedSignatures(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprint("signed=", signed), func(t *testing.T) {
			s, o := emptyStore(t)
			r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "carol")
			opts := hookOpts(s)
			opts.Trust = r.set
			done := hookAsync(bashCall("rm -rf /srv/app/build", "tu1"), opts)
			rec := awaitWaiting(t, o)
			if signed {
				approveAs(t, o, rec, r.actor("alice", r.sign(t, r.set, "alice", rec)))
			} else {
				forgeConsume(t, rawDB(t, o), rec.ApprovalID)
			}
			ans := recvHook(t, done)
			got := get(t, o, rec.ApprovalID)
			if signed {
				if ans.Decision != "allow" || !strings.Contains(ans.Reason, "signed by alice (1 of 1)") {
					t.Fatalf("signed: %+v", ans)
				}
				return
			}
			if ans.Decision != "deny" || !strings.Contains(ans.Reason, "its signatures do not hold: not signed") {
				t.Fatalf("unsigned: %+v", ans)
			}
			if got.ExecutionStatus != model.ExecBlockedAfterConsume || got.ExecutionReason != ReasonSignatureInvalid {
				t.Fatalf("recorded %s %q", got.ExecutionStatus, got.ExecutionReason)
			}
		})
	}
}

func approveAs(t *testing.T, o *storage.Store, rec *storage.Record, a model.Actor) {
	t.Helper()
	if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, a); err != nil {
		t.Fatal(err)
	}
}

// xDraft is a proposal's draft for a command that is never run.
func xDraft(t *testing.T) risk.Draft {
	d := runReq(t.TempDir()).Draft
	d.Command = "rm -rf /tmp/approve-tui-never-run"
	return d
}

// BenchmarkVerifySignatures is what run and each hook pay once a
// proposal is consumed, under trust required: the proposal's and the
// policy's signature rows and the policy versions read from the SQLite
// file, the signed policy found (one ed25519 signature) and parsed, two
// ed25519 approvals verified and counted against it.
func BenchmarkVerifySignatures(b *testing.B) {
	s, o := benchStores(b)
	r := newTrustRig(b, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	r.setSignedPolicy(b, o, "carol", twoPersonPolicy)
	d := risk.Draft{Command: "rm -rf /tmp/approve-tui-never-run", SessionKey: "bench", Requester: "bench", Cwd: b.TempDir(), Backend: "local", TTL: time.Hour}
	p, _, err := risk.Propose(d, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Submit(context.Background(), p, runnerActor); err != nil {
		b.Fatal(err)
	}
	rec := get(b, o, p.ApprovalID)
	for _, n := range []string{"alice", "bob"} {
		if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, r.actor(n, r.sign(b, r.set, n, rec))); err != nil && !errors.As(err, new(*storage.VoteRecorded)) {
			b.Fatal(err)
		}
	}
	rec = get(b, s, p.ApprovalID)
	self := Self{Requesters: []string{"agent"}}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		chk, err := VerifySignatures(context.Background(), r.set, s, rec, self)
		times = append(times, time.Since(t0))
		if err != nil || len(chk.Principals) != 2 {
			b.Fatalf("%+v %v", chk, err)
		}
	}
	b.StopTimer()
	sortDurations(times)
	at := func(q float64) float64 { return float64(times[int(q*float64(len(times)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

func sortDurations(d []time.Duration) {
	slices.Sort(d)
}

// benchStores is emptyStore for a benchmark.
func benchStores(b *testing.B) (*storage.Store, *storage.Store) {
	path := filepath.Join(b.TempDir(), "state.db")
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true, BusyTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	o, err := storage.Open(context.Background(), path, storage.Options{BusyTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { o.Close() })
	return s, o
}

// The policy's rules are matched at the command's risk: a rule for high
// risk asks nothing more of a medium command, and a process that made no
// judgement of its own (a hook, deciding after the wait) does not make
// every rule match.
func TestVerifyPolicyMatchedAtTheCommandsRisk(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	r.setSignedPolicy(t, o, "carol", "policy:\n  - match: {risk: high}\n    approvals: 2\n")
	d := xDraft(t)
	d.Command = "systemctl restart nginx"
	id := submitDraft(t, s, d)
	rec := get(t, o, id)
	if rec.EffectiveRisk != model.RiskMedium {
		t.Fatalf("risk %s, want medium", rec.EffectiveRisk)
	}
	forgeConsume(t, rawDB(t, o), id, r.sign(t, r.set, "alice", rec))
	chk, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{Requesters: []string{"agent"}})
	if err != nil || chk.Need != 1 {
		t.Fatalf("medium under a high rule: %+v %v", chk, err)
	}
	// This process judging it high (its own view) makes the rule apply.
	_, err = VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{Requesters: []string{"agent"}, Risk: model.RiskHigh})
	var se *SignatureError
	if !errors.As(err, &se) || se.Need != 2 || se.Have != 1 {
		t.Fatalf("judged high here: %v", err)
	}
}

// A hook's proposal lives no longer than its wait: a signature older than
// that is a replay, even when the agent moved the row's created_at back
// to make it look in time.
func TestVerifyRefusesSignaturesOlderThanTheProposalLives(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "carol")
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	old, err := r.set.SignDecision(r.signers["alice"], trust.Statement{Decision: trust.DecisionApprove, ApprovalID: id,
		PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel), Time: time.Now().Add(-2 * time.Hour)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, o)
	if _, err := db.Exec(`UPDATE gateway_approvals SET created_at = ? WHERE approval_id = ?`, float64(time.Now().Add(-3*time.Hour).Unix()), id); err != nil {
		t.Fatal(err)
	}
	forgeConsume(t, db, id, old)
	self := Self{Requesters: []string{"agent"}}
	if _, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); err != nil {
		t.Fatalf("without a bound, the moved created_at lets it through (the runner passes its own submit time): %v", err)
	}
	self.MaxAge = 5 * time.Minute
	if _, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); err == nil || !strings.Contains(err.Error(), "stale (a replayed signature): dated") || !strings.Contains(err.Error(), "older than") {
		t.Fatalf("with the proposal's lifetime: %v", err)
	}
	self.MaxAge, self.Since = 0, time.Now().Add(-time.Minute)
	if _, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); err == nil || !strings.Contains(err.Error(), "the proposal is younger than its approval") {
		t.Fatalf("with this process's own submit time: %v", err)
	}
}

// Rows added without end are refused, not verified one by one: a hook
// that took too long would be let through by its agent.
func TestVerifyRefusesRowsWithoutEnd(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "carol")
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	sig := r.sign(t, r.set, "alice", rec)
	sigs := make([]*model.Signature, maxApprovalSignatures+1)
	for i := range sigs {
		sigs[i] = sig
	}
	forgeConsume(t, rawDB(t, o), id, sigs...)
	_, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{Requesters: []string{"agent"}})
	if err == nil || !strings.Contains(err.Error(), "more than the 64 any approval has") {
		t.Fatalf("%d rows: %v", len(sigs), err)
	}
}

// A policy that asks for a group counts the signers' principals as its
// members: two signatures from outside the group are not enough.
func TestVerifyGroupsCountByPrincipal(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "dave", "carol")
	r.setSignedPolicy(t, o, "carol", "groups:\n  dba: [dave]\npolicy:\n  - match: {risk: low}\n    approvals: 2\n    from: {dba: 1}\n")
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	db := rawDB(t, o)
	forgeConsume(t, db, id, r.sign(t, r.set, "alice", rec), r.sign(t, r.set, "bob", rec))
	self := Self{Requesters: []string{"agent"}}
	_, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self)
	if err == nil || !strings.Contains(err.Error(), "2 of 2 signatures hold, but not from the people") || !strings.Contains(err.Error(), "dba") {
		t.Fatalf("no dba: %v", err)
	}
	d := r.sign(t, r.set, "dave", rec)
	if _, err := db.Exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES (?, 'approve', ?, ?, ?, ?, 0)`,
		id, d.Principal, d.Key, string(d.Statement), d.Armored); err != nil {
		t.Fatal(err)
	}
	if chk, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); err != nil || len(chk.Principals) != 3 {
		t.Fatalf("with dave: %+v %v", chk, err)
	}
}

// A command no risk rule matches goes unasked only if the policy a
// policy signer signed names it in no rule: the agent replacing the
// store's policy row with one without rules changes nothing.
func TestUnaskedCommandsFollowTheSignedPolicy(t *testing.T) {
	const signed = "policy:\n  - match: {command: \"echo signed-rule*\"}\n    approvals: 1\n"
	noRules := func(t *testing.T, o *storage.Store) {
		if _, err := rawDB(t, o).Exec(`INSERT INTO approve_tui_policy (version, sha256, source, rules, set_at, set_by)
			SELECT version + 1, ?, '', ?, set_at, set_by FROM approve_tui_policy ORDER BY version DESC LIMIT 1`,
			fmt.Sprintf("%x", sha256.Sum256(nil)), string((&policy.Policy{}).Encode())); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("run", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "carol")
		r.setSignedPolicy(t, o, "carol", signed)
		noRules(t, o)
		req := runReq(t.TempDir(), "echo", "signed-rule-x")
		req.Timeout = 300 * time.Millisecond
		// Without trust the store's (replaced) policy lets it go.
		if res, err := Run(context.Background(), s, req); err != nil || res.Outcome != RunRan {
			t.Fatalf("trust off: %+v %v", res, err)
		}
		req.Trust = r.set
		res, err := Run(context.Background(), s, req)
		if err != nil || res.Outcome != RunTimedOut {
			t.Fatalf("trust required: %+v %v, want asked (timed out)", res, err)
		}
		if rec := get(t, o, res.ApprovalID); !strings.Contains(rec.RiskReason, "rule 1 (line 2) of the signed policy") {
			t.Fatalf("reason %q", rec.RiskReason)
		}
	})
	t.Run("hook --low pass", func(t *testing.T) {
		s, o := emptyStore(t)
		r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "carol")
		r.setSignedPolicy(t, o, "carol", signed)
		noRules(t, o)
		opts := hookOpts(s)
		opts.Timeout = time.Second
		opts.ParkWindow = -1 // withdrawn at the timeout: "no decision on"
		if ans := recvHook(t, hookAsync(bashCall("echo signed-rule-y", "tu-a"), opts)); !ans.Silent {
			t.Fatalf("trust off: %+v", ans)
		}
		opts.Trust = r.set
		ans := recvHook(t, hookAsync(bashCall("echo signed-rule-y", "tu-b"), opts))
		if ans.Silent || ans.Decision != "deny" || !strings.Contains(ans.Reason, "no decision on") {
			t.Fatalf("trust required: %+v, want asked", ans)
		}
	})
}

// A signature row is counted at execution only as approve-tui keeps it:
// an approval kept as a deny or a submit, or a row whose principal or key
// was rewritten after it was kept, does not count.
func TestVerifyCountsOnlyRowsAsKept(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "bob", "carol")
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	sig := r.sign(t, r.set, "alice", rec)
	db := rawDB(t, o)
	forgeConsume(t, db, id)
	self := Self{Requesters: []string{"agent"}}
	insert := func(event, principal, key string) {
		t.Helper()
		if _, err := db.Exec(`DELETE FROM approve_tui_signatures WHERE approval_id = ?`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, event, principal, key, string(sig.Statement), sig.Armored, float64(time.Now().Unix())); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		event, principal, key, words string
	}{
		{storage.EventDeny, sig.Principal, sig.Key, "not an approval"},
		{storage.EventSubmit, sig.Principal, sig.Key, "not kept as a decision"},
		{storage.EventApprove, "bob", sig.Key, "row changed after it was kept"},
		{storage.EventApprove, sig.Principal, r.signers["bob"].Fingerprint(), "row changed after it was kept"},
	} {
		insert(tc.event, tc.principal, tc.key)
		_, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self)
		var se *SignatureError
		if !errors.As(err, &se) || se.Have != 0 || !strings.Contains(err.Error(), tc.words) {
			t.Fatalf("kept as %s by %s (%s): %v", tc.event, tc.principal, tc.key, err)
		}
	}
	insert(storage.EventApprove, sig.Principal, sig.Key)
	if chk, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), self); err != nil || chk.Words() != "signed by alice (1 of 1)" {
		t.Fatalf("as kept: %+v %v", chk, err)
	}
}

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
			r.laxThenTwoPerson(t, o)
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
	r.laxThenTwoPerson(t, o)
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
	r.setSignedPolicy(t, o, "carol", laxPolicy) // the lax one is now the newest signed
	r.policy = strict                           // but alice's console signs under the two-person one
	id := submitDraft(t, s, xDraft(t))
	rec := get(t, o, id)
	forgeConsume(t, rawDB(t, o), id, r.sign(t, r.set, "alice", rec))
	_, err := VerifySignatures(context.Background(), r.set, s, get(t, s, id), Self{Requesters: []string{"agent"}})
	var se *SignatureError
	if !errors.As(err, &se) || se.Need != 2 || !strings.Contains(err.Error(), "named by the approval") {
		t.Fatalf("the named two-person policy did not ask: %v", err)
	}
}
