package trust

import (
	"bytes"
	"github.com/approve-tui/approve-tui/internal/sshtest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	path := filepath.Join(dir, name)
	args := append([]string{"-q", "-t", typ, "-N", "", "-C", name + "@test", "-f", path}, extra...)
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen %v: %v\n%s", args, err, out)
	}
	return path
}

func pubOf(t testing.TB, key string) string {
	t.Helper()
	b, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	return f[0] + " " + f[1]
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

// startAgent runs a real ssh-agent in the foreground on a socket in a new
// directory and adds the given keys with ssh-add.
func startAgent(t testing.TB, keys ...string) string {
	t.Helper()
	for _, tool := range []string{"ssh-agent", "ssh-add"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (package openssh-client)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	t.Cleanup(func() { os.RemoveAll(dir) })
	sshtest.StartAgent(t, sock)
	sshtest.AddKeys(t, sock, nil, keys...)
	return sock
}

func execCombined(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

func execEnv(env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}
