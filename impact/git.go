package impact

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// gitTimeout bounds each read-only git command a git analyser runs.
const gitTimeout = 2 * time.Second

// runGit runs a read-only git command in dir (no pager, no prompts, no
// optional locks taken) and returns its output (ok false: git is not
// there, the directory is no repository, or it failed).
func runGit(ctx context.Context, dir string, args ...string) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager", "-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return nil, false
	}
	return out.Bytes(), true
}

// gitArgs previews the git subcommands that destroy work: clean (what git
// clean -n with the same options lists) and reset --hard, checkout -- and
// restore (the uncommitted changes git status lists, which would be lost).
func gitArgs(a *analysis, _ string, args []string) {
	dir := a.o.Cwd
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-C" && len(args) > 1:
			dir = absolute(args[1], a.o.Cwd)
			args = args[2:]
		case strings.HasPrefix(args[0], "--git-dir") || strings.HasPrefix(args[0], "--work-tree") || args[0] == "-c":
			a.unknown = append(a.unknown, "git "+strings.Join(args, " ")+" (a repository named by options)")
			return
		default:
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return
	}
	ctx := context.Background()
	switch sub, rest := args[0], args[1:]; {
	case sub == "clean":
		gitClean(ctx, a, dir, rest)
	case sub == "reset" && hasArg(rest, "--hard"):
		gitLost(ctx, a, dir, nil, true)
	case sub == "checkout" && dashDash(rest) != nil:
		gitLost(ctx, a, dir, dashDash(rest), false)
	case sub == "restore" && !hasArg(rest, "--staged") || sub == "restore" && hasArg(rest, "--worktree"):
		_, paths := flags(rest, map[string]bool{"-s": true, "--source": true})
		gitLost(ctx, a, dir, paths, false)
	}
}

func hasArg(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}

// dashDash is what follows "--" (nil when there is none).
func dashDash(args []string) []string {
	for i, a := range args {
		if a == "--" {
			return append([]string{}, args[i+1:]...)
		}
	}
	return nil
}

// gitClean lists what git clean would remove by asking git itself, with
// the same options and -n in the place of -f and -i.
func gitClean(ctx context.Context, a *analysis, dir string, args []string) {
	dry := []string{"clean", "-n"}
	for _, arg := range args {
		switch {
		case arg == "-f" || arg == "--force" || arg == "-ff" || arg == "-i" || arg == "--interactive" || arg == "-n" || arg == "--dry-run" || arg == "-q" || arg == "--quiet":
		case strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "--") && len(arg) > 2:
			// combined: -fdx; keep all but f, i, n, q
			keep := "-"
			for _, c := range arg[1:] {
				if !strings.ContainsRune("finq", c) {
					keep += string(c)
				}
			}
			if keep != "-" {
				dry = append(dry, keep)
			}
		default:
			dry = append(dry, arg)
		}
	}
	out, ok := runGit(ctx, dir, dry...)
	if !ok {
		a.unknown = append(a.unknown, "git clean in "+dir+" (git clean -n failed there)")
		return
	}
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "Would remove "); ok {
			a.target(filepath.Join(dir, p), "delete", true, "git clean would remove it", nil)
		}
	}
}

// gitLost names the files whose uncommitted changes would be lost (git
// status; tracked files only, as reset --hard and checkout leave untracked
// ones alone), in paths when given.
func gitLost(ctx context.Context, a *analysis, dir string, paths []string, hard bool) {
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=no"}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	out, ok := runGit(ctx, dir, args...)
	if !ok {
		a.unknown = append(a.unknown, "git in "+dir+" (git status failed there)")
		return
	}
	top, ok := runGit(ctx, dir, "rev-parse", "--show-toplevel")
	root := dir
	if ok {
		root = strings.TrimSpace(string(top))
	}
	for _, e := range bytes.Split(out, []byte{0}) {
		if len(e) < 4 {
			continue
		}
		x, y, p := e[0], e[1], string(e[3:])
		if !hard && y == ' ' {
			continue // staged only: checkout and restore keep the index
		}
		if x == 'R' || x == 'C' {
			continue // the rename's source follows as its own entry
		}
		a.target(filepath.Join(root, p), "discard", false, "uncommitted changes lost", nil)
	}
}
