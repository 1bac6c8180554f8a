package risk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/approve-tui/approve-tui/model"
)

// The corpora (testdata/corpora, see NOTES.md there) are commands of known
// kind, one per line, that measure the classifier: how many destroyers and
// techniques it rates MEDIUM or above, how many read-only and workspace
// commands it leaves LOW, by Judge in corpusContext. TestCorpora fails
// when a corpus file is malformed or a target is not met. Print the table
// with
//
//	APPROVE_TUI_CORPUS_REPORT=1 go test -run '^TestCorpora$' -v ./risk/
//
// and add every miss with APPROVE_TUI_CORPUS_REPORT=misses.
const corpusReportEnv = "APPROVE_TUI_CORPUS_REPORT"

const corpusDir = "testdata/corpora"

// corpusFiles are the corpora, each with the least number of commands it
// must hold (a file cut short is malformed, not a better score).
var corpusFiles = []corpusFile{
	{"destroyers.txt", 100},
	{"destroyers-worst.txt", 40},
	{"techniques.txt", 150},
	{"readonly.txt", 120},
	{"workspace.txt", 80},
	{"destroyers-holdout.txt", 40},
	{"destroyers-worst-holdout.txt", 40},
	{"techniques-holdout.txt", 40},
	{"readonly-holdout.txt", 40},
	{"workspace-holdout.txt", 38},
	{"destroyers-holdout2.txt", 40},
	{"destroyers-worst-holdout2.txt", 35},
	{"techniques-holdout2.txt", 40},
	{"readonly-holdout2.txt", 38},
	{"workspace-holdout2.txt", 40},
	{"destroyers-holdout3.txt", 36},
	{"destroyers-worst-holdout3.txt", 35},
	{"techniques-holdout3.txt", 37},
	{"readonly-holdout3.txt", 40},
	{"workspace-holdout3.txt", 36},
}

type corpusFile struct {
	name string
	min  int
}

// corpusCommand is one command of a corpus.
type corpusCommand struct {
	file    string
	line    int
	section string // the "## " heading above it
	command string
}

// loadCorpus reads one corpus: a line is a command, a "## " line names the
// section of the commands below it, any other line starting with # is a
// comment and a blank line is skipped. A command must be valid UTF-8
// without NUL, carriage return or tab, must not start or end with a space,
// must parse as bash, and must appear once; every command is under a
// section.
func loadCorpus(name string, data []byte, seen map[string]string) ([]corpusCommand, error) {
	var cmds []corpusCommand
	var errs []error
	section := ""
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s:%d: %s", name, n, fmt.Sprintf(format, args...)))
		}
		switch {
		case !utf8.ValidString(line):
			bad("invalid UTF-8")
			continue
		case strings.ContainsAny(line, "\x00\r\t"):
			bad("NUL, carriage return or tab")
			continue
		case line == "":
			continue
		case strings.HasPrefix(line, "## "):
			section = strings.TrimSpace(line[3:])
			if section == "" {
				bad("a section without a name")
			}
			continue
		case strings.HasPrefix(line, "#"):
			continue
		case strings.TrimSpace(line) != line:
			bad("leading or trailing space in %q", line)
			continue
		case section == "":
			bad("a command before the first section: %q", line)
			continue
		}
		f, err := parser.Parse(strings.NewReader(line), "")
		if err != nil {
			bad("does not parse as bash: %v", err)
			continue
		}
		if len(f.Stmts) == 0 {
			bad("no command in %q", line)
			continue
		}
		if where, dup := seen[line]; dup {
			bad("%q is already at %s", line, where)
			continue
		}
		seen[line] = fmt.Sprintf("%s:%d", name, n)
		cmds = append(cmds, corpusCommand{file: name, line: n, section: section, command: line})
	}
	return cmds, errors.Join(errs...)
}

// loadCorpora reads every corpus file, by name.
func loadCorpora(t testing.TB) map[string][]corpusCommand {
	t.Helper()
	seen := map[string]string{}
	out := map[string][]corpusCommand{}
	for _, f := range corpusFiles {
		data, err := os.ReadFile(filepath.Join(corpusDir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		cmds, err := loadCorpus(f.name, data, seen)
		if err != nil {
			t.Fatalf("malformed corpus:\n%v", err)
		}
		if len(cmds) < f.min {
			t.Fatalf("%s holds %d commands, fewer than %d", f.name, len(cmds), f.min)
		}
		out[f.name] = cmds
	}
	return out
}

// corpusTarget is one measured figure: the share of the commands of files
// for which ok holds, and the share it should reach (percent).
type corpusTarget struct {
	name   string
	files  []string
	target float64
	// ok says whether the classifier judged c as the row wants; nil when
	// the classifier cannot tell yet (the row is reported as not measured).
	ok func(j Judgement) bool
	// floor, when set, is what TestCorpora asserts instead of target: a
	// held-out row's first measurement, so that it cannot get worse while
	// its target stays the goal.
	floor float64
}

func atLeast(l model.RiskLevel) func(Judgement) bool {
	return func(j Judgement) bool { return j.Level.Rank() >= l.Rank() }
}

func isLow(j Judgement) bool { return j.Level == model.RiskLow }

func isReadOnly(j Judgement) bool { return j.ReadOnly }

// corpusContext is where the corpora's commands run: a project in a
// user's home.
var corpusContext = Context{Cwd: "/home/dev/project", Home: "/home/dev"}

// corpusTargets are the goals the classifier is measured against.
var corpusTargets = []corpusTarget{
	{"destroyers at MEDIUM or above", []string{"destroyers.txt", "destroyers-worst.txt"}, 97, atLeast(model.RiskMedium), 0},
	{"the worst destroyers at HIGH", []string{"destroyers-worst.txt"}, 85, atLeast(model.RiskHigh), 0},
	{"techniques at MEDIUM or above", []string{"techniques.txt"}, 90, atLeast(model.RiskMedium), 0},
	{"read-only commands LOW", []string{"readonly.txt"}, 100, isLow, 0},
	{"read-only commands proven read-only", []string{"readonly.txt"}, 90, isReadOnly, 0},
	{"workspace commands LOW", []string{"workspace.txt"}, 85, isLow, 0},
	// Held out: written after the analysis was tuned and measured once as
	// written (see testdata/corpora/NOTES.md).
	{"held out: destroyers at MEDIUM or above", []string{"destroyers-holdout.txt", "destroyers-worst-holdout.txt"}, 97, atLeast(model.RiskMedium), 0},
	{"held out: the worst destroyers at HIGH", []string{"destroyers-worst-holdout.txt"}, 85, atLeast(model.RiskHigh), 0},
	{"held out: techniques at MEDIUM or above", []string{"techniques-holdout.txt"}, 90, atLeast(model.RiskMedium), 0},
	{"held out: read-only commands LOW", []string{"readonly-holdout.txt"}, 100, isLow, 0},
	{"held out: read-only commands proven read-only", []string{"readonly-holdout.txt"}, 90, isReadOnly, 0},
	{"held out: workspace commands LOW", []string{"workspace-holdout.txt"}, 85, isLow, 0},
	// A second held-out round, written after every change made for the
	// first; measured once as written.
	// First measurement (2026-12-05): 97.5, 97.2, 93.3, 100, 82.9, 93.0.
	{name: "held out 2: destroyers at MEDIUM or above", files: []string{"destroyers-holdout2.txt", "destroyers-worst-holdout2.txt"}, target: 97, ok: atLeast(model.RiskMedium), floor: 97},
	{name: "held out 2: the worst destroyers at HIGH", files: []string{"destroyers-worst-holdout2.txt"}, target: 85, ok: atLeast(model.RiskHigh), floor: 85},
	{name: "held out 2: techniques at MEDIUM or above", files: []string{"techniques-holdout2.txt"}, target: 90, ok: atLeast(model.RiskMedium), floor: 90},
	{name: "held out 2: read-only commands LOW", files: []string{"readonly-holdout2.txt"}, target: 100, ok: isLow, floor: 100},
	{name: "held out 2: read-only commands proven read-only", files: []string{"readonly-holdout2.txt"}, target: 90, ok: isReadOnly, floor: 82},
	{name: "held out 2: workspace commands LOW", files: []string{"workspace-holdout2.txt"}, target: 85, ok: isLow, floor: 85},
	// A third held-out round, written after the catalogue's read-only
	// forms were added; measured once as written. Each floor is the lower
	// of the target and that first measurement.
	// First measurement (2026-12-05): 98.7, 97.3, 94.9, 97.7, 93.0, 100.
	{name: "held out 3: destroyers at MEDIUM or above", files: []string{"destroyers-holdout3.txt", "destroyers-worst-holdout3.txt"}, target: 97, ok: atLeast(model.RiskMedium), floor: 97},
	{name: "held out 3: the worst destroyers at HIGH", files: []string{"destroyers-worst-holdout3.txt"}, target: 85, ok: atLeast(model.RiskHigh), floor: 85},
	{name: "held out 3: techniques at MEDIUM or above", files: []string{"techniques-holdout3.txt"}, target: 90, ok: atLeast(model.RiskMedium), floor: 90},
	{name: "held out 3: read-only commands LOW", files: []string{"readonly-holdout3.txt"}, target: 100, ok: isLow, floor: 97},
	{name: "held out 3: read-only commands proven read-only", files: []string{"readonly-holdout3.txt"}, target: 90, ok: isReadOnly, floor: 90},
	{name: "held out 3: workspace commands LOW", files: []string{"workspace-holdout3.txt"}, target: 85, ok: isLow, floor: 85},
}

// corpusRow is a target's result.
type corpusRow struct {
	target   corpusTarget
	hit, all int
	misses   []corpusCommand
	sections map[string][2]int // section: hit, all
}

func (r corpusRow) percent() float64 { return 100 * float64(r.hit) / float64(r.all) }

func (r corpusRow) status() string {
	switch {
	case r.target.ok == nil:
		return "not measured"
	case r.percent() >= r.target.target:
		return "pass"
	case r.target.floor > 0 && r.percent() >= r.target.floor:
		return "below target, above its floor"
	}
	return "FAIL"
}

func measureCorpora(corpora map[string][]corpusCommand) []corpusRow {
	rows := make([]corpusRow, len(corpusTargets))
	for i, tg := range corpusTargets {
		r := corpusRow{target: tg, sections: map[string][2]int{}}
		for _, f := range tg.files {
			for _, c := range corpora[f] {
				r.all++
				if tg.ok == nil {
					continue
				}
				s := r.sections[f+": "+c.section]
				s[1]++
				if tg.ok(Judge(c.command, corpusContext)) {
					r.hit++
					s[0]++
				} else {
					r.misses = append(r.misses, c)
				}
				r.sections[f+": "+c.section] = s
			}
		}
		rows[i] = r
	}
	return rows
}

// corpusTable renders rows as a Markdown table, with each row's sections
// and, when misses is set, every command that missed.
func corpusTable(rows []corpusRow, misses bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| figure | commands | measured | target | |\n| --- | ---: | ---: | ---: | --- |\n")
	for _, r := range rows {
		measured := "—"
		if r.target.ok != nil {
			measured = fmt.Sprintf("%.1f %% (%d)", r.percent(), r.hit)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %g %% | %s |\n", r.target.name, r.all, measured, r.target.target, r.status())
	}
	for _, r := range rows {
		if r.target.ok == nil {
			continue
		}
		fmt.Fprintf(&b, "\n%s, by section:\n", r.target.name)
		keys := make([]string, 0, len(r.sections))
		for k := range r.sections {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			s := r.sections[k]
			fmt.Fprintf(&b, "  %3d/%-3d %s\n", s[0], s[1], k)
		}
		if misses {
			for _, c := range r.misses {
				j := Judge(c.command, corpusContext)
				fmt.Fprintf(&b, "    miss %s:%d [%s ro=%v] %s  -- %s\n", c.file, c.line, j.Level, j.ReadOnly, c.command, j.Reason())
			}
		}
	}
	return b.String()
}

// TestCorpora checks that every corpus is well formed, measures the
// judgement on them, reports the table (see corpusReportEnv) and fails
// when a target is not met.
func TestCorpora(t *testing.T) {
	measured := map[string]bool{}
	for _, tg := range corpusTargets {
		for _, f := range tg.files {
			if !slices.ContainsFunc(corpusFiles, func(c corpusFile) bool { return c.name == f }) {
				t.Fatalf("target %q names %s, which is no corpus", tg.name, f)
			}
			measured[f] = true
		}
	}
	for _, f := range corpusFiles {
		if !measured[f.name] {
			t.Fatalf("no target measures %s", f.name)
		}
	}
	rows := measureCorpora(loadCorpora(t))
	if mode := os.Getenv(corpusReportEnv); mode != "" {
		t.Logf("judgement %s on the corpora:\n%s", Version, corpusTable(rows, mode == "misses"))
	}
	for _, r := range rows {
		want := r.target.target
		if r.target.floor > 0 {
			want = r.target.floor
		}
		if r.target.ok != nil && r.percent() < want {
			t.Errorf("%s: %.1f %% (%d of %d), below %g %%; run with %s=misses to see them",
				r.target.name, r.percent(), r.hit, r.all, want, corpusReportEnv)
		}
	}
}

// TestLoadCorpusRefusesMalformed checks that a malformed corpus is refused
// with the line that is wrong.
func TestLoadCorpusRefusesMalformed(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"unparsable", "## s\nls (\n", ":2: does not parse as bash"},
		{"duplicate", "## s\nls\nls\n", `:3: "ls" is already at x:2`},
		{"no section", "ls\n", ":1: a command before the first section"},
		{"invalid UTF-8", "## s\nls \xff\n", ":2: invalid UTF-8"},
		{"NUL", "## s\nls\x00\n", ":2: NUL"},
		{"carriage return", "## s\nls\r\n", ":2: NUL, carriage return or tab"},
		{"trailing space", "## s\nls \n", ":2: leading or trailing space"},
		{"empty section", "## \nls\n", ":1: a section without a name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadCorpus("x", []byte(tc.data), map[string]string{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	cmds, err := loadCorpus("x", []byte("# comment\n\n## s\nls -la\n## t\ngit status\n"), map[string]string{})
	if err != nil || len(cmds) != 2 || cmds[1].section != "t" || cmds[1].line != 6 {
		t.Fatalf("well-formed corpus: %v, %+v", err, cmds)
	}
}

// BenchmarkCorpusClassify times Classify on every corpus command (all
// under 1 KB) and on one 64 KB command built from them. Metrics: p50-µs and
// p99-µs of one classification; ns/op is the mean.
//
//	go test -run '^$' -bench CorpusClassify ./risk/
func BenchmarkCorpusClassify(b *testing.B) {
	cmds := corpusCommands(b)
	big := joinUpTo(cmds, "; ", 64*1024)
	Classify("ls") // load the table outside the timings
	for _, bc := range []struct {
		name string
		cmds []string
	}{
		{"under-1KB", cmds},
		{"64KB", []string{big[:64*1024]}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			i := 0
			for b.Loop() {
				cmd := bc.cmds[i%len(bc.cmds)]
				i++
				start := time.Now()
				sink = Classify(cmd)
				ds = append(ds, time.Since(start))
			}
			reportPercentiles(b, ds)
		})
	}
}
