package impact

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/approve-tui/approve-tui/model"
)

// gitTimeout bounds the git preview of one command (within the
// preview's own budget).
const gitTimeout = 2 * time.Second

// gitOpen opens the repository dir is in for a, within a's budget.
func gitOpen(a *analysis, dir string) (*repo, error) {
	g, err := openRepo(a.ctx, dir)
	if err != nil {
		return nil, err
	}
	if a.b != nil && a.b.deadline.Before(g.deadline) {
		g.deadline = a.b.deadline
	}
	return g, nil
}

// openErr says why gitOpen failed.
func openErr(err error) string {
	if errors.Is(err, errNoRepo) {
		return "not a git repository there"
	}
	return "its repository could not be read: " + err.Error()
}

// gitArgs previews the git subcommands that destroy work: clean (what git
// clean -n with the same options lists), reset --hard, checkout -- and
// restore (the uncommitted changes that would be lost), and the commands
// that move or delete a branch (push --force, branch -D and -f, reset,
// rebase, checkout -B, switch -C: the commits left on no ref).
//
// A repository can make a read block for good (a FIFO where a ref or the
// config should be): the preview reads it on its own goroutine, into an
// analysis of its own, and gives up at the deadline, saying so.
func gitArgs(a *analysis, _ string, args []string) {
	sub := &analysis{ctx: a.ctx, o: a.o, cwd: a.cwd, depth: a.depth, env: a.env,
		b: a.b.fork()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		gitArgsIn(sub, args)
	}()
	wait := time.Until(a.b.deadline)
	if wait > gitTimeout {
		wait = gitTimeout
	}
	timer := time.NewTimer(max(wait, 0) + gitGrace)
	defer timer.Stop()
	select {
	case <-done:
		a.targets = append(a.targets, sub.targets...)
		a.unknown = append(a.unknown, sub.unknown...)
		*a.b = *sub.b
	case <-timer.C:
		a.unknown = append(a.unknown, "git "+strings.Join(args, " ")+" (the repository could not be read in the time allowed)")
	case <-a.ctx.Done():
		a.unknown = append(a.unknown, "git "+strings.Join(args, " ")+" (the preview was stopped)")
	}
}

// gitGrace is how long past its deadline a git preview may take to stop
// on its own (a sealed git killed, its error reported) before it is
// abandoned.
const gitGrace = 200 * time.Millisecond

// gitPlaceVars are the variables that move the repository or work tree
// git uses, or give it config, away from what the preview reads.
var gitPlaceVars = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH", "GIT_NAMESPACE"}

func gitArgsIn(a *analysis, args []string) {
	dir := a.cwd
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-C" && len(args) > 1:
			// Each -C is relative to the one before (an empty one
			// changes nothing), as git reads them.
			switch c := args[1]; {
			case c == "" || dir == "":
			case filepath.IsAbs(c):
				dir, _ = a.abs(c)
			default:
				dir, _ = a.abs(dir + "/" + c)
			}
			args = args[2:]
		case strings.HasPrefix(args[0], "--git-dir") || strings.HasPrefix(args[0], "--work-tree") || args[0] == "-c" ||
			strings.HasPrefix(args[0], "--config-env") || strings.HasPrefix(args[0], "--exec-path=") || strings.HasPrefix(args[0], "--namespace"):
			a.unknown = append(a.unknown, "git "+strings.Join(args, " ")+" (a repository named by options)")
			return
		default:
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return
	}
	for _, v := range gitPlaceVars {
		// Where git works, and with what config, is then not where
		// this preview looks.
		if e := a.env[v]; e.state == varSet && e.val != "" {
			a.unknown = append(a.unknown, "git "+strings.Join(args, " ")+" ("+v+" is set: it moves the repository or adds config)")
			return
		}
	}
	if dir == "" {
		if slices.Contains([]string{"clean", "reset", "checkout", "restore", "push", "branch", "rebase", "switch"}, args[0]) {
			a.unknown = append(a.unknown, "git "+strings.Join(args, " ")+" (the working directory is not known)")
		}
		return
	}
	switch sub, rest := args[0], args[1:]; {
	case sub == "clean":
		gitClean(a, dir, rest)
	case sub == "reset":
		gitReset(a, dir, rest)
	case sub == "checkout" && dashDash(rest) != nil:
		gitLost(a, dir, dashDash(rest), false)
	case sub == "checkout" || sub == "switch":
		gitCheckoutB(a, dir, sub, rest)
	case sub == "restore" && !hasArg(rest, "--staged") || sub == "restore" && hasArg(rest, "--worktree"):
		_, paths := flags(rest, set("-s", "--source"))
		gitLost(a, dir, paths, false)
	case sub == "push":
		gitPush(a, dir, rest)
	case sub == "branch":
		gitBranch(a, dir, rest)
	case sub == "rebase":
		gitRebase(a, dir, rest)
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

// gitClean lists what git clean would remove by asking git itself (sealed:
// see sealedGit), with the same options and -n in the place of -f and -i.
func gitClean(a *analysis, dir string, args []string) {
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
	out, _, err := sealedGitIn(a, dir, dry...)
	if err != nil {
		a.unknown = append(a.unknown, "git clean in "+dir+" (git clean -n could not be run there: "+err.Error()+")")
		return
	}
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "Would remove "); ok {
			a.target(filepath.Join(dir, unquoteGit(p)), "delete", true, "git clean would remove it", nil)
		}
	}
}

// sealedGitIn runs git, sealed, in dir: what it wrote, and the root of the
// repository opened for the run (gitOpen).
func sealedGitIn(a *analysis, dir string, args ...string) (out []byte, root string, err error) {
	g, err := gitOpen(a, dir)
	if err != nil {
		return nil, "", err
	}
	defer g.close()
	out, err = g.sealedGit(a.ctx, dir, args...)
	return out, g.root, err
}

// unquoteGit undoes git's quoting of a path ("a\tb", octal escapes).
func unquoteGit(p string) string {
	if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
		if u, err := strconv.Unquote(p); err == nil {
			return u
		}
	}
	return p
}

// gitLost names the files whose uncommitted changes would be lost (git
// status, sealed; tracked files only, as reset --hard and checkout leave
// untracked ones alone), in paths when given.
func gitLost(a *analysis, dir string, paths []string, hard bool) {
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=all", "--no-renames"}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	out, root, err := sealedGitIn(a, dir, args...)
	if err != nil {
		a.unknown = append(a.unknown, "git in "+dir+" (git status could not be run there: "+err.Error()+")")
		return
	}
	for _, e := range bytes.Split(out, []byte{0}) {
		if len(e) < 4 {
			continue
		}
		_, y, p := e[0], e[1], string(e[3:])
		if !hard && y == ' ' {
			continue // staged only: checkout and restore keep the index
		}
		a.target(filepath.Join(root, p), "discard", false, "uncommitted changes lost", nil)
	}
}

// gitPushValues are git push's options that take a value as the next word.
var gitPushValues = set("-o", "--push-option", "--repo", "--receive-pack", "--exec")

// gitPush previews a forced push (--force, --force-with-lease, +REFSPEC)
// and a deletion (--delete, :BRANCH): per branch, the commits on the
// remote-tracking branch that the push would drop from it. Only local refs
// are read (no fetch), and the preview says so: the remote may hold more.
// A push that is neither cannot drop commits (the remote refuses).
func gitPush(a *analysis, dir string, args []string) {
	opts, ops := flags(args, gitPushValues)
	a.abbrev("git push", opts, gitPushValues, "--dry-run", "--mirror", "--prune", "--force", "--force-with-lease",
		"--force-if-includes", "--delete", "--all", "--branches", "--tags")
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
	g, err := gitOpen(a, dir)
	if err != nil {
		a.unknown = append(a.unknown, "git push in "+dir+" ("+openErr(err)+")")
		return
	}
	defer g.close()
	branch, _, _ := g.head()
	var remote string
	if len(ops) > 0 {
		remote, ops = ops[0], ops[1:]
	} else {
		remote = g.option("remote", "", "pushdefault")
		if branch != "" {
			for _, v := range []string{g.option("branch", branch, "pushremote"), g.option("remote", "", "pushdefault"), g.option("branch", branch, "remote")} {
				if v != "" {
					remote = v
					break
				}
			}
		}
		if remote == "" {
			remote = "origin"
		}
	}
	if g.option("remote", remote, "url") == "" {
		if force || del {
			a.unknown = append(a.unknown, "git push to "+remote+" (not a remote of this repository: no remote-tracking refs to read)")
		}
		return
	}
	refs, err := g.refs()
	if err != nil {
		a.unknown = append(a.unknown, "git push in "+dir+" (its refs could not be read: "+err.Error()+")")
		return
	}
	type push struct{ src, dst string }
	var pushes []push
	switch {
	case opts["--all"] || opts["--branches"]:
		var heads []string
		for name := range refs {
			if h, ok := strings.CutPrefix(name, "refs/heads/"); ok {
				heads = append(heads, h)
			}
		}
		slices.Sort(heads)
		for _, h := range heads {
			if force {
				pushes = append(pushes, push{h, h})
			}
		}
	case len(ops) == 0:
		if !force {
			return
		}
		if len(g.cfg.Section("remote").Subsection(remote).OptionAll("push")) > 0 {
			a.unknown = append(a.unknown, "git push --force to "+remote+" (remote."+remote+".push names what it pushes: not previewed)")
			return
		}
		switch {
		case branch == "":
			a.unknown = append(a.unknown, "git push --force from a detached HEAD (which branch it pushes is not known)")
		case pushUpstream(g, remote, branch) != "":
			pushes = append(pushes, push{"HEAD", pushUpstream(g, remote, branch)})
		default:
			pushes = append(pushes, push{"HEAD", branch})
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
	if fi, err := os.Stat(filepath.Join(g.gitDir, "FETCH_HEAD")); err == nil {
		fetched = ", fetched " + fi.ModTime().UTC().Format("2006-01-02 15:04Z")
	}
	for _, p := range pushes {
		if p.dst == "" || strings.HasPrefix(p.dst, "refs/") {
			a.unknown = append(a.unknown, "git push "+remote+" "+p.src+":"+p.dst+" (not a branch this preview reads)")
			continue
		}
		tracking := "refs/remotes/" + remote + "/" + p.dst
		tip, ok := refs[tracking]
		if !ok {
			a.unknown = append(a.unknown, "git push to "+remote+"/"+p.dst+" (no remote-tracking branch here: fetch to preview what it drops)")
			continue
		}
		t := Target{Path: remote + "/" + p.dst, Op: model.OpForcePush, Exists: true, Complete: true, LiveLinks: []string{},
			Note: "from local refs only: " + tracking + fetched + "; the remote may hold more" + lease}
		// Dropped: what the pushed commit does not hold and no other
		// branch of the remote holds (origin/HEAD names one of them).
		var keep []plumbing.Hash
		for name, h := range refs {
			if strings.HasPrefix(name, "refs/remotes/"+remote+"/") && name != tracking && name != "refs/remotes/"+remote+"/HEAD" {
				keep = append(keep, h)
			}
		}
		if p.src == "" {
			t.Op = model.OpDeleteBranch
			t.Note = "deletes the branch on " + remote + "; " + t.Note
		} else {
			sha, err := g.resolve(p.src)
			if err != nil {
				a.unknown = append(a.unknown, "git push "+remote+" "+p.src+":"+p.dst+" ("+p.src+" is not a commit here)")
				continue
			}
			keep = append(keep, sha)
		}
		if err := g.lostInto(a.ctx, []plumbing.Hash{tip}, keep, &t); err != nil {
			a.unknown = append(a.unknown, "git push to "+remote+"/"+p.dst+" (its history could not be read: "+err.Error()+")")
			continue
		}
		a.targets = append(a.targets, t)
	}
}

// pushUpstream is the branch of remote a push of branch with no refspec
// updates under push.default simple or upstream: the branch it tracks
// there ("" when it tracks none there, or push.default pushes by name).
func pushUpstream(g *repo, remote, branch string) string {
	switch strings.ToLower(g.option("push", "", "default")) {
	case "", "simple", "upstream", "tracking":
	default:
		return ""
	}
	if g.option("branch", branch, "remote") != remote {
		return ""
	}
	up, _ := strings.CutPrefix(g.option("branch", branch, "merge"), "refs/heads/")
	return up
}

// gitBranchValues are git branch's options that take a value as the next word.
var gitBranchValues = set("-u", "--set-upstream-to", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--column", "--abbrev", "--color")

// gitBranch previews git branch -D (and -d --force), and git branch -f and
// -M/-C (a branch moved or overwritten).
func gitBranch(a *analysis, dir string, args []string) {
	opts, ops := flags(args, gitBranchValues)
	a.abbrev("git branch", opts, gitBranchValues, "--remotes", "--force", "--delete", "--move", "--copy",
		"--unset-upstream", "--edit-description", "--list", "--all")
	if opts["-r"] || opts["--remotes"] {
		return // remote-tracking refs only: the remote keeps the commits
	}
	force := opts["-f"] || opts["--force"]
	switch {
	case opts["-D"] || (opts["-d"] || opts["--delete"]) && force:
		gitBranchDelete(a, dir, ops)
	case opts["-M"] || opts["-C"] || (opts["-m"] || opts["-c"] || opts["--move"] || opts["--copy"]) && force:
		// branch -M [OLD] NEW: NEW now points where OLD did.
		old, dst := "HEAD", ""
		if len(ops) > 0 {
			dst = ops[len(ops)-1]
		}
		if len(ops) == 2 {
			old = ops[0]
		}
		gitBranchMove(a, dir, args, ops, dst, old, false)
	case force && !opts["-d"] && !opts["--delete"] && !opts["-u"] && !opts["--set-upstream-to"] && !opts["--unset-upstream"] && !opts["--edit-description"]:
		// branch -f NAME [START]: NAME moves to START.
		start, name := "HEAD", ""
		if len(ops) > 0 {
			name = ops[0]
		}
		if len(ops) == 2 {
			start = ops[1]
		}
		gitBranchMove(a, dir, args, ops, name, start, true)
	}
}

// gitBranchMove previews git branch moving branch to where target points
// (ops: the branch command's operands, one or two); notCurrent: git
// refuses it for the branch checked out (branch -f), so it moves nothing.
func gitBranchMove(a *analysis, dir string, args, ops []string, branch, target string, notCurrent bool) {
	if len(ops) == 0 || len(ops) > 2 {
		return
	}
	g, err := gitOpen(a, dir)
	if err != nil {
		a.unknown = append(a.unknown, "git branch "+strings.Join(args, " ")+" ("+openErr(err)+")")
		return
	}
	defer g.close()
	if cur, _, _ := g.head(); notCurrent && cur == branch {
		return // git refuses to force the branch checked out
	}
	gitMove(a, g, branch, target, "git branch "+strings.Join(args, " "), false)
}

// gitBranchDelete previews git branch -D: per branch, the commits that no
// other branch, tag or remote-tracking branch holds, which the deletion
// leaves to the reflog and then garbage collection. -d alone refuses
// unmerged branches.
func gitBranchDelete(a *analysis, dir string, names []string) {
	g, err := gitOpen(a, dir)
	if err != nil {
		a.unknown = append(a.unknown, "git branch -D in "+dir+" ("+openErr(err)+")")
		return
	}
	defer g.close()
	refs, err := g.refs()
	if err != nil {
		a.unknown = append(a.unknown, "git branch -D in "+dir+" (its refs could not be read: "+err.Error()+")")
		return
	}
	for _, name := range names {
		ref := "refs/heads/" + name
		t := Target{Path: name, Op: model.OpDeleteBranch, Complete: true, LiveLinks: []string{},
			Note: "commits on no other branch, tag or remote-tracking branch"}
		tip, ok := refs[ref]
		if !ok {
			t.Note = "no such branch"
			a.targets = append(a.targets, t)
			continue
		}
		t.Exists = true
		if err := g.lostInto(a.ctx, []plumbing.Hash{tip}, keepAll(refs, ref), &t); err != nil {
			a.unknown = append(a.unknown, "git branch -D "+name+" (its history could not be read: "+err.Error()+")")
			continue
		}
		a.targets = append(a.targets, t)
	}
}

// gitMove previews moving branch (or a detached HEAD, branch "HEAD") to
// the commit rev names: the commits reachable from it now and from no
// ref afterwards (every other ref, and rev), reflogs not counted. A move
// that leaves nothing behind is no target. headToo: HEAD moves with it
// (checkout -B), so a detached HEAD's commits count too.
func gitMove(a *analysis, g *repo, branch, rev, cmd string, headToo bool) {
	dst, err := g.resolve(rev)
	if err != nil {
		a.unknown = append(a.unknown, cmd+" ("+err.Error()+")")
		return
	}
	gitMoveTo(a, g, branch, []plumbing.Hash{dst}, cmd, headToo, "to "+short(dst))
}

func gitMoveTo(a *analysis, g *repo, branch string, keepToo []plumbing.Hash, cmd string, headToo bool, where string) {
	refs, err := g.refs()
	if err != nil {
		a.unknown = append(a.unknown, cmd+" (its refs could not be read: "+err.Error()+")")
		return
	}
	cur, _, _ := g.head()
	var tips []plumbing.Hash
	except := []string{}
	if branch == "HEAD" || headToo && cur == "" {
		if h, ok := refs["HEAD"]; ok {
			tips = append(tips, h)
		}
		except = append(except, "HEAD")
	}
	if branch != "HEAD" {
		ref := "refs/heads/" + branch
		if h, ok := refs[ref]; ok {
			tips = append(tips, h)
		}
		except = append(except, ref)
		if cur == branch {
			except = append(except, "HEAD")
		}
	}
	if len(tips) == 0 {
		return // a new branch: nothing is left behind
	}
	t := Target{Path: branch, Op: model.OpMoveBranch, Exists: true, Complete: true, LiveLinks: []string{},
		Note: "moves " + where + "; commits on no other ref afterwards (reflogs not counted)"}
	if err := g.lostInto(a.ctx, tips, append(keepAll(refs, except...), keepToo...), &t); err != nil {
		a.unknown = append(a.unknown, cmd+" (its history could not be read: "+err.Error()+")")
		return
	}
	if t.Commits == 0 && !slices.ContainsFunc(tips, func(h plumbing.Hash) bool { return !slices.Contains(keepToo, h) }) {
		return // moves nowhere
	}
	a.targets = append(a.targets, t)
}

func short(h plumbing.Hash) string { return h.String()[:7] }

// gitResetValues are git reset's options that take a value as the next word.
var gitResetValues = set("--pathspec-from-file")

// gitReset previews git reset: --hard loses the uncommitted changes to
// tracked files; any mode given a commit moves the branch (or a detached
// HEAD) there, leaving behind the commits no other ref holds.
func gitReset(a *analysis, dir string, args []string) {
	opts, _ := flags(args, gitResetValues)
	a.abbrev("git reset", opts, gitResetValues, "--hard", "--soft", "--mixed", "--keep", "--merge", "--patch", "--quiet")
	hard := opts["--hard"]
	if hard {
		gitLost(a, dir, nil, true)
	}
	if opts["-p"] || opts["--patch"] || opts["--pathspec-from-file"] {
		return // paths: the index changes, HEAD stays
	}
	var before, after []string
	seen := false
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--" && !seen:
			seen = true
		case seen:
			after = append(after, arg)
		case strings.HasPrefix(arg, "-"):
			if gitResetValues[arg] {
				i++
			}
		default:
			before = append(before, arg)
		}
	}
	if len(before) == 0 || len(after) > 0 || len(before) > 1 {
		return // no commit, or paths: HEAD stays
	}
	g, err := gitOpen(a, dir)
	if err != nil {
		a.unknown = append(a.unknown, "git reset "+strings.Join(args, " ")+" ("+openErr(err)+")")
		return
	}
	defer g.close()
	if _, err := g.resolve(before[0]); err != nil && !hard && !seen {
		if _, serr := os.Lstat(absolute(before[0], dir)); serr == nil {
			return // git reset FILE: unstages it
		}
	}
	branch, _, err := g.head()
	if err != nil {
		a.unknown = append(a.unknown, "git reset "+strings.Join(args, " ")+" (HEAD could not be read: "+err.Error()+")")
		return
	}
	if branch == "" {
		branch = "HEAD"
	}
	gitMove(a, g, branch, before[0], "git reset "+strings.Join(args, " "), false)
}

// gitCheckoutB previews git checkout -B NAME [START] and git switch -C
// NAME [START]: NAME moves to START (HEAD when not given).
func gitCheckoutB(a *analysis, dir, sub string, args []string) {
	flag := "-B"
	if sub == "switch" {
		flag = "-C"
	}
	var name, start string
	var rest []string
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == flag || sub == "switch" && arg == "--force-create":
			if i+1 < len(args) {
				name = args[i+1]
				i++
			}
		case strings.HasPrefix(arg, flag) && len(arg) > 2 && !strings.HasPrefix(arg, "--"):
			name = arg[2:]
		case arg == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(arg, "-"):
			if arg == "--orphan" || arg == "-b" || arg == "-c" || arg == "--conflict" && i+1 < len(args) {
				return
			}
		default:
			rest = append(rest, arg)
		}
	}
	if name == "" || len(rest) > 1 {
		return
	}
	start = "HEAD"
	if len(rest) == 1 {
		start = rest[0]
	}
	g, err := gitOpen(a, dir)
	if err != nil {
		a.unknown = append(a.unknown, "git "+sub+" "+strings.Join(args, " ")+" ("+openErr(err)+")")
		return
	}
	defer g.close()
	gitMove(a, g, name, start, "git "+sub+" "+strings.Join(args, " "), true)
}

// gitRebaseValues are git rebase's options that take a value as the next word.
var gitRebaseValues = set("--onto", "-s", "--strategy", "-X", "--strategy-option", "-x", "--exec", "-C", "--whitespace", "--empty")

// gitRebase previews git rebase [--onto NEWBASE] [UPSTREAM [BRANCH]]:
// the branch is rewritten on top of NEWBASE (UPSTREAM when not given), and
// its commits now on no other ref are left behind (the rewritten copies
// are new commits). A rebase that would only fast-forward leaves nothing.
func gitRebase(a *analysis, dir string, args []string) {
	opts, ops := flags(args, gitRebaseValues)
	a.abbrev("git rebase", opts, gitRebaseValues, "--continue", "--abort", "--skip", "--quit", "--edit-todo",
		"--show-current-patch", "--root", "--force-rebase", "--no-ff", "--interactive", "--rebase-merges", "--signoff",
		"--update-refs")
	for _, c := range []string{"--continue", "--abort", "--skip", "--quit", "--edit-todo", "--show-current-patch"} {
		if opts[c] {
			return
		}
	}
	cmd := "git rebase " + strings.Join(args, " ")
	g, err := gitOpen(a, dir)
	if err != nil {
		a.unknown = append(a.unknown, cmd+" ("+openErr(err)+")")
		return
	}
	defer g.close()
	cur, _, err := g.head()
	if err != nil {
		a.unknown = append(a.unknown, cmd+" (HEAD could not be read: "+err.Error()+")")
		return
	}
	root := opts["--root"]
	var upstream, branch string
	switch {
	case root && len(ops) <= 1:
		if len(ops) == 1 {
			branch = ops[0]
		}
	case !root && len(ops) <= 2:
		if len(ops) >= 1 {
			upstream = ops[0]
		}
		if len(ops) == 2 {
			branch = ops[1]
		}
	default:
		return
	}
	if branch == "" {
		branch = cur
		if branch == "" {
			branch = "HEAD"
		}
	} else if _, err := g.refCommit(plumbing.ReferenceName("refs/heads/" + branch)); err != nil {
		// BRANCH is a commit, not a branch: rebased on a detached HEAD.
		a.unknown = append(a.unknown, cmd+" ("+branch+" is not a branch here)")
		return
	}
	if upstream == "" && !root {
		r, m := g.option("branch", branch, "remote"), g.option("branch", branch, "merge")
		m, ok := strings.CutPrefix(m, "refs/heads/")
		switch {
		case branch == "HEAD" || r == "" || !ok:
			a.unknown = append(a.unknown, cmd+" (no upstream configured for "+branch+")")
			return
		case r == ".":
			upstream = "refs/heads/" + m
		default:
			upstream = "refs/remotes/" + r + "/" + m
		}
	}
	onto := valueOf(args, "", "--onto")
	if onto == "" {
		onto = upstream
	}
	var keepToo []plumbing.Hash
	where := "onto a new base"
	if onto != "" {
		h, err := g.resolve(onto)
		if err != nil {
			a.unknown = append(a.unknown, cmd+" ("+err.Error()+")")
			return
		}
		keepToo, where = []plumbing.Hash{h}, "onto "+short(h)
		forced := opts["-f"] || opts["--force-rebase"] || opts["--no-ff"] || opts["-i"] || opts["--interactive"] ||
			opts["-x"] || opts["--exec"] || opts["--rebase-merges"] || opts["-r"] || opts["--signoff"]
		if !forced && onto == upstream && g.fastForward(a, branch, h) {
			return // already on top of its upstream: nothing is rewritten
		}
	}
	if opts["--update-refs"] || strings.EqualFold(g.option("rebase", "", "updaterefs"), "true") {
		a.unknown = append(a.unknown, cmd+" (--update-refs moves other branches too: not previewed)")
	}
	gitMoveTo(a, g, branch, keepToo, cmd, false, where)
}

// fastForward: base is an ancestor of branch's commit and the commits
// between are a line (no merge), so git rebase leaves them as they are.
func (g *repo) fastForward(a *analysis, branch string, base plumbing.Hash) bool {
	var tip plumbing.Hash
	var err error
	if branch == "HEAD" {
		_, tip, err = g.head()
	} else {
		tip, err = g.refCommit(plumbing.ReferenceName("refs/heads/" + branch))
	}
	if err != nil {
		return false
	}
	for h, n := tip, 0; n < 10_000; n++ {
		if h == base {
			return true
		}
		c, err := g.r.CommitObject(h)
		if err != nil || c.NumParents() != 1 {
			return false
		}
		h = c.ParentHashes[0]
	}
	return false
}
