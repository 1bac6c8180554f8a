package impact

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// sealedGit runs a read-only git command (status, clean -n) over g's work
// tree and index in an environment where nothing the repository, the
// agent or the environment configures can run.
//
// Why git at all: which files git status calls modified (stat data, racy
// timestamps, the index's own flags) and which git clean -n removes
// (-d/-x/-X/-e, nested repositories, ignored directories) are git's own
// rules, and the preview is worth what its agreement with git is worth.
// go-git reimplements them only in part, so these two questions go to git.
//
// Why it cannot run anything: git runs a program only when one is named
// by (1) its config, (2) its environment, (3) a hook, or (4) the PATH it
// was started from; attributes (.gitattributes, info/attributes) only name
// drivers whose commands live in config. Here:
//   - git is a root-owned binary in a system directory, never the one the
//     inherited PATH finds (trustedGit);
//   - the environment is built from nothing: no GIT_* variable of the
//     caller (GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_EXTERNAL_DIFF, …), HOME
//     and XDG_CONFIG_HOME an empty directory, GIT_CONFIG_GLOBAL and
//     GIT_CONFIG_SYSTEM /dev/null, no system attributes;
//   - GIT_DIR is a directory made here, holding only HEAD (the commit,
//     resolved by go-git), an empty refs/, a copy of info/exclude and a
//     config written here from fixed keys (filemode, symlinks, ignorecase,
//     trustctime, checkstat, the excludes file, the object format), each a
//     boolean, a fixed word or a path to read; git always reads
//     $GIT_DIR/config, and this one names no program, no include and no
//     driver. The repository's index and objects are named by
//     GIT_INDEX_FILE and GIT_OBJECT_DIRECTORY: data, read only
//     (GIT_OPTIONAL_LOCKS=0: status does not write the index);
//   - no hooks directory exists; status and clean run no hook anyway, and
//     --ignore-submodules=all keeps status from starting git in a
//     submodule (whose own config would count).
//
// So a filter named in .gitattributes has no command, fsmonitor, pagers,
// textconv, diff.external, aliases, gpg and credential programs are unset,
// and no transport is configured (nothing is fetched: protocol.allow
// never). A file whose content only a clean filter would make equal to
// the index is called modified: the preview reports more, never less.
func (g *repo) sealedGit(ctx context.Context, cwd string, args ...string) ([]byte, error) {
	if g.root == "" {
		return nil, errors.New("a bare repository has no work tree")
	}
	if wt := g.option("core", "", "worktree"); wt != "" && absolute(wt, g.gitDir) != g.root {
		// A submodule's names the directory it is in; another is not
		// where this preview looked.
		return nil, errors.New("its config moves the work tree (core.worktree)")
	}
	bin, err := trustedGit()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "approve-tui-git-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	gd := filepath.Join(tmp, "git")
	for _, d := range []string{"refs/heads", "info", "home"} {
		if err := os.MkdirAll(filepath.Join(gd, d), 0o700); err != nil {
			return nil, err
		}
	}
	branch, h, err := g.head()
	if err != nil {
		return nil, err
	}
	head := h.String() + "\n"
	if h.IsZero() {
		head = "ref: refs/heads/" + branch + "\n"
	}
	if err := os.WriteFile(filepath.Join(gd, "HEAD"), []byte(head), 0o600); err != nil {
		return nil, err
	}
	if b, err := readSmall(filepath.Join(g.commonDir, "info", "exclude"), 1<<20); err == nil {
		if err := os.WriteFile(filepath.Join(gd, "info", "exclude"), b, 0o600); err != nil {
			return nil, err
		}
	}
	// A split index keeps its shared part beside the index, found in
	// $GIT_DIR: linked, not copied.
	shared, _ := filepath.Glob(filepath.Join(g.gitDir, "sharedindex.*"))
	for _, s := range shared {
		if err := os.Symlink(s, filepath.Join(gd, filepath.Base(s))); err != nil {
			return nil, err
		}
	}
	conf, err := g.sealedConfig()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(gd, "config"), conf, 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, g.deadline)
	defer cancel()
	full := append([]string{"--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "protocol.allow=never",
		"-c", "core.hooksPath=" + filepath.Join(tmp, "nohooks"), "-c", "core.untrackedCache=false"}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Dir = cwd
	home := filepath.Join(gd, "home")
	cmd.Env = []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + home,
		"LC_ALL=C",
		"GIT_DIR=" + gd,
		"GIT_WORK_TREE=" + g.root,
		"GIT_INDEX_FILE=" + filepath.Join(g.gitDir, "index"),
		"GIT_OBJECT_DIRECTORY=" + filepath.Join(g.commonDir, "objects"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_NO_LAZY_FETCH=1",
		"GIT_PROTOCOL_FROM_USER=0",
	}
	cmd.Stdin = nil
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, errors.New("out of time")
		}
		msg := strings.TrimSpace(errb.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, errors.New(strings.TrimSpace(err.Error() + " " + msg))
	}
	return out.Bytes(), nil
}

// sealedConfig is the config the sealed git reads: the repository's
// settings that change what status and clean see, each checked to be a
// boolean, a fixed word or a path, and nothing else.
func (g *repo) sealedConfig() ([]byte, error) {
	c := gitconfig.New()
	core := c.Section("core")
	core.AddOption("repositoryformatversion", "0")
	core.AddOption("bare", "false")
	for _, k := range []string{"filemode", "symlinks", "ignorecase", "trustctime"} {
		if v := strings.ToLower(g.option("core", "", k)); v != "" {
			b, ok := gitBool(v)
			if !ok {
				return nil, errors.New("core." + k + " is not a boolean")
			}
			core.AddOption(k, b)
		}
	}
	if v := strings.ToLower(g.option("core", "", "checkstat")); v == "minimal" || v == "default" {
		core.AddOption("checkstat", v)
	}
	if ex := g.excludesFile(); ex != "" {
		if strings.ContainsAny(ex, "\x00\n\r") {
			return nil, errors.New("core.excludesFile is not a path")
		}
		core.AddOption("excludesfile", ex)
	}
	switch f := strings.ToLower(g.option("extensions", "", "objectformat")); f {
	case "":
	case "sha1", "sha256":
		core.SetOption("repositoryformatversion", "1")
		c.Section("extensions").AddOption("objectformat", f)
	default:
		return nil, errors.New("extensions.objectFormat " + f + " is not known")
	}
	var b bytes.Buffer
	if err := gitconfig.NewEncoder(&b).Encode(c); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// gitBool normalises a git boolean.
func gitBool(v string) (string, bool) {
	switch v {
	case "true", "yes", "on", "1":
		return "true", true
	case "false", "no", "off", "0":
		return "false", true
	}
	return "", false
}

// excludesFile is the file of ignore patterns git would read besides
// .gitignore and info/exclude: core.excludesFile of the repository, else
// of the user's global config, else $XDG_CONFIG_HOME/git/ignore. Only read
// as patterns (a path to read, never a program).
func (g *repo) excludesFile() string {
	home, _ := os.UserHomeDir()
	expand := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return p
	}
	if v := g.option("core", "", "excludesfile"); v != "" {
		return absolute(expand(v), g.root)
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	for _, p := range []string{filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig")} {
		if xdg == "" || home == "" {
			break
		}
		b, err := readSmall(p, 1<<20)
		if err != nil {
			continue
		}
		c := gitconfig.New()
		if gitconfig.NewDecoder(bytes.NewReader(b)).Decode(c) == nil {
			if v := c.Section("core").Option("excludesfile"); v != "" && c.HasSection("core") {
				return absolute(expand(v), home)
			}
		}
	}
	if xdg != "" {
		if _, err := os.Stat(filepath.Join(xdg, "git", "ignore")); err == nil {
			return filepath.Join(xdg, "git", "ignore")
		}
	}
	return ""
}

// gitCandidates are where trustedGit looks, in order.
var gitCandidates = []string{"/usr/bin/git", "/bin/git", "/usr/local/bin/git"}

// trustedGit is a git binary only root can have put there: the file
// (symlinks resolved) and the directory holding it owned by root and
// writable by no one else. A git the previewing user owns is the agent's
// to replace when the agent runs as that user. The PATH the preview
// inherits is the agent's and is not searched.
func trustedGit() (string, error) {
	for _, c := range gitCandidates {
		p, err := filepath.EvalSymlinks(c)
		if err != nil || !rootOnly(p, false) || !rootOnly(filepath.Dir(p), true) {
			continue
		}
		return p, nil
	}
	return "", errors.New("no git owned by root in " + strings.Join(gitCandidates, ", "))
}

// rootOnly: p is a directory (dir) or an executable regular file, owned
// by root and not writable by group or others.
func rootOnly(p string, dir bool) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() != dir || !dir && (!fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0) || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == 0
}
