package cli

import (
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"golang.org/x/crypto/ssh"
)

// The judgement wired into the gate, as a user tries it, with real
// processes: run and the Claude Code hook are this program, the store a
// real SQLite file, git and terraform the real ones.

// judgeRig is a store, a workspace and a home of their own.
type judgeRig struct{ *selfRig }

func newJudgeRig(t *testing.T) judgeRig {
	t.Helper()
	r := newSelfRig(t)
	home := filepath.Dir(filepath.Dir(r.db))
	// The rig's own configuration place, whatever this process's says.
	r.env = append(r.env, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "APPROVE_TUI_CONFIG=")
	return judgeRig{r}
}

// policy puts src in force with `policy set`.
func (r judgeRig) policy(t *testing.T, src string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := r.cmd(t, "policy", "set", f).CombinedOutput(); err != nil {
		t.Fatalf("policy set: %v: %s", err, out)
	}
}

// config writes the configuration file the rig's processes read.
func (r judgeRig) config(t *testing.T, src string) {
	t.Helper()
	home := filepath.Dir(filepath.Dir(r.db))
	p := filepath.Join(home, ".config", "approve-tui", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

// proposals are the commands proposed so far, with their risk and reason.
func (r judgeRig) proposals(t *testing.T) map[string][2]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+r.db+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT payload_json FROM gateway_approvals`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]string{}
	for rows.Next() {
		var payload string
		if err := rows.Scan(&payload); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(payload), &m)
		c, _ := m["command"].(string)
		l, _ := m["risk_level"].(string)
		why, _ := m["risk_reason"].(string)
		out[c] = [2]string{l, why}
	}
	return out
}

// hook runs the Claude Code hook on one Bash call in dir and says whether
// it let the call through.
func (r judgeRig) hook(t *testing.T, dir, key, command string, args ...string) (bool, string) {
	t.Helper()
	c := r.cmd(t, append([]string{"hook", "claude-code", "--timeout", "2s", "--low", "allow"}, args...)...)
	c.Stdin = strings.NewReader(hookInput("claude-code", dir, key, command))
	out, err := c.Output()
	if err != nil {
		t.Fatalf("hook: %v: %s", err, out)
	}
	return letThrough(t, "claude-code", out), string(out)
}

// run runs `approve-tui run` in dir; it returns the exit code.
func (r judgeRig) run(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	c := r.cmd(t, append([]string{"run", "--timeout", "2s"}, args...)...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("run: %v", err)
	return 0, ""
}

// A rule of the policy on `terraform apply*` holds run and the Claude Code
// hook whatever the command's level: the command is asked, and nothing
// runs while nobody approves.
func TestPolicyRuleHoldsRunAndTheClaudeHook(t *testing.T) {
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not installed: skipped (a saved plan is what makes terraform apply low risk)")
	}
	r := newJudgeRig(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("output \"x\" {\n  value = 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-input=false"}, {"plan", "-input=false", "-out=plan.out"}} {
		c := exec.Command("terraform", append([]string{"-chdir=" + dir}, args...)...)
		c.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("terraform %v: %v\n%s", args, err, out)
		}
	}
	r.policy(t, "policy:\n  - match: {command: \"terraform apply*\"}\n    approvals: 2\n")
	const rule = `rule 1 (line 2): the command matches "terraform apply*"`

	if code, out := r.run(t, dir, "--", "terraform", "apply", "plan.out"); code != 12 {
		t.Fatalf("run: exit %d, want 12 (held, then withdrawn): %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate")); err == nil {
		t.Fatal("terraform apply ran")
	}
	if through, out := r.hook(t, dir, "toolu_tf", "terraform apply plan.out"); through {
		t.Fatalf("the hook let it through: %s", out)
	}
	ps := r.proposals(t)
	p, ok := ps["terraform apply plan.out"]
	if !ok {
		t.Fatalf("no proposal: %v", ps)
	}
	// Judged low, it would have gone unasked: the rule is why it was asked.
	if p[0] == "low" && !strings.Contains(p[1], rule) {
		t.Fatalf("the proposal's reason %q does not name the rule", p[1])
	}
}

// An effect rule binds a LOW command in the workspace: `rm build/x` waits
// for its approval on run and the hook, and the file stays.
func TestEffectRuleHoldsAnInWorkspaceDelete(t *testing.T) {
	r := newJudgeRig(t)
	x := filepath.Join(r.cwd, "build", "x")
	if err := os.WriteFile(x, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without the rule, it goes unasked (the table and the judgement find
	// it low), as a workspace command should.
	if through, out := r.hook(t, r.cwd, "toolu_free", "rm build/x"); !through {
		t.Fatalf("without a rule: %s", out)
	}
	r.policy(t, "policy:\n  - match: {effect: delete}\n    approvals: 1\n")
	if code, out := r.run(t, r.cwd, "--", "rm", "build/x"); code != 12 {
		t.Fatalf("run: exit %d, want 12 (held, then withdrawn): %s", code, out)
	}
	if through, out := r.hook(t, r.cwd, "toolu_rm", "rm build/x"); through {
		t.Fatalf("the hook let it through: %s", out)
	}
	if _, err := os.Stat(x); err != nil {
		t.Fatalf("build/x is gone: %v", err)
	}
	p, ok := r.proposals(t)["rm build/x"]
	if !ok || p[0] != "low" || !strings.Contains(p[1], "the command has the effect delete") {
		t.Fatalf("proposal %v", p)
	}
	// A command without the effect is not held.
	if code, out := r.run(t, r.cwd, "--", "true"); code != 0 {
		t.Fatalf("true: exit %d: %s", code, out)
	}
	// policy show and explain say so.
	out, err := r.cmd(t, "policy", "show").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "effect delete") {
		t.Fatalf("policy show: %v: %s", err, out)
	}
	out, err = r.cmd(t, "policy", "explain", "--command", "rm build/x").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "effects: delete") || !strings.Contains(string(out), "the command has the effect delete") {
		t.Fatalf("policy explain: %v: %s", err, out)
	}
}

// A hook set to read-only lets `git status` through and asks for
// `git push --force` and for a write in the workspace; nothing asks for
// everything; the configuration file's risk: unasked is the default the
// flag overrides.
func TestHookUnaskedReadOnly(t *testing.T) {
	r := newJudgeRig(t)
	if out, err := exec.Command("git", "init", "-q", r.cwd).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if through, out := r.hook(t, r.cwd, "toolu_st", "git status", "--unasked", "read-only"); !through {
		t.Fatalf("git status was asked: %s", out)
	}
	if through, out := r.hook(t, r.cwd, "toolu_push", "git push --force", "--unasked", "read-only"); through {
		t.Fatalf("git push --force went through: %s", out)
	}
	if through, out := r.hook(t, r.cwd, "toolu_touch", "touch build/y", "--unasked", "read-only"); through {
		t.Fatalf("a write went through under read-only: %s", out)
	}
	if through, out := r.hook(t, r.cwd, "toolu_st2", "git status", "--unasked", "nothing"); through {
		t.Fatalf("git status went through under nothing: %s", out)
	}
	ps := r.proposals(t)
	for _, c := range []string{"git push --force", "touch build/y", "git status"} {
		if _, ok := ps[c]; !ok {
			t.Errorf("%s was not asked: %v", c, ps)
		}
	}
	if _, err := os.Stat(filepath.Join(r.cwd, "build", "y")); err == nil {
		t.Fatal("touch ran")
	}

	// The file's default, and the flag over it.
	r.config(t, "risk:\n  unasked: nothing\n")
	if through, out := r.hook(t, r.cwd, "toolu_st3", "git status"); through {
		t.Fatalf("git status went through under the file's nothing: %s", out)
	}
	if through, out := r.hook(t, r.cwd, "toolu_st4", "git status", "--unasked", "low"); !through {
		t.Fatalf("--unasked low did not win over the file: %s", out)
	}
	// run takes the same.
	if code, out := r.run(t, r.cwd, "--", "git", "status"); code != 12 {
		t.Fatalf("run under the file's nothing: exit %d: %s", code, out)
	}
	if code, out := r.run(t, r.cwd, "--unasked", "read-only", "--", "git", "status"); code != 0 {
		t.Fatalf("run --unasked read-only git status: exit %d: %s", code, out)
	}
	// A bad value is a deny (the hook) and a usage error (run).
	r.config(t, "risk:\n  unasked: everything\n")
	if through, out := r.hook(t, r.cwd, "toolu_bad", "git status"); through || !strings.Contains(out, "risk: unasked") {
		t.Fatalf("a bad configuration file: %s", out)
	}
	if code, out := r.run(t, r.cwd, "--", "git", "status"); code == 0 {
		t.Fatalf("run with a bad configuration file ran: %s", out)
	}
}

// hook install writes --unasked when given; hook doctor reports what the
// hook lets through.
func TestHookInstallAndDoctorUnasked(t *testing.T) {
	r := newJudgeRig(t)
	home := filepath.Dir(filepath.Dir(r.db))
	r.env = append(r.env, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"))
	if out, err := r.cmd(t, "hook", "install", "claude-code", "--unasked", "everything").CombinedOutput(); err == nil {
		t.Fatalf("install took a bad --unasked: %s", out)
	}
	out, err := r.cmd(t, "hook", "install", "claude-code", "--unasked", "read-only").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--unasked read-only") {
		t.Fatalf("install: %v: %s", err, out)
	}
	settings, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil || !strings.Contains(string(settings), "--unasked read-only") {
		t.Fatalf("settings: %v: %s", err, settings)
	}
	out, _ = r.cmd(t, "hook", "doctor", "claude-code").CombinedOutput()
	if !strings.Contains(string(out), "read-only (--unasked): only what is proven read-only goes without asking") {
		t.Fatalf("doctor: %s", out)
	}
	// Without the flag, the file's value, then the default.
	if out, err := r.cmd(t, "hook", "install", "claude-code").CombinedOutput(); err != nil {
		t.Fatalf("install: %v: %s", err, out)
	}
	out, _ = r.cmd(t, "hook", "doctor", "claude-code").CombinedOutput()
	if !strings.Contains(string(out), "low (the default): everything judged low goes without asking") {
		t.Fatalf("doctor: %s", out)
	}
	r.config(t, "risk:\n  unasked: nothing\n")
	out, _ = r.cmd(t, "hook", "doctor", "claude-code").CombinedOutput()
	if !strings.Contains(string(out), "nothing (") || !strings.Contains(string(out), "every command is asked") {
		t.Fatalf("doctor: %s", out)
	}
	// Whether the hook checks signatures, and whether the agent could turn
	// that off.
	if !regexp.MustCompile(`(?m)^ok +signatures +off \(.*approvals are not signed`).Match(out) {
		t.Fatalf("doctor without trust: %s", out)
	}
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(home, "allowed_signers")
	if err := os.WriteFile(allowed, []byte("alice "+strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.config(t, "trust:\n  allowed_signers: "+allowed+"\n")
	out, _ = r.cmd(t, "hook", "doctor", "claude-code").CombinedOutput()
	want := `(?m)^warning +signatures +required \(.*so it can turn it off`
	if os.Geteuid() != 0 {
		want = `(?m)^problem +signatures +the hook refuses every approval: ` // the file is the running user's: the agent's
	}
	if !regexp.MustCompile(want).Match(out) {
		t.Fatalf("doctor with trust: %s", out)
	}
}

// A session of the SSH server judges with the server's context (its
// configuration file's paths and programs), not with the defaults a
// session would otherwise read; a local process judges with its file's.
func TestSessionJudgesAsTheServer(t *testing.T) {
	a := newApp(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
	a.getenv = func(string) string { return "" }
	a.db = "/srv/approve/state.db"
	c, err := a.riskContext("/w")
	if err != nil || c.Cwd != "/w" || !slices.Contains(c.Paths, "/srv/approve/state.db") || len(c.Programs) != 0 {
		t.Fatalf("%+v %v", c, err)
	}
	server := risk.Context{Paths: []string{"/srv/prod/"}, Programs: map[string]model.RiskLevel{"psql": model.RiskHigh}}
	a.judging = &server
	c, err = a.riskContext("/w")
	if err != nil || c.Cwd != "/w" || !slices.Equal(c.Paths, server.Paths) || c.Programs["psql"] != model.RiskHigh {
		t.Fatalf("%+v %v", c, err)
	}
	if server.Cwd != "" {
		t.Fatal("the server's context was changed")
	}
}
