package impact

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitIn runs the real git in dir with a home of its own (no user config).
func gitIn(t *testing.T, home, dir string, args ...string) {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
}

func newConfigRepo(t *testing.T) (home, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: skipped (the repositories are made by git itself)")
	}
	home, dir = t.TempDir(), t.TempDir()
	gitIn(t, home, dir, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitIn(t, home, dir, "add", "a.txt")
	gitIn(t, home, dir, "commit", "-q", "-m", "one")
	return home, dir
}

func programs(t *testing.T, home, dir string, local bool) (string, error) {
	t.Helper()
	return GitPrograms(dir, GitCheck{Home: home, Local: local, Subcommand: "status"})
}

func TestGitProgramsCleanRepository(t *testing.T) {
	home, dir := newConfigRepo(t)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, sub} {
		for _, local := range []bool{true, false} {
			if why, err := programs(t, home, d, local); why != "" || err != nil {
				t.Errorf("%s (local %v): %q, %v; want nothing", d, local, why, err)
			}
		}
	}
	// Outside any repository only the global config counts.
	if why, err := programs(t, home, t.TempDir(), true); why != "" || err != nil {
		t.Errorf("no repository: %q, %v", why, err)
	}
}

// Each key that makes a read command run a program is named, with its
// file; set with git config, so that the file is as git writes it.
func TestGitProgramsNamesTheKey(t *testing.T) {
	for _, c := range []struct {
		key, value, want string
	}{
		{"core.fsmonitor", "./.git/evil", "core.fsmonitor"},
		{"core.pager", "sh -c evil", "core.pager"},
		{"pager.status", "./evil", "pager.status"},
		{"diff.external", "./evil", "diff.external"},
		{"diff.x.textconv", "./evil", "diff.x.textconv"},
		{"diff.x.command", "./evil", "diff.x.command"},
		{"filter.f.clean", "./evil", "filter.f.clean"},
		{"filter.f.process", "./evil", "filter.f.process"},
		{"alias.status", "!./evil", "alias.status"},
		{"gpg.program", "./evil", "gpg.program"},
		{"extensions.partialClone", "origin", "extensions.partialclone"},
		{"remote.origin.promisor", "true", "remote.origin.promisor"},
	} {
		t.Run(c.key, func(t *testing.T) {
			home, dir := newConfigRepo(t)
			gitIn(t, home, dir, "config", c.key, c.value)
			why, err := programs(t, home, dir, true)
			if err != nil || !strings.Contains(why, c.want) || !strings.Contains(why, filepath.Join(dir, ".git", "config")) {
				t.Errorf("%s: %q, %v", c.key, why, err)
			}
		})
	}
}

// Keys that only a command that writes or talks to a remote runs count
// for it, not for status.
func TestGitProgramsWritingKeys(t *testing.T) {
	for _, key := range []string{"core.hooksPath", "core.sshCommand", "credential.helper", "core.editor"} {
		home, dir := newConfigRepo(t)
		gitIn(t, home, dir, "config", key, "./evil")
		if why, err := programs(t, home, dir, true); why != "" || err != nil {
			t.Errorf("%s for status: %q, %v", key, why, err)
		}
		if why, err := programs(t, home, dir, false); err != nil || !strings.Contains(strings.ToLower(why), strings.ToLower(key)) {
			t.Errorf("%s for a write: %q, %v", key, why, err)
		}
	}
	// git's own credential helpers and pagers are not the agent's code.
	home, dir := newConfigRepo(t)
	gitIn(t, home, dir, "config", "credential.helper", "cache --timeout=60")
	gitIn(t, home, dir, "config", "core.pager", "less -R")
	gitIn(t, home, dir, "config", "core.fsmonitor", "false")
	if why, err := programs(t, home, dir, false); why != "" || err != nil {
		t.Errorf("builtin helper, less and no fsmonitor: %q, %v", why, err)
	}
	// A hook in .git/hooks counts for a command that runs hooks.
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if why, err := programs(t, home, dir, false); err != nil || !strings.Contains(why, "pre-commit") {
		t.Errorf("a hook: %q, %v", why, err)
	}
	if why, err := programs(t, home, dir, true); why != "" || err != nil {
		t.Errorf("a hook, for status: %q, %v", why, err)
	}
}

// Included files, the global config under HOME and XDG, a linked work
// tree and a submodule are read too.
func TestGitProgramsFollowsWhatGitReads(t *testing.T) {
	t.Run("include", func(t *testing.T) {
		home, dir := newConfigRepo(t)
		inc := filepath.Join(dir, "hostile.inc")
		if err := os.WriteFile(inc, []byte("[core]\n\tfsmonitor = ./evil\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		gitIn(t, home, dir, "config", "include.path", "../hostile.inc")
		if why, err := programs(t, home, dir, true); err != nil || !strings.Contains(why, "core.fsmonitor") || !strings.Contains(why, inc) {
			t.Errorf("include.path: %q, %v", why, err)
		}
	})
	t.Run("includeIf", func(t *testing.T) {
		home, dir := newConfigRepo(t)
		inc := filepath.Join(home, "x.inc")
		if err := os.WriteFile(inc, []byte("[diff \"t\"]\n\ttextconv = ./evil\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		gitIn(t, home, dir, "config", "includeIf.onbranch:nothere.path", "~/x.inc")
		if why, err := programs(t, home, dir, true); err != nil || !strings.Contains(why, "diff.t.textconv") {
			t.Errorf("includeIf: %q, %v", why, err)
		}
	})
	t.Run("global", func(t *testing.T) {
		home, dir := newConfigRepo(t)
		if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\tpager = ./evil\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if why, err := programs(t, home, dir, true); err != nil || !strings.Contains(why, "core.pager") {
			t.Errorf("$HOME/.gitconfig: %q, %v", why, err)
		}
	})
	t.Run("xdg", func(t *testing.T) {
		home, dir := newConfigRepo(t)
		p := filepath.Join(home, ".config", "git", "config")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("[diff]\n\texternal = ./evil\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if why, err := programs(t, home, dir, true); err != nil || !strings.Contains(why, "diff.external") {
			t.Errorf("XDG git config: %q, %v", why, err)
		}
	})
	t.Run("worktree", func(t *testing.T) {
		home, dir := newConfigRepo(t)
		wt := filepath.Join(t.TempDir(), "wt")
		gitIn(t, home, dir, "worktree", "add", "-q", wt)
		if why, err := programs(t, home, wt, true); why != "" || err != nil {
			t.Fatalf("clean linked work tree: %q, %v", why, err)
		}
		gitIn(t, home, dir, "config", "core.fsmonitor", "./evil")
		if why, err := programs(t, home, wt, true); err != nil || !strings.Contains(why, "core.fsmonitor") {
			t.Errorf("linked work tree (a .git file): %q, %v", why, err)
		}
	})
	t.Run("gitdir file", func(t *testing.T) {
		home, hostile := newConfigRepo(t)
		gitIn(t, home, hostile, "config", "core.fsmonitor", "./evil")
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+filepath.Join(hostile, ".git")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if why, err := programs(t, home, filepath.Join(dir), true); err != nil || !strings.Contains(why, "core.fsmonitor") {
			t.Errorf("a .git file naming another git directory: %q, %v", why, err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("not a gitdir line\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := programs(t, home, dir, true); err == nil {
			t.Error("a .git file that names no git directory was read as nothing")
		}
	})
	t.Run("submodule", func(t *testing.T) {
		home, dir := newConfigRepo(t)
		_, lib := newConfigRepo(t)
		gitIn(t, home, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
		if why, err := programs(t, home, dir, true); why != "" || err != nil {
			t.Fatalf("clean submodule: %q, %v", why, err)
		}
		gitIn(t, home, filepath.Join(dir, "lib"), "config", "filter.f.clean", "./evil")
		if why, err := programs(t, home, dir, true); err != nil || !strings.Contains(why, "filter.f.clean") {
			t.Errorf("submodule's config: %q, %v", why, err)
		}
	})
}

// What cannot be read, or is read two ways, is an error (asked).
func TestGitProgramsFailsClosed(t *testing.T) {
	write := func(t *testing.T, dir, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{
		"does not parse":         "[core\n\tfsmonitor = x\n",
		"key on the header line": "[core]\n\tbare = false\n[core] fsmonitor = ./evil\n",
		"too large":              "[core]\n#" + strings.Repeat("x", gitConfigLimit) + "\n",
		"old-style subsection":   "[diff.x]\n\ttextconv = ./evil\n",
	} {
		t.Run(name, func(t *testing.T) {
			home, dir := newConfigRepo(t)
			write(t, dir, text)
			why, err := programs(t, home, dir, true)
			if err == nil && why == "" {
				t.Errorf("%s: let through", name)
			}
		})
	}
	t.Run("fifo", func(t *testing.T) {
		home, dir := newConfigRepo(t)
		p := filepath.Join(dir, ".git", "config")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := exec.Command("mkfifo", p).Run(); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		if _, err := programs(t, home, dir, true); err == nil {
			t.Error("a FIFO config was read as nothing")
		}
	})
	t.Run("include loop", func(t *testing.T) {
		home, dir := newConfigRepo(t)
		write(t, dir, "[include]\n\tpath = config\n")
		if why, err := programs(t, home, dir, true); why != "" || err != nil {
			t.Errorf("a file including itself: %q, %v", why, err)
		}
	})
}

// What the user's own setup commonly holds is not asked: git lfs
// install's filters, an editor named by a bare word.
func TestGitProgramsCommonSetups(t *testing.T) {
	home, dir := newConfigRepo(t)
	gitIn(t, home, dir, "config", "--global", "filter.lfs.clean", "git-lfs clean -- %f")
	gitIn(t, home, dir, "config", "--global", "filter.lfs.smudge", "git-lfs smudge -- %f")
	gitIn(t, home, dir, "config", "--global", "filter.lfs.process", "git-lfs filter-process")
	gitIn(t, home, dir, "config", "--global", "filter.lfs.required", "true")
	gitIn(t, home, dir, "config", "--global", "core.editor", "vim")
	gitIn(t, home, dir, "config", "--global", "credential.helper", "store")
	for _, local := range []bool{true, false} {
		if why, err := programs(t, home, dir, local); why != "" || err != nil {
			t.Errorf("git lfs, vim and store (local %v): %q, %v", local, why, err)
		}
	}
	// The same names with more are not.
	gitIn(t, home, dir, "config", "--global", "filter.lfs.process", "git-lfs filter-process; ./evil")
	if why, _ := programs(t, home, dir, true); !strings.Contains(why, "filter.lfs.process") {
		t.Errorf("a changed lfs filter: %q", why)
	}
	gitIn(t, home, dir, "config", "--global", "filter.lfs.process", "git-lfs filter-process")
	gitIn(t, home, dir, "config", "--global", "core.editor", "vim -c '!./evil'")
	if why, _ := programs(t, home, dir, false); !strings.Contains(why, "core.editor") {
		t.Errorf("an editor given a command: %q", why)
	}
}

// A subsection is the repository's text: a plain name is shown as is,
// anything else quoted and bounded.
func TestGitProgramSubsectionShown(t *testing.T) {
	r := &gitReader{}
	if got := r.program("diff", "t", "textconv", "./evil"); !strings.HasPrefix(got, "diff.t.textconv ") {
		t.Errorf("plain: %q", got)
	}
	got := r.program("diff", "a\x1b[31mb"+strings.Repeat("x", 200), "textconv", "./evil")
	if strings.ContainsRune(got, 0x1b) || len(got) > 250 || !strings.Contains(got, `"a\x1b[31mb`) {
		t.Errorf("hostile: %q", got)
	}
}

// git status refreshes the index and writes it back: post-index-change
// runs on a read, from hooks/ or from core.hooksPath.
func TestGitProgramsIndexRefreshHook(t *testing.T) {
	home, dir := newConfigRepo(t)
	hook := filepath.Join(dir, ".git", "hooks", "post-index-change")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if why, err := programs(t, home, dir, true); !strings.Contains(why, "post-index-change") || err != nil {
		t.Errorf("hooks/post-index-change for status: %q, %v", why, err)
	}
	home, dir = newConfigRepo(t)
	if err := os.MkdirAll(filepath.Join(dir, "hk"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hk", "post-index-change"), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	gitIn(t, home, dir, "config", "core.hooksPath", "hk")
	if why, err := programs(t, home, dir, true); !strings.Contains(why, "hookspath") || err != nil {
		t.Errorf("core.hooksPath holding post-index-change for status: %q, %v", why, err)
	}
}

// A .git directory git would not use (no HEAD, objects, refs) hides the
// repository git does use further up: the check fails closed.
func TestGitProgramsInvalidDotGit(t *testing.T) {
	home, dir := newConfigRepo(t)
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := programs(t, home, sub, true); err == nil {
		t.Error("an empty .git was taken as the repository")
	}
}
