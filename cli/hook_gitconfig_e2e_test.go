package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A git command proven read-only still runs what the repository's
// configuration names (core.fsmonitor, a pager, a textconv, a clean
// filter), and the agent writes that configuration: the hooks and run
// read it first, and ask when it names a program. Real git makes the
// repositories, the hooks are this program's real processes.

// gitRepoAt makes a repository at dir with the real git, one commit in it,
// under the rig's HOME (env).
func gitRepoAt(t *testing.T, env []string, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: skipped (the repositories are made by git itself)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitAt(t, env, dir, "init", "-q")
	gitAt(t, env, dir, "add", "a.txt")
	gitAt(t, env, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "one")
}

func gitAt(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir, c.Env = dir, append(env, "GIT_CONFIG_NOSYSTEM=1")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

// hostileFSMonitor sets core.fsmonitor in dir's repository to a script
// that leaves a mark, and proves that the real git status runs it; it
// returns the mark's path (removed again).
func hostileFSMonitor(t *testing.T, env []string, dir string) string {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(dir, ".git", "monitor.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch '"+mark+"'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	gitAt(t, env, dir, "config", "core.fsmonitor", script)
	gitAt(t, env, dir, "status")
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("git status did not run core.fsmonitor (the attack this guards against): %v", err)
	}
	if err := os.Remove(mark); err != nil {
		t.Fatal(err)
	}
	return mark
}

// agentHook runs who's hook (claude-code, codex, gemini) on one shell call
// in dir, as the agent sends it, and says whether it let the call through.
func agentHook(t *testing.T, r judgeRig, who, dir, key, command string, args ...string) (bool, string) {
	t.Helper()
	var in map[string]any
	switch who {
	case "codex":
		in = map[string]any{"session_id": "s1", "turn_id": "t1", "cwd": dir, "hook_event_name": "PreToolUse",
			"model": "gpt-5-codex", "permission_mode": "default", "tool_name": "Bash", "tool_use_id": key,
			"tool_input": map[string]any{"command": command}}
	case "gemini":
		in = map[string]any{"session_id": "s1", "cwd": dir, "hook_event_name": "BeforeTool",
			"timestamp": time.Now().UTC().Format(time.RFC3339), "tool_name": "run_shell_command",
			"tool_input": map[string]any{"command": command, "description": "look", "dir_path": dir}}
	default:
		in = map[string]any{"session_id": "s1", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_use_id": key, "tool_input": map[string]any{"command": command}}
	}
	b, _ := json.Marshal(in)
	c := r.cmd(t, append([]string{"hook", who, "--timeout", "2s"}, args...)...)
	c.Stdin = strings.NewReader(string(b))
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s hook: %v: %s", who, err, out)
	}
	return letThrough(t, who, out), string(out)
}

// The Claude Code hook under --unasked read-only (and low): a clean
// repository's git status goes through; a hostile core.fsmonitor, or one
// in a file the config includes, or a pager in the global config under
// HOME, makes it asked, at medium, the reason naming the key; programs
// other than git are not touched by it; the hook never runs git.
func TestHookGitConfigReadOnly(t *testing.T) {
	r := newJudgeRig(t)
	home := filepath.Dir(filepath.Dir(r.db))
	clean := filepath.Join(home, "clean")
	gitRepoAt(t, r.env, clean)
	if through, out := r.hook(t, clean, "toolu_clean", "git status", "--unasked", "read-only"); !through {
		t.Fatalf("git status in a clean repository was asked: %s", out)
	}

	hostile := filepath.Join(home, "hostile")
	gitRepoAt(t, r.env, hostile)
	mark := hostileFSMonitor(t, r.env, hostile)
	for _, mode := range []string{"read-only", "low"} {
		if through, out := r.hook(t, hostile, "toolu_fsm_"+mode, "git status", "--unasked", mode); through {
			t.Fatalf("--unasked %s: git status with a hostile core.fsmonitor went through: %s", mode, out)
		}
	}
	if through, out := r.hook(t, hostile, "toolu_fsm_cd", "cd "+hostile+" && git status --short", "--unasked", "read-only"); through {
		t.Fatalf("cd into the repository, then git status: went through: %s", out)
	}
	if through, out := r.hook(t, clean, "toolu_fsm_C", "git -C ../hostile log -1", "--unasked", "read-only"); through {
		t.Fatalf("git -C to the repository: went through: %s", out)
	}
	// Programs other than git in the same repository are not affected.
	for _, c := range []string{"ls", "cat a.txt", "wc -l a.txt"} {
		if through, out := r.hook(t, hostile, "toolu_other_"+strings.Fields(c)[0], c, "--unasked", "read-only"); !through {
			t.Errorf("%s in the hostile repository was asked: %s", c, out)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the hook ran the repository's core.fsmonitor")
	}
	ps := r.proposals(t)
	p, ok := ps["git status"]
	if !ok || p[0] != "medium" || !strings.Contains(p[1], "core.fsmonitor") || !strings.Contains(p[1], filepath.Join(hostile, ".git", "config")) {
		t.Errorf("the proposal for git status: %q, want medium and a reason naming core.fsmonitor and its file", p)
	}

	// include.path to a hostile file.
	inc := filepath.Join(home, "inc")
	gitRepoAt(t, r.env, inc)
	if err := os.WriteFile(filepath.Join(home, "hostile.inc"), []byte("[diff \"x\"]\n\ttextconv = ./conv.sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitAt(t, r.env, inc, "config", "include.path", filepath.Join(home, "hostile.inc"))
	if through, out := r.hook(t, inc, "toolu_inc", "git diff", "--unasked", "read-only"); through {
		t.Fatalf("git diff with an included textconv went through: %s", out)
	}
	if p := r.proposals(t)["git diff"]; !strings.Contains(p[1], "diff.x.textconv") || !strings.Contains(p[1], "hostile.inc") {
		t.Errorf("the proposal for git diff: %q, want the included key and file named", p)
	}

	// The global config under the hook's HOME.
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\tpager = ./pager.sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if through, out := r.hook(t, clean, "toolu_glob", "git log --oneline", "--unasked", "read-only"); through {
		t.Fatalf("git log with a pager in ~/.gitconfig went through: %s", out)
	}
	if p := r.proposals(t)["git log --oneline"]; !strings.Contains(p[1], "core.pager") || !strings.Contains(p[1], filepath.Join(home, ".gitconfig")) {
		t.Errorf("the proposal for git log: %q, want core.pager in ~/.gitconfig named", p)
	}
	if err := os.Remove(filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}

	// A config that cannot be read is asked (fail closed).
	bad := filepath.Join(home, "bad")
	gitRepoAt(t, r.env, bad)
	if err := os.WriteFile(filepath.Join(bad, ".git", "config"), []byte("[core\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if through, out := r.hook(t, bad, "toolu_bad", "git status", "--unasked", "read-only"); through {
		t.Fatalf("git status with a config that does not parse went through: %s", out)
	}
	if all := r.proposalsReasons(t); !strings.Contains(all, "its configuration could not be read") {
		t.Errorf("no proposal says the config could not be read:\n%s", all)
	}
}

// proposalsReasons are every proposal's reason, one a line.
func (r judgeRig) proposalsReasons(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, p := range r.proposals(t) {
		b.WriteString(p[1] + "\n")
	}
	return b.String()
}

// run does the same: a hostile core.fsmonitor makes git status asked
// under --unasked read-only, with the key in what it prints; a clean
// repository's runs.
func TestRunGitConfigReadOnly(t *testing.T) {
	r := newJudgeRig(t)
	home := filepath.Dir(filepath.Dir(r.db))
	clean := filepath.Join(home, "clean")
	gitRepoAt(t, r.env, clean)
	if code, out := r.run(t, clean, "--unasked", "read-only", "--", "git", "status", "--short"); code != 0 {
		t.Fatalf("run git status in a clean repository: exit %d: %s", code, out)
	}
	hostile := filepath.Join(home, "hostile")
	gitRepoAt(t, r.env, hostile)
	mark := hostileFSMonitor(t, r.env, hostile)
	code, out := r.run(t, hostile, "--unasked", "read-only", "--", "git", "status")
	if code != 12 || !strings.Contains(out, "core.fsmonitor") {
		t.Fatalf("run git status with a hostile core.fsmonitor: exit %d: %s", code, out)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("run ran git status (and its core.fsmonitor) unasked")
	}
}

// The Codex and Gemini CLI hooks, as each agent sends its call: under
// --unasked read-only git status goes through in a clean repository and is
// asked with a hostile core.fsmonitor; git push --force is asked.
func TestCodexAndGeminiHooksUnaskedReadOnly(t *testing.T) {
	r := newJudgeRig(t)
	home := filepath.Dir(filepath.Dir(r.db))
	clean := filepath.Join(home, "clean")
	gitRepoAt(t, r.env, clean)
	hostile := filepath.Join(home, "hostile")
	gitRepoAt(t, r.env, hostile)
	hostileFSMonitor(t, r.env, hostile)
	for _, who := range []string{"codex", "gemini"} {
		t.Run(who, func(t *testing.T) {
			if through, out := agentHook(t, r, who, clean, who+"_st", "git status", "--unasked", "read-only"); !through {
				t.Errorf("git status in a clean repository was asked: %s", out)
			}
			if through, out := agentHook(t, r, who, clean, who+"_ls", "ls -la", "--unasked", "read-only"); !through {
				t.Errorf("ls was asked: %s", out)
			}
			if through, out := agentHook(t, r, who, clean, who+"_push", "git push --force", "--unasked", "read-only"); through {
				t.Errorf("git push --force went through: %s", out)
			}
			if through, out := agentHook(t, r, who, clean, who+"_touch", "touch new.txt", "--unasked", "read-only"); through {
				t.Errorf("a write went through under read-only: %s", out)
			}
			if through, out := agentHook(t, r, who, hostile, who+"_fsm", "git status", "--unasked", "read-only"); through {
				t.Errorf("git status with a hostile core.fsmonitor went through: %s", out)
			}
			if through, out := agentHook(t, r, who, clean, who+"_nothing", "git status", "--unasked", "nothing"); through {
				t.Errorf("git status went through under nothing: %s", out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(clean, "new.txt")); err == nil {
		t.Fatal("touch ran")
	}
}
