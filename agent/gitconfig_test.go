package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository at dir with the real git, under home.
func gitRepo(t *testing.T, home, dir string, config ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: skipped (the repositories are made by git itself)")
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	run := func(args ...string) {
		c := exec.Command("git", args...)
		c.Dir, c.Env = dir, env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q")
	for i := 0; i+1 < len(config); i += 2 {
		run("config", config[i], config[i+1])
	}
}

// gitRunsCode finds the git commands of a line, where they run and with
// what environment, and asks about whatever it cannot follow.
func TestGitRunsCode(t *testing.T) {
	home := t.TempDir()
	clean := filepath.Join(home, "clean")
	hostile := filepath.Join(home, "hostile")
	gitRepo(t, home, clean)
	gitRepo(t, home, hostile, "core.fsmonitor", "./m.sh")
	editor := filepath.Join(home, "editor")
	gitRepo(t, home, editor, "core.editor", "./e.sh")
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	for _, c := range []struct {
		cwd, command, want string // want "": let through; else a word of the reason
	}{
		{clean, "git status", ""},
		{clean, "git log --oneline -3 | head -1", ""},
		{clean, "ls && cat a.txt", ""},
		{hostile, "ls -la", ""},
		{hostile, "cat .git/config", ""},
		{hostile, "git status", "core.fsmonitor"},
		{hostile, "/usr/bin/git diff", "core.fsmonitor"},
		{clean, "cd ../hostile && git status", "core.fsmonitor"},
		{clean, "(cd " + hostile + "; git status); echo", "core.fsmonitor"},
		{clean, "git -C ../hostile status", "core.fsmonitor"},
		{clean, "git -C ../hostile -C . status", "core.fsmonitor"},
		{clean, "env -C ../hostile git status", "core.fsmonitor"},
		{clean, "sh -c 'cd ../hostile && git status'", "core.fsmonitor"},
		{clean, "cd \"$X\" && git status", "not known"},
		{clean, "cd ~/clean && git status", ""},
		{hostile, "cd ~/clean; git status", "core.fsmonitor"}, // the directories a cd may leave: every one
		{clean, "cd ~/hostile && git status", "core.fsmonitor"},
		{clean, "git -C ~/hostile status", "core.fsmonitor"},
		{clean, "cd ~root/x && git status", "not known"},
		{clean, "cd ~/*/ && git status", "not known"},
		{clean, "cd - && git status", "not known"},
		{clean, "git $SUB", "not known"},
		{clean, "git -c core.pager=./evil log", "git -c core.pager"},
		{clean, "git -c core.fsmonitor=./m.sh status", "git -c core.fsmonitor"},
		{clean, "git --git-dir=../hostile/.git status", "--git-dir"},
		{clean, "git --exec-path=/tmp status", "--exec-path"},
		{clean, "GIT_DIR=../hostile/.git git status", "GIT_DIR"},
		{clean, "GIT_CONFIG_GLOBAL=/tmp/x git status", "GIT_CONFIG_GLOBAL"},
		{clean, "env GIT_EXTERNAL_DIFF=./x git diff", "GIT_EXTERNAL_DIFF"},
		{clean, "PAGER='sh -c x' git log", "PAGER"},
		{clean, "GIT_PAGER=cat git log", ""},
		{clean, "GIT_SSH_COMMAND=./x git status", ""},
		{clean, "GIT_SSH_COMMAND=./x git fetch", "GIT_SSH_COMMAND"},
		{clean, "HOME=" + hostile + " git status", ""},
		{clean, "sudo git status", "another user"},
		{clean, "ssh host git status", ""},
		{clean, "find . -name x -execdir git status \\;", "git gets words"},
		{clean, "git grep -O./evil main", "git grep -O"},
		{clean, "git grep -n main", ""},
		{clean, "git branch -a", ""},
		{clean, "git tag -l", ""},
		{editor, "git status && git log && git branch -v && git tag -l", ""},
		{editor, "git tag -a v1", "core.editor"},
		{editor, "git tag -am x v1", "core.editor"},
		{editor, "git branch --edit-description", "core.editor"},
		{editor, "git commit", "core.editor"},
	} {
		why := gitRunsCode(c.command, c.cwd, env)
		switch {
		case c.want == "" && why != "":
			t.Errorf("%s (in %s): asked: %s", c.command, filepath.Base(c.cwd), why)
		case c.want != "" && !strings.Contains(why, c.want):
			t.Errorf("%s (in %s): %q, want %q in it", c.command, filepath.Base(c.cwd), why, c.want)
		}
	}
	// The environment the command inherits counts too.
	if why := gitRunsCode("git status", clean, append(env, "GIT_CONFIG_COUNT=1")); !strings.Contains(why, "GIT_CONFIG_COUNT") {
		t.Errorf("GIT_CONFIG_COUNT in the environment: %q", why)
	}
	if why := gitRunsCode("git status", clean, append(env, "GIT_SSL_CAINFO=/etc/ssl/x.pem", "GIT_AUTHOR_NAME=a")); why != "" {
		t.Errorf("certificate and author variables: %q", why)
	}
	// A global config under the HOME the command gets.
	if err := os.WriteFile(filepath.Join(hostile, ".gitconfig"), []byte("[core]\n\tpager = ./p\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if why := gitRunsCode("HOME="+hostile+" git log", clean, env); !strings.Contains(why, "core.pager") {
		t.Errorf("HOME set on the line to a home with a pager: %q", why)
	}
	if why := gitRunsCode("git log", clean, []string{"HOME=" + hostile}); !strings.Contains(why, "core.pager") {
		t.Errorf("HOME with a pager: %q", why)
	}
}

// BenchmarkGitRunsCode is the check a hook makes before letting `git
// status` through unasked, in a repository with a global config: parse,
// find the repository, read its config and the global one.
func BenchmarkGitRunsCode(b *testing.B) {
	home := b.TempDir()
	dir := filepath.Join(home, "repo")
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	c := exec.Command("git", "init", "-q")
	c.Dir, c.Env = dir, []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if out, err := c.CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = a\n\temail = a@example.com\n[credential]\n\thelper = store\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	for b.Loop() {
		if why := gitRunsCode("git status --short", filepath.Join(dir), env); why != "" {
			b.Fatal(why)
		}
	}
}
