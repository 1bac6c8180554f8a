package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

// The system configuration anchors the trust settings: the agent sets
// --config, APPROVE_TUI_CONFIG, $XDG_CONFIG_HOME and $HOME, and may write
// the file they lead to, so the agent side takes its trust settings from
// the system file, at a path fixed when the program is built. Real
// processes: the program built with -ldflags -X pointing
// config.SystemConfigPath into a temporary directory.

// anchorRig is a store, the trust rig's keys, and the program built with
// its system configuration at sysPath.
type anchorRig struct {
	*trustRig
	base, etc, sysPath, bin string
	// agentHome holds the agent's own configuration, agentConfig, which
	// turns trust off; opHome an operator's, with no configuration.
	agentHome, agentConfig, opHome string
}

func newAnchorRig(t *testing.T) *anchorRig {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the program: not in -short")
	}
	tr := newTrustRig(t)
	// A tree another uid can walk (t.TempDir's parent is 0700).
	base, err := os.MkdirTemp("", "anchor")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	r := &anchorRig{trustRig: tr, base: base, etc: filepath.Join(base, "etc"),
		agentHome: filepath.Join(base, "agent"), opHome: filepath.Join(base, "operator")}
	r.sysPath = filepath.Join(r.etc, "config.yaml")
	r.agentConfig = filepath.Join(r.agentHome, "config.yaml")
	for _, d := range []string{base, r.etc, r.agentHome, r.opHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(r.agentConfig, []byte("trust: {mode: off}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	signers, err := os.ReadFile(tr.signers)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.etc, "allowed_signers"), signers, 0o644); err != nil {
		t.Fatal(err)
	}
	r.bin = filepath.Join(base, "approve-tui")
	build := exec.Command("go", "build", "-o", r.bin, "-ldflags",
		"-X github.com/approve-tui/approve-tui/config.SystemConfigPath="+r.sysPath, "../cmd/approve-tui")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return r
}

// writeSystem writes the system configuration, root's (or the user
// running's), mode 0644.
func (r *anchorRig) writeSystem(t *testing.T, src string) {
	t.Helper()
	if err := os.WriteFile(r.sysPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(r.sysPath, 0o644); err != nil {
		t.Fatal(err)
	}
}

// proc is the program run as the agent (agent: its home and its
// configuration, which says trust: mode: off) or as an operator (no
// configuration), with nothing else of this process's environment but
// PATH.
func (r *anchorRig) proc(agent bool, extra map[string]string, args ...string) *exec.Cmd {
	c := exec.Command(r.bin, args...)
	home := r.opHome
	if agent {
		home = r.agentHome
	}
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "APPROVE_TUI_DB=" + r.db, "GORACE=atexit_sleep_ms=0"}
	if agent {
		c.Env = append(c.Env, "APPROVE_TUI_CONFIG="+r.agentConfig)
	}
	for k, v := range extra {
		c.Env = append(c.Env, k+"="+v)
	}
	c.Dir = home
	return c
}

// exec runs c with stdin and returns its exit code, stdout and stderr.
func execCmd(t *testing.T, c *exec.Cmd, stdin string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = strings.NewReader(stdin), &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("%v: %v", c.Args, err)
	return 0, "", ""
}

// proposals is how many proposals the store holds.
func (r *anchorRig) proposals(t *testing.T) int {
	t.Helper()
	return len(readStore(t, r.db, func(ctx context.Context, s *storage.Store) ([]*storage.Record, error) {
		return s.List(ctx, storage.ListOptions{Status: storage.ListAll, Limit: 1000})
	}))
}

func TestSystemConfigAnchor(t *testing.T) {
	r := newAnchorRig(t)

	// The agent's configuration says trust: mode: off and
	// APPROVE_TUI_CONFIG points at it; the system file requires
	// signatures. The agent side takes the system file's settings, and
	// says that it ignores the user's; an operator with no configuration
	// of their own signs under the system file's.
	t.Run("in force over the agent's mode off", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root: a system file the verifier accepts is owned by root or another user than the one running")
		}
		r.writeSystem(t, "trust:\n  allowed_signers: allowed_signers\n  policy_signers: [alice]\n  store: anchor-store\n")
		code, out, stderr := execCmd(t, r.proc(true, nil, "submit", "--requester", "ci-bot", "--", "rm", "-rf", "/srv/data"), "")
		id := strings.TrimSpace(out)
		if code != 0 || id == "" || !strings.Contains(stderr, "warning: "+r.agentConfig+":1: trust: (mode off) is ignored here: the system configuration "+r.sysPath+" decides") {
			t.Fatalf("submit: %d %q %q", code, out, stderr)
		}
		// An operator without a key: the system file requires signatures.
		code, _, stderr = execCmd(t, r.proc(false, nil, "approve", "--confirm", id, "--", id), "")
		if code != ExitError || !strings.Contains(stderr, "not approved: cannot sign: no ssh-agent") {
			t.Fatalf("unsigned approve: %d %q", code, stderr)
		}
		code, _, stderr = execCmd(t, r.proc(false, r.agent(t, "alice"), "approve", "--confirm", id, "--", id), "")
		if code != 0 || !strings.Contains(stderr, "signed by alice") {
			t.Fatalf("signed approve: %d %q", code, stderr)
		}
		sigs := r.signatures(t, id)
		if len(sigs) != 1 || !strings.Contains(string(sigs[0].Statement), "store=anchor-store\n") {
			t.Fatalf("signatures: %+v", sigs)
		}
		// The trust file the system file names, made group-writable:
		// run refuses before submitting anything, whatever the agent's
		// configuration says.
		signers := filepath.Join(r.etc, "allowed_signers")
		if err := os.Chmod(signers, 0o664); err != nil {
			t.Fatal(err)
		}
		before := r.proposals(t)
		code, _, stderr = execCmd(t, r.proc(true, nil, "run", "--timeout", "5s", "--", "true"), "")
		if code != ExitError || !strings.Contains(stderr, r.sysPath+":1: trust: allowed_signers (agent side)") || !strings.Contains(stderr, signers) {
			t.Errorf("run, group-writable trust file: %d %q", code, stderr)
		}
		if n := r.proposals(t); n != before {
			t.Errorf("run submitted a proposal: %d, was %d", n, before)
		}
		if err := os.Chmod(signers, 0o644); err != nil {
			t.Fatal(err)
		}
		// config check says where each side's settings come from.
		code, out, _ = execCmd(t, r.proc(true, nil, "config", "check"), "")
		for _, want := range []string{
			"agent side (run, the hooks, submit, wait): trust required, from the system configuration " + r.sysPath + ":1\n",
			"operator side (approve, deny, policy set, the console, serve, show, audit): trust off, from the user configuration " + r.agentConfig + ":1\n",
			"run and the hooks, run as this user (uid 0), take the trust file " + signers,
			"warning: " + r.agentConfig + ":1: trust: (mode off) differs from the system configuration " + r.sysPath,
		} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("config check: no %q in (%d)\n%s", want, code, out)
			}
		}
		code, out, _ = execCmd(t, r.proc(true, nil, "--json", "config", "check"), "")
		var res struct {
			Trust struct {
				SystemConfig string `json:"system_config"`
				Sources      map[string]struct {
					Mode, File string
					Line       int
					System     bool
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.Trust.SystemConfig != r.sysPath ||
			res.Trust.Sources["agent"].File != r.sysPath || !res.Trust.Sources["agent"].System || res.Trust.Sources["agent"].Mode != "required" ||
			res.Trust.Sources["operator"].File != r.agentConfig || res.Trust.Sources["operator"].System || res.Trust.Sources["operator"].Mode != "off" {
			t.Errorf("config check --json: %d %v %s", code, err, out)
		}
		code, out, _ = execCmd(t, r.proc(false, nil, "config", "check"), "")
		if code != 0 || !strings.Contains(out, "operator side (approve, deny, policy set, the console, serve, show, audit): trust required, from the system configuration "+r.sysPath+":1\n") ||
			!strings.Contains(out, "store identity in statements: anchor-store") || strings.Contains(out, "no system configuration") {
			t.Errorf("config check, operator: %d\n%s", code, out)
		}
		// wait, on the agent side: the signed approval is approved.
		code, out, stderr = execCmd(t, r.proc(true, nil, "wait", "--timeout", "5s", id), "")
		if code != 0 || !strings.Contains(out, "approved") || !strings.Contains(out, "signed by alice (1 of 1)") {
			t.Errorf("wait, signed: %d %q %q", code, out, stderr)
		}

		// An operator whose own configuration turns trust off approves
		// unsigned (warned that run and the hooks verify with the system
		// file's); run, under the agent's mode off, refuses it: exit 14,
		// recorded blocked_after_consume signature_invalid, not run.
		opConfig := filepath.Join(r.opHome, "config.yaml")
		if err := os.WriteFile(opConfig, []byte("trust: {mode: off}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(opConfig)
		ran := filepath.Join(r.agentHome, "ran-unsigned")
		run := r.proc(true, nil, "run", "--risk", "high", "--timeout", "30s", "--shell", "echo ran > "+ran)
		var runOut, runErr bytes.Buffer
		run.Stdout, run.Stderr = &runOut, &runErr
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		runDone := make(chan error, 1)
		go func() { runDone <- run.Wait() }()
		rid := (&selfRig{db: r.db}).pendingID(t, "")
		code, _, stderr = execCmd(t, r.proc(false, map[string]string{"APPROVE_TUI_CONFIG": opConfig}, "approve", "--confirm", rid, "--", rid), "")
		if code != 0 || !strings.Contains(stderr, "run and the hooks verify with the system file's") {
			t.Fatalf("unsigned approve under the operator's mode off: %d %q", code, stderr)
		}
		select {
		case err := <-runDone:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 14 {
				t.Fatalf("run of an unsigned approval: %v, want exit 14\n%s", err, runErr.String())
			}
		case <-time.After(30 * time.Second):
			_ = run.Process.Kill()
			t.Fatal("run did not end")
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatal("the unsigned approval's command ran")
		}
		rec := readStore(t, r.db, func(ctx context.Context, s *storage.Store) (*storage.Record, error) { return s.Get(ctx, rid) })
		if rec.ExecutionStatus != "blocked_after_consume" || rec.ExecutionReason != "signature_invalid" {
			t.Errorf("execution: %q %q", rec.ExecutionStatus, rec.ExecutionReason)
		}
		// wait says it is not approved.
		code, out, _ = execCmd(t, r.proc(true, nil, "wait", rid), "")
		if code != 14 || !strings.Contains(out, "approved but refused: its signatures do not hold") {
			t.Errorf("wait, unsigned: %d %q", code, out)
		}
	})

	// A system file that cannot be relied on stops the agent side: run,
	// submit and the hooks refuse, naming the file and what to fix.
	t.Run("refused when the running user may write it", func(t *testing.T) {
		r.writeSystem(t, "trust: {mode: off}\n")
		var cred *syscall.Credential
		if os.Geteuid() == 0 {
			// The agent's user: the file is its own.
			const agentUID = 4711
			cred = &syscall.Credential{Uid: agentUID, Gid: agentUID}
			for _, p := range []string{r.sysPath, r.agentHome, r.agentConfig} {
				if err := os.Chown(p, agentUID, agentUID); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() {
				for _, p := range []string{r.agentHome, r.agentConfig} {
					_ = os.Chown(p, 0, 0)
				}
			})
		}
		as := func(args ...string) *exec.Cmd {
			c := r.proc(true, nil, args...)
			c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			return c
		}
		refused := "system configuration " + r.sysPath + " refused: "
		for _, args := range [][]string{{"run", "--timeout", "5s", "--", "true"}, {"submit", "--", "true"}, {"wait", "--timeout", "1s", "x"}} {
			code, _, stderr := execCmd(t, as(args...), "")
			if code != ExitError || !strings.Contains(stderr, refused) || !strings.Contains(stderr, "the user this verifier runs as") ||
				!strings.Contains(stderr, "chown root:root "+r.sysPath) {
				t.Errorf("%v: %d %q", args, code, stderr)
			}
		}
		// config check runs as an operator, who may own it (an operators'
		// account): it warns that run and the hooks, run as this user,
		// refuse it.
		uid := os.Geteuid()
		if cred != nil {
			uid = int(cred.Uid)
		}
		code, out, stderr := execCmd(t, as("config", "check"), "")
		if code != 0 || !strings.Contains(out, fmt.Sprintf("warning: run and the hooks, if run as this user (uid %d), refuse the system configuration: %s", uid, refused)) {
			t.Errorf("config check: %d %s %s", code, out, stderr)
		}
		code, out, _ = execCmd(t, as("hook", "claude-code"), hookInput("claude-code", r.agentHome, "k1", "rm -rf /srv/data"))
		if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, refused) {
			t.Errorf("hook claude-code: %d %q", code, out)
		}
		if err := os.Chown(r.sysPath, os.Geteuid(), os.Getegid()); err != nil {
			t.Fatal(err)
		}
		// World-writable, or not YAML: refused as root too.
		if err := os.Chmod(r.sysPath, 0o666); err != nil {
			t.Fatal(err)
		}
		code, _, stderr = execCmd(t, r.proc(true, nil, "run", "--", "true"), "")
		if code != ExitError || !strings.Contains(stderr, refused+"file is world-writable (mode 0666)") {
			t.Errorf("world-writable: %d %q", code, stderr)
		}
		// The operators' commands refuse it too, and config check says why.
		for _, args := range [][]string{{"list"}, {"config", "check"}} {
			code, _, stderr = execCmd(t, r.proc(false, nil, args...), "")
			if code != ExitError || !strings.Contains(stderr, refused+"file is world-writable (mode 0666)") {
				t.Errorf("world-writable, %v: %d %q", args, code, stderr)
			}
		}
		if os.Geteuid() == 0 {
			r.writeSystem(t, "trust: [\n")
			code, _, stderr = execCmd(t, r.proc(true, nil, "run", "--", "true"), "")
			if code != ExitError || !strings.Contains(stderr, r.sysPath+":") || !strings.Contains(stderr, "not valid YAML") || !strings.Contains(stderr, "see approve-tui config check") {
				t.Errorf("not YAML: %d %q", code, stderr)
			}
			r.writeSystem(t, "channels: {}\n")
			code, _, stderr = execCmd(t, r.proc(false, nil, "list"), "")
			if code != ExitError || !strings.Contains(stderr, r.sysPath+`:1:1: the system configuration: unknown key "channels"; allowed: trust`) {
				t.Errorf("channels in the system file: %d %q", code, stderr)
			}
		}
	})

	// No system file: the user's configuration decides, as before, and
	// config check says that whoever writes it can turn trust off.
	t.Run("missing keeps today's behaviour", func(t *testing.T) {
		if err := os.Remove(r.sysPath); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		code, out, _ := execCmd(t, r.proc(true, nil, "config", "check"), "")
		if code != 0 || !strings.Contains(out, "agent side (run, the hooks, submit, wait): trust off, from the user configuration "+r.agentConfig+":1\n") ||
			!strings.Contains(out, "no system configuration at "+r.sysPath+": the agent side takes its trust settings from the user configuration, which whoever writes it") ||
			!strings.Contains(out, "anchor them: put the trust: section in "+r.sysPath+", owned by root") {
			t.Errorf("config check: %d\n%s", code, out)
		}
		// run under the agent's mode off: an unsigned approval lets it run.
		ran := filepath.Join(r.agentHome, "ran")
		run := r.proc(true, nil, "run", "--risk", "high", "--timeout", "30s", "--shell", "echo ran > "+ran)
		var out2, errb bytes.Buffer
		run.Stdout, run.Stderr = &out2, &errb
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- run.Wait() }()
		id := (&selfRig{db: r.db}).pendingID(t, "")
		code, _, stderr := execCmd(t, r.proc(false, nil, "approve", "--confirm", id, "--", id), "")
		if code != 0 || strings.Contains(stderr, "signed") {
			t.Fatalf("unsigned approve: %d %q", code, stderr)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run: %v %s", err, errb.String())
			}
		case <-time.After(30 * time.Second):
			_ = run.Process.Kill()
			t.Fatal("run did not end")
		}
		if b, err := os.ReadFile(ran); err != nil || string(b) != "ran\n" {
			t.Fatalf("the command did not run: %q %v; %s", b, err, errb.String())
		}
	})
}
