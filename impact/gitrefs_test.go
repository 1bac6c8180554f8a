package impact

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// git runs git in dir as the tests' own hands (not the preview's).
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main",
		"-c", "protocol.file.allow=always"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// pushRig is a bare remote, a clone that pushed main (a-b-c) and feature
// (b and two commits of its own), a second clone whose commit d followed
// on main, fetched; then the first clone's main went back to b. A forced
// push of main now drops c and d from the remote; deleting feature drops
// its two commits.
func pushRig(t testing.TB) (remote, local string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is the oracle of this test (apt-get install git)")
	}
	root := t.TempDir()
	remote, local = filepath.Join(root, "remote.git"), filepath.Join(root, "local")
	other := filepath.Join(root, "other")
	git(t, root, "init", "-q", "--bare", remote)
	git(t, root, "clone", "-q", remote, local)
	commit := func(dir, msg string) {
		tree(t, dir, map[string]string{msg + ".txt": msg}, nil)
		git(t, dir, "add", ".")
		git(t, dir, "commit", "-q", "-m", msg)
	}
	commit(local, "a")
	commit(local, "b")
	commit(local, "c")
	git(t, local, "push", "-q", "-u", "origin", "main")
	git(t, local, "checkout", "-q", "-b", "feature", "HEAD~1")
	commit(local, "f1")
	commit(local, "f2")
	git(t, local, "push", "-q", "-u", "origin", "feature")
	git(t, local, "checkout", "-q", "main")
	git(t, root, "clone", "-q", remote, other)
	commit(other, "d")
	git(t, other, "push", "-q", "origin", "main")
	git(t, local, "fetch", "-q")
	git(t, local, "reset", "-q", "--hard", "HEAD~1")
	return remote, local
}

// copyRig copies the rig's two repositories, for a push done for real.
func copyRig(t *testing.T, remote, local string) (string, string) {
	t.Helper()
	root := t.TempDir()
	if out, err := exec.Command("cp", "-a", filepath.Dir(remote)+"/.", root).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	r, l := filepath.Join(root, "remote.git"), filepath.Join(root, "local")
	git(t, l, "remote", "set-url", "origin", r)
	return r, l
}

// unreachable are the commits git fsck finds in dir that no ref holds
// (reflogs not counted: a bare remote keeps none), as subjects.
func unreachable(t *testing.T, dir string) []string {
	t.Helper()
	var subjects []string
	for _, l := range strings.Split(git(t, dir, "fsck", "--unreachable", "--no-reflogs", "--no-progress"), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[1] == "commit" {
			subjects = append(subjects, git(t, dir, "log", "-1", "--format=%s", f[2]))
		}
	}
	slices.Sort(subjects)
	return subjects
}

// subjects are a target's dropped commits by subject (details read
// "abc1234 2026-11-30 t: subject").
func subjects(tg Target) []string {
	var out []string
	for _, d := range tg.Details {
		if _, s, ok := strings.Cut(d, ": "); ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// A forced push drops, per branch, what the remote then no longer holds:
// the preview (local refs) and the real push agree, and so does deleting a
// branch on the remote.
func TestGitPushForceAsTheRemoteLosesIt(t *testing.T) {
	remote, local := pushRig(t)
	for _, tc := range []struct {
		cmd    string
		op     string
		path   string
		drops  []string
		remark string
	}{
		{cmd: "git push --force origin main", op: model.OpForcePush, path: "origin/main", drops: []string{"c", "d"}},
		{cmd: "git push -f", op: model.OpForcePush, path: "origin/main", drops: []string{"c", "d"}},
		{cmd: "git push origin +HEAD:main", op: model.OpForcePush, path: "origin/main", drops: []string{"c", "d"}},
		{cmd: "git push --force-with-lease origin main", op: model.OpForcePush, path: "origin/main", drops: []string{"c", "d"}, remark: "--force-with-lease"},
		{cmd: "git push origin --delete feature", op: model.OpDeleteBranch, path: "origin/feature", drops: []string{"f1", "f2"}},
		{cmd: "git push origin :feature", op: model.OpDeleteBranch, path: "origin/feature", drops: []string{"f1", "f2"}},
		{cmd: "git push -f origin feature:main", op: model.OpForcePush, path: "origin/main", drops: []string{"c", "d"}},
	} {
		p := Compute(context.Background(), tc.cmd, Options{Cwd: local})
		if len(p.Targets) != 1 || len(p.Unknown) != 0 {
			t.Fatalf("%s: targets %+v unknown %q", tc.cmd, p.Targets, p.Unknown)
		}
		tg := p.Targets[0]
		if tg.Op != tc.op || tg.Path != tc.path || !tg.Exists || tg.Commits != int64(len(tc.drops)) || !slices.Equal(subjects(tg), tc.drops) {
			t.Errorf("%s: %+v, want %s %s dropping %q", tc.cmd, tg, tc.op, tc.path, tc.drops)
		}
		if !strings.Contains(tg.Note, "from local refs only") || !strings.Contains(tg.Note, tc.remark) {
			t.Errorf("%s: note %q does not say it read local refs only", tc.cmd, tg.Note)
		}
		if level, _ := Raise(p); level != model.RiskMedium {
			t.Errorf("%s: raise %q", tc.cmd, level)
		}
		// The oracle: push for real in a copy; what the remote lost.
		r, l := copyRig(t, remote, local)
		args := strings.Fields(tc.cmd)[1:]
		git(t, l, args...)
		if got := unreachable(t, r); !slices.Equal(got, tc.drops) {
			t.Errorf("%s: the remote lost %q, the preview said %q", tc.cmd, got, tc.drops)
		}
	}
	p := Compute(context.Background(), "git push --force origin main", Options{Cwd: local})
	if !strings.HasPrefix(p.Summary, "drops 2 commits from origin/main (as local refs have it)") {
		t.Errorf("summary %q", p.Summary)
	}
}

// A push that is not forced drops nothing (the remote refuses); a dry run
// does nothing; a mirror, a URL and a branch never fetched are named as
// not previewed.
func TestGitPushThatDropsNothingOrCannotBeKnown(t *testing.T) {
	_, local := pushRig(t)
	for _, cmd := range []string{"git push origin main", "git push", "git push -n -f origin main", "git push --dry-run --force"} {
		if p := Compute(context.Background(), cmd, Options{Cwd: local}); len(p.Targets) != 0 || len(p.Unknown) != 0 {
			t.Errorf("%s: %+v %q", cmd, p.Targets, p.Unknown)
		}
	}
	onlyUnknown(t, local, map[string]string{
		"git push --mirror":                   "drop any branch",
		"git push --force /tmp/x.git main":    "not a remote",
		"git push --force origin main:fresh":  "no remote-tracking branch",
		"git push -f origin nosuch:main":      "not a commit",
		"git push -f origin -- --exec=x:main": "not a commit",
	})
	// The fast-forward of a forced push drops nothing, and says so.
	git(t, local, "merge", "-q", "--ff-only", "origin/main")
	p := Compute(context.Background(), "git push -f origin main", Options{Cwd: local})
	if len(p.Targets) != 1 || p.Targets[0].Commits != 0 || !strings.HasPrefix(p.Summary, "drops no commits from origin/main") {
		t.Fatalf("fast-forward: %+v %q", p.Targets, p.Summary)
	}
	if d := Describe(p.Targets[0], false); d.What != "no commits dropped (a fast-forward of what local refs have)" || len(d.Details) != 0 {
		t.Errorf("fast-forward described %+v", d)
	}
}

// git branch -D loses the commits no other ref holds: as git fsck finds
// them unreachable after a real deletion.
func TestGitBranchDeleteAsFsckFindsIt(t *testing.T) {
	_, local := pushRig(t)
	git(t, local, "checkout", "-q", "-b", "spike")
	tree(t, local, map[string]string{"s1.txt": "s"}, nil)
	git(t, local, "add", ".")
	git(t, local, "commit", "-q", "-m", "s1")
	git(t, local, "checkout", "-q", "-b", "merged", "main")
	git(t, local, "checkout", "-q", "main")
	for _, tc := range []struct {
		cmd   string
		lost  map[string][]string
		unkn  bool
		empty bool
	}{
		{cmd: "git branch -D spike merged", lost: map[string][]string{"spike": {"s1"}, "merged": nil}},
		{cmd: "git branch -d -f spike", lost: map[string][]string{"spike": {"s1"}}},
		{cmd: "git branch --delete --force feature", lost: map[string][]string{"feature": nil}}, // on origin/feature too
		{cmd: "git branch -d spike", empty: true},                                               // refuses an unmerged branch
		{cmd: "git branch -D -r origin/feature", empty: true},
	} {
		p := Compute(context.Background(), tc.cmd, Options{Cwd: local})
		if tc.empty {
			if len(p.Targets) != 0 {
				t.Errorf("%s: %+v", tc.cmd, p.Targets)
			}
			continue
		}
		got := map[string][]string{}
		for _, tg := range p.Targets {
			if tg.Op != model.OpDeleteBranch || !tg.Exists || tg.Commits != int64(len(subjects(tg))) {
				t.Errorf("%s: %+v", tc.cmd, tg)
			}
			got[tg.Path] = subjects(tg)
		}
		if len(got) != len(tc.lost) {
			t.Errorf("%s: %v, want %v", tc.cmd, got, tc.lost)
		}
		for b, want := range tc.lost {
			if !slices.Equal(got[b], want) {
				t.Errorf("%s: %s loses %q, want %q", tc.cmd, b, got[b], want)
			}
		}
	}
	// The oracle: delete for real in a copy; what fsck finds unreachable.
	_, l := copyRig(t, filepath.Join(filepath.Dir(local), "remote.git"), local)
	before := unreachable(t, l)
	git(t, l, "branch", "-D", "spike", "merged")
	if got := unreachable(t, l); !slices.Equal(got, append(before, "s1")) {
		t.Errorf("deleting spike and merged left %q unreachable (before: %q), the preview said s1", got, before)
	}
	p := Compute(context.Background(), "git branch -D spike nosuch", Options{Cwd: local})
	if !strings.Contains(p.Summary, "deletes branch spike and 1 commit on no other ref") || p.Targets[1].Exists {
		t.Errorf("summary %q, targets %+v", p.Summary, p.Targets)
	}
}

// Commits dropped after the approval are growth: the run is refused.
func TestGitPushGrewAfterTheApproval(t *testing.T) {
	_, local := pushRig(t)
	approved := Compute(context.Background(), "git push --force origin main", Options{Cwd: local})
	other := filepath.Join(filepath.Dir(local), "other")
	tree(t, other, map[string]string{"e.txt": "e"}, nil)
	git(t, other, "add", ".")
	git(t, other, "commit", "-q", "-m", "e")
	git(t, other, "push", "-q", "origin", "main")
	if grew := Grew(approved, Compute(context.Background(), "git push --force origin main", Options{Cwd: local})); len(grew) != 0 {
		t.Errorf("before a fetch, local refs have not moved: %q", grew)
	}
	git(t, local, "fetch", "-q")
	grew := Grew(approved, Compute(context.Background(), "git push --force origin main", Options{Cwd: local}))
	if len(grew) == 0 || !strings.Contains(grew[0], "origin/main: 3 commits now, 2 commits when approved") {
		t.Errorf("grew %q", grew)
	}
}
