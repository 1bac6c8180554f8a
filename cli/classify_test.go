package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

// classifyExamples are commands a new user tries first.
var classifyExamples = []string{
	"terraform destroy -auto-approve",
	"kubectl delete ns staging",
	"shred -u secrets.txt",
	"docker system prune -af",
	"git status",
	"rm -rf /",
}

// classifyObject is classify's JSON object as decoded by encoding/json.
type classifyObject struct {
	Command    string   `json:"command"`
	Level      string   `json:"level"`
	Hardline   bool     `json:"hardline"`
	ReadOnly   bool     `json:"read_only"`
	Effects    []string `json:"effects"`
	TableLevel string   `json:"table_level"`
	Version    string   `json:"version"`
	Cwd        string   `json:"cwd"`
	Findings   []struct {
		Rule   string   `json:"rule"`
		Level  string   `json:"level"`
		Effect string   `json:"effect"`
		Words  []string `json:"words"`
		Why    string   `json:"why"`
	} `json:"findings"`
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// checkJudged checks that o is the judgement of command in cwd: the
// engine's own, every key there, never below the pattern table.
func checkJudged(t *testing.T, o classifyObject, raw, command, cwd string) {
	t.Helper()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &keys); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, raw)
	}
	for _, k := range []string{"command", "level", "hardline", "read_only", "findings", "effects", "table_level", "version", "cwd"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("no %q in %s", k, raw)
		}
	}
	if string(keys["findings"]) == "null" || string(keys["effects"]) == "null" {
		t.Errorf("null where an array belongs: %s", raw)
	}
	j := risk.Judge(command, risk.Context{Cwd: cwd})
	table := risk.Classify(command)
	if o.Command != command || o.Cwd != cwd {
		t.Errorf("command %q in %q, want %q in %q", o.Command, o.Cwd, command, cwd)
	}
	switch o.Level {
	case "low", "medium", "high":
	default:
		t.Errorf("level %q: want low, medium or high", o.Level)
	}
	if model.RiskLevel(o.Level).Rank() < table.Level.Rank() {
		t.Errorf("%q: level %s below the pattern table's %s", command, o.Level, table.Level)
	}
	if o.Level != string(j.Level) || o.Hardline != j.Hardline || o.ReadOnly != j.ReadOnly || o.TableLevel != string(table.Level) ||
		!slices.Equal(o.Effects, nonNil(j.Effects)) || o.Version != risk.Version {
		t.Errorf("%q: got %+v, the engine says %+v", command, o, j)
	}
	if len(o.Findings) != len(j.Findings) {
		t.Fatalf("%q: %d findings, the engine gives %d", command, len(o.Findings), len(j.Findings))
	}
	for i, f := range j.Findings {
		g := o.Findings[i]
		if g.Rule != f.Rule || g.Level != string(f.Level) || g.Effect != f.Effect || g.Why != f.Why || !slices.Equal(g.Words, nonNil(f.Words)) {
			t.Errorf("%q: finding %d is %+v, the engine's %+v", command, i, g, f)
		}
	}
	// The pattern table's matches are findings of rule hermes.
	for _, m := range table.Matches {
		found := false
		for _, g := range o.Findings {
			found = found || (g.Rule == "hermes" && g.Why == m.Description && g.Level == string(m.Level))
		}
		if !found {
			t.Errorf("%q: the table's match %q is not a finding", command, m.Description)
		}
	}
}

func TestClassifyJSONExamples(t *testing.T) {
	dir := t.TempDir()
	for _, c := range classifyExamples {
		code, out, errOut := run(t, filepath.Join(dir, "state.db"), false, "", "classify", "--json", "--cwd", dir, "--", c)
		if code != 0 || errOut != "" {
			t.Fatalf("classify %q: exit %d: %s", c, code, errOut)
		}
		if strings.Count(out, "\n") != 1 {
			t.Errorf("classify --json %q: not one line: %q", c, out)
		}
		var o classifyObject
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatalf("%q: %v\n%s", c, err, out)
		}
		checkJudged(t, o, out, c, dir)
		switch c {
		case "git status":
			if !o.ReadOnly || o.Level != "low" || o.Hardline {
				t.Errorf("git status: %+v, want low and proven read-only", o)
			}
		case "rm -rf /":
			if !o.Hardline || o.Level != "high" || o.ReadOnly || len(o.Findings) == 0 {
				t.Errorf("rm -rf /: %+v, want high, hardline, findings", o)
			}
		default:
			if o.ReadOnly {
				t.Errorf("%q proven read-only", c)
			}
		}
	}
}

func TestClassifyText(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	for _, c := range classifyExamples {
		code, out, errOut := run(t, db, false, "", "classify", "--cwd", dir, "--", c)
		if code != 0 || errOut != "" {
			t.Fatalf("classify %q: exit %d: %s", c, code, errOut)
		}
		j := risk.Judge(c, risk.Context{Cwd: dir})
		want := []string{"command:       " + c + "\n", "level:         " + strings.ToUpper(string(j.Level))}
		if j.ReadOnly {
			want = append(want, "read-only:     yes")
		} else {
			want = append(want, "read-only:     no")
		}
		if j.Hardline {
			want = append(want, "hardline:      yes")
		} else {
			want = append(want, "hardline:      no")
		}
		for i, f := range j.Findings {
			want = append(want, fmt.Sprintf("%d. rule:       %s\n", i+1, f.Rule), "   why:        "+f.Why+"\n",
				"   level:      "+strings.ToUpper(string(f.Level))+"\n")
			if f.Effect != "" {
				want = append(want, "   effect:     "+f.Effect+"\n")
			}
			if len(f.Words) > 0 {
				want = append(want, "   words:      "+wordsText(f.Words)+"\n")
			}
		}
		if len(j.Findings) == 0 {
			want = append(want, "findings:      none")
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("classify %q lacks %q:\n%s", c, w, out)
			}
		}
	}
	// Several words are one line, joined with spaces.
	_, one, _ := run(t, db, false, "", "classify", "--cwd", dir, "--", "rm -rf /")
	_, several, _ := run(t, db, false, "", "classify", "--cwd", dir, "--", "rm", "-rf", "/")
	if one != several {
		t.Errorf("classify -- rm -rf / differs from classify -- 'rm -rf /':\n%s\n%s", several, one)
	}
}

// A hostile command is printed inert: no escape sequence, control or bidi
// character from it reaches the terminal; --json keeps its exact bytes.
func TestClassifyHostileInert(t *testing.T) {
	dir := t.TempDir()
	c := "rm -rf /tmp/x \x1b]0;pwned\a\x1b[2J\u202egpj.sh\r\nrm -rf ~ \xff"
	code, out, _ := run(t, filepath.Join(dir, "state.db"), false, "", "classify", "--cwd", dir, "--", c)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, raw := range []string{"\x1b", "\a", "\u202e", "\r", "\xff"} {
		if strings.Contains(out, raw) {
			t.Errorf("classify printed %q raw:\n%q", raw, out)
		}
	}
	if !strings.Contains(out, `\x1b]0;pwned`) {
		t.Errorf("the escape is not shown escaped:\n%s", out)
	}
	code, out, _ = run(t, filepath.Join(dir, "state.db"), false, "", "classify", "--json", "--cwd", dir, "--", c)
	if code != 0 || strings.ContainsAny(out, "\x1b\a\r\u202e") {
		t.Fatalf("exit %d, or a raw control in %q", code, out)
	}
	if !strings.Contains(out, `\udcff`) {
		t.Errorf("the invalid byte is not kept as \\udcff: %s", out)
	}
}

func TestClassifyStdin(t *testing.T) {
	dir := t.TempDir()
	huge := "echo " + strings.Repeat("a", 1<<20-5) // exactly 1 MiB: judged
	var in bytes.Buffer
	lines := []string{
		`"git status"`,
		``,
		`  "rm -rf /"  `,
		`rm -rf /`,
		`"a" "b"`,
		"\"ls \x00 -l\"",
		`"ls \u0000 -l"`,
		"\"cat \xff\xfe\"",
		`"cat \udcff"`,
		`"unterminated`,
		mustQuote(t, huge),
		mustQuote(t, huge+"b"), // one byte too many
		`"` + strings.Repeat(`\u0061`, classifyMaxLine/6+1) + `"`, // a line too long to hold
		`"kubectl delete ns staging"`,
		"\"echo done\"\r",
	}
	for _, l := range lines {
		in.WriteString(l + "\n")
	}
	in.WriteString(`"no newline at the end"`)
	code, out, errOut := run(t, filepath.Join(dir, "state.db"), false, in.String(), "classify", "--stdin", "--cwd", dir)
	if code != ExitError {
		t.Errorf("exit %d, want %d (some lines were bad)", code, ExitError)
	}
	if !strings.Contains(errOut, "6 lines of 16 not judged") {
		t.Errorf("stderr does not count the bad lines: %q", errOut)
	}
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	type want struct {
		line    int
		command string
	}
	wants := []want{{0, "git status"}, {0, "rm -rf /"}, {4, ""}, {5, ""}, {6, ""}, {0, "ls \x00 -l"}, {0, "cat \xff\xfe"},
		{0, "cat \xff"}, {10, ""}, {0, huge}, {12, ""}, {13, ""}, {0, "kubectl delete ns staging"}, {0, "echo done"},
		{0, "no newline at the end"}}
	if len(got) != len(wants) {
		t.Fatalf("%d lines out, want %d:\n%s", len(got), len(wants), cutOut(out))
	}
	for i, w := range wants {
		if !strings.HasPrefix(got[i], "{") || strings.ContainsAny(got[i], "\x00\x1b") {
			t.Errorf("line %d: not one safe JSON object: %q", i+1, cutOut(got[i]))
		}
		var o classifyObject
		if err := json.Unmarshal([]byte(got[i]), &o); err != nil {
			t.Fatalf("output %d: %v: %s", i+1, err, cutOut(got[i]))
		}
		if w.line != 0 {
			if o.Line != w.line || o.Error == "" || o.Command != "" {
				t.Errorf("output %d: %s, want the error of line %d", i+1, cutOut(got[i]), w.line)
			}
			continue
		}
		if o.Error != "" {
			t.Errorf("output %d: %s", i+1, cutOut(got[i]))
			continue
		}
		// encoding/json reads \udcXX as U+FFFD: compare the exact bytes
		// through the codec that wrote them.
		var cmd json.RawMessage
		var keys map[string]json.RawMessage
		_ = json.Unmarshal([]byte(got[i]), &keys)
		cmd = keys["command"]
		exact, err := model.UnquoteJSON(cmd)
		if err != nil || exact != w.command {
			t.Errorf("output %d: command %q, want %q", i+1, cutOut(exact), cutOut(w.command))
			continue
		}
		o.Command = exact
		checkJudged(t, o, got[i], w.command, dir)
	}
	if !strings.Contains(got[11], "longer than") || !strings.Contains(got[10], "at most 1048576") {
		t.Errorf("the too-long errors do not say so:\n%s\n%s", got[10], got[11])
	}
	// All good: exit 0.
	code, _, errOut = run(t, filepath.Join(dir, "state.db"), false, "\"ls\"\n\n\"pwd\"\n", "classify", "--stdin", "--cwd", dir)
	if code != 0 || errOut != "" {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func mustQuote(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func cutOut(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func TestClassifyUsage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"classify"}, "classify needs a command"},
		{[]string{"classify", "--stdin", "--", "ls"}, "not both"},
		{[]string{"classify", "--cwd", filepath.Join(dir, "missing"), "--", "ls"}, "no such directory"},
		{[]string{"classify", "--cwd", file, "--", "ls"}, "not a directory"},
		{[]string{"classify", "--bogus"}, "unknown flag"},
	} {
		code, out, errOut := run(t, db, false, "", tc.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, out %q, err %q; want 2 and %q", tc.args, code, out, errOut, tc.msg)
		}
	}
	// A relative --cwd is made absolute; none is the current directory.
	wd, _ := os.Getwd()
	_, out, _ := run(t, db, false, "", "classify", "--json", "--cwd", "testdata", "--", "ls")
	if !strings.Contains(out, `"cwd": "`+filepath.Join(wd, "testdata")+`"`) {
		t.Errorf("relative --cwd not made absolute: %s", out)
	}
	_, out, _ = run(t, db, false, "", "classify", "--json", "--", "ls")
	if !strings.Contains(out, `"cwd": "`+wd+`"`) {
		t.Errorf("no --cwd is not the current directory: %s", out)
	}
	// Nothing is written: no store is made.
	if _, err := os.Stat(db); err == nil {
		t.Error("classify made a store")
	}
	help := helpOf(t, "classify")
	if got := exitCodesIn(help); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("classify --help: exit codes %v", got)
	}
	for _, l := range strings.Split(help[:strings.Index(help, "\nUsage:")], "\n") {
		if cells(l) > 80 && !strings.HasPrefix(l, "  approve-tui ") {
			t.Errorf("classify --help: a line of %d cells: %q", cells(l), l)
		}
	}
}

// The judgement's context knows approve-tui's own database and
// configuration as sensitive paths.
func TestJudgeContextPaths(t *testing.T) {
	a := newApp(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	a.getenv = func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return "/cfg"
		}
		return ""
	}
	a.db = "sqlite:/var/lib/approve/state.db"
	c, err := a.riskContext("/w")
	if err != nil {
		t.Fatal(err)
	}
	if c.Cwd != "/w" || !slices.Contains(c.Paths, "/var/lib/approve/state.db") ||
		!slices.Contains(c.Paths, "/var/lib/approve/state.db-wal") || !slices.Contains(c.Paths, "/cfg/approve-tui/config.yaml") {
		t.Errorf("context %+v", c)
	}
	a.db = "postgres://u@h/db?sslmode=disable"
	if c, _ := a.riskContext("/w"); slices.ContainsFunc(c.Paths, func(p string) bool { return strings.Contains(p, "postgres") }) {
		t.Errorf("a URL taken for a path: %v", c.Paths)
	}
}
