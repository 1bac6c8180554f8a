package risk

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBrokenTableFailsAtFirstUse: the table is loaded on first use, not at
// initialisation. A rule that does not compile must still fail loudly:
// the first classification panics with mustParse's message naming the
// line, and so does every later one (a caller that recovers, like the
// hooks, must never get a verdict, least of all low).
func TestBrokenTableFailsAtFirstUse(t *testing.T) {
	const good = "hardline\thigh\t\\brm\\s+-rf\\s+/\trecursive delete of root filesystem\n"
	for _, tc := range []struct{ name, data, want string }{
		{"bad regexp", good + "dangerous\tmedium\t(unclosed\tbroken rule\n",
			`risk: embedded patterns.tsv is malformed: line 2 ("broken rule"): does not compile under RE2`},
		{"unsupported construct", good + "dangerous\tmedium\tls(?=x)\tbroken rule\n",
			`risk: embedded patterns.tsv is malformed: line 2 ("broken rule"): Python-only construct "(?="`},
		{"undefined fragment", "dangerous\tmedium\t>{NOPE}\tbroken rule\n" + good,
			`risk: embedded patterns.tsv is malformed: line 1 ("broken rule"): undefined fragment {NOPE}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			load := lazyRules(tc.data)
			for try := 1; try <= 3; try++ {
				for _, cmd := range []string{"ls", "rm -rf /"} {
					v, msg := classifyRecover(load, cmd)
					if msg == "" {
						t.Fatalf("call %d: Classify(%q) with a broken table returned %+v, want a panic", try, cmd, v)
					}
					if !strings.Contains(msg, tc.want) {
						t.Fatalf("call %d: panic = %q, want it to contain %q", try, msg, tc.want)
					}
				}
			}
		})
	}
}

// classifyRecover classifies cmd with the table load returns and returns
// the verdict, or the panic's message.
func classifyRecover(load func() []rule, cmd string) (v Verdict, panicMsg string) {
	defer func() {
		if p := recover(); p != nil {
			panicMsg = fmt.Sprint(p)
			if panicMsg == "" {
				panicMsg = "(empty panic)"
			}
		}
	}()
	return classify(load(), cmd), ""
}

// TestLazyRulesSameTable: the lazily loaded table is the embedded table,
// parsed once.
func TestLazyRulesSameTable(t *testing.T) {
	rs, err := parseRules(patternsTSV)
	if err != nil {
		t.Fatal(err)
	}
	got := rules()
	if len(got) != len(rs) {
		t.Fatalf("rules() has %d rules, parseRules %d", len(got), len(rs))
	}
	for i := range rs {
		a, b := got[i], rs[i]
		if a.line != b.line || a.kind != b.kind || a.level != b.level || a.desc != b.desc || a.src != b.src ||
			a.re.String() != b.re.String() || a.lit != b.lit || a.notBefore != b.notBefore {
			t.Errorf("rule %d differs: %+v vs %+v", i, a, b)
		}
	}
	if &rules()[0] != &got[0] {
		t.Error("rules() parsed the table again")
	}
}

// TestInitDoesNotLoadTable keeps the start-up cost out of every process:
// this test binary, run again with no test selected and Go's inittrace,
// must report a risk package initialisation far below what loading the
// table allocates (about 16,000 allocations, 2 MB; today the package's
// initialisation makes 14).
func TestInitDoesNotLoadTable(t *testing.T) {
	if os.Getenv("APPROVE_TUI_RISK_INITTRACE") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "APPROVE_TUI_RISK_INITTRACE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^init github\.com/approve-tui/approve-tui/risk @.*, (\d+) bytes, (\d+) allocs$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no inittrace line for package risk in:\n%s", out)
	}
	allocs, _ := strconv.Atoi(string(m[2]))
	if allocs > 1000 {
		t.Fatalf("package risk's initialisation made %d allocations (%s bytes): is the rule table loaded at init again?\n%s", allocs, m[1], m[0])
	}
}

// BenchmarkLoadTable is what the first classification in a process pays
// (parse, translate, check and compile the embedded table), and what every
// process paid at initialisation before the table was loaded lazily.
func BenchmarkLoadTable(b *testing.B) {
	for b.Loop() {
		if _, err := parseRules(patternsTSV); err != nil {
			b.Fatal(err)
		}
	}
}
