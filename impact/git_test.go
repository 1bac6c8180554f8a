package impact

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitRepo is a repository with a commit, a modified and a staged file,
// untracked and ignored ones.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is the oracle of this test (apt-get install git)")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	run("init", "-q")
	tree(t, dir, map[string]string{"a.txt": "a", "b.txt": "b", "src/c.go": "c", ".gitignore": "*.log\n"}, nil)
	run("add", ".")
	run("commit", "-q", "-m", "one")
	tree(t, dir, map[string]string{"a.txt": "changed", "b.txt": "staged", "new file.txt": "n", "tmp/x": "x", "debug.log": "l"}, nil)
	run("add", "b.txt")
	return dir
}

// git clean lists what git clean -n lists, with the same options.
func TestGitCleanAsGitListsIt(t *testing.T) {
	dir := gitRepo(t)
	for flags, dry := range map[string][]string{"-f": nil, "-fd": {"-d"}, "-fdx": {"-dx"}, "-fX": {"-X"}, "-f -d -x": {"-d", "-x"}, "-ff -d -e tmp": {"-d", "-e", "tmp"}} {
		p := Compute(context.Background(), "git clean "+flags, Options{Cwd: dir})
		var got []string
		for _, tg := range p.Targets {
			rel, _ := filepath.Rel(dir, tg.Path)
			if tg.Dirs > 0 {
				rel += "/"
			}
			got = append(got, rel)
		}
		oracle := exec.Command("git", append([]string{"-C", dir, "clean", "-n"}, dry...)...)
		out, err := oracle.Output()
		if err != nil {
			t.Fatalf("oracle %s: %v", flags, err)
		}
		var want []string
		for _, l := range strings.Split(string(out), "\n") {
			if p, ok := strings.CutPrefix(l, "Would remove "); ok {
				want = append(want, p)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("git clean %s: previewed %q, git clean -n lists %q", flags, got, want)
		}
	}
}

// reset --hard loses the modified and staged tracked files; checkout -- .
// only the unstaged ones; untracked files are left alone.
func TestGitResetAndCheckoutLoseUncommittedChanges(t *testing.T) {
	dir := gitRepo(t)
	names := func(cmd string) []string {
		p := Compute(context.Background(), cmd, Options{Cwd: dir})
		var out []string
		for _, tg := range p.Targets {
			out = append(out, filepath.Base(tg.Path))
			if tg.Op != "discard" {
				t.Errorf("%s: op %s", cmd, tg.Op)
			}
		}
		slices.Sort(out)
		return out
	}
	if got := names("git reset --hard"); !slices.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Errorf("reset --hard: %q", got)
	}
	if got := names("git checkout -- ."); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("checkout -- .: %q", got)
	}
	if got := names("git restore ."); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("restore .: %q", got)
	}
	p := Compute(context.Background(), "git reset --hard", Options{Cwd: dir})
	if !strings.HasPrefix(p.Summary, "discards uncommitted changes to 2 files") {
		t.Errorf("summary %q", p.Summary)
	}
	// Nothing was changed by looking.
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "changed" {
		t.Fatal("the preview changed the work tree")
	}
}
