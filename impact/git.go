package impact

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// gitTimeout bounds each read-only git command a git analyser runs.
const gitTimeout = 2 * time.Second

// runGit runs a read-only git command in dir (no pager, no prompts, no
// optional locks taken, nothing fetched) and returns its output (ok false: git is not
// there, the directory is no repository, or it failed).
func runGit(ctx context.Context, dir string, args ...string) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	// No fsmonitor program started by git status, no transport (a
	// partial clone would fetch what it lacks), no lazy fetch.
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager", "-C", dir, "-c", "core.fsmonitor=false",
		"-c", "protocol.allow=never"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_NO_LAZY_FETCH=1", "LC_ALL=C")
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
	dir := a.cwd
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-C" && len(args) > 1:
			dir, _ = a.abs(args[1])
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
	if dir == "" {
		if slices.Contains([]string{"clean", "reset", "checkout", "restore", "push", "branch"}, args[0]) {
			a.unknown = append(a.unknown, "git "+strings.Join(args, " ")+" (the working directory is not known)")
		}
		return
	}
	ctx := a.ctx
	switch sub, rest := args[0], args[1:]; {
	case sub == "clean":
		gitClean(ctx, a, dir, rest)
	case sub == "reset" && hasArg(rest, "--hard"):
		gitLost(ctx, a, dir, nil, true)
	case sub == "checkout" && dashDash(rest) != nil:
		gitLost(ctx, a, dir, dashDash(rest), false)
	case sub == "restore" && !hasArg(rest, "--staged") || sub == "restore" && hasArg(rest, "--worktree"):
		_, paths := flags(rest, set("-s", "--source"))
		gitLost(ctx, a, dir, paths, false)
	case sub == "push":
		gitPush(ctx, a, dir, rest)
	case sub == "branch":
		gitBranchDelete(ctx, a, dir, rest)
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

// gitOut is a git command's output, trimmed (ok false: it failed).
func gitOut(ctx context.Context, dir string, args ...string) (string, bool) {
	out, ok := runGit(ctx, dir, args...)
	return strings.TrimSpace(string(out)), ok
}

// commitsLost fills t with the commits reachable from ref and from none
// of not (git rev-list arguments): their count, and the newest of them as
// "abc1234 2026-11-30 alice: subject".
func commitsLost(ctx context.Context, dir, ref string, not []string, t *Target) bool {
	rng := append([]string{ref, "--not"}, not...)
	n, ok := gitOut(ctx, dir, append([]string{"rev-list", "--count"}, rng...)...)
	if !ok {
		return false
	}
	t.Commits, _ = strconv.ParseInt(n, 10, 64)
	if t.Commits == 0 {
		return true
	}
	log, ok := gitOut(ctx, dir, append([]string{"log", "--no-decorate", "--format=%h %cs %an: %s", "-n", strconv.Itoa(model.MaxImpactDetails)}, rng...)...)
	if !ok {
		return false
	}
	t.Details = capDetails(strings.Split(log, "\n"), t.Commits)
	return true
}

// gitPushValues are git push's options that take a value as the next word.
var gitPushValues = set("-o", "--push-option", "--repo", "--receive-pack", "--exec")

// gitPush previews a forced push (--force, --force-with-lease, +REFSPEC)
// and a deletion (--delete, :BRANCH): per branch, the commits on the
// remote-tracking branch that the push would drop from it. Only local refs
// are read (no fetch), and the preview says so: the remote may hold more.
// A push that is neither cannot drop commits (the remote refuses).
func gitPush(ctx context.Context, a *analysis, dir string, args []string) {
	opts, ops := flags(args, gitPushValues)
	if opts["-n"] || opts["--dry-run"] {
		return
	}
	if opts["--mirror"] || opts["--prune"] {
		a.unknown = append(a.unknown, "git push "+strings.Join(args, " ")+" (it can drop any branch of the remote)")
		return
	}
	force := opts["-f"] || opts["--force"] || opts["--force-with-lease"] || opts["--force-if-includes"]
	del := opts["-d"] || opts["--delete"]
	if !force && !del && !slices.ContainsFunc(ops, func(s string) bool { return strings.HasPrefix(s, "+") || strings.HasPrefix(s, ":") }) {
		return // not forced: the remote refuses what is not a fast-forward
	}
	if _, ok := gitOut(ctx, dir, "rev-parse", "--git-dir"); !ok {
		a.unknown = append(a.unknown, "git push in "+dir+" (not a git repository there)")
		return
	}
	branch, _ := gitOut(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	var remote string
	if len(ops) > 0 {
		remote, ops = ops[0], ops[1:]
	} else {
		keys := []string{"remote.pushDefault"}
		if branch != "" {
			keys = []string{"branch." + branch + ".pushRemote", "remote.pushDefault", "branch." + branch + ".remote"}
		}
		for _, k := range keys {
			if v, ok := gitOut(ctx, dir, "config", "--get", k); ok && v != "" {
				remote = v
				break
			}
		}
		if remote == "" {
			remote = "origin"
		}
	}
	if _, ok := gitOut(ctx, dir, "config", "--get", "remote."+remote+".url"); !ok {
		if force || del {
			a.unknown = append(a.unknown, "git push to "+remote+" (not a remote of this repository: no remote-tracking refs to read)")
		}
		return
	}
	type push struct{ src, dst string }
	var pushes []push
	switch {
	case opts["--all"] || opts["--branches"]:
		heads, _ := gitOut(ctx, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
		for _, h := range strings.Fields(heads) {
			if force {
				pushes = append(pushes, push{h, h})
			}
		}
	case len(ops) == 0:
		if !force {
			return
		}
		if up, ok := gitOut(ctx, dir, "rev-parse", "--symbolic-full-name", "@{push}"); ok && strings.HasPrefix(up, "refs/remotes/"+remote+"/") {
			pushes = append(pushes, push{"HEAD", strings.TrimPrefix(up, "refs/remotes/"+remote+"/")})
		} else if branch != "" {
			pushes = append(pushes, push{"HEAD", branch})
		} else {
			a.unknown = append(a.unknown, "git push --force from a detached HEAD (which branch it pushes is not known)")
		}
	default:
		for _, spec := range ops {
			plus := strings.HasPrefix(spec, "+")
			spec = strings.TrimPrefix(spec, "+")
			src, dst, colon := strings.Cut(spec, ":")
			if !colon {
				dst = src
				if src == "HEAD" {
					dst = branch
				}
			}
			if del && !colon {
				src, dst = "", spec
			}
			if src != "" && !force && !plus {
				continue // not forced: the remote refuses what is not a fast-forward
			}
			pushes = append(pushes, push{src, strings.TrimPrefix(dst, "refs/heads/")})
		}
	}
	lease := ""
	if opts["--force-with-lease"] {
		lease = "; with --force-with-lease the push is refused if the remote moved since"
	}
	fetched := ""
	if fh, ok := gitOut(ctx, dir, "rev-parse", "--git-path", "FETCH_HEAD"); ok {
		if fi, err := os.Stat(absolute(fh, dir)); err == nil {
			fetched = ", fetched " + fi.ModTime().UTC().Format("2006-01-02 15:04Z")
		}
	}
	for _, p := range pushes {
		if p.dst == "" || strings.HasPrefix(p.dst, "refs/") {
			a.unknown = append(a.unknown, "git push "+remote+" "+p.src+":"+p.dst+" (not a branch this preview reads)")
			continue
		}
		tracking := "refs/remotes/" + remote + "/" + p.dst
		if _, ok := gitOut(ctx, dir, "rev-parse", "--verify", "--quiet", tracking+"^{commit}"); !ok {
			a.unknown = append(a.unknown, "git push to "+remote+"/"+p.dst+" (no remote-tracking branch here: fetch to preview what it drops)")
			continue
		}
		t := Target{Path: remote + "/" + p.dst, Op: model.OpForcePush, Exists: true, Complete: true, LiveLinks: []string{},
			Note: "from local refs only: " + tracking + fetched + "; the remote may hold more" + lease}
		// Dropped: what the pushed commit does not hold and no other
		// branch of the remote holds (origin/HEAD names one of them).
		not := []string{"--exclude=" + remote + "/" + p.dst, "--exclude=" + remote + "/HEAD", "--remotes=" + remote}
		if p.src == "" {
			t.Op = model.OpDeleteBranch
			t.Note = "deletes the branch on " + remote + "; " + t.Note
		} else {
			sha, ok := "", false
			if !strings.HasPrefix(p.src, "-") { // never an option to git
				sha, ok = gitOut(ctx, dir, "rev-parse", "--verify", "--quiet", p.src+"^{commit}")
			}
			if !ok {
				a.unknown = append(a.unknown, "git push "+remote+" "+p.src+":"+p.dst+" ("+p.src+" is not a commit here)")
				continue
			}
			not = append(not, sha)
		}
		if !commitsLost(ctx, dir, tracking, not, &t) {
			a.unknown = append(a.unknown, "git push to "+remote+"/"+p.dst+" (git rev-list failed)")
			continue
		}
		a.targets = append(a.targets, t)
	}
}

// gitBranchDelete previews git branch -D (and -d --force): per branch, the
// commits that no other branch, tag or remote-tracking branch holds, which
// the deletion leaves to the reflog and then garbage collection. -d alone
// refuses unmerged branches and -r deletes only remote-tracking refs.
func gitBranchDelete(ctx context.Context, a *analysis, dir string, args []string) {
	opts, ops := flags(args, set("-u", "--set-upstream-to", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--column", "--abbrev", "--color"))
	if !(opts["-D"] || (opts["-d"] || opts["--delete"]) && (opts["-f"] || opts["--force"])) || opts["-r"] || opts["--remotes"] {
		return
	}
	for _, name := range ops {
		ref := "refs/heads/" + name
		t := Target{Path: name, Op: model.OpDeleteBranch, Complete: true, LiveLinks: []string{},
			Note: "commits on no other branch, tag or remote-tracking branch"}
		if _, ok := gitOut(ctx, dir, "rev-parse", "--verify", "--quiet", ref); !ok {
			t.Note = "no such branch"
			a.targets = append(a.targets, t)
			continue
		}
		t.Exists = true
		if !commitsLost(ctx, dir, ref, []string{"--exclude=" + ref, "--all"}, &t) {
			a.unknown = append(a.unknown, "git branch -D "+name+" (git rev-list failed)")
			continue
		}
		a.targets = append(a.targets, t)
	}
}
