package impact

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The preview follows the statements in the order shell.Parse lists them,
// the order the shell meets them: a compound command's redirection
// targets are expanded before its body, so what they assign holds in the
// body. The preview's own walk of the tree read them after the body, and
// named the wrong directory (d1) for n=1; { rm -rf "d$n"; } >
// "f$((n=2))", which removes d2 (bash is the oracle): now n is not known
// in the body, and its word is unknown.
func TestCompoundRedirectionsBeforeTheBody(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is the oracle of this test")
	}
	const line = `n=1; { rm -rf "d$n"; } > "f$((n=2))"`
	oracle := t.TempDir()
	tree(t, oracle, map[string]string{"d1/x": "1", "d2/x": "2"}, nil)
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = oracle
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash: %v %s", err, out)
	}
	if _, err := os.Lstat(filepath.Join(oracle, "d2")); !os.IsNotExist(err) {
		t.Fatal("bash did not remove d2: the oracle says otherwise")
	}

	dir := t.TempDir()
	tree(t, dir, map[string]string{"d1/x": "1", "d2/x": "2"}, nil)
	p := Compute(context.Background(), line, Options{Cwd: dir})
	for _, tg := range p.Targets {
		if tg.Op == "delete" && filepath.Base(tg.Path) == "d1" {
			t.Errorf("d1 named as removed: %+v", tg)
		}
	}
	if !strings.Contains(strings.Join(p.Unknown, "\n"), `"d$n"`) {
		t.Errorf("the body's word is not unknown: %q", p.Unknown)
	}
}

// A line whose tree is as deep as it is long (a && chain, a pipeline,
// subshells in a chain, loops of cd in a chain) is previewed, or said to
// be incomplete: the statements share the places they are in, and the
// preview enters and leaves each place once (no work per statement that
// grows with the depth, which at this size would take minutes).
func TestDeepLinesArePreviewed(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"d/x": "1"}, nil)
	for name, unit := range map[string]string{
		"and chain":          "cd d&&",
		"pipeline":           "cd d|",
		"subshells in chain": "(cd d)&&",
		"or chain of blocks": "{ cd d;}||",
		"loops in chain":     "for i in 1;do cd d;done&&",
	} {
		line := strings.Repeat(unit, (128<<10)/len(unit)) + "rm -rf d"
		p := Compute(context.Background(), line, Options{Cwd: dir})
		if len(p.Targets) == 0 && len(p.Unknown) == 0 && p.Complete {
			t.Errorf("%s: nothing previewed, and complete: %q", name, p.Summary)
		}
	}
}

// trap's action is read by shell.Through: after "--" too, it is unknown
// (it runs later, wherever the shell is then); an empty action ignores
// the signals and runs nothing.
func TestTrapActionReadByThrough(t *testing.T) {
	dir := t.TempDir()
	for line, want := range map[string]bool{
		`trap -- 'rm -rf data' EXIT`: true,
		`trap 'rm -rf data' EXIT`:    true,
		`trap '' INT`:                false,
		`trap - EXIT`:                false,
		`trap -p`:                    false,
	} {
		p := Compute(context.Background(), line, Options{Cwd: dir})
		got := strings.Contains(strings.Join(p.Unknown, "\n"), "trap rm -rf data (runs later")
		if got != want {
			t.Errorf("%s: unknown %q, want the action named %v", line, p.Unknown, want)
		}
	}
}

// Following the shell through a line is bounded by the preview's time:
// a line near 1 MiB whose tree is as deep as it is long, previewed with
// no time to spend, ends at once and says it is incomplete (unbounded,
// it takes many seconds here).
func TestFollowingStopsAtTheBound(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"d/x": "1"}, nil)
	for _, unit := range []string{"cd d&&", "cd d|", "(cd d)&&"} {
		line := strings.Repeat(unit, (1000<<10)/len(unit)) + "rm -rf d"
		p := Compute(context.Background(), line, Options{Cwd: dir, MaxTime: time.Nanosecond})
		if p.Complete || len(p.Unknown) == 0 {
			t.Errorf("%q…: complete or nothing unknown with no time to spend: %q %q", unit, p.Summary, p.Unknown)
		}
	}
}
