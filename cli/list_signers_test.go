package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// list names who signed a decision: --json gives every kept signature as
// checked, and the table's WHEN column the principals whose signatures
// verify, or that none does where signatures are required.
func TestListNamesTheSigners(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed (package openssh-client)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if code, _, e := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(e)
	}
	var ids []string
	for _, c := range []string{"rm -rf /srv/one", "rm -rf /srv/two", "rm -rf /srv/three"} {
		code, out, e := run(t, db, false, "", "submit", "--", c)
		if code != 0 {
			t.Fatalf("submit: %s", e)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	key := filepath.Join(dir, "alice")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	signer, err := trust.KeyFileSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	tp := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(tp, []byte("alice "+strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	signers, err := trust.LoadTrustFile(tp)
	if err != nil {
		t.Fatal(err)
	}
	settings := &trust.Settings{Mode: trust.ModeRequired, Path: tp, Signers: signers}
	s, err := storage.Open(ctx, db, storage.Options{Trust: settings})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	settings.Store = s.Identity()
	// ids[0] approved and ids[1] denied, each signed by alice; ids[2]
	// approved unsigned (by a store that does not require signatures).
	for i, d := range []trust.Decision{trust.DecisionApprove, trust.DecisionDeny} {
		rec, err := s.Get(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		sig, err := settings.SignDecision(signer, trust.Statement{Decision: d, ApprovalID: ids[i], PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel)}, s.Now())
		if err != nil {
			t.Fatal(err)
		}
		actor := model.Actor{Surface: model.SurfaceCLI, Name: "alice@laptop", Person: "alice", Key: sig.Key, Signature: sig}
		if d == trust.DecisionDeny {
			_, err = s.Deny(ctx, ids[i], actor, "")
		} else {
			_, err = s.ConsumeRead(ctx, ids[i], ids[i], rec.PayloadSHA256, actor)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	plain, err := storage.Open(ctx, db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.ConsumeRead(ctx, ids[2], ids[2], "", model.Actor{Surface: model.SurfaceCLI, Name: "bob@desk", Person: "bob"}); err != nil {
		t.Fatal(err)
	}

	// The table's words, from a store with the trust file.
	recs, err := s.List(ctx, storage.ListOptions{Status: storage.StatusFilter("all"), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	words, err := decidedSigners(ctx, s, recs)
	if err != nil {
		t.Fatal(err)
	}
	if words[ids[0]] != "; signed: alice" || words[ids[1]] != "; signed: alice" || words[ids[2]] != "; unsigned" {
		t.Fatalf("WHEN words: %q", words)
	}

	// --json: the field is there for every row; the CLI here reads no trust
	// file, and says so for each signature rather than vouch for it.
	code, out, e := run(t, db, false, "", "list", "--status", "all", "--json")
	if code != 0 {
		t.Fatalf("list --json: %s", e)
	}
	noDuplicateKeys(t, out)
	var rows []struct {
		ID      string `json:"approval_id"`
		Signers []struct {
			Principal, Key, Event, Reason string
			Verified                      bool
		} `json:"signers"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("list --json: %v: %s", err, out)
	}
	for _, r := range rows {
		switch r.ID {
		case ids[0], ids[1]:
			if len(r.Signers) != 1 || r.Signers[0].Principal != "alice" || r.Signers[0].Key != signer.Fingerprint() || r.Signers[0].Verified || r.Signers[0].Reason != "no trust file" {
				t.Fatalf("signers of %s: %+v", r.ID, r.Signers)
			}
		case ids[2]:
			if r.Signers == nil || len(r.Signers) != 0 {
				t.Fatalf("signers of the unsigned one: %+v", r.Signers)
			}
		}
	}
	if !strings.Contains(out, `"event": "deny"`) && !strings.Contains(out, `"event":"deny"`) {
		t.Fatalf("the deny's signature is not listed: %s", out)
	}
}
