package impact

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// Commands that destroy 1,000 files (or change their mode) while their
// preview raised nothing; each was checked against bash on a scratch
// tree. The preview must either see what they touch or say it could not:
// never "nothing this preview knows to destroy".
func TestAttackPathsMustNotLetThrough(t *testing.T) {
	cases := []struct{ name, command string }{
		{"tee truncates", `tee many/* </dev/null`},
		{"symlink made by the command", `ln -sfn many e2; chmod -R 000 e2/`},
		{"directory swapped by the command", `mv decoy decoy.old; mv many decoy; rm -f decoy/*`},
		{"/proc/self/cwd is the shell's, not the preview's", `chmod -R 000 /proc/self/cwd/many`},
		{"chmod --rec (an abbreviated long option)", `chmod --rec 000 many`},
		{"chown --rec", `chown --rec nobody many`},
		{"rm --rec --for", `rm --rec --for many`},
	}
	root := t.TempDir()
	cwd := filepath.Join(root, "work")
	flatDir(t, filepath.Join(cwd, "many"), MedEntries)
	flatDir(t, filepath.Join(cwd, "decoy"), 1)
	env := []string{"HOME=" + filepath.Join(root, "home"), "PATH=/usr/bin:/bin"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Compute(context.Background(), c.command, Options{Cwd: cwd, Env: env, MaxTime: 2 * time.Second})
			if level, _ := Raise(p); level == "" {
				t.Errorf("%q: let through (summary %q, complete %v, unknown %q); bash touches %d entries",
					c.command, p.Summary, p.Complete, p.Unknown, MedEntries)
			}
		})
	}
}

// find evaluates its expression left to right: a -delete before the tests
// deletes everything it visits (GNU find removed all 1,000 files and the
// directory). It must count what find deletes, or say it could not.
func TestAttackFindDeleteBeforeItsTests(t *testing.T) {
	cwd := t.TempDir()
	flatDir(t, filepath.Join(cwd, "many"), MedEntries)
	for _, command := range []string{
		`find many -delete -name '*.bak'`,
		`find many -type f -delete -name nothing`,
	} {
		p := Compute(context.Background(), command, Options{Cwd: cwd, MaxTime: 2 * time.Second})
		if p.Entries < MedEntries && len(p.Unknown) == 0 {
			t.Errorf("%q: previewed as %q (%d entries); find deletes %d", command, p.Summary, p.Entries, MedEntries)
		}
	}
}
