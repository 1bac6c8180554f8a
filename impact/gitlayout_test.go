package impact

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Without a git only root could have put there, status and clean are not
// previewed, and say so; what go-git reads alone still is. A git the
// agent could have written (writable by others) is no such git.
func TestGitWithoutATrustedGitIsUnknown(t *testing.T) {
	_, local := pushRig(t)
	tree(t, local, map[string]string{"a.txt": "changed", "junk": "j"}, nil)
	fake := filepath.Join(t.TempDir(), "git")
	if out, err := exec.Command("cp", "/usr/bin/git", fake).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if err := os.Chmod(fake, 0o777); err != nil {
		t.Fatal(err)
	}
	old := gitCandidates
	gitCandidates = []string{fake, filepath.Join(t.TempDir(), "none")}
	defer func() { gitCandidates = old }()
	for _, cmd := range []string{"git reset --hard", "git clean -f", "git checkout -- ."} {
		p := Compute(context.Background(), cmd, Options{Cwd: local})
		if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "no git owned by root") {
			t.Errorf("%s: targets %+v unknown %q", cmd, p.Targets, p.Unknown)
		}
	}
	p := Compute(context.Background(), "git push --force origin main", Options{Cwd: local})
	if len(p.Targets) != 1 || p.Targets[0].Commits != 2 {
		t.Errorf("push: %+v %q", p.Targets, p.Unknown)
	}
}

// History that cannot be walked in the time allowed is not previewed, and
// never counted as nothing dropped.
func TestGitOutOfTimeIsUnknown(t *testing.T) {
	_, local := pushRig(t)
	for _, cmd := range []string{"git push --force origin main", "git reset --hard HEAD~1", "git clean -f"} {
		p := Compute(context.Background(), cmd, Options{Cwd: local, MaxTime: time.Nanosecond})
		if len(p.Unknown) == 0 || slices.ContainsFunc(p.Targets, func(tg Target) bool { return tg.Commits == 0 && tg.Op != "discard" }) {
			t.Errorf("%s: targets %+v unknown %q", cmd, p.Targets, p.Unknown)
		}
	}
}

// A linked work tree: its own HEAD and index, the common refs; another
// work tree's detached HEAD holds its commits (as fsck finds).
func TestGitLinkedWorkTree(t *testing.T) {
	remote, local := moveRig(t)
	_, local = copyRig(t, remote, local)
	wt := filepath.Join(filepath.Dir(local), "wt")
	git(t, local, "worktree", "add", "-q", "--detach", wt, "spike")
	tree(t, wt, map[string]string{"x1.txt": "x1"}, nil)
	git(t, wt, "add", ".")
	git(t, wt, "commit", "-q", "-m", "x1")
	tree(t, wt, map[string]string{"a.txt": "changed in wt"}, nil)

	p := Compute(context.Background(), "git reset --hard", Options{Cwd: wt})
	if len(p.Targets) != 1 || p.Targets[0].Path != filepath.Join(wt, "a.txt") || len(p.Unknown) != 0 {
		t.Errorf("reset --hard in the work tree: %+v %q", p.Targets, p.Unknown)
	}
	p = Compute(context.Background(), "git reset --hard HEAD~1", Options{Cwd: wt})
	if tg := p.Targets[len(p.Targets)-1]; tg.Op != model.OpMoveBranch || tg.Path != "HEAD" || !slices.Equal(subjects(tg), []string{"x1"}) {
		t.Errorf("reset --hard HEAD~1 in the work tree: %+v %q", p.Targets, p.Unknown)
	}
	// From the main work tree: s1 stays, held by wt's HEAD (x1's parent).
	p = Compute(context.Background(), "git branch -f spike main", Options{Cwd: local})
	if len(p.Targets) != 1 || p.Targets[0].Commits != 0 || len(p.Unknown) != 0 {
		t.Errorf("branch -f spike: %+v %q", p.Targets, p.Unknown)
	}
	before := unreachable(t, local)
	git(t, local, "branch", "-f", "spike", "main")
	if got := unreachable(t, local); !slices.Equal(got, before) {
		t.Errorf("git left %q unreachable (before %q)", got, before)
	}
}

// A linked work tree's config.worktree that moves the work tree elsewhere
// (git then resets that other directory) is not previewed as the
// directory the command is run in: go-git refuses a repository with
// extensions.worktreeConfig, and the preview says it could not look.
func TestGitWorkTreeConfigMovesTheWorkTree(t *testing.T) {
	remote, local := moveRig(t)
	_, local = copyRig(t, remote, local)
	wt := filepath.Join(filepath.Dir(local), "wt")
	git(t, local, "worktree", "add", "-q", "--detach", wt, "spike")
	git(t, local, "config", "core.repositoryformatversion", "1")
	git(t, local, "config", "extensions.worktreeConfig", "true")
	git(t, wt, "config", "--worktree", "core.worktree", local)
	tree(t, local, map[string]string{"a.txt": "changed in the main tree"}, nil)
	p := Compute(context.Background(), "git reset --hard", Options{Cwd: wt})
	if len(p.Targets) != 0 || len(p.Unknown) != 1 {
		t.Errorf("reset --hard: %+v %q", p.Targets, p.Unknown)
	}
}

// A split index keeps its shared part beside it: status still reads it.
func TestGitSplitIndex(t *testing.T) {
	dir := gitRepo(t)
	if out, err := exec.Command("git", "-C", dir, "update-index", "--split-index").CombinedOutput(); err != nil {
		t.Fatalf("split index: %v %s", err, out)
	}
	p := Compute(context.Background(), "git reset --hard", Options{Cwd: dir})
	var got []string
	for _, tg := range p.Targets {
		got = append(got, filepath.Base(tg.Path))
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a.txt", "b.txt"}) || len(p.Unknown) != 0 {
		t.Errorf("targets %q unknown %q", got, p.Unknown)
	}
}

// In a bare repository, branches are read; git clean has no work tree to
// preview and says so.
func TestGitBareRepository(t *testing.T) {
	remote, _ := pushRig(t)
	p := Compute(context.Background(), "git branch -D feature", Options{Cwd: remote})
	if len(p.Targets) != 1 || !slices.Equal(subjects(p.Targets[0]), []string{"f1", "f2"}) {
		t.Errorf("branch -D in the bare remote: %+v %q", p.Targets, p.Unknown)
	}
	p = Compute(context.Background(), "git clean -fdx", Options{Cwd: remote})
	if len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "no work tree") {
		t.Errorf("clean in the bare remote: %+v %q", p.Targets, p.Unknown)
	}
	p = Compute(context.Background(), "git reset --hard", Options{Cwd: t.TempDir()})
	if len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "not a git repository") {
		t.Errorf("outside a repository: %+v %q", p.Targets, p.Unknown)
	}
}

// A FIFO where git keeps a file blocks whoever reads it: the preview
// gives up at its deadline and says so, and never hangs.
func TestGitFIFOInTheRepositoryDoesNotHang(t *testing.T) {
	remote, rig := pushRig(t)
	for _, name := range []string{"HEAD", "config", "packed-refs", "refs/heads/trap", "objects/info/alternates", "info/exclude", "index"} {
		_, local := copyRig(t, remote, rig)
		p := filepath.Join(local, ".git", name)
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		// Afterwards, a writer lets the abandoned reader go.
		t.Cleanup(func() {
			for range 4 {
				if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}
		})
		for _, cmd := range []string{"git push --force origin main", "git reset --hard HEAD~1", "git clean -f"} {
			done := make(chan *Preview, 1)
			go func() {
				done <- Compute(context.Background(), cmd, Options{Cwd: local, MaxTime: 200 * time.Millisecond})
			}()
			select {
			case pv := <-done:
				// Either read (git never opened the FIFO) or named as not previewed.
				if len(pv.Unknown) == 0 && len(pv.Targets) == 0 && cmd != "git clean -f" {
					t.Errorf("%s with a FIFO at %s: nothing previewed and nothing unknown", cmd, name)
				}
				t.Logf("%s, FIFO at %s: %s", cmd, name, pv.Summary)
			case <-time.After(20 * time.Second):
				t.Fatalf("%s with a FIFO at %s: the preview hangs", cmd, name)
			}
		}
	}
}

// git clean -n quotes names with special bytes: the preview names the
// files themselves.
func TestGitCleanQuotedNames(t *testing.T) {
	dir := gitRepo(t)
	tree(t, dir, map[string]string{"tab\there.txt": "t", "café.txt": "c", `quote"d.txt`: "q"}, nil)
	p := Compute(context.Background(), "git clean -f", Options{Cwd: dir})
	var got []string
	for _, tg := range p.Targets {
		if !tg.Exists {
			t.Errorf("%q does not exist", tg.Path)
		}
		got = append(got, filepath.Base(tg.Path))
	}
	slices.Sort(got)
	if want := []string{"café.txt", "new file.txt", `quote"d.txt`, "tab\there.txt"}; !slices.Equal(got, want) {
		t.Errorf("previewed %q, want %q", got, want)
	}
}

// A ref storage go-git does not read (reftable) is not previewed as "no
// refs": every branch would read as missing, every commit as on no ref.
func TestGitReftableIsUnknown(t *testing.T) {
	_, local := pushRig(t)
	git(t, local, "config", "core.repositoryformatversion", "1")
	git(t, local, "config", "extensions.refStorage", "reftable")
	for _, cmd := range []string{"git branch -D feature", "git push --force origin main", "git reset --hard HEAD~1"} {
		p := Compute(context.Background(), cmd, Options{Cwd: local})
		if len(p.Targets) != 0 || len(p.Unknown) == 0 || !strings.Contains(strings.ToLower(strings.Join(p.Unknown, "; ")), "refstorage") {
			t.Errorf("%s: targets %+v unknown %q", cmd, p.Targets, p.Unknown)
		}
	}
}

// A git the previewing user owns, or one in a directory the user can
// write, is the agent's to replace: not trusted, however its mode reads.
func TestGitOwnedByTheUserIsNotTrusted(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "git")
	if out, err := exec.Command("cp", "/usr/bin/git", fake).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// As root the file is root's: the directory is another user's,
		// who could swap the file.
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fake, link); err != nil {
		t.Fatal(err)
	}
	old := gitCandidates
	defer func() { gitCandidates = old }()
	for _, c := range []string{fake, link} {
		gitCandidates = []string{c}
		if p, err := trustedGit(); err == nil {
			t.Errorf("%s trusted as %s", c, p)
		}
	}
	gitCandidates = old
	if _, err := trustedGit(); err != nil {
		t.Errorf("the system git: %v", err)
	}
}

// A second -C is relative to the first, as git reads it: the preview
// looks where git would work, not in a decoy beside the command's
// directory.
func TestGitSecondDashCIsRelativeToTheFirst(t *testing.T) {
	_, local := pushRig(t)
	tree(t, local, map[string]string{"sub/tracked": "t"}, nil)
	git(t, local, "add", "sub")
	tree(t, local, map[string]string{"sub/junk": "j"}, nil)
	decoy := t.TempDir()
	git(t, decoy, "init", "-q")
	if err := os.MkdirAll(filepath.Join(decoy, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := Compute(context.Background(), "git -C "+local+" -C sub clean -f", Options{Cwd: decoy})
	if len(p.Targets) != 1 || p.Targets[0].Path != filepath.Join(local, "sub", "junk") {
		t.Errorf("clean: %+v %q", p.Targets, p.Unknown)
	}
}

// Variables that move git's repository or give it config, from the
// environment or set by the command, leave the preview unknown.
func TestGitPlaceVariablesAreUnknown(t *testing.T) {
	_, local := pushRig(t)
	tree(t, local, map[string]string{"a.txt": "changed"}, nil)
	for _, c := range []struct{ env, cmd string }{
		{"GIT_WORK_TREE=/elsewhere", "git reset --hard"},
		{"", "GIT_DIR=/elsewhere/.git git reset --hard"},
		{"", "export GIT_CONFIG_COUNT=1; git clean -f"},
	} {
		p := Compute(context.Background(), c.cmd, Options{Cwd: local, Env: []string{c.env}})
		if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "is set") {
			t.Errorf("%s with %q: %+v %q", c.cmd, c.env, p.Targets, p.Unknown)
		}
	}
	// The same given as options.
	for _, cmd := range []string{"git --config-env=core.worktree=W reset --hard", "git --exec-path=/tmp reset --hard", "git --namespace=x reset --hard"} {
		p := Compute(context.Background(), cmd, Options{Cwd: local})
		if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "named by options") {
			t.Errorf("%s: %+v %q", cmd, p.Targets, p.Unknown)
		}
	}
	p := Compute(context.Background(), "git reset --hard", Options{Cwd: local, Env: []string{"GIT_DIR="}})
	if len(p.Targets) != 1 {
		t.Errorf("empty GIT_DIR: %+v %q", p.Targets, p.Unknown)
	}
}
