package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// The console's approval names the signed policy in force, and the
// operator's policy memory keeps it; with the memory holding a newer
// policy than the store's (rows deleted), nothing is signed or decided.
func TestConsoleApprovalNamesPolicyAndRefusesRollback(t *testing.T) {
	r := newTrustRig(t)
	src := "policy:\n  - match: {risk: low}\n    approvals: 1\n"
	setSignedPolicy(t, r, src)
	sum := trust.SHA256Hex([]byte(src))
	memory := filepath.Join(r.dir, "state", "approve-tui", "policies.json")

	sg := Signing{KeyFile: r.bob, PolicyMemory: memory}
	m := signingConsole(t, r, sg, nil)
	id := r.ids["low"]
	typeApproveOn(t, m, id)
	press(m, "enter")
	if got := status(t, r.fixture, id); got.Status != model.StatusConsumed {
		t.Fatalf("after a signed approve: %s; note %q; prompt %+v", got.Status, m.note.text, m.prompt)
	}
	sigs := signaturesOf(t, r.s, id)
	if len(sigs) != 1 || !strings.Contains(string(sigs[0].Statement), "\npolicy_sha256="+sum+"\n") {
		t.Fatalf("the approval does not name the policy %s: %+v", sum, sigs)
	}
	sshVerify(t, r.trustPath, sigs[0])
	if b, err := os.ReadFile(memory); err != nil || !strings.Contains(string(b), sum) {
		t.Fatalf("policy memory: %s %v", b, err)
	}

	// The memory says a newer policy was in force: the store's went back.
	newer := &trust.PolicySeen{SHA256: strings.Repeat("ab", 32), SignedBy: "alice", SignedAt: t0.Add(time.Hour)}
	other := filepath.Join(r.dir, "other", "policies.json")
	if err := trust.CheckPolicyMemory(other, r.s.Identity(), newer); err != nil {
		t.Fatal(err)
	}
	m = signingConsole(t, r, Signing{KeyFile: r.bob, PolicyMemory: other}, nil)
	id = r.ids["low-k8s"]
	typeApproveOn(t, m, id)
	press(m, "enter")
	if m.prompt == nil || !strings.Contains(m.prompt.message, "not signed, nothing decided") || !strings.Contains(m.prompt.message, "the store's policy went back from abababababab signed by alice") {
		t.Fatalf("prompt after a rolled-back policy: %+v\nnote %q", m.prompt, m.note.text)
	}
	if got := status(t, r.fixture, id); got.Status != model.StatusPending {
		t.Fatalf("the proposal was decided: %s", got.Status)
	}
	if sigs := signaturesOf(t, r.s, id); len(sigs) != 0 {
		t.Fatalf("signatures stored: %+v", sigs)
	}
}
