package trust

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/sshtest"
)

func needSSHKeygen(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed (package openssh-client): the OpenSSH oracle is needed for these tests")
	}
}

// genKey makes a key pair with the real ssh-keygen and returns its path.
func genKey(t testing.TB, dir, typ, name string, extra ...string) string {
	t.Helper()
	return sshtest.Keygen(t, filepath.Join(dir, name), typ, name+"@test", extra...)
}

func writeTrust(t testing.TB, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func sampleStatement(principal string) Statement {
	return Statement{
		Store:         "store-7f3a",
		Decision:      DecisionApprove,
		ApprovalID:    "Ab3_x-9QzL0k",
		PayloadSHA256: strings.Repeat("ab", 32),
		Risk:          RiskHigh,
		Principal:     principal,
		Time:          time.Now().UTC().Truncate(time.Second),
	}
}

func expectOf(s Statement) Expect {
	return Expect{Store: s.Store, ApprovalID: s.ApprovalID, PayloadSHA256: s.PayloadSHA256, Risk: s.Risk, PolicySHA256: s.PolicySHA256,
		Decisions: []Decision{s.Decision}}
}

func mustEncode(t testing.TB, s Statement) []byte {
	t.Helper()
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// osshVerify runs ssh-keygen -Y verify on sig over stmt.
func osshVerify(t testing.TB, trustPath, principal string, sig, stmt []byte) error {
	t.Helper()
	dir := t.TempDir()
	sp := filepath.Join(dir, "sig")
	if err := os.WriteFile(sp, sig, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", trustPath, "-I", principal, "-n", Namespace, "-s", sp)
	cmd.Stdin = bytes.NewReader(stmt)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return &osshError{err: err, out: string(out)}
	}
	return nil
}

type osshError struct {
	err error
	out string
}

func (e *osshError) Error() string { return e.err.Error() + ": " + e.out }

// osshSign signs stmt with ssh-keygen -Y sign.
func osshSign(t testing.TB, key, namespace string, stmt []byte, extra ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "statement")
	if err := os.WriteFile(f, stmt, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-Y", "sign", "-f", key, "-n", namespace}, extra...)
	args = append(args, f)
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen %v: %v\n%s", args, err, out)
	}
	sig, err := os.ReadFile(f + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func execCombined(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

func execEnv(env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}
