package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/agent"
)

func (e *hookEnv) uninstall(who string, extra ...string) (int, string, string) {
	return e.run(append([]string{"hook", "uninstall", who}, extra...)...)
}

// canonical is src as the settings writer writes it.
func canonical(t *testing.T, src string) string {
	t.Helper()
	o, err := agent.ParseJSONObject([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b, err := agent.FormatJSON(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// Install then uninstall gives back the user's file, for every agent; a
// second uninstall finds nothing and writes nothing; the store is not
// needed.
func TestHookUninstallRoundTrip(t *testing.T) {
	for who, user := range map[string]string{
		"claude-code": `{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine --check"}]}],
			"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}, "env": {"A": "1"}}`,
		"codex":  `{"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "echo a", "timeout": 5}]}]}}`,
		"gemini": `{"general": {"vimMode": true}, "hooksConfig": {"enabled": true}, "hooks": {"AfterTool": [{"matcher": "*", "hooks": [{"type": "command", "command": "log-it"}]}]}}`,
	} {
		t.Run(who, func(t *testing.T) {
			e := newHookEnv(t)
			path := map[string]string{
				"claude-code": filepath.Join(e.home, ".claude", "settings.json"),
				"codex":       filepath.Join(e.home, ".codex", "hooks.json"),
				"gemini":      filepath.Join(e.home, ".gemini", "settings.json"),
			}[who]
			cfg := filepath.Join(e.home, ".codex", "config.toml")
			before := canonical(t, user)
			e.write(path, before)
			cfgBefore := "# mine\nmodel = \"o3\"\n\n[hooks.state.\"" + path + ":pre_tool_use:0:0\"]\ntrusted_hash = \"" +
				agent.CodexHookHash(agent.CodexHandler{Event: "pre_tool_use", Matcher: "^Bash$", Command: "echo a", Timeout: 5}) + "\"\n"
			if who == "codex" {
				e.write(cfg, cfgBefore)
			}
			if code, _, stderr := e.install(who); code != 0 {
				t.Fatal(stderr)
			}
			if e.read(path) == before {
				t.Fatal("install wrote nothing")
			}
			// The store is gone: uninstall does without it.
			if err := os.Remove(e.db); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := e.uninstall(who)
			if code != 0 {
				t.Fatalf("%d %s %s", code, out, stderr)
			}
			if got := e.read(path); got != before {
				t.Fatalf("after uninstall:\n%s\nwant:\n%s", got, before)
			}
			if !strings.Contains(out, "removed from "+path) || !strings.Contains(out, e.bin+" hook "+who) {
				t.Fatalf("output:\n%s", out)
			}
			switch who {
			case "codex":
				if got := e.read(cfg); got != cfgBefore {
					t.Fatalf("config.toml after uninstall:\n%s\nwant:\n%s", got, cfgBefore)
				}
				if !strings.Contains(out, "removed 2 trust table(s) from "+cfg) {
					t.Fatalf("output:\n%s", out)
				}
			case "gemini":
				if !strings.Contains(out, `left as it is: "hooksConfig": {"enabled": true}`) {
					t.Fatalf("output:\n%s", out)
				}
			}
			// Idempotent: nothing more to remove, nothing written.
			fi, _ := os.Stat(path)
			code, out, _ = e.uninstall(who)
			fi2, _ := os.Stat(path)
			if code != 0 || !strings.Contains(out, "nothing to remove") || e.read(path) != before || !fi.ModTime().Equal(fi2.ModTime()) {
				t.Fatalf("second uninstall: %d\n%s", code, out)
			}
		})
	}
}

// A file not in the writer's form comes back JSON-equal; a file the
// install created comes back without the hooks; no file stays no file.
func TestHookUninstallNotCanonical(t *testing.T) {
	e := newHookEnv(t)
	path := filepath.Join(e.home, ".claude", "settings.json")
	code, out, _ := e.uninstall("claude-code")
	if code != 0 || !strings.Contains(out, "nothing to remove") {
		t.Fatalf("%d %s", code, out)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("uninstall with nothing installed created the file")
	}
	if code, _, stderr := e.install("claude-code"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := e.uninstall("claude-code"); code != 0 || e.read(path) != "{}\n" {
		t.Fatalf("%d %s:\n%s", code, stderr, e.read(path))
	}
	user := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"a"}]}]},"x":[1,2]}`
	e.write(path, user)
	if code, _, stderr := e.install("claude-code"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := e.uninstall("claude-code"); code != 0 || !jsonEqual(t, e.read(path), user) {
		t.Fatalf("%d %s:\n%s", code, stderr, e.read(path))
	}
}

// Only approve-tui's handlers go: a user's handler in the same group keeps
// the group; entries by another path, of another agent, stay.
func TestHookUninstallKeepsUserEntries(t *testing.T) {
	e := newHookEnv(t)
	path := filepath.Join(e.home, ".claude", "settings.json")
	e.write(path, `{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/x/approve-tui hook claude-code --db /d"}, {"type": "command", "command": "mine"}]},
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "approve-tui hook codex"}]},
  {"matcher": "Edit", "hooks": [{"type": "command", "command": "'/a b/approve-tui' hook claude-code"}]}],
 "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "approve-tui hook claude-code"}]}]}}`)
	code, out, stderr := e.uninstall("claude-code")
	if code != 0 {
		t.Fatal(stderr)
	}
	want := `{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}]},
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "approve-tui hook codex"}]}]}}`
	if got := e.read(path); got != canonical(t, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", got, canonical(t, want))
	}
	if strings.Count(out, "(matcher ") != 3 {
		t.Fatalf("output:\n%s", out)
	}
}

// Codex: a hook of the user's that moves up when approve-tui's entry goes
// keeps its trust when it is the hook that was trusted; one whose trust was
// for something else is named for /hooks.
func TestHookUninstallCodexMovedTrust(t *testing.T) {
	e := newHookEnv(t)
	cdir := filepath.Join(e.home, ".codex")
	hooks, cfg := filepath.Join(cdir, "hooks.json"), filepath.Join(cdir, "config.toml")
	e.write(hooks, `{"hooks": {"PreToolUse": [
  {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "/old/approve-tui hook codex"}, {"type": "command", "command": "echo a", "timeout": 5}]},
  {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "approve-tui hook codex --db /x"}]},
  {"matcher": "apply_patch", "hooks": [{"type": "command", "command": "echo b"}]}]}}`)
	key := func(g, h int) string {
		return hooks + ":pre_tool_use:" + string(rune('0'+g)) + ":" + string(rune('0'+h))
	}
	trustA := agent.CodexHookHash(agent.CodexHandler{Event: "pre_tool_use", Matcher: "^Bash$", Command: "echo a", Timeout: 5})
	ours := agent.CodexHookHash(agent.CodexHandler{Event: "pre_tool_use", Matcher: "^Bash$", Command: "/old/approve-tui hook codex"})
	e.write(cfg, "# keep me\n[hooks.state.\""+key(0, 0)+"\"]\ntrusted_hash = \""+ours+"\"\nenabled = false\n\n"+
		"[hooks.state.\""+key(0, 1)+"\"]\ntrusted_hash = \""+trustA+"\"\n\n"+
		"[hooks.state.\""+key(1, 0)+"\"]\ntrusted_hash = \"sha256:x\"\n\n"+
		"[hooks.state.\""+key(2, 0)+"\"]\ntrusted_hash = \"sha256:stale\"\nenabled = false\n\n# the end\n[features]\nhooks = true\n")
	code, out, stderr := e.uninstall("codex")
	if code != 0 {
		t.Fatalf("%d %s", code, stderr)
	}
	want := "# keep me\n\n# the end\n[features]\nhooks = true\n\n[hooks.state.\"" + key(0, 0) + "\"]\ntrusted_hash = \"" + trustA + "\"\n"
	if got := e.read(cfg); got != want {
		t.Fatalf("config.toml:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(out, "kept the trust of 1 hook(s)") || !strings.Contains(out, "/hooks: echo b") ||
		!strings.Contains(out, "turn them off again in /hooks: echo b") {
		t.Fatalf("output:\n%s", out)
	}
	if h := e.read(hooks); strings.Contains(h, "approve-tui") || !strings.Contains(h, `"echo a"`) || !strings.Contains(h, `"echo b"`) {
		t.Fatalf("hooks.json:\n%s", h)
	}
}

// A file that does not parse is refused and left as it is; so is a
// config.toml that does not, with hooks.json untouched too.
func TestHookUninstallRefusesMalformed(t *testing.T) {
	e := newHookEnv(t)
	for who, path := range map[string]string{
		"claude-code": filepath.Join(e.home, ".claude", "settings.json"),
		"gemini":      filepath.Join(e.home, ".gemini", "settings.json"),
		"codex":       filepath.Join(e.home, ".codex", "hooks.json"),
	} {
		bad := `{"hooks": {"PreToolUse": [` + "\n"
		e.write(path, bad)
		code, _, stderr := e.uninstall(who)
		if code != ExitError || !strings.Contains(stderr, "nothing written") || e.read(path) != bad {
			t.Fatalf("%s: %d %s", who, code, stderr)
		}
	}
	hooks, cfg := filepath.Join(e.home, ".codex", "hooks.json"), filepath.Join(e.home, ".codex", "config.toml")
	e.write(hooks, "")
	if code, _, stderr := e.install("codex"); code != 0 {
		t.Fatal(stderr)
	}
	h := e.read(hooks)
	e.write(cfg, e.read(cfg)+"\n[oops\n")
	c := e.read(cfg)
	code, _, stderr := e.uninstall("codex")
	if code != ExitError || !strings.Contains(stderr, "not valid TOML") || e.read(hooks) != h || e.read(cfg) != c {
		t.Fatalf("%d %s", code, stderr)
	}
	// A trust table written as an inline table: refused, not guessed at.
	e.write(cfg, "hooks.state.\""+hooks+":pre_tool_use:0:0\" = { trusted_hash = \"sha256:x\" }\n")
	c = e.read(cfg)
	code, _, stderr = e.uninstall("codex")
	if code != ExitError || !strings.Contains(stderr, "inline table") || e.read(hooks) != h || e.read(cfg) != c {
		t.Fatalf("%d %s", code, stderr)
	}
	// Read-only: refused.
	if err := os.Chmod(hooks, 0o444); err != nil {
		t.Fatal(err)
	}
	e.write(cfg, "")
	code, _, stderr = e.uninstall("codex")
	if code != ExitError || !strings.Contains(stderr, "read-only") || e.read(hooks) != h {
		t.Fatalf("read-only: %d %s", code, stderr)
	}
}

// --scope project: the project's file, never the user's; nothing through a
// link in the project.
func TestHookUninstallProjectScope(t *testing.T) {
	e := newHookEnv(t)
	proj := filepath.Join(e.home, "repo")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(e.home, ".claude", "settings.json")
	if code, _, stderr := e.install("claude-code"); code != 0 {
		t.Fatal(stderr)
	}
	u := e.read(user)
	for _, who := range []string{"claude-code", "codex", "gemini"} {
		if code, _, stderr := e.install(who, "--scope", "project", "--dir", proj); code != 0 {
			t.Fatal(stderr)
		}
		code, out, stderr := e.uninstall(who, "--scope", "project", "--dir", proj)
		if code != 0 || !strings.Contains(out, "removed from "+proj) {
			t.Fatalf("%s: %d %s %s", who, code, out, stderr)
		}
	}
	if e.read(user) != u {
		t.Fatal("a project uninstall changed the user's settings")
	}
	for _, p := range []string{".claude/settings.json", ".codex/hooks.json", ".gemini/settings.json"} {
		if strings.Contains(e.read(filepath.Join(proj, p)), "approve-tui") {
			t.Fatalf("%s:\n%s", p, e.read(filepath.Join(proj, p)))
		}
	}
	if c := e.read(filepath.Join(e.home, ".codex", "config.toml")); strings.Contains(c, proj) {
		t.Fatalf("config.toml keeps the project's trust:\n%s", c)
	}
	// A link in the project: nothing written through it.
	other := filepath.Join(e.home, "elsewhere")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(proj, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(user), filepath.Join(proj, ".claude")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := e.uninstall("claude-code", "--scope", "project", "--dir", proj)
	if code != ExitError || !strings.Contains(stderr, "symbolic link") || e.read(user) != u {
		t.Fatalf("%d %s", code, stderr)
	}
}

// The real Codex, after install then uninstall: no approve-tui hook, and
// the user's own hooks, one of which moved, still trusted.
func TestHookUninstallCodexRealOracle(t *testing.T) {
	codex := realCodex(t)
	e := newHookEnv(t)
	cdir := filepath.Join(e.home, ".codex")
	hooksPath := filepath.Join(cdir, "hooks.json")
	proj := filepath.Join(e.home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	// An older approve-tui entry ahead of the user's hooks: removing it
	// moves them.
	e.write(hooksPath, `{"hooks": {"PreToolUse": [
  {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "/old/approve-tui hook codex"}, {"type": "command", "command": "echo a", "timeout": 5}]},
  {"matcher": "apply_patch", "hooks": [{"type": "command", "command": "echo b", "statusMessage": "b"}]}]}}`)
	trustA := agent.CodexHookHash(agent.CodexHandler{Event: "pre_tool_use", Matcher: "^Bash$", Command: "echo a", Timeout: 5})
	trustB := agent.CodexHookHash(agent.CodexHandler{Event: "pre_tool_use", Matcher: "apply_patch", Command: "echo b", StatusMessage: "b"})
	e.write(filepath.Join(cdir, "config.toml"), "# keep me\n"+
		"[hooks.state.\""+hooksPath+":pre_tool_use:0:1\"]\ntrusted_hash = \""+trustA+"\"\n\n"+
		"[hooks.state.\""+hooksPath+":pre_tool_use:1:0\"]\ntrusted_hash = \""+trustB+"\"\n")
	if code, _, stderr := e.install("codex"); code != 0 {
		t.Fatal(stderr)
	}
	env := map[string]string{"HOME": e.home}
	if n := len(codexHooksList(t, codex, env, proj)); n != 4 {
		t.Fatalf("after install: %d hooks", n)
	}
	if code, out, stderr := e.uninstall("codex"); code != 0 {
		t.Fatalf("%d %s %s", code, out, stderr)
	}
	hooks := codexHooksList(t, codex, env, proj)
	if len(hooks) != 2 {
		t.Fatalf("after uninstall: %+v", hooks)
	}
	for _, h := range hooks {
		if agent.IsApproveTUIHook(h.Command, agent.AgentCodex) || h.TrustStatus != "trusted" {
			t.Errorf("after uninstall: %+v", h)
		}
	}
}
