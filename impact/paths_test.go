package impact

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// pathsN is how many files the "many" directory of these trees holds.
const pathsN = 300

// pathsWorld is a working directory with many (pathsN files), a decoy
// directory of one file, and build/tmp of three.
func pathsWorld(t *testing.T) string {
	t.Helper()
	cwd := filepath.Join(t.TempDir(), "work")
	flatDir(t, filepath.Join(cwd, "many"), pathsN)
	flatDir(t, filepath.Join(cwd, "decoy"), 1)
	flatDir(t, filepath.Join(cwd, "build", "tmp"), 3)
	tree(t, cwd, map[string]string{"a.txt": "a", "out.o": "o", "db": "db"}, nil)
	return cwd
}

// bashIn runs command with bash in dir (the oracle).
func bashIn(t *testing.T, dir, command string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	_ = cmd.Run() // some fail on purpose (an ambiguous option): what they did is counted
}

// lost counts the files under the tree's many (or where they were moved)
// that bash deleted or left mode 000.
func lost(t *testing.T, cwd string) int {
	t.Helper()
	left := 0
	filepath.WalkDir(cwd, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasPrefix(d.Name(), "f") {
			if fi, err := d.Info(); err == nil && fi.Mode().Perm() != 0 {
				left++
			}
		}
		return nil
	})
	return pathsN + 1 + 3 - left // the decoy's one file and build/tmp's three count as well
}

// A path an earlier command of the line moves, links, copies or writes is
// not previewed as it is now: bash acts on the tree as that command left
// it. Each case is run by bash on its own tree: it loses the many files
// the preview must not call nothing.
func TestChangedEarlierInTheLine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chmod 000 is counted by reading modes as root")
	}
	for _, command := range []string{
		`ln -sfn many e2; chmod -R 000 e2/`,
		`mv decoy decoy.old; mv many decoy; rm -f decoy/*`,
		`mv decoy decoy.old; mv many decoy; cd decoy && rm -f *`,
		`mv many e.new; rm -rf e*`,
		`mv many decoy/; rm -rf decoy`,
		`cp -r many decoy.new && rm -rf many && mv decoy.new many && chmod -R 000 many`,
		`ln -s many e3 && rm -rf e3/`,
		`frob many e4; rm -rf e4/`,
		`for i in 1 2; do chmod -R 000 e5/; ln -sfn many e5; done`,
		`while [ ! -e e6 ]; do ln -s many e6 || break; done; rm -rf e6/`,
	} {
		t.Run(command, func(t *testing.T) {
			cwd := pathsWorld(t)
			p := Compute(context.Background(), command, Options{Cwd: cwd})
			bashIn(t, cwd, command)
			gone := lost(t, cwd)
			if command == `frob many e4; rm -rf e4/` {
				gone = pathsN // frob is no program: what an unknown program may have done
			}
			if gone < pathsN {
				t.Fatalf("the oracle: bash lost %d files, want at least %d", gone, pathsN)
			}
			if level, _ := Raise(p); level == "" || !strings.Contains(strings.Join(p.Unknown, ";"), "earlier in the command") {
				t.Errorf("previewed as %q (unknown %q); bash lost %d files", p.Summary, p.Unknown, gone)
			}
		})
	}
}

// Ordinary lines still preview what they touch: an earlier command that
// changes nothing a later one names leaves it previewed.
func TestChangedEarlierOnlyWhereItMatters(t *testing.T) {
	for _, c := range []struct {
		command string
		entries int64
	}{
		{`mkdir -p build && rm -rf build/tmp`, 4},
		{`make && rm -f out.o`, 1},
		{`echo hi > log.txt; rm -rf many`, pathsN + 1},
		{`echo hi >> log.txt; rm -rf many`, pathsN + 1},
		{`cp a.txt b.txt && rm -rf many`, pathsN + 1},
		{`git clone https://example.invalid/x.git && rm -rf many`, pathsN + 1},
		{`touch many/new && rm -rf many`, pathsN + 1},
		{`terraform plan -out=p.tfplan; rm -rf many`, pathsN + 1},
	} {
		cwd := pathsWorld(t)
		p := Compute(context.Background(), c.command, Options{Cwd: cwd})
		if len(p.Unknown) != 0 || p.Entries != c.entries || !p.Complete {
			t.Errorf("%q: %q (%d entries, unknown %q), want %d entries", c.command, p.Summary, p.Entries, p.Unknown, c.entries)
		}
	}
}

// A saved plan an earlier command writes is not the plan there now
// (terraform applied destroy.plan's 2 destroys where add.plan, read now,
// adds 1).
func TestPlanChangedEarlierInTheLine(t *testing.T) {
	dir := t.TempDir()
	add := zipOf(t, planMembers(tfPlan(3, tfChange("terraform_data.a", actionCreate))))
	destroy := zipOf(t, planMembers(tfPlan(3, tfChange("terraform_data.a", actionDelete), tfChange("terraform_data.b", actionDelete))))
	for name, data := range map[string][]byte{"add.plan": add, "destroy.plan": destroy} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := Compute(context.Background(), "terraform apply add.plan", Options{Cwd: dir})
	if len(p.Targets) != 1 || p.Targets[0].Creates != 1 || len(p.Unknown) != 0 {
		t.Fatalf("the plan as it is: %q", p.Summary)
	}
	for _, command := range []string{
		"cp destroy.plan add.plan; terraform apply add.plan",
		"terraform plan -destroy -out=add.plan && terraform apply add.plan",
		"terraform plan -destroy -out add.plan && terraform apply -auto-approve add.plan",
		"cat destroy.plan > add.plan; terraform apply add.plan",
		"cat destroy.plan >> add.plan; terraform apply add.plan",
		"mv destroy.plan add.plan; terraform apply add.plan",
		"terraform -chdir=" + dir + " plan -out=add.plan; terraform apply add.plan",
	} {
		p := Compute(context.Background(), command, Options{Cwd: dir})
		applied := false
		for _, tg := range p.Targets {
			applied = applied || tg.Op == model.OpApply
		}
		if applied || !strings.Contains(strings.Join(p.Unknown, ";"), "the plan is changed earlier in the command") {
			t.Errorf("%q: %q", command, p.Summary)
		}
	}
}

// /proc/self, /dev/stdin and the like name the running shell's state, not
// the preview's: /proc/self/cwd is where the command runs; an open file
// of the shell, or another process's state, is unknown.
func TestShellStatePaths(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chmod 000 is counted by reading modes as root")
	}
	cwd := pathsWorld(t)
	for _, command := range []string{`chmod -R 000 /proc/self/cwd/many`, `rm -rf /proc/thread-self/cwd/many/`} {
		p := Compute(context.Background(), command, Options{Cwd: cwd})
		if p.Entries != pathsN+1 || len(p.Unknown) != 0 {
			t.Errorf("%q: %q (%d entries)", command, p.Summary, p.Entries)
		}
	}
	oracle := pathsWorld(t)
	bashIn(t, oracle, `chmod -R 000 /proc/self/cwd/many`)
	if gone := lost(t, oracle); gone != pathsN {
		t.Fatalf("the oracle: bash changed %d files, want %d", gone, pathsN)
	}
	// /dev/stdin and /dev/fd/N through the command's own redirections
	// (bash truncates db).
	for _, command := range []string{`truncate -s0 /dev/stdin < db`, `truncate -s0 /dev/fd/3 3<db`,
		`truncate -s0 /proc/self/fd/1 >>db`, `truncate -s0 /dev/stderr >>db 2>&1`} {
		p := Compute(context.Background(), command, Options{Cwd: cwd})
		if len(p.Unknown) != 0 || len(p.Targets) != 1 || p.Targets[0].Path != filepath.Join(cwd, "db") || p.Targets[0].Op != "truncate" {
			t.Errorf("%q: %q", command, p.Summary)
		}
		oracle := pathsWorld(t)
		bashIn(t, oracle, command)
		if fi, err := os.Stat(filepath.Join(oracle, "db")); err != nil || fi.Size() != 0 {
			t.Errorf("the oracle: %q left db %v %v", command, fi, err)
		}
	}
	for _, command := range []string{`truncate -s0 /dev/stdin`, `truncate -s0 /dev/stderr 2>&1 >>db`, `rm -rf /proc/1/cwd/x`,
		`truncate -s0 /proc/self/fd/0`, `: > /dev/stdout`, `cat a.txt > /proc/self/fd/1`, `truncate -s0 /dev/stdin <<< x`} {
		p := Compute(context.Background(), command, Options{Cwd: cwd})
		if level, _ := Raise(p); level == "" || len(p.Unknown) == 0 {
			t.Errorf("%q: %q", command, p.Summary)
		}
	}
	for _, command := range []string{`cd /proc/self/cwd && rm -rf many`, `cd /proc/self/cwd/many && rm -f *`, `cd /dev/fd && rm -f 3`} {
		p := Compute(context.Background(), command, Options{Cwd: cwd})
		if level, _ := Raise(p); level == "" || len(p.Unknown) == 0 {
			t.Errorf("%q: %q", command, p.Summary)
		}
	}
	// A symlink into /proc/self is resolved by the shell in its own process.
	if err := os.Symlink("/proc/self/cwd", filepath.Join(cwd, "here")); err != nil {
		t.Fatal(err)
	}
	if p := Compute(context.Background(), `rm -rf here/many`, Options{Cwd: cwd}); len(p.Unknown) == 0 {
		t.Errorf("through a symlink to /proc/self/cwd: %q", p.Summary)
	}
	p := Compute(context.Background(), `rm -rf /proc/self/cwd/many`, Options{})
	if len(p.Unknown) == 0 {
		t.Errorf("working directory not known: %q", p.Summary)
	}
}

// Long options are read as getopt_long reads them: an unambiguous prefix
// is the option (real coreutils is the oracle); an ambiguous one, or one
// the program does not have, is unknown.
func TestAbbreviatedLongOptions(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown nobody and chmod 000 are counted as root")
	}
	for _, command := range []string{`rm --rec --for many`, `rm --recursive --force many`, `chmod --rec 000 many`,
		`chown --rec --no-d 65534 many`, `chgrp --recu 65534 many`, `rm --r -f many`} {
		cwd := pathsWorld(t)
		p := Compute(context.Background(), command, Options{Cwd: cwd})
		if p.Entries != pathsN+1 || len(p.Unknown) != 0 {
			t.Errorf("%q: %q (%d entries, unknown %q)", command, p.Summary, p.Entries, p.Unknown)
		}
		bashIn(t, cwd, command)
		touched := 0
		filepath.WalkDir(filepath.Join(cwd, "many"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				fi, _ := d.Info()
				if fi.Mode().Perm() != 0 && fi.Sys().(*syscall.Stat_t).Uid == 0 && fi.Sys().(*syscall.Stat_t).Gid == 0 {
					return nil
				}
			}
			touched++
			return nil
		})
		if _, err := os.Lstat(filepath.Join(cwd, "many")); err != nil {
			touched = pathsN + 1
		}
		if touched != pathsN+1 {
			t.Errorf("the oracle: %q touched %d entries, want %d", command, touched, pathsN+1)
		}
	}
	for _, command := range []string{`chmod --re 000 many`, `rm --frobnicate -rf many`, `cp --s=x a.txt b.txt`, `mv --s=x a.txt many`} {
		cwd := pathsWorld(t)
		p := Compute(context.Background(), command, Options{Cwd: cwd})
		if len(p.Unknown) == 0 {
			t.Errorf("%q: %q, want unknown", command, p.Summary)
		}
	}
	// cp --target (a prefix of --target-directory) writes into many.
	cwd := pathsWorld(t)
	tree(t, cwd, map[string]string{"many/a.txt": "old"}, nil)
	p := Compute(context.Background(), `cp --target many a.txt`, Options{Cwd: cwd})
	if len(p.Targets) != 1 || p.Targets[0].Path != filepath.Join(cwd, "many", "a.txt") || p.Targets[0].Op != "overwrite" {
		t.Errorf("cp --target: %q", p.Summary)
	}
}

// find deletes as it evaluates, left to right: a -delete before a test
// deletes all it visits. The count is real find's.
func TestFindDeleteOrder(t *testing.T) {
	for _, command := range []string{`find many -delete -name '*.bak'`, `find many -name 'f00001*' -delete`,
		`find many -type f -delete -name nothing`, `find many -name 'f0000*' -delete -type d`} {
		cwd := pathsWorld(t)
		p := Compute(context.Background(), command, Options{Cwd: cwd})
		before := count(t, filepath.Join(cwd, "many"))
		bashIn(t, cwd, command)
		want := before - count(t, filepath.Join(cwd, "many"))
		if p.Entries != int64(want) || len(p.Unknown) != 0 {
			t.Errorf("%q: previewed %q (%d entries); find deleted %d", command, p.Summary, p.Entries, want)
		}
	}
}

// count is how many entries are at and under p (0 when gone).
func count(t *testing.T, p string) int {
	n := 0
	filepath.WalkDir(p, func(string, fs.DirEntry, error) error { n++; return nil })
	if _, err := os.Lstat(p); err != nil {
		return 0
	}
	return n
}

// terraform subcommands that change state without a plan to preview are
// unknown; the read-only ones stay silent.
func TestTerraformSubcommands(t *testing.T) {
	dir := t.TempDir()
	for _, command := range []string{"terraform state rm aws_instance.db", "terraform state mv a b", "terraform state push x.tfstate",
		"terraform state replace-provider a b", "terraform workspace delete prod", "terraform taint a.b", "terraform untaint a.b",
		"terraform import a.b id", "terraform force-unlock 1234", "terraform destroy", "terraform apply", "terraform init",
		"terraform fmt", "terraform test", "terraform frobnicate", "terraform providers lock", "terraform -chdir=x state rm a"} {
		p := Compute(context.Background(), command, Options{Cwd: dir})
		if level, _ := Raise(p); level == "" || len(p.Unknown) == 0 {
			t.Errorf("%q: %q", command, p.Summary)
		}
	}
	for _, command := range []string{"terraform plan", "terraform plan -out=x.tfplan", "terraform show", "terraform output -json",
		"terraform validate", "terraform version", "terraform -version", "terraform providers", "terraform graph",
		"terraform fmt -check", "terraform state list", "terraform state show a.b", "terraform state pull",
		"terraform workspace list", "terraform workspace show"} {
		p := Compute(context.Background(), command, Options{Cwd: dir})
		if len(p.Unknown) != 0 || p.Summary != "nothing this preview knows to destroy" {
			t.Errorf("%q: %q", command, p.Summary)
		}
	}
}

// sudo cp and sudo mv into a directory the previewing user cannot look
// into: incomplete ("could not look at"), never "nothing".
func TestOverwriteIntoUnsearchable(t *testing.T) {
	base := nobodyTree(t, "impact-unsearchable-")
	tree(t, base, map[string]string{"data/secret/s1": "secret", "data/secret/x": "old", "x": "new"}, nil)
	if err := os.Chmod(filepath.Join(base, "data/secret"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"sudo cp x data/secret/s1", "sudo mv -f x data/secret/", "sudo cp x data/secret"} {
		if p := Compute(context.Background(), command, Options{Cwd: base}); len(p.Targets) != 1 || !p.Targets[0].Exists {
			t.Fatalf("as root, %q: %q", command, p.Summary)
		}
		p, level, _ := previewAsNobody(t, base, command)
		if p.Complete || level == "" || !strings.Contains(p.Summary, "could not") {
			t.Errorf("as nobody, %q: %q (level %q)", command, p.Summary, level)
		}
	}
}

// git reads its long options by any unambiguous prefix too: --har is
// --hard (the real git is the oracle); an ambiguous one is unknown.
func TestGitAbbreviatedOptions(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a",
			"GIT_AUTHOR_EMAIL=a@a", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	tree(t, dir, map[string]string{"f": "one"}, nil)
	run("add", "f")
	run("commit", "-qm", "one")
	tree(t, dir, map[string]string{"f": "two, not committed"}, nil)
	full := Compute(context.Background(), "git reset --hard", Options{Cwd: dir})
	abbr := Compute(context.Background(), "git reset --har", Options{Cwd: dir})
	if len(full.Targets) == 0 || abbr.Summary != full.Summary {
		t.Errorf("git reset --har: %q; --hard: %q", abbr.Summary, full.Summary)
	}
	if p := Compute(context.Background(), "git push --forc origin main", Options{Cwd: dir}); len(p.Unknown) == 0 {
		t.Errorf("git push --forc (ambiguous): %q", p.Summary)
	}
	run("reset", "--har")
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "one" {
		t.Fatalf("the oracle: git reset --har left %q", b)
	}
}

// A short option that takes a value may end a cluster (-qs VALUE) or carry
// its value in the same word (-sVALUE): the value is never an operand.
func TestFlagsClusteredValue(t *testing.T) {
	values := set("-s", "-L")
	for _, c := range []struct {
		args []string
		ops  []string
	}{
		{[]string{"-qs", "HEAD~1", "file"}, []string{"file"}},
		{[]string{"-sHEAD~1", "file"}, []string{"file"}},
		{[]string{"-s", "HEAD~1", "file"}, []string{"file"}},
		{[]string{"-qL", "label", "/dev/sdz"}, []string{"/dev/sdz"}},
		{[]string{"-q", "--", "-s", "x"}, []string{"-s", "x"}},
	} {
		opts, ops := flags(c.args, values)
		if !slices.Equal(ops, c.ops) || !opts["-q"] && c.args[0] != "-s" && c.args[0] != "-sHEAD~1" {
			t.Errorf("%q: options %v, operands %q, want operands %q", c.args, opts, ops, c.ops)
		}
	}
}
