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
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// tree makes files (path: content) and symlinks (path -> target) under dir.
func tree(t testing.TB, dir string, files map[string]string, links map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, to := range links {
		if err := os.Symlink(to, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
}

// onlyUnknown: each command (previewed in dir) names no target and one
// part not previewed, which says want.
func onlyUnknown(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for cmd, why := range want {
		p := Compute(context.Background(), cmd, Options{Cwd: dir})
		if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], why) {
			t.Errorf("%s: %+v %q, want one unknown part saying %q", cmd, p.Targets, p.Unknown, why)
		}
	}
}

// bashGlob is bash's own expansion of word in dir (the oracle): nullglob,
// one NUL-terminated field each.
func bashGlob(t *testing.T, dir, word string) []string {
	t.Helper()
	cmd := exec.Command("bash", "-O", "nullglob", "-c", `printf '%s\0' `+word)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	var fields []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			fields = append(fields, string(f))
		}
	}
	return fields
}

// Globs expand as bash expands them, on names that trip tools: spaces,
// newlines, leading dashes, hidden files, brackets.
func TestGlobsAsBashExpandsThem(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is the oracle of this test")
	}
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"a b.log": "1", "new\nline.log": "2", "-rf.log": "3", ".hidden.log": "4", "[x].log": "5", "x.log": "6",
		"sub/one.txt": "7", "sub/two.txt": "8", "sub/.three.txt": "9", "ünï.log": "10",
	}, nil)
	for _, word := range []string{`*.log`, `*`, `.*`, `sub/*`, `sub/*.txt`, `\[x\].log`, `[x].log`, `"a b".log`, `'a b.log'`,
		`*.nomatch`, `-*`, `?.log`, `[!a]*.log`, `sub/../*.log`, `*/*`} {
		cmds, err := parse("echo "+word, newShell(dir, envOf([]string{"HOME=/home/nobody"}), true, false), newBudget(context.Background(), DefaultMaxEntries, DefaultMaxTime))
		if err != nil || len(cmds) != 1 {
			t.Fatalf("%s: %v", word, err)
		}
		got := cmds[0].Args[1:]
		want := bashGlob(t, dir, word)
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %q, bash gives %q", word, got, want)
		}
	}
}

// What needs the command to run is unknown, never guessed.
func TestUnknownPartsAreNamed(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"keep/a": "x"}, nil)
	for cmd, unknown := range map[string]string{
		`rm -rf $(cat list.txt)`:     "$(cat list.txt)",
		`rm -rf "$TARGET"`:           `"$TARGET"`,
		`rm -rf /srv/$((1+1))`:       "/srv/$((1+1))",
		"rm -rf `pwd`/x":             "$(pwd)/x",
		`for f in *; do rm $f; done`: "$f",
		`$RM -rf keep`:               "$RM -rf keep",
	} {
		p := Compute(context.Background(), cmd, Options{Cwd: dir})
		if !slices.Contains(p.Unknown, unknown) {
			t.Errorf("%s: unknown %q, want %q among them", cmd, p.Unknown, unknown)
		}
		if !strings.Contains(p.Summary, "could not preview") {
			t.Errorf("%s: summary %q", cmd, p.Summary)
		}
	}
	// A variable the command sets is known.
	p := Compute(context.Background(), `D=keep; rm -rf "$D"`, Options{Cwd: dir})
	if len(p.Unknown) != 0 || len(p.Targets) != 1 || p.Targets[0].Entries != 2 {
		t.Fatalf("set in the command: %+v", p)
	}
}

// rm -rf of releases: counts, bytes, the live symlink beside them, what
// lies outside the working directory.
func TestRmReleasesWithALiveLink(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "srv/app")
	tree(t, app, map[string]string{
		"releases/2024-11-01/bin": "12345", "releases/2024-11-02/bin": "12345", "releases/2024-11-03/bin": "1234567890",
		"releases/2024-11-03/lib/x.so": "abc", "releases/2024-12-01/bin": "keep",
	}, map[string]string{"current": "releases/2024-11-03"})
	old := time.Now().Add(-time.Hour)
	_ = os.Chtimes(filepath.Join(app, "releases/2024-11-01/bin"), old, old)
	p := Compute(context.Background(), "rm -rf "+app+"/releases/2024-11-*", Options{Cwd: filepath.Join(dir, "home")})
	if len(p.Targets) != 3 {
		t.Fatalf("targets %+v", p.Targets)
	}
	// 3 directories + 4 files + 1 directory (lib)
	if p.Entries != 8 || p.Bytes != 5+5+10+3 || !p.Complete {
		t.Fatalf("entries %d bytes %d complete %v", p.Entries, p.Bytes, p.Complete)
	}
	var live []string
	for _, tg := range p.Targets {
		live = append(live, tg.LiveLinks...)
		if !tg.Outside {
			t.Errorf("%s is outside the working directory", tg.Path)
		}
	}
	if !slices.Equal(live, []string{filepath.Join(app, "current")}) {
		t.Fatalf("live links %q", live)
	}
	if !strings.Contains(p.Summary, "deletes 4 directories, 4 files, 23 B") || !strings.Contains(p.Summary, "current points into it") {
		t.Fatalf("summary %q", p.Summary)
	}
}

// The bound is kept and said: at least.
func TestBoundCutsTheWalk(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 50; i++ {
		tree(t, dir, map[string]string{filepath.Join("big", strings.Repeat("d", 1+i%5), "f"+string(rune('a'+i%26))+time.Now().Format("150405.000000000")): "x"}, nil)
	}
	p := Compute(context.Background(), "rm -rf big", Options{Cwd: dir, MaxEntries: 10})
	if p.Complete || p.Entries > 10 || !strings.Contains(p.Summary, "at least") {
		t.Fatalf("bounded: complete %v entries %d summary %q", p.Complete, p.Entries, p.Summary)
	}
}

func TestOtherFileAnalysers(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a.txt": "hello", "b.txt": "bye", "d/x": "1", "d/y": "2", "logs/a.log": "1", "logs/b.txt": "2", "logs/sub/c.log": "3"}, nil)
	for cmd, want := range map[string]string{
		"truncate -s 0 a.txt":             "truncates 1 file, 5 B",
		"echo hi > a.txt":                 "overwrites 1 file, 5 B",
		"echo hi >> a.txt":                "nothing this preview knows to destroy",
		"shred -u a.txt":                  "deletes 1 file, 5 B",
		"mv b.txt a.txt":                  "overwrites 1 file, 5 B",
		"cp -n b.txt a.txt":               "nothing this preview knows to destroy",
		"chmod -R 777 d":                  "changes the mode of 1 directory, 2 files, 2 B",
		"sudo rm -f a.txt":                "deletes 1 file, 5 B",
		"rm d":                            "touches nothing that exists now",
		"find logs -name '*.log' -delete": "deletes 2 files, 2 B",
		"rm -rf nothing-here":             "touches nothing that exists now",
		"echo hi > /dev/null":             "nothing this preview knows to destroy",
	} {
		p := Compute(context.Background(), cmd, Options{Cwd: dir})
		if !strings.HasPrefix(p.Summary, want) {
			t.Errorf("%s: summary %q, want it to start %q", cmd, p.Summary, want)
		}
	}
	p := Compute(context.Background(), "find logs -newer a.txt -delete", Options{Cwd: dir})
	if len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "-newer") {
		t.Fatalf("an unknown predicate: %q", p.Unknown)
	}
}

// A target that grew, became a mount point's parent or gained a live link
// is named; growth within the tolerance is not.
func TestGrew(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"out/a": "1"}, nil)
	o := Options{Cwd: dir}
	approved := Compute(context.Background(), "rm -rf out other", o)
	if g := Grew(approved, Compute(context.Background(), "rm -rf out other", o)); len(g) != 0 {
		t.Fatalf("unchanged grew: %q", g)
	}
	tree(t, dir, map[string]string{"out/b": "2"}, nil)
	if g := Grew(approved, Compute(context.Background(), "rm -rf out other", o)); len(g) != 0 {
		t.Fatalf("one more file is within the tolerance: %q", g)
	}
	for i := 0; i < 20; i++ {
		tree(t, dir, map[string]string{filepath.Join("out", "n", strings.Repeat("x", i+1)): "y"}, nil)
	}
	tree(t, dir, map[string]string{"other/z": "1"}, map[string]string{"current": "out"})
	g := Grew(approved, Compute(context.Background(), "rm -rf out other", o))
	joined := strings.Join(g, "\n")
	for _, want := range []string{"delete " + filepath.Join(dir, "other") + " exists now", filepath.Join(dir, "current") + " points into", "entries now"} {
		if !strings.Contains(joined, want) {
			t.Errorf("grew says %q; want %q", g, want)
		}
	}
	if r, _ := Raise(Compute(context.Background(), "rm -rf out", o)); r != model.RiskHigh {
		t.Errorf("a live link raises to high, got %q", r)
	}
}

// A cd moves where what follows runs, when it surely does: to a directory
// that exists, not inside a subshell, not in a branch. Otherwise what
// follows has no known directory, and its relative paths and globs are
// named as not previewed, never resolved against a guess.
func TestCdMovesTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"app/build/a.o": "a", "app/build/b.o": "b", "build/x.o": "x", "other/build/y.o": "y"}, nil)
	app, other := filepath.Join(dir, "app"), filepath.Join(dir, "other")
	for _, tc := range []struct {
		cmd     string
		targets []string // the paths, relative to dir
		unknown int
	}{
		{cmd: "cd app && rm -rf build", targets: []string{"app/build"}},
		{cmd: "cd app; rm -rf build/*.o", targets: []string{"app/build/a.o", "app/build/b.o"}},
		{cmd: "cd " + app + " || exit 1; rm -rf build", targets: []string{"app/build"}},
		{cmd: "cd app/build && cd .. && rm -rf build", targets: []string{"app/build"}},
		{cmd: "(cd app && rm -rf build); rm -rf build", targets: []string{"app/build", "build"}},
		{cmd: "cd app | true; rm -rf build", targets: []string{"build"}},
		{cmd: "pushd other && rm -rf build", targets: []string{"other/build"}},
		{cmd: "sh -c 'cd other && rm -rf build'", targets: []string{"other/build"}},
		{cmd: "cd " + other + " && sh -c 'rm -rf build'", targets: []string{"other/build"}},
		// Not for sure: what follows is not previewed.
		{cmd: "cd nosuch; rm -rf build", unknown: 1},
		{cmd: "cd $DIR && rm -rf build", unknown: 1},
		{cmd: "test -d app || cd other; rm -rf build", unknown: 1},
		{cmd: "if true; then cd app; fi; rm -rf *.o", unknown: 1},
		{cmd: "cd -; rm -rf build", unknown: 1},
		{cmd: "cd app && popd && rm -rf build", unknown: 1},
		{cmd: "cd app && rm -rf /abs/path", targets: []string{"/abs/path"}}, // absolute: still known
	} {
		p := Compute(context.Background(), tc.cmd, Options{Cwd: dir})
		var got []string
		for _, tg := range p.Targets {
			rel, err := filepath.Rel(dir, tg.Path)
			if err != nil || strings.HasPrefix(rel, "..") {
				rel = tg.Path
			}
			got = append(got, rel)
		}
		if !slices.Equal(got, tc.targets) || len(p.Unknown) != tc.unknown {
			t.Errorf("%s: targets %q unknown %q, want %q and %d unknown", tc.cmd, got, p.Unknown, tc.targets, tc.unknown)
		}
		for _, u := range p.Unknown {
			if !strings.Contains(u, "the working directory is not known") {
				t.Errorf("%s: unknown %q does not say why", tc.cmd, u)
			}
		}
	}
	// No working directory at all (an agent that gave none): only
	// absolute paths are previewed.
	p := Compute(context.Background(), "rm -rf build "+filepath.Join(dir, "build")+" *.o", Options{})
	if len(p.Targets) != 1 || p.Targets[0].Path != filepath.Join(dir, "build") || len(p.Unknown) != 2 {
		t.Errorf("no cwd: %+v %q", p.Targets, p.Unknown)
	}
}

// Details stop at MaxImpactDetails lines, the last one counting the rest
// of the total (commits are listed from git log -n 20 of many more).
func TestCapDetails(t *testing.T) {
	items := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, strconv.Itoa(i))
		}
		return out
	}
	for _, tc := range []struct {
		items int
		total int64
		lines int
		last  string
	}{{3, 3, 3, "2"}, {20, 20, 20, "19"}, {34, 34, 20, "and 15 more"}, {20, 12345, 20, "and 12,326 more"}} {
		got := capDetails(items(tc.items), tc.total)
		if len(got) != tc.lines || got[len(got)-1] != tc.last {
			t.Errorf("%d of %d: %q", tc.items, tc.total, got)
		}
	}
}
