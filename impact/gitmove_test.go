package impact

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// moveRig is pushRig with main two commits ahead (m1, m2; main was at b)
// and a branch spike holding m1 and s1 of its own.
func moveRig(t *testing.T) (remote, local string) {
	t.Helper()
	remote, local = pushRig(t)
	commit := func(msg string) {
		tree(t, local, map[string]string{msg + ".txt": msg}, nil)
		git(t, local, "add", ".")
		git(t, local, "commit", "-q", "-m", msg)
	}
	commit("m1")
	git(t, local, "branch", "spike")
	commit("m2")
	git(t, local, "checkout", "-q", "spike")
	commit("s1")
	git(t, local, "checkout", "-q", "main")
	return remote, local
}

// Commands that move a branch name the commits they leave on no ref: as
// git fsck finds them unreachable (reflogs not counted) once the command
// has run for real.
func TestGitMovesNameTheCommitsLeftBehind(t *testing.T) {
	remote, local := moveRig(t)
	for _, tc := range []struct {
		cmd   string
		setup [][]string // git commands run first
		path  string
		lost  []string
		none  bool // no branch target: nothing left behind
	}{
		{cmd: "git reset --hard HEAD~1", path: "main", lost: []string{"m2"}},
		{cmd: "git reset --hard HEAD~2", path: "main", lost: []string{"m2"}},
		{cmd: "git reset HEAD~1", path: "main", lost: []string{"m2"}},
		{cmd: "git reset --soft HEAD^", path: "main", lost: []string{"m2"}},
		{cmd: "git reset --keep origin/main", path: "main", lost: []string{"m2"}},
		{cmd: "git reset -q --hard spike", path: "main", lost: []string{"m2"}},
		{cmd: "git reset --hard", none: true},
		{cmd: "git reset --hard main", none: true},
		{cmd: "git reset HEAD~1 -- a.txt", none: true},
		{cmd: "git branch -f spike main", path: "spike", lost: []string{"s1"}},
		{cmd: "git branch --force spike origin/feature", path: "spike", lost: []string{"s1"}},
		{cmd: "git branch -f fresh main", none: true},
		{cmd: "git branch -f main HEAD~1", none: true}, // git refuses: main is checked out
		{cmd: "git checkout -B spike origin/main", path: "spike", lost: []string{"s1"}},
		{cmd: "git checkout -q -B spike", path: "spike", lost: []string{"s1"}},
		{cmd: "git switch -C spike main", path: "spike", lost: []string{"s1"}},
		{cmd: "git checkout -B fresh", none: true},
		{cmd: "git rebase origin/main", path: "main", lost: []string{"m2"}},
		{cmd: "git rebase origin/main spike", path: "spike", lost: []string{"s1"}},
		{cmd: "git rebase --onto origin/feature HEAD~1", path: "main", lost: []string{"m2"}},
		{cmd: "git rebase HEAD~2", none: true}, // already on top: nothing rewritten
		{cmd: "git checkout -B main2 origin/main", setup: [][]string{{"checkout", "-q", "--detach"}, {"commit", "-q", "--allow-empty", "-m", "x1"}}, path: "main2", lost: []string{"x1"}},
		{cmd: "git checkout -B main2", setup: [][]string{{"checkout", "-q", "--detach"}, {"commit", "-q", "--allow-empty", "-m", "x1"}}, none: true}, // main2 starts at HEAD: x1 stays
		{cmd: "git reset --hard HEAD~1", setup: [][]string{{"checkout", "-q", "--detach", "spike"}}, path: "HEAD"},                                   // spike holds s1
		{cmd: "git reset --hard HEAD~1", setup: [][]string{{"checkout", "-q", "--detach"}, {"commit", "-q", "--allow-empty", "-m", "x1"}}, path: "HEAD", lost: []string{"x1"}},
		{cmd: "git branch -M spike feature", path: "feature"}, // origin/feature holds f1, f2
	} {
		_, l := copyRig(t, remote, local)
		git(t, l, "update-index", "-q", "--refresh") // the copy's stat data
		for _, c := range tc.setup {
			git(t, l, c...)
		}
		p := Compute(context.Background(), tc.cmd, Options{Cwd: l})
		if len(p.Unknown) != 0 {
			t.Errorf("%s: unknown %q", tc.cmd, p.Unknown)
		}
		var tg *Target
		for i := range p.Targets {
			if p.Targets[i].Op == model.OpMoveBranch {
				tg = &p.Targets[i]
			}
		}
		switch {
		case tc.none && tg != nil:
			t.Errorf("%s: %+v, want no branch target", tc.cmd, *tg)
		case !tc.none && tg == nil:
			t.Errorf("%s: no branch target in %+v", tc.cmd, p.Targets)
		case tg != nil:
			if tg.Path != tc.path || tg.Commits != int64(len(tc.lost)) || !slices.Equal(subjects(*tg), tc.lost) || !tg.Exists {
				t.Errorf("%s: %+v, want %s leaving %q", tc.cmd, *tg, tc.path, tc.lost)
			}
			if level, _ := Raise(p); len(tc.lost) > 0 && level != model.RiskMedium {
				t.Errorf("%s: raise %q", tc.cmd, level)
			}
			if len(tc.lost) > 0 && !strings.Contains(p.Summary, "leaves "+commits(int64(len(tc.lost)))+" on no ref") {
				t.Errorf("%s: summary %q", tc.cmd, p.Summary)
			}
		}
		// The oracle: run it for real; what fsck then finds unreachable.
		before := unreachable(t, l)
		args := strings.Fields(tc.cmd)[1:]
		cmd := append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)
		if out, err := runGitForReal(l, cmd...); err != nil && !strings.Contains(tc.cmd, "-f main") {
			t.Fatalf("%s: %v %s", tc.cmd, err, out)
		}
		os.Remove(filepath.Join(l, ".git", "ORIG_HEAD")) // as a reflog: not a ref
		var got []string
		for _, s := range unreachable(t, l) {
			if !slices.Contains(before, s) {
				got = append(got, s)
			}
		}
		if !slices.Equal(got, tc.lost) {
			t.Errorf("%s: git left %q unreachable, the preview said %q", tc.cmd, got, tc.lost)
		}
	}
}

// runGitForReal runs git in dir, failing or not (the oracle's hands).
func runGitForReal(dir string, args ...string) ([]byte, error) {
	return exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
}

// git reset --hard HEAD~1 mentions the commit it drops, and the drop is
// growth when a commit came after the approval.
func TestGitResetHardNamesTheDroppedCommit(t *testing.T) {
	_, local := moveRig(t)
	git(t, local, "branch", "-D", "spike")
	approved := Compute(context.Background(), "git reset --hard HEAD~1", Options{Cwd: local})
	if !strings.Contains(approved.Summary, "moves main and leaves 1 commit on no ref (") || !strings.Contains(approved.Summary, " t: m2)") {
		t.Errorf("summary %q", approved.Summary)
	}
	if level, why := Raise(approved); level != model.RiskMedium || !strings.Contains(why, "1 commit") {
		t.Errorf("raise %q %q", level, why)
	}
	d := Describe(approved.Targets[0], true)
	if d.What != "1 commit left on no ref (moves to "+git(t, local, "rev-parse", "--short=7", "HEAD~1")+"; commits on no other ref afterwards (reflogs not counted))" {
		t.Errorf("described %q", d.What)
	}
	// A commit made after the approval: HEAD~1 is now m2, and m3 is dropped.
	tree(t, local, map[string]string{"m3.txt": "m3"}, nil)
	git(t, local, "add", ".")
	git(t, local, "commit", "-q", "-m", "m3")
	now := Compute(context.Background(), "git reset --hard HEAD~1", Options{Cwd: local})
	if grew := Grew(approved, now); len(grew) == 0 || !strings.Contains(strings.Join(grew, "; "), "m3, not in the preview approved") {
		t.Errorf("grew %q", grew)
	}
}

// Subjects and names are the agent's text: a dropped commit's line is
// sanitised.
func TestGitDroppedCommitLinesAreSanitised(t *testing.T) {
	_, local := moveRig(t)
	git(t, local, "branch", "-D", "spike")
	git(t, local, "-c", "user.name=evil\x1b[2Jname", "commit", "-q", "--allow-empty", "-m", "subject \x1b]0;title\x07 with \u202e bidi\n\nbody")
	p := Compute(context.Background(), "git reset --hard HEAD~2", Options{Cwd: local})
	if len(p.Targets) != 1 || len(p.Targets[0].Details) != 2 {
		t.Fatalf("targets %+v", p.Targets)
	}
	line := p.Targets[0].Details[0]
	if strings.ContainsAny(line, "\x1b\x07\u202e\n") || !strings.Contains(line, `evil\x1b[2Jname: subject \x1b]0;title\x07 with <U+202E> bidi`) {
		t.Errorf("detail %q", line)
	}
}

// More commits than a preview names: the count is whole, the details end
// in "and N more".
func TestGitManyDroppedCommits(t *testing.T) {
	_, local := moveRig(t)
	git(t, local, "branch", "-D", "spike")
	for i := range 30 {
		git(t, local, "commit", "-q", "--allow-empty", "-m", "n"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	p := Compute(context.Background(), "git reset --hard origin/feature", Options{Cwd: local})
	if len(p.Targets) != 1 || p.Targets[0].Commits != 32 || len(p.Targets[0].Details) != model.MaxImpactDetails ||
		p.Targets[0].Details[model.MaxImpactDetails-1] != "and 13 more" {
		t.Fatalf("targets %+v", p.Targets)
	}
}
