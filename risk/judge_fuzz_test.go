package risk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/shell"
)

// FuzzJudge: Judge never panics, never goes below the table, keeps the
// table's hardline, and rates a line it cannot read at least MEDIUM and
// never read-only.
//
//	go test ./risk -run XXX -fuzz FuzzJudge -fuzztime 180s -parallel 1
func FuzzJudge(f *testing.F) {
	for _, name := range []string{"techniques.txt", "destroyers.txt", "readonly.txt"} {
		data, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				f.Add(l, "/home/dev/project")
			}
		}
	}
	f.Add("ls (", "")
	f.Add("echo \xff", "/")
	f.Add("sh -c 'sh -c \"sh -c ls\"'", "")
	f.Fuzz(func(t *testing.T, cmd, cwd string) {
		// Long inputs make the fuzzer's minimisation stall (see
		// FuzzClassify); the 1 MiB and nesting limits have their own tests.
		cmd, cwd = truncate(cmd, 512), truncate(cwd, 64)
		j := Judge(cmd, Context{Cwd: cwd, Home: "/home/dev", Paths: []string{"/srv/"}})
		switch j.Level {
		case model.RiskLow, model.RiskMedium, model.RiskHigh:
		default:
			t.Fatalf("level %q", j.Level)
		}
		if j.Level.Rank() < j.Table.Level.Rank() || j.Hardline != j.Table.Hardline {
			t.Fatalf("%q: %s below the table's %s or hardline changed", cmd, j.Level, j.Table.Level)
		}
		top := model.RiskLow
		for _, fd := range j.Findings {
			top = model.MaxRisk(top, fd.Level)
			if fd.Why == "" || fd.Words == nil {
				t.Fatalf("%q: finding without why or words: %+v", cmd, fd)
			}
			for _, w := range fd.Words {
				if utf8.ValidString(cmd) && !utf8.ValidString(w) {
					t.Fatalf("%q: a finding's word is not valid UTF-8: %q", cmd, w)
				}
			}
		}
		if top != j.Level {
			t.Fatalf("%q: level %s but findings reach %s", cmd, j.Level, top)
		}
		_, err := shell.Parse(cmd, shell.Options{})
		var se *shell.Error
		if errors.As(err, &se) && (j.Level.Rank() < model.RiskMedium.Rank() || j.ReadOnly) {
			t.Fatalf("%q does not parse (%v) but is %s, read-only %v", cmd, err, j.Level, j.ReadOnly)
		}
		if j.ReadOnly && j.Level != model.RiskLow {
			t.Fatalf("%q: read-only at %s", cmd, j.Level)
		}
	})
}
