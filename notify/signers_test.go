package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// A resolution's page names the principals whose signatures over the
// decision verify against the trust file, and never a signature row that
// does not.

func keyFile(t *testing.T, dir, name string) *trust.StatementSigner {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed (package openssh-client)")
	}
	path := filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	s, err := trust.KeyFileSigner(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signedRig is the notifier rig with a notifier whose store reads a trust
// file naming alice and bob (mallory's key is in none).
func signedRig(t *testing.T) (r *rig, alice, bob, mallory *trust.StatementSigner, settings *trust.Settings) {
	r = newRig(t)
	dir := t.TempDir()
	alice, bob, mallory = keyFile(t, dir, "alice"), keyFile(t, dir, "bob"), keyFile(t, dir, "mallory")
	line := func(p string, s *trust.StatementSigner) string {
		return p + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey()))) + "\n"
	}
	tp := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(tp, []byte(line("alice", alice)+line("bob", bob)), 0o600); err != nil {
		t.Fatal(err)
	}
	signers, err := trust.LoadTrustFile(tp)
	if err != nil {
		t.Fatal(err)
	}
	settings = &trust.Settings{Mode: trust.ModeRequired, Path: tp, Signers: signers}
	s, err := storage.Open(context.Background(), r.path, storage.Options{Now: r.tclock.Now, BusyTimeout: 5 * time.Second, Trust: settings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	settings.Store = s.Identity()
	r.n = r.notifier(s, "n1")
	return r, alice, bob, mallory, settings
}

// decide signs decision d on id with signer as principal and decides it
// on the rig's store.
func decide(t *testing.T, r *rig, settings *trust.Settings, signer *trust.StatementSigner, id string, d trust.Decision) {
	t.Helper()
	ctx := context.Background()
	rec, err := r.store.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := settings.SignDecision(signer, trust.Statement{Decision: d, ApprovalID: id, PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel)}, r.tclock.Now())
	if err != nil {
		t.Fatal(err)
	}
	actor := model.Actor{Surface: model.SurfaceCLI, Name: sig.Principal + "@laptop", Person: sig.Principal, Key: sig.Key, Signature: sig}
	if d == trust.DecisionDeny {
		_, err = r.store.Deny(ctx, id, actor, "")
	} else {
		_, err = r.store.ConsumeRead(ctx, id, id, rec.PayloadSHA256, actor)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func resolution(t *testing.T, r *rig, id string) Event {
	t.Helper()
	r.tick()
	for _, ev := range r.chans["push"].events() {
		if ev.Kind == KindResolved && ev.ApprovalID == id {
			return ev
		}
	}
	t.Fatalf("no resolution for %s: %s", id, r.chans["push"].kinds())
	return Event{}
}

func TestResolutionNamesTheSigners(t *testing.T) {
	r, alice, bob, mallory, settings := signedRig(t)

	approved := "signed-approve-1"
	r.submit(approved, "agent:prod:1", "rm -rf /srv/a", time.Hour)
	r.tick()
	decide(t, r, settings, alice, approved, trust.DecisionApprove)
	ev := resolution(t, r, approved)
	if ev.Outcome != "approved" || len(ev.Signers) != 1 || ev.Signers[0] != "alice" || ev.Unsigned {
		t.Fatalf("approved resolution: %+v", ev)
	}
	if body := Body(ev, r.tclock.Now()); !strings.Contains(body, "Signed by: alice") || strings.Contains(body, "BEGIN SSH SIGNATURE") || strings.Contains(body, "approve-tui-statement") {
		t.Fatalf("page body: %q", body)
	}
	raw, err := webhookBody(ev, Delivery{ID: "d1"})
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Signers []string `json:"signers"`
	}
	if err := json.Unmarshal(raw, &w); err != nil || len(w.Signers) != 1 || w.Signers[0] != "alice" {
		t.Fatalf("webhook body: %s (%v)", raw, err)
	}

	denied := "signed-deny-2"
	r.submit(denied, "agent:prod:1", "rm -rf /srv/b", time.Hour)
	r.tick()
	decide(t, r, settings, bob, denied, trust.DecisionDeny)
	if ev := resolution(t, r, denied); ev.Outcome != "denied" || len(ev.Signers) != 1 || ev.Signers[0] != "bob" {
		t.Fatalf("denied resolution: %+v", ev)
	}

	// Signed by a key in no trust file, and a row claiming alice written
	// with a raw handle: neither is named; the page says nobody's
	// signature verifies.
	forged := "forged-3"
	r.submit(forged, "agent:prod:1", "rm -rf /srv/c", time.Hour)
	r.tick()
	rec, err := r.store.Get(context.Background(), forged)
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := trust.Statement{Store: settings.Store, Decision: trust.DecisionApprove, ApprovalID: forged, PayloadSHA256: rec.PayloadSHA256,
		Risk: string(rec.RiskLevel), Principal: "alice", Time: r.tclock.Now()}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	armored, err := mallory.Sign(stmt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.ConsumeRead(context.Background(), forged, forged, rec.PayloadSHA256,
		model.Actor{Surface: model.SurfaceCLI, Name: "mallory", Person: "mallory"}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+r.path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO approve_tui_signatures (approval_id, event, principal, key_fp, statement, signature, at) VALUES (?, 'approve', 'alice', ?, ?, ?, 0)`,
		forged, alice.Fingerprint(), string(stmt), string(armored)); err != nil {
		t.Fatal(err)
	}
	ev = resolution(t, r, forged)
	if len(ev.Signers) != 0 || !ev.Unsigned || !strings.Contains(Body(ev, r.tclock.Now()), "Signed by: nobody: no signature verifies") {
		t.Fatalf("a forged signature is named: %+v", ev)
	}
	sg, err := approvals.Signers(context.Background(), r.n.Store, rec)
	if err != nil || len(sg) != 1 || sg[0].Verified || sg[0].Reason != string(trust.ReasonUnknownKey) {
		t.Fatalf("forged signer: %+v %v", sg, err)
	}

	// Bob's real deny, its row rewritten to claim alice: not named, and
	// the row is said to be changed.
	if _, err := db.Exec(`UPDATE approve_tui_signatures SET principal = 'alice' WHERE approval_id = ?`, denied); err != nil {
		t.Fatal(err)
	}
	drec, err := r.store.Get(context.Background(), denied)
	if err != nil {
		t.Fatal(err)
	}
	sg, err = approvals.Signers(context.Background(), r.n.Store, drec)
	if err != nil || len(sg) != 1 || sg[0].Verified || sg[0].Reason != storage.CheckRowMismatch || sg[0].Principal != "alice" {
		t.Fatalf("rewritten row: %+v %v", sg, err)
	}
	if who := approvals.VerifiedPrincipals(sg, storage.EventDeny); len(who) != 0 {
		t.Fatalf("a rewritten row names %v", who)
	}
}
