package impact

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/approve-tui/approve-tui/model"
)

// The git preview reads repositories the agent wrote. Everything in them
// is data: refs, objects and config are read with go-git, which runs no
// filter, hook, pager, fsmonitor, signature program or transport, reads
// no environment variable (GIT_DIR, GIT_CONFIG_PARAMETERS, …) and follows
// no include.path. What go-git cannot answer as git does (status and
// clean over the work tree) is asked of git in a sealed environment: see
// sealedGit.

// repo is a repository opened for reading.
type repo struct {
	r *gogit.Repository
	// root is the work tree ("" for a bare repository); gitDir holds
	// HEAD and the index, commonDir the objects, refs and config (the
	// same directory but for a linked work tree).
	root, gitDir, commonDir string
	cfg                     *gitconfig.Config
	deadline                time.Time
	store                   *filesystem.Storage
}

// close lets go of the pack files the reads keep open.
func (g *repo) close() { g.store.Close() }

// errNoRepo: the directory is in no git repository.
var errNoRepo = errors.New("not a git repository")

// openRepo finds the repository dir is in as git's discovery does (a .git
// directory or file in dir or a parent, else dir itself a bare
// repository) and opens it with go-git.
func openRepo(ctx context.Context, dir string) (*repo, error) {
	dir = filepath.Clean(dir)
	g := &repo{deadline: time.Now().Add(gitTimeout)}
	if d, ok := ctx.Deadline(); ok && d.Before(g.deadline) {
		g.deadline = d
	}
	root, gitDir, commonDir, err := findRepo(dir)
	if err != nil {
		return nil, err
	}
	g.root, g.gitDir, g.commonDir = root, gitDir, commonDir
	var dot billy.Filesystem = osfs.New(g.gitDir)
	if g.commonDir != g.gitDir {
		dot = dotgit.NewRepositoryFilesystem(dot, osfs.New(g.commonDir))
	}
	// Pack files stay open for the walk (closed by close): opening one
	// per object read is most of a walk's time.
	g.store = filesystem.NewStorageWithOptions(dot, cache.NewObjectLRUDefault(), filesystem.Options{MaxOpenDescriptors: 16})
	var wt billy.Filesystem
	if g.root != "" {
		wt = osfs.New(g.root)
	}
	r, err := gogit.Open(g.store, wt)
	if err != nil {
		g.store.Close()
		return nil, err
	}
	g.r = r
	g.cfg = gitconfig.New()
	if b, err := readSmall(filepath.Join(g.commonDir, "config"), 1<<20); err == nil {
		if err := gitconfig.NewDecoder(bytes.NewReader(b)).Decode(g.cfg); err != nil {
			g.close()
			return nil, errors.New("its config does not parse: " + err.Error())
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		g.close()
		return nil, err
	}
	return g, nil
}

// findRepo finds the repository dir is in as git's discovery does: a .git
// directory in dir or a parent, or a .git file there naming the git
// directory (gitdir: PATH), else dir or a parent itself a bare repository.
// root is the work tree ("" for a bare repository), gitDir holds HEAD and
// the index, commonDir the objects, refs and config (named by gitDir's
// commondir file in a linked work tree). No environment variable is read.
func findRepo(dir string) (root, gitDir, commonDir string, err error) {
	dir = filepath.Clean(dir)
	for p := dir; ; p = filepath.Dir(p) {
		dot := filepath.Join(p, ".git")
		if fi, err := os.Stat(dot); err == nil {
			root = p
			if fi.IsDir() {
				gitDir = dot
			} else if fi.Mode().IsRegular() {
				b, err := readSmall(dot, 4096)
				if err != nil {
					return "", "", "", err
				}
				gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if !ok {
					return "", "", "", errors.New(dot + " names no git directory")
				}
				gitDir = absolute(strings.TrimSpace(gd), p)
			}
			if gitDir != "" {
				break
			}
		}
		if isGitDir(p) {
			gitDir = p
			break
		}
		if filepath.Dir(p) == p {
			return "", "", "", errNoRepo
		}
	}
	commonDir = gitDir
	if b, err := readSmall(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		commonDir = absolute(strings.TrimSpace(string(b)), gitDir)
	}
	return root, filepath.Clean(gitDir), commonDir, nil
}

// isGitDir: p holds HEAD, objects and refs (a bare repository).
func isGitDir(p string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(p, n)); err != nil {
			return false
		}
	}
	return true
}

// readSmall reads a regular file of at most limit bytes (a FIFO or a
// device where a file should be is refused, never opened).
func readSmall(p string, limit int64) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New(p + " is not a regular file")
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// option is a config value as git reads it from the repository's own
// file (last one wins; "" when unset). Global and system config are not
// read: what the preview needs of them only widens what it reports.
func (g *repo) option(section, sub, key string) string {
	if !g.cfg.HasSection(section) {
		return ""
	}
	s := g.cfg.Section(section)
	if sub == "" {
		return s.Option(key)
	}
	if !s.HasSubsection(sub) {
		return ""
	}
	return s.Subsection(sub).Option(key)
}

// head is the branch HEAD names ("" when detached) and its commit (zero
// for an unborn branch).
func (g *repo) head() (branch string, h plumbing.Hash, err error) {
	ref, err := g.r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", h, err
	}
	if ref.Type() == plumbing.SymbolicReference {
		branch = ref.Target().String()
		if !strings.HasPrefix(branch, "refs/heads/") {
			return "", h, errors.New("HEAD names " + branch)
		}
		h, err = g.refCommit(plumbing.ReferenceName(branch))
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return strings.TrimPrefix(branch, "refs/heads/"), plumbing.ZeroHash, nil
		}
		return strings.TrimPrefix(branch, "refs/heads/"), h, err
	}
	h, err = g.peel(ref.Hash())
	return "", h, err
}

// refCommit is the commit a ref names (tags peeled).
func (g *repo) refCommit(name plumbing.ReferenceName) (plumbing.Hash, error) {
	ref, err := g.r.Reference(name, true)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return g.peel(ref.Hash())
}

// errNotCommit: a ref or revision names no commit.
var errNotCommit = errors.New("not a commit")

// peel follows annotated tags to the commit they name.
func (g *repo) peel(h plumbing.Hash) (plumbing.Hash, error) {
	for range 16 {
		o, err := g.r.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch o.Type() {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			t, err := object.DecodeTag(g.r.Storer, o)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			h = t.Target
		default:
			return plumbing.ZeroHash, errNotCommit
		}
	}
	return plumbing.ZeroHash, errNotCommit
}

// resolve is the commit a revision names, for the forms a command line
// names commits by: a ref as git expands it (NAME, refs/NAME,
// refs/tags/NAME, refs/heads/NAME, refs/remotes/NAME,
// refs/remotes/NAME/HEAD), a full or abbreviated hash, HEAD, @, followed
// by ~N, ^N and ^{commit}. Anything else (reflogs, :/search, @{upstream})
// is not resolved: the caller says it could not preview.
func (g *repo) resolve(rev string) (plumbing.Hash, error) {
	base, rest := rev, ""
	if i := strings.IndexAny(rev, "~^"); i >= 0 {
		base, rest = rev[:i], rev[i:]
	}
	if base == "@" {
		base = "HEAD"
	}
	if base == "" || strings.ContainsAny(base, ":@{}\\ ") || strings.HasPrefix(base, "-") {
		return plumbing.ZeroHash, errors.New(rev + " is not a revision this preview reads")
	}
	h, err := g.resolveBase(base)
	if err != nil {
		return h, err
	}
	for rest != "" {
		op := rest[0]
		rest = rest[1:]
		if op == '^' && strings.HasPrefix(rest, "{commit}") {
			rest = rest[len("{commit}"):]
			continue
		}
		n, digits := 1, 0
		for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
			digits++
		}
		if digits > 0 {
			if n, err = strconv.Atoi(rest[:digits]); err != nil || n > 100_000 {
				return plumbing.ZeroHash, errors.New(rev + " is not a revision this preview reads")
			}
			rest = rest[digits:]
		}
		switch {
		case op == '~':
			for range n {
				c, err := g.r.CommitObject(h)
				if err != nil {
					return plumbing.ZeroHash, err
				}
				if c.NumParents() == 0 {
					return plumbing.ZeroHash, errors.New(rev + " goes past the first commit")
				}
				h = c.ParentHashes[0]
			}
		case op == '^' && n == 0:
		case op == '^':
			c, err := g.r.CommitObject(h)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if c.NumParents() < n {
				return plumbing.ZeroHash, errors.New(rev + " names a parent that is not there")
			}
			h = c.ParentHashes[n-1]
		default:
			return plumbing.ZeroHash, errors.New(rev + " is not a revision this preview reads")
		}
	}
	return h, nil
}

func (g *repo) resolveBase(base string) (plumbing.Hash, error) {
	if len(base) == 40 && isHex(base) {
		return g.peel(plumbing.NewHash(base))
	}
	if base == "HEAD" {
		_, h, err := g.head()
		if err == nil && h.IsZero() {
			err = errors.New("HEAD names a branch with no commit yet")
		}
		return h, err
	}
	for _, f := range []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"} {
		name := plumbing.ReferenceName(strings.ReplaceAll(f, "%s", base))
		if ref, err := g.r.Reference(name, true); err == nil {
			return g.peel(ref.Hash())
		}
	}
	if len(base) >= 4 && isHex(base) {
		var found []plumbing.Hash
		iter, err := g.r.Storer.IterEncodedObjects(plumbing.CommitObject)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		defer iter.Close()
		lower := strings.ToLower(base)
		n := 0
		for {
			o, err := iter.Next()
			if err != nil {
				break
			}
			if n++; n%4096 == 0 && time.Now().After(g.deadline) {
				return plumbing.ZeroHash, errors.New("out of time looking up " + base)
			}
			if strings.HasPrefix(o.Hash().String(), lower) {
				found = append(found, o.Hash())
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
	}
	return plumbing.ZeroHash, errors.New(base + " is not a commit here")
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// refs are the repository's refs (every ref under refs/, HEAD, and the
// HEADs of its other work trees) by name, as the commits they name
// (refs that name no commit are left out). The reflogs are not read: a
// commit only they hold is as good as lost.
func (g *repo) refs() (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	iter, err := g.r.References()
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	for {
		ref, err := iter.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		name := ref.Name().String()
		if name != "HEAD" && !strings.HasPrefix(name, "refs/") {
			continue
		}
		h, err := g.refCommit(ref.Name())
		if err != nil {
			continue
		}
		out[name] = h
	}
	if _, h, err := g.head(); err == nil && !h.IsZero() {
		out["HEAD"] = h
	}
	wts, _ := os.ReadDir(filepath.Join(g.commonDir, "worktrees"))
	for _, wt := range wts {
		if filepath.Join(g.commonDir, "worktrees", wt.Name()) == filepath.Clean(g.gitDir) {
			continue // this work tree's own HEAD: "HEAD" above
		}
		b, err := readSmall(filepath.Join(g.commonDir, "worktrees", wt.Name(), "HEAD"), 4096)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if target, ok := strings.CutPrefix(s, "ref: "); ok {
			if h, err := g.refCommit(plumbing.ReferenceName(target)); err == nil {
				out["worktrees/"+wt.Name()+"/HEAD"] = h
			}
		} else if len(s) == 40 && isHex(s) {
			if h, err := g.peel(plumbing.NewHash(s)); err == nil {
				out["worktrees/"+wt.Name()+"/HEAD"] = h
			}
		}
	}
	return out, nil
}

// errCut: the walk ran out of time (or of its step bound).
var errCut = errors.New("out of time walking its history")

// walkMaxCommits bounds one walk of history.
const walkMaxCommits = 2_000_000

// lost are the commits reachable from tips and from none of keep (git
// rev-list TIPS --not KEEP), newest first. The walk goes by commit date,
// both sides at once, and stops when everything left to walk is
// reachable from keep and older than every commit found only from tips:
// exact when parents are no newer than their children; where clocks were
// wrong it can only report more, never less.
func (g *repo) lost(ctx context.Context, tips, keep []plumbing.Hash) ([]*object.Commit, error) {
	const fromTips, fromKeep = 1, 2
	flags := map[plumbing.Hash]uint8{}
	done := map[plumbing.Hash]uint8{}
	order := map[plumbing.Hash]int{} // when first walked: newest first, children before parents
	inQueue := map[plumbing.Hash]int{}
	commits := map[plumbing.Hash]*object.Commit{}
	q := &commitQueue{}
	open := 0 // queued entries not (yet) reachable from keep
	load := func(h plumbing.Hash) *object.Commit {
		if c, ok := commits[h]; ok {
			return c
		}
		c, err := g.r.CommitObject(h)
		if err != nil {
			c = nil // missing (a shallow or partial clone): a boundary
		}
		commits[h] = c
		return c
	}
	mark := func(h plumbing.Hash, f uint8) {
		old := flags[h]
		nf := old | f
		if nf == old {
			return
		}
		flags[h] = nf
		if old&fromKeep == 0 && nf&fromKeep != 0 {
			open -= inQueue[h]
		}
		c := load(h)
		if c == nil {
			return
		}
		heap.Push(q, c)
		inQueue[h]++
		if nf&fromKeep == 0 {
			open++
		}
	}
	for _, h := range keep {
		mark(h, fromKeep)
	}
	for _, h := range tips {
		mark(h, fromTips)
	}
	var oldestOnly time.Time // the oldest commit found from tips only
	var steps int
	for q.Len() > 0 {
		if open == 0 && (oldestOnly.IsZero() || (*q)[0].Committer.When.Before(oldestOnly)) {
			break
		}
		if steps++; steps%512 == 1 && (time.Now().After(g.deadline) || ctx.Err() != nil) || steps > walkMaxCommits {
			return nil, errCut
		}
		c := heap.Pop(q).(*object.Commit)
		inQueue[c.Hash]--
		f := flags[c.Hash]
		if f&fromKeep == 0 {
			open--
		}
		if done[c.Hash] == f {
			continue
		}
		if _, ok := done[c.Hash]; !ok {
			order[c.Hash] = steps
		}
		done[c.Hash] = f
		if f == fromTips && (oldestOnly.IsZero() || c.Committer.When.Before(oldestOnly)) {
			oldestOnly = c.Committer.When
		}
		for _, p := range c.ParentHashes {
			mark(p, f)
		}
	}
	var out []*object.Commit
	for h, f := range flags {
		if f == fromTips {
			if c := commits[h]; c != nil {
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b *object.Commit) int { return order[a.Hash] - order[b.Hash] })
	return out, nil
}

// commitQueue is a max-heap of commits by committer date.
type commitQueue []*object.Commit

func (q commitQueue) Len() int           { return len(q) }
func (q commitQueue) Less(i, j int) bool { return q[i].Committer.When.After(q[j].Committer.When) }
func (q commitQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)        { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// commitLine is a commit as "abc1234 2026-11-30 alice: subject" (git log
// --format='%h %cs %an: %s'), sanitised: the name and the subject are the
// agent's text.
func commitLine(c *object.Commit) string {
	subject, _, _ := strings.Cut(strings.TrimLeft(c.Message, "\n"), "\n\n")
	subject = strings.Join(strings.Fields(strings.ReplaceAll(subject, "\n", " ")), " ")
	if r := []rune(subject); len(r) > 120 {
		subject = string(r[:119]) + "…"
	}
	name := c.Author.Name
	if r := []rune(name); len(r) > 60 {
		name = string(r[:59]) + "…"
	}
	line := c.Hash.String()[:7] + " " + c.Committer.When.Format("2006-01-02") + " " + name + ": " + subject
	return model.Sanitize(line, model.Line)
}

// lostInto fills t with the commits reachable from tips and from none of
// keep: their count and the newest of them (commitLine).
func (g *repo) lostInto(ctx context.Context, tips, keep []plumbing.Hash, t *Target) error {
	cs, err := g.lost(ctx, tips, keep)
	if err != nil {
		return err
	}
	t.Commits = int64(len(cs))
	if len(cs) == 0 {
		return nil
	}
	lines := make([]string, 0, model.MaxImpactDetails)
	for _, c := range cs[:min(len(cs), model.MaxImpactDetails)] {
		lines = append(lines, commitLine(c))
	}
	t.Details = capDetails(lines, t.Commits)
	return nil
}

// keepAll is every ref's commit but those named in except.
func keepAll(refs map[string]plumbing.Hash, except ...string) []plumbing.Hash {
	var out []plumbing.Hash
	for name, h := range refs {
		if !slices.Contains(except, name) {
			out = append(out, h)
		}
	}
	return out
}
