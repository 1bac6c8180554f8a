package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/spf13/cobra"
)

// hookEnv is a temporary HOME with an initialised store and a stand-in
// approve-tui (a script printing this build's version) for the agents'
// settings to name.
type hookEnv struct {
	t    *testing.T
	home string
	db   string
	bin  string
	env  map[string]string
}

func newHookEnv(t *testing.T) *hookEnv {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	e := &hookEnv{t: t, home: filepath.Join(root, "home"), db: filepath.Join(root, "state.db"),
		bin: filepath.Join(root, "bin", "approve-tui")}
	for _, d := range []string{e.home, filepath.Dir(e.bin)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\necho 'approve-tui " + Build.String() + "'\n"
	if err := os.WriteFile(e.bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e.env = map[string]string{"HOME": e.home, "APPROVE_TUI_DB": e.db, "PATH": "/usr/bin:/bin"}
	// The doctor takes the stand-in for this approve-tui.
	oldSelf := selfBinary
	selfBinary = func() (string, error) { return e.bin, nil }
	t.Cleanup(func() { selfBinary = oldSelf })
	if code, _, stderr := e.run("init"); code != 0 {
		t.Fatal(stderr)
	}
	return e
}

func (e *hookEnv) run(args ...string) (int, string, string) {
	e.t.Helper()
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errb)
	a.isTTY = func() bool { return false }
	a.getenv = func(k string) string { return e.env[k] }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := a.execute(ctx, args)
	return code, out.String(), errb.String()
}

func (e *hookEnv) install(who string, extra ...string) (int, string, string) {
	return e.run(append([]string{"hook", "install", who, "--binary", e.bin}, extra...)...)
}

func (e *hookEnv) read(path string) string {
	e.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *hookEnv) write(path, content string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// doctor runs hook doctor and returns its exit code and its lines by check
// name (the first word after the status).
func (e *hookEnv) doctor(who string, extra ...string) (int, map[string]string, string) {
	e.t.Helper()
	code, out, errb := e.run(append([]string{"hook", "doctor", who}, extra...)...)
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && (f[0] == "ok" || f[0] == "warning" || f[0] == "problem") {
			name := f[1]
			if name == "trust" && len(f) > 2 {
				name += " " + f[2]
			}
			lines[name] = l
		}
	}
	return code, lines, out + errb
}

func status(l string) string {
	f := strings.Fields(l)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func TestHookInstallClaudeCode(t *testing.T) {
	e := newHookEnv(t)
	path := filepath.Join(e.home, ".claude", "settings.json")
	code, out, stderr := e.install("claude-code")
	if code != 0 || !strings.Contains(out, "wrote "+path) {
		t.Fatalf("install: %d %s %s", code, out, stderr)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(e.read(path)), &s); err != nil {
		t.Fatal(err)
	}
	pre := s.Hooks["PreToolUse"][0]
	wantPre := e.bin + " hook claude-code --db " + e.db + " --timeout 900s"
	if pre.Matcher != "Bash|PowerShell" || pre.Hooks[0]["command"] != wantPre || pre.Hooks[0]["timeout"] != 930.0 ||
		pre.Hooks[0]["onFailure"] != "block" {
		t.Fatalf("PreToolUse: %+v", pre)
	}
	for _, ev := range []string{"PostToolUse", "PostToolUseFailure"} {
		if g := s.Hooks[ev]; len(g) != 1 || g[0].Hooks[0]["command"] != e.bin+" hook claude-code --db "+e.db {
			t.Fatalf("%s: %+v", ev, g)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	code, lines, all := e.doctor("claude-code")
	if code != 0 {
		t.Fatalf("doctor: %d\n%s", code, all)
	}
	for _, n := range []string{"settings", "PreToolUse", "PostToolUse", "PostToolUseFailure", "binary", "store", "timeout", "failure"} {
		if status(lines[n]) != "ok" {
			t.Errorf("%s: %q\n%s", n, lines[n], all)
		}
	}

	// Merge: the user's other entries, events and keys stay, in order; an
	// older approve-tui entry (another path, other flags) is replaced.
	user := `{
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/approve-tui hook claude-code --timeout 60s"}, {"type": "command", "command": "audit-log"}]},
      {"matcher": "Write", "hooks": [{"type": "command", "command": "fmt-check"}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  },
  "model": "opus"
}
`
	e.write(path, user)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := e.install("claude-code"); code != 0 {
		t.Fatal(stderr)
	}
	first := e.read(path)
	if code, out, _ := e.install("claude-code"); code != 0 || !strings.Contains(out, "unchanged "+path) {
		t.Fatalf("second install: %s", out)
	}
	if e.read(path) != first {
		t.Fatal("a second install changed the file")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode not kept: %v", fi.Mode())
	}
	for _, want := range []string{`"allow": [`, `"audit-log"`, `"fmt-check"`, `"notify-send done"`, `"model": "opus"`, wantPre} {
		if !strings.Contains(first, want) {
			t.Errorf("lost %s:\n%s", want, first)
		}
	}
	if strings.Contains(first, "/usr/local/bin/approve-tui") || strings.Index(first, `"permissions"`) > strings.Index(first, `"hooks"`) ||
		strings.Index(first, `"hooks"`) > strings.Index(first, `"model"`) {
		t.Errorf("merge:\n%s", first)
	}
	o, _ := agent.ParseJSONObject([]byte(first))
	if n := len(agent.FindHooks(o, agent.AgentClaudeCode)); n != 3 {
		t.Errorf("%d approve-tui entries", n)
	}

	// Doctor problems: a binary gone, a timeout the agent cuts short, the
	// store gone.
	e.write(path, strings.Replace(first, `"timeout": 930`, `"timeout": 60`, 1))
	if err := os.Rename(e.bin, e.bin+".gone"); err != nil {
		t.Fatal(err)
	}
	code, lines, all = e.doctor("claude-code")
	if code != ExitError || status(lines["binary"]) != "problem" || status(lines["timeout"]) != "problem" {
		t.Fatalf("doctor: %d\n%s", code, all)
	}
	_ = os.Rename(e.bin+".gone", e.bin)
	_ = os.Remove(e.db)
	code, lines, all = e.doctor("claude-code")
	if code != ExitError || status(lines["store"]) != "problem" || !strings.Contains(lines["store"], "approve-tui init") {
		t.Fatalf("doctor: %d\n%s", code, all)
	}
}

func TestHookInstallRefusals(t *testing.T) {
	e := newHookEnv(t)
	path := filepath.Join(e.home, ".claude", "settings.json")
	bad := "{\"hooks\": {\n  \"PreToolUse\": [,]\n}}\n"
	e.write(path, bad)
	code, _, stderr := e.install("claude-code")
	if code != ExitError || !strings.Contains(stderr, "not valid JSON near line 2") || e.read(path) != bad {
		t.Fatalf("malformed: %d %s", code, stderr)
	}
	code, lines, _ := e.doctor("claude-code")
	if code != ExitError || status(lines["settings"]) != "problem" {
		t.Fatal("doctor on malformed settings")
	}

	// Codex: a malformed config.toml leaves both files untouched.
	cfg := filepath.Join(e.home, ".codex", "config.toml")
	e.write(cfg, "model = \n")
	code, _, stderr = e.install("codex")
	if code != ExitError || !strings.Contains(stderr, "TOML") || e.read(cfg) != "model = \n" {
		t.Fatalf("codex malformed: %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, ".codex", "hooks.json")); err == nil {
		t.Fatal("hooks.json written although config.toml could not be")
	}

	// No store yet: refused, nothing written, "approve-tui init" said.
	e2 := newHookEnv(t)
	_ = os.Remove(e2.db)
	code, _, stderr = e2.install("gemini")
	if code != ExitUnavailable || !strings.Contains(stderr, "approve-tui init") {
		t.Fatalf("no store: %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(e2.home, ".gemini")); err == nil {
		t.Fatal("written without a store")
	}

	for _, args := range [][]string{
		{"hook", "install"}, {"hook", "install", "cursor"}, {"hook", "install", "codex", "--scope", "global"},
		{"hook", "install", "codex", "--timeout", "1500ms"}, {"hook", "install", "codex", "--binary", "approve-tui"},
		{"hook", "install", "codex", "--binary", "/usr/bin/env"}, {"hook", "doctor", "nosuch"},
	} {
		if code, _, stderr := e.run(args...); code != ExitUsage {
			t.Errorf("%v: %d %s", args, code, stderr)
		}
	}
}

func TestHookInstallCodex(t *testing.T) {
	e := newHookEnv(t)
	cdir := filepath.Join(e.home, ".codex")
	hooks, cfg := filepath.Join(cdir, "hooks.json"), filepath.Join(cdir, "config.toml")
	userCfg := "# mine\nmodel = \"o3\"\n\n[hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:x\"\n"
	e.write(cfg, userCfg)
	e.write(hooks, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`)
	code, out, stderr := e.install("codex")
	if code != 0 || !strings.Contains(out, "(the hooks' trust)") {
		t.Fatalf("%d %s %s", code, out, stderr)
	}
	c := e.read(cfg)
	if !strings.HasPrefix(c, userCfg) || strings.Count(c, "trusted_hash") != 3 ||
		!strings.Contains(c, `[hooks.state."`+hooks+`:pre_tool_use:0:0"]`) || !strings.Contains(c, `[hooks.state."`+hooks+`:post_tool_use:0:0"]`) {
		t.Fatalf("config.toml:\n%s", c)
	}
	h := e.read(hooks)
	if !strings.Contains(h, `"say done"`) || !strings.Contains(h, `"statusMessage": "Waiting for approval in approve-tui"`) {
		t.Fatalf("hooks.json:\n%s", h)
	}
	code, lines, all := e.doctor("codex")
	if code != 0 || status(lines["trust PreToolUse"]) != "ok" || status(lines["trust PostToolUse"]) != "ok" {
		t.Fatalf("doctor: %d\n%s", code, all)
	}
	// Idempotent.
	if code, _, _ := e.install("codex"); code != 0 || e.read(cfg) != c || e.read(hooks) != h {
		t.Fatal("second install changed the files")
	}

	// An edit of hooks.json (the timeout) changes the hash: doctor says so,
	// install refreshes it in the same table.
	e.write(hooks, strings.Replace(h, `"timeout": 930`, `"timeout": 950`, 1))
	code, lines, all = e.doctor("codex")
	if code != ExitError || !strings.Contains(lines["trust PreToolUse"], "changed since it was trusted") {
		t.Fatalf("doctor after edit: %d\n%s", code, all)
	}
	if code, _, stderr := e.install("codex", "--timeout", "600s"); code != 0 {
		t.Fatal(stderr)
	}
	c2 := e.read(cfg)
	if c2 == c || strings.Count(c2, "trusted_hash") != 3 || !strings.HasPrefix(c2, userCfg) {
		t.Fatalf("re-install:\n%s", c2)
	}
	if code, lines, all := e.doctor("codex"); code != 0 || !strings.Contains(lines["timeout"], "10m00s") {
		t.Fatalf("doctor after re-install: %d\n%s", code, all)
	}

	// Project scope: the hooks go into the project, their trust into the
	// user's config.toml; the project itself is not trusted by install.
	proj := filepath.Join(e.home, "src", "app")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = e.install("codex", "--scope", "project", "--dir", proj)
	if code != 0 || !strings.Contains(out, "only in a trusted project") {
		t.Fatalf("project: %d %s %s", code, out, stderr)
	}
	if !strings.Contains(e.read(cfg), filepath.Join(proj, ".codex", "hooks.json")+`:pre_tool_use:0:0`) ||
		strings.Contains(e.read(cfg), "trust_level") {
		t.Fatalf("config.toml:\n%s", e.read(cfg))
	}
	code, lines, all = e.doctor("codex", "--scope", "project", "--dir", proj)
	if code != ExitError || status(lines["project"]) != "problem" || status(lines["trust PreToolUse"]) != "ok" {
		t.Fatalf("doctor project: %d\n%s", code, all)
	}
	e.write(cfg, e.read(cfg)+"\n[projects.\""+proj+"\"]\ntrust_level = \"trusted\"\n")
	if code, _, all := e.doctor("codex", "--scope", "project", "--dir", proj); code != 0 {
		t.Fatalf("doctor trusted project: %d\n%s", code, all)
	}

	// Hooks turned off, for all or for this one: said by install, a
	// problem for doctor.
	key := filepath.Join(proj, ".codex", "hooks.json") + ":pre_tool_use:0:0"
	e.write(cfg, strings.Replace(e.read(cfg), `[hooks.state."`+key+`"]`, `[hooks.state."`+key+`"]`+"\nenabled = false", 1)+"\n[features]\nhooks = false\n")
	code, out, _ = e.install("codex", "--scope", "project", "--dir", proj)
	if code != 0 || !strings.Contains(out, "enabled = false") || !strings.Contains(out, "features.hooks = false") {
		t.Fatalf("install with hooks off: %d\n%s", code, out)
	}
	code, lines, all = e.doctor("codex", "--scope", "project", "--dir", proj)
	if code != ExitError || status(lines["feature"]) != "problem" || !strings.Contains(lines["trust PreToolUse"], "disabled") {
		t.Fatalf("doctor with hooks off: %d\n%s", code, all)
	}
}

func TestHookInstallGemini(t *testing.T) {
	e := newHookEnv(t)
	path := filepath.Join(e.home, ".gemini", "settings.json")
	e.write(path, `{"general": {"vimMode": true}, "hooks": {"AfterTool": [{"matcher": "*", "hooks": [{"type": "command", "command": "log-it"}]}]}}`)
	code, out, stderr := e.install("gemini")
	if code != 0 || !strings.Contains(out, "runs no hook (user hooks included) in a folder it does not trust") {
		t.Fatalf("%d %s %s", code, out, stderr)
	}
	var s struct {
		General     map[string]any
		HooksConfig map[string]any
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(e.read(path)), &s); err != nil {
		t.Fatal(err)
	}
	bt := s.Hooks["BeforeTool"]
	if len(bt) != 1 || bt[0].Matcher != "run_shell_command" || bt[0].Hooks[0]["timeout"] != 930000.0 ||
		bt[0].Hooks[0]["command"] != e.bin+" hook gemini --db "+e.db+" --timeout 900s" || bt[0].Hooks[0]["name"] != "approve-tui" ||
		s.HooksConfig["enabled"] != true || s.General["vimMode"] != true || len(s.Hooks["AfterTool"]) != 2 ||
		s.Hooks["AfterTool"][0].Hooks[0]["command"] != "log-it" || s.Hooks["AfterTool"][1].Matcher != "run_shell_command" ||
		s.Hooks["AfterTool"][1].Hooks[0]["command"] != e.bin+" hook gemini --db "+e.db || s.Hooks["AfterTool"][1].Hooks[0]["timeout"] != nil {
		t.Fatalf("settings:\n%s", e.read(path))
	}
	first := e.read(path)
	if e.install("gemini"); e.read(path) != first {
		t.Fatal("not idempotent")
	}

	// The folder: untrusted, then trusted by a TRUST_PARENT rule.
	dir := filepath.Join(e.home, "work", "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	code, lines, all := e.doctor("gemini", "--dir", dir)
	if code != ExitError || status(lines["folder"]) != "problem" || status(lines["switch"]) != "ok" {
		t.Fatalf("doctor: %d\n%s", code, all)
	}
	tf := filepath.Join(e.home, ".gemini", "trustedFolders.json")
	e.write(tf, `{"`+filepath.Join(e.home, "work", "x")+`": "TRUST_PARENT"}`)
	if code, lines, all = e.doctor("gemini", "--dir", dir); code != 0 || !strings.Contains(lines["folder"], "TRUST_PARENT") {
		t.Fatalf("doctor trusted: %d\n%s", code, all)
	}
	e.write(tf, `{"`+filepath.Join(e.home, "work")+`": "TRUST_FOLDER", "`+dir+`": "DO_NOT_TRUST"}`)
	if code, lines, all = e.doctor("gemini", "--dir", dir); code != ExitError || !strings.Contains(lines["folder"], "DO_NOT_TRUST") {
		t.Fatalf("doctor distrusted: %d\n%s", code, all)
	}
	e.write(tf, `{"`+dir+`": "TRUST_FOLDER"}`)

	// The hooks system turned off by the user: left as is, said, a problem.
	e.write(path, strings.Replace(first, `"enabled": true`, `"enabled": false`, 1))
	code, out, _ = e.install("gemini")
	if code != 0 || !strings.Contains(out, `"enabled": false`) || !strings.Contains(e.read(path), `"enabled": false`) {
		t.Fatalf("switch off: %s\n%s", out, e.read(path))
	}
	if code, lines, all = e.doctor("gemini", "--dir", dir); code != ExitError || status(lines["switch"]) != "problem" {
		t.Fatalf("doctor switch: %d\n%s", code, all)
	}
}

// Every command group refuses a subcommand it does not have: "unknown
// command", exit 2; alone, it prints its help.
func TestUnknownSubcommandOfEveryGroup(t *testing.T) {
	e := newHookEnv(t)
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(append([]string{}, path...), sub.Name())
			if sub.HasSubCommands() {
				groups = append(groups, p)
			}
			walk(sub, p)
		}
	}
	walk(newApp(nil, &bytes.Buffer{}, &bytes.Buffer{}).root(), nil)
	if len(groups) < 4 {
		t.Fatalf("groups: %v", groups)
	}
	for _, g := range groups {
		code, out, stderr := e.run(append(g, "nosuch")...)
		if code != ExitUsage || out != "" || !strings.Contains(stderr, `unknown command "nosuch"`) && !strings.Contains(stderr, `"nosuch" is not`) {
			t.Errorf("%v nosuch: %d %q %q", g, code, out, stderr)
		}
		if code, out, _ := e.run(g...); code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%v alone: %d %q", g, code, out)
		}
	}
}

// realCodex is the real Codex's binary under $APPROVE_TUI_TEST_AGENTS;
// the test is skipped, saying why, when there is none.
func realCodex(t *testing.T) string {
	t.Helper()
	nm := os.Getenv("APPROVE_TUI_TEST_AGENTS")
	if nm == "" {
		t.Skip("APPROVE_TUI_TEST_AGENTS (a node_modules folder holding @openai/codex) is not set: the real Codex is not run")
	}
	codex := filepath.Join(nm, ".bin", "codex")
	if _, err := os.Stat(codex); err != nil {
		t.Skipf("no codex in %s: %v", nm, err)
	}
	return codex
}

// The real Codex is the oracle: after install, codex app-server's
// hooks/list reports every approve-tui hook trusted, for a user and a
// project install, with a binary path that needs escaping and a symlinked
// CODEX_HOME.
func TestHookInstallCodexRealOracle(t *testing.T) {
	codex := realCodex(t)
	e := newHookEnv(t)
	odd := filepath.Join(filepath.Dir(filepath.Dir(e.bin)), `we"ird <dir> é`, "approve-tui")
	real := filepath.Join(e.home, "codex-real")
	link := filepath.Join(e.home, "codex-link")
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	e.env["CODEX_HOME"] = link
	proj := filepath.Join(e.home, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The user's own hooks, trusted, around an older approve-tui entry:
	// install moves them, and their trust must follow.
	hooksPath := filepath.Join(real, "hooks.json")
	e.write(hooksPath, `{"hooks": {"PreToolUse": [
  {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "/old/approve-tui hook codex"}, {"type": "command", "command": "echo a", "timeout": 5}]},
  {"matcher": "apply_patch", "hooks": [{"type": "command", "command": "echo b", "statusMessage": "b"}]}]}}`)
	trustA := agent.CodexHookHash(agent.CodexHandler{Event: "pre_tool_use", Matcher: "^Bash$", Command: "echo a", Timeout: 5})
	trustB := agent.CodexHookHash(agent.CodexHandler{Event: "pre_tool_use", Matcher: "apply_patch", Command: "echo b", StatusMessage: "b"})
	e.write(filepath.Join(real, "config.toml"), "# keep me\n[projects.\""+proj+"\"]\ntrust_level = \"trusted\"\n\n"+
		"[hooks.state.\""+hooksPath+":pre_tool_use:0:1\"]\ntrusted_hash = \""+trustA+"\"\n\n"+
		"[hooks.state.\""+hooksPath+":pre_tool_use:1:0\"]\ntrusted_hash = \""+trustB+"\"\n")
	before := codexHooksList(t, codex, map[string]string{"HOME": e.home, "CODEX_HOME": link}, proj)
	if len(before) != 3 || before[1].TrustStatus != "trusted" || before[2].TrustStatus != "trusted" {
		t.Fatalf("before install: %+v", before)
	}
	for _, args := range [][]string{
		{"hook", "install", "codex", "--binary", odd},
		{"hook", "install", "codex", "--binary", odd, "--scope", "project", "--dir", proj, "--timeout", "120s"},
	} {
		if code, _, stderr := e.run(args...); code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
	}
	hooks := codexHooksList(t, codex, map[string]string{"HOME": e.home, "CODEX_HOME": link}, proj)
	n := 0
	for _, h := range hooks {
		if h.TrustStatus != "trusted" {
			t.Errorf("%s: %s (hash %s)", h.Key, h.TrustStatus, h.CurrentHash)
		}
		if agent.IsApproveTUIHook(h.Command, agent.AgentCodex) {
			n++
		}
	}
	if n != 4 || len(hooks) != 6 {
		t.Fatalf("%d approve-tui hooks listed: %+v", n, hooks)
	}
}

type codexHook struct {
	Key, Command, CurrentHash, TrustStatus string
}

// codexHooksList asks the real codex app-server (JSON-RPC over stdio) for
// the hooks it sees in cwd.
func codexHooksList(t *testing.T, codex string, env map[string]string, cwd string) []codexHook {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, "app-server")
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "RUST_LOG=error")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(outp)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	send := func(s string) {
		if _, err := in.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	recv := func(id int) json.RawMessage {
		for sc.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil && *m.ID == id {
				if m.Error != nil {
					t.Fatalf("codex: %s", m.Error)
				}
				return m.Result
			}
		}
		t.Fatalf("codex app-server ended: %v\n%s", sc.Err(), errb.String())
		return nil
	}
	send(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"approve-tui-test","version":"1"}}}`)
	recv(1)
	send(`{"method":"initialized"}`)
	cwdJSON, _ := json.Marshal(cwd)
	send(`{"id":2,"method":"hooks/list","params":{"cwds":[` + string(cwdJSON) + `]}}`)
	var res struct {
		Data []struct {
			Hooks    []codexHook
			Warnings []string
			Errors   []json.RawMessage
		}
	}
	if err := json.Unmarshal(recv(2), &res); err != nil {
		t.Fatal(err)
	}
	var all []codexHook
	for _, d := range res.Data {
		if len(d.Warnings) > 0 || len(d.Errors) > 0 {
			t.Errorf("codex warnings %v errors %s", d.Warnings, d.Errors)
		}
		all = append(all, d.Hooks...)
	}
	return all
}

// install's and doctor's --help say their exit codes and fit 80 columns.
func TestHookInstallDoctorHelp(t *testing.T) {
	for cmd, want := range map[string][]int{"install": {0, 1, 2, 6}, "doctor": {0, 1, 2}} {
		help := helpOf(t, "hook", cmd)
		if got := exitCodesIn(help); !slices.Equal(got, want) {
			t.Errorf("hook %s --help: exit codes %v, want %v", cmd, got, want)
		}
		for _, l := range strings.Split(help[:strings.Index(help, "\nUsage:")], "\n") {
			if cells(l) > 80 {
				t.Errorf("hook %s --help: a line of %d cells: %q", cmd, cells(l), l)
			}
		}
	}
}

// geminiChunk is the bundled module of the installed Gemini CLI that
// exports its folder-trust check and hook runner.
func geminiChunk(t *testing.T) string {
	t.Helper()
	nm := os.Getenv("APPROVE_TUI_TEST_AGENTS")
	if nm == "" {
		t.Skip("APPROVE_TUI_TEST_AGENTS (a node_modules folder holding @google/gemini-cli) is not set: the real Gemini CLI is not asked")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the real Gemini CLI cannot be asked")
	}
	chunks, _ := filepath.Glob(filepath.Join(nm, "@google", "gemini-cli", "bundle", "chunk-*.js"))
	for _, c := range chunks {
		b, err := os.ReadFile(c)
		if err == nil && bytes.Contains(b, []byte("\n  checkPathTrust,\n")) && bytes.Contains(b, []byte("\n  HookRunner,\n")) {
			return c
		}
	}
	t.Skipf("no bundle chunk of %s exports checkPathTrust and HookRunner: another Gemini CLI version", nm)
	return ""
}

const geminiProbe = `
const m = await import(process.argv[1]);
const cases = JSON.parse(process.argv[2]);
const out = [];
for (const c of cases) {
  process.env.GEMINI_CLI_TRUSTED_FOLDERS_PATH = c.file;
  m.resetTrustedFoldersForTesting();
  const r = m.checkPathTrust({path: c.dir, isFolderTrustEnabled: true});
  out.push(r.isTrusted === true);
}
const runner = new m.HookRunner({sanitizationConfig: {}, storage: {getPlansDir: () => "/tmp"}, isTrustedFolder: () => true});
const res = await runner.executeHook({type: "command", command: process.argv[3], source: "user", timeout: 10000},
  "BeforeTool", {cwd: "/", session_id: "s"});
console.log(JSON.stringify({trusted: out, missing: res.output || null}));
process.exit(0);
`

// The real Gemini CLI is the oracle for folder trust (doctor's folder
// check decides as it does) and for a hook that cannot start (a deny).
func TestHookDoctorGeminiRealOracle(t *testing.T) {
	chunk := geminiChunk(t)
	e := newHookEnv(t)
	base := filepath.Join(e.home, "w")
	dir := filepath.Join(base, "app")
	link := filepath.Join(e.home, "link")
	for _, d := range []string{dir, filepath.Join(base, "other")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(base, link); err != nil {
		t.Fatal(err)
	}
	rules := []string{
		``,
		`{"` + dir + `": "TRUST_FOLDER"}`,
		`{"` + filepath.Join(base, "other") + `": "TRUST_PARENT"}`,
		`{"` + base + `": "TRUST_FOLDER", "` + dir + `": "DO_NOT_TRUST"}`,
		`{"` + base + `": "DO_NOT_TRUST", "` + dir + `": "TRUST_FOLDER"}`,
		`{"` + filepath.Join(dir, "sub") + `": "TRUST_FOLDER"}`,
		`{"` + link + `": "TRUST_FOLDER"}`,
		`{"` + base + `x": "TRUST_FOLDER"}`,
	}
	type probeCase struct {
		File string `json:"file"`
		Dir  string `json:"dir"`
	}
	var cases []probeCase
	for i, r := range rules {
		f := filepath.Join(e.home, "tf"+strconv.Itoa(i)+".json")
		if r != "" {
			e.write(f, r)
		}
		cases = append(cases, probeCase{f, dir})
	}
	cj, _ := json.Marshal(cases)
	missing := filepath.Join(e.home, "nowhere", "approve-tui") + " hook gemini"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--input-type=module", "-e", geminiProbe, chunk, string(cj), missing)
	cmd.Env = append(os.Environ(), "HOME="+e.home, "GEMINI_CLI_HOME="+e.home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr.String())
	}
	var res struct {
		Trusted []bool
		Missing map[string]any
	}
	if err := json.Unmarshal(out[bytes.LastIndexByte(bytes.TrimSpace(out), '\n')+1:], &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(res.Trusted) != len(cases) {
		t.Fatalf("answers: %s", out)
	}
	a := newApp(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	for i, c := range cases {
		a.getenv = func(k string) string {
			if k == "GEMINI_CLI_TRUSTED_FOLDERS_PATH" {
				return c.File
			}
			return e.env[k]
		}
		if got, why := a.geminiFolderTrusted(e.home, c.Dir); got != res.Trusted[i] {
			t.Errorf("rules %s: doctor says trusted=%v (%s), Gemini CLI %v", rules[i], got, why, res.Trusted[i])
		}
	}
	if res.Missing["decision"] != "deny" {
		t.Errorf("a hook that cannot start: %v, want a deny", res.Missing)
	}
}

// A project install: the files go into the project; doctor without
// --scope points there.
func TestHookInstallProjectScope(t *testing.T) {
	e := newHookEnv(t)
	proj := filepath.Join(e.home, "repo")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := e.install("claude-code", "--scope", "project", "--dir", proj); code != 0 {
		t.Fatal(stderr)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.home, ".claude")); err == nil {
		t.Fatal("the user's settings written for a project install")
	}
	code, lines, all := e.doctor("claude-code", "--dir", proj)
	if code != ExitError || !strings.Contains(lines["settings"], "check it with --scope project") {
		t.Fatalf("doctor, user scope: %d\n%s", code, all)
	}
	if code, _, all := e.doctor("claude-code", "--scope", "project", "--dir", proj); code != 0 {
		t.Fatalf("doctor, project scope: %d\n%s", code, all)
	}
}

// The README's hook setup, as written, in a fresh HOME with the real
// binary on PATH: init, install, and a doctor with nothing to report.
func TestREADMEAgentHooks(t *testing.T) {
	block := readmeBlocks(t)["agent-hooks"]
	if block == "" {
		t.Fatal("neither README.md nor docs/ has a block marked <!-- readme-test: agent-hooks -->")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-e", "-c", block)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "TERM=dumb"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"wrote " + filepath.Join(home, ".claude", "settings.json"), "no problems, no warnings"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
