package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// Policy rollback, end to end with the real binary: carol signed a lax
// policy, then the two-person one; alice votes with `approve` (her
// approval names the two-person policy, and her state directory
// remembers it); the agent's user deletes the newest policy signature
// with sqlite3. Alice's next `approve` is refused by her own memory
// before anything is signed; bob, who never saw the two-person policy,
// is refused by the store (alice's kept vote names it); and the first
// proposal, marked consumed by hand, is refused by `run` (exit 14).
func TestPolicyRollbackRefusedE2E(t *testing.T) {
	r := newSignedRig(t)
	// The lax policy, signed a minute before the two-person one the rig set.
	lax := "policy:\n  - match: {risk: low}\n    approvals: 1\n"
	p, err := config.ParsePolicy("lax.yaml", []byte(lax))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := r.set.SignDecision(r.signers["carol"], trust.Statement{Decision: trust.DecisionPolicy, PolicySHA256: trust.SHA256Hex([]byte(lax))}, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	s := r.open()
	if _, _, err := s.SetPolicy(context.Background(), []byte(lax), p, r.operator("carol", sig)); err != nil {
		t.Fatal(err)
	}
	strict, err := s.Policy(context.Background())
	s.Close()
	if err != nil || strict == nil {
		t.Fatal(err)
	}
	strictSum := readStore(t, r.db, func(ctx context.Context, s *storage.Store) (string, error) {
		sigs, err := s.Signatures(ctx, storage.PolicyRef)
		if err != nil || len(sigs) != 2 {
			t.Fatalf("policy signatures: %v %v", sigs, err)
		}
		st, err := trust.ParseStatement(sigs[0].Statement)
		return st.PolicySHA256, err
	})

	operator := func(name string, args ...string) (int, string, string) {
		c := exec.Command(r.bin, append([]string{"--db", r.db, "--config", r.cfg}, args...)...)
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.dir, "XDG_STATE_HOME=" + filepath.Join(r.dir, name+"-state"),
			"SSH_AUTH_SOCK=" + filepath.Join(r.dir, name+".agent")}
		return execCmd(t, c, "")
	}

	proc, target, rec := r.start()
	code, out, stderr := operator("alice", "approve", "--confirm", rec.ApprovalID, "--", rec.ApprovalID)
	if code != ExitVoted || !strings.Contains(out+stderr, "1 of 2") {
		t.Fatalf("alice's vote: %d %q %q", code, out, stderr)
	}
	kept := readStore(t, r.db, func(ctx context.Context, s *storage.Store) ([]storage.SignatureRecord, error) {
		return s.Signatures(ctx, rec.ApprovalID)
	})
	if len(kept) != 1 || !strings.Contains(string(kept[0].Statement), "\npolicy_sha256="+strictSum+"\n") {
		t.Fatalf("alice's vote does not name the two-person policy %s: %+v", strictSum, kept)
	}
	memory, err := os.ReadFile(filepath.Join(r.dir, "alice-state", "approve-tui", "policies.json"))
	if err != nil || !strings.Contains(string(memory), strictSum) {
		t.Fatalf("alice's policy memory: %s %v", memory, err)
	}

	// The agent's user deletes the newest policy signature: the lax policy
	// is the newest signed one left.
	pySQL(t, r.db, `DELETE FROM approve_tui_signatures WHERE approval_id = 'policy' AND instr(statement, ?) > 0`, "policy_sha256="+strictSum)

	code, _, stderr = operator("alice", "submit", "--requester", "ci-bot", "--", "rm", "-rf", "/srv/other")
	if code != 0 {
		t.Fatal(stderr)
	}
	other := readStore(t, r.db, func(ctx context.Context, s *storage.Store) (*storage.Record, error) {
		recs, err := s.List(ctx, storage.ListOptions{})
		for _, x := range recs {
			if strings.Contains(x.Command, "/srv/other") {
				return x, err
			}
		}
		t.Fatalf("no proposal: %v", err)
		return nil, err
	})
	code, _, stderr = operator("alice", "approve", "--confirm", other.ApprovalID, "--", other.ApprovalID)
	if code != ExitError || !strings.Contains(stderr, "the store's policy went back from "+strictSum[:12]+" signed by carol") ||
		!strings.Contains(stderr, "rows were deleted; nothing is signed; a policy signer must set the policy again") {
		t.Fatalf("alice after the rollback: %d %q", code, stderr)
	}
	if sigs := readStore(t, r.db, func(ctx context.Context, s *storage.Store) ([]storage.SignatureRecord, error) {
		return s.Signatures(ctx, other.ApprovalID)
	}); len(sigs) != 0 {
		t.Fatalf("signed after all: %+v", sigs)
	}

	// bob never saw the two-person policy: his approval names the lax one,
	// and the store refuses it for alice's kept vote.
	code, _, stderr = operator("bob", "approve", "--confirm", rec.ApprovalID, "--", rec.ApprovalID)
	if code == 0 || !strings.Contains(stderr, "the policy it was approved under ("+strictSum[:12]+") is not in the store any more") {
		t.Fatalf("bob after the rollback: %d %q", code, stderr)
	}

	// Marked consumed by hand, the first proposal is refused where it runs.
	r.consume(rec.ApprovalID)
	r.refused(proc, target, rec.ApprovalID, "the policy it was approved under ("+strictSum[:12]+") is not in the store any more")
}
