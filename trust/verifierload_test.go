package trust

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/approve-tui/approve-tui/internal/sshtest"
)

// loadAsEnv, when set, makes the test binary load that trust file with
// LoadTrustFileForVerifier and report, instead of running tests: the
// tests below run it as another uid, as the agent's user would.
const loadAsEnv = "APPROVE_TUI_TRUST_TEST_LOAD"

func TestMain(m *testing.M) {
	if p := os.Getenv(loadAsEnv); p != "" {
		as, err := LoadTrustFileForVerifier(p)
		if err != nil {
			fmt.Println("REFUSED:", err)
			os.Exit(3)
		}
		fmt.Printf("LOADED %d\n", len(as.Signers))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// agentUID stands for the agent's user, operatorUID for an operator's.
const (
	agentUID    = 4711
	operatorUID = 4712
)

// TestLoadTrustFileForVerifier runs the loader as the agent's uid (a copy
// of this test binary, started with that uid) over layouts owned by the
// agent, an operator and root.
func TestLoadTrustFileForVerifier(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand files to other uids and to run as one")
	}
	needSSHKeygen(t)
	line := "alice " + sshtest.PublicLine(t, genKey(t, t.TempDir(), "ed25519", "alice")) + "\n"

	// A world-readable root-owned tree the other uid can walk.
	base, err := os.MkdirTemp("", "verifierload")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	must(t, os.Chmod(base, 0o755))
	self, err := os.Executable()
	must(t, err)
	bin := filepath.Join(base, "trust.test")
	copyFile(t, self, bin, 0o755)

	mk := func(rel string, uid int, mode os.FileMode) string {
		p := filepath.Join(base, rel)
		if strings.HasSuffix(rel, "/") {
			must(t, os.Mkdir(p, mode))
		} else {
			must(t, os.WriteFile(p, []byte(line), mode))
		}
		must(t, os.Chown(p, uid, uid))
		must(t, os.Chmod(p, mode))
		return p
	}
	rootDir := mk("root/", 0, 0o755)
	rootFile := mk("root/allowed_signers", 0, 0o644)
	opsFile := mk("root/ops_signers", operatorUID, 0o644)
	agentFile := mk("root/agent_signers", agentUID, 0o644)
	agentReadOnly := mk("root/agent_ro_signers", agentUID, 0o444)
	groupFile := mk("root/group_signers", 0, 0o664)
	agentDir := mk("agent/", agentUID, 0o755)
	inAgentDir := mk("agent/allowed_signers", 0, 0o644)
	agentLink := filepath.Join(rootDir, "agent_link")
	must(t, os.Symlink(rootFile, agentLink))
	must(t, os.Lchown(agentLink, agentUID, agentUID))
	opsDir := mk("ops/", operatorUID, 0o755)
	inOpsDir := mk("ops/allowed_signers", operatorUID, 0o644)
	_ = opsDir

	asAgent := func(path string) (string, bool) {
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = []string{loadAsEnv + "=" + path, "PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: agentUID, Gid: agentUID}}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("running as uid %d: %v\n%s", agentUID, err, out)
		}
		return string(out), err == nil
	}
	for _, c := range []struct {
		name, path string
		ok         bool
		says       string
	}{
		{"root-owned file", rootFile, true, "LOADED 1"},
		{"operator-owned file in an operator's directory", inOpsDir, true, "LOADED 1"},
		{"operator-owned file", opsFile, true, "LOADED 1"},
		{"agent-owned file", agentFile, false, "the agent, which runs as that user, could rewrite it"},
		{"agent-owned read-only file", agentReadOnly, false, "could rewrite it"},
		{"root's file in the agent's directory", inAgentDir, false, agentDir},
		{"agent-owned link to root's file", agentLink, false, agentLink},
		{"group-writable file", groupFile, false, "group-writable"},
	} {
		out, ok := asAgent(c.path)
		t.Logf("as uid %d, %s: %s", agentUID, c.name, strings.TrimSpace(out))
		if ok != c.ok || !strings.Contains(out, c.says) {
			t.Errorf("%s: ok=%v, output %q; want ok=%v and %q", c.name, ok, out, c.ok, c.says)
		}
	}

	// As root: root's and an operator's files load, the group-writable
	// one does not.
	for _, p := range []string{rootFile, opsFile, inOpsDir, inAgentDir} {
		if _, err := LoadTrustFileForVerifier(p); err != nil {
			t.Errorf("as root, %s: %v", p, err)
		}
	}
	var tfe *TrustFileError
	if _, err := LoadTrustFileForVerifier(groupFile); !errors.As(err, &tfe) {
		t.Errorf("as root, group-writable: %v", err)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	must(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	must(t, err)
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	must(t, out.Close())
}
