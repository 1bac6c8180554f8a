package impact

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	parsed "github.com/approve-tui/approve-tui/shell"
)

// The preview reads the line shell.Parse read: a line Parse refuses (too
// large, NUL, invalid UTF-8, nested past its limits) is previewed as not
// parsed, unknown and touching nothing seen, never as harmless; the
// scripts the line's shells run are the trees Parse read for them.
func TestPreviewReadsShellParse(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{
		"too large":    "rm -rf data # " + strings.Repeat("x", 1<<20),
		"NUL":          "rm -rf data # \x00",
		"invalid UTF":  "rm -rf data # \xff",
		"nested deep":  "echo '" + strings.Repeat("(", 250) + "'; rm -rf data",
		"syntax error": "rm -rf data; (",
	}
	for name, command := range refused {
		p := Compute(context.Background(), command, Options{Cwd: dir})
		if len(p.Targets) != 0 || len(p.Unknown) != 1 || !strings.Contains(p.Unknown[0], "does not parse") {
			t.Errorf("%s: %d targets, unknown %q: want not parsed", name, len(p.Targets), p.Unknown)
		}
	}
	// A nested script that does not parse is named, the rest previewed.
	p := Compute(context.Background(), `sh -c 'rm -rf (' ; rm -rf data`, Options{Cwd: dir})
	if len(p.Targets) != 1 || !strings.Contains(strings.Join(p.Unknown, "\n"), "sh -c script that does not parse") {
		t.Errorf("nested: %+v %q", p.Targets, p.Unknown)
	}

	line := `sh -c 'rm -rf data; bash -c "rm -rf other"'`
	s, err := parsed.Parse(line, parsed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := &analysis{scripts: []*parsed.Script{s}}
	for _, src := range []string{`rm -rf data; bash -c "rm -rf other"`, `rm -rf other`} {
		f, err := a.tree(src)
		if err != nil || f == nil || f != s.Tree(src) {
			t.Errorf("%q: not the tree Parse read with the line (%v)", src, err)
		}
	}
	// A script the line did not hold as such (the preview's own expansion
	// gave it) is read by Parse then, once.
	f, err := a.tree("rm -rf $HOME/x")
	if err != nil || f == nil || len(a.scripts) != 2 {
		t.Fatalf("a new script: %v %v, %d scripts", f, err, len(a.scripts))
	}
	if g, _ := a.tree("rm -rf $HOME/x"); g != f || len(a.scripts) != 2 {
		t.Error("a script read twice")
	}
	if _, err := a.tree("rm ("); err == nil {
		t.Error("a script that does not parse gave a tree")
	}
}

// What a shell runs is read by shell.Through: sh -c SCRIPT is previewed
// (after a start-up file too, which makes it unknown, and the directory
// with it), a shell that only
// prints its version runs nothing, a script file or the input is unknown.
func TestShellArgsThroughShell(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	for command, want := range map[string]struct {
		deletes bool
		unknown string
	}{
		`bash -c 'rm -rf data'`:                     {deletes: true},
		`sh -ec 'rm -rf data'`:                      {deletes: true},
		`bash -O dotglob -c 'rm -rf data'`:          {deletes: true},
		`bash --rcfile rc -c 'rm -rf DATA'`:         {deletes: true, unknown: "runs its startup files first"},
		`bash -lc 'rm -rf DATA'`:                    {deletes: true, unknown: "runs its startup files first"},
		`bash --version -c 'rm -rf data'`:           {},
		`bash -c`:                                   {},
		`bash rc`:                                   {unknown: "a script not on its command line"},
		`bash -s`:                                   {unknown: "reads its commands from its input"},
		`bash -c 'bash -c "sh -c \"rm -rf data\""'`: {deletes: true},
	} {
		command = strings.ReplaceAll(command, "DATA", data)
		p := Compute(context.Background(), command, Options{Cwd: dir})
		deletes := false
		for _, tg := range p.Targets {
			deletes = deletes || tg.Op == "delete" && tg.Path == data
		}
		unknown := strings.Join(p.Unknown, "\n")
		if deletes != want.deletes || want.unknown == "" && unknown != "" || !strings.Contains(unknown, want.unknown) {
			t.Errorf("%s: deletes %v, unknown %q; want deletes %v, unknown %q", command, deletes, unknown, want.deletes, want.unknown)
		}
	}
}
