package risk

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// dfaInputs returns texts to compare the DFA and regexp on: every table
// case and corpus command (raw and normalised), the corpora joined into
// 64 KB texts, and long synthetic lines built to keep many threads alive
// (repeated prefixes, runs of spaces and options, non-ASCII spaces and
// letters, newlines, the end of the text right after a prefix).
func dfaInputs(t testing.TB) []string {
	var cmds []string
	for _, c := range rowCases {
		cmds = append(cmds, c.pos...)
		cmds = append(cmds, c.neg...)
	}
	corpora := loadCorpora(t)
	for _, f := range corpusFiles {
		for _, c := range corpora[f.name] {
			cmds = append(cmds, c.command)
		}
	}
	var in []string
	for _, c := range cmds {
		in = append(in, c, foldIgnoreCase(Normalize(c)))
	}
	for k, sep := range []string{"\n", "; ", " && ", " | ", "\x85", "\u00a0", "é"} {
		size := 6 << 10 // past dfaMinLen; 64 KB for the first two
		if k < 2 {
			size = 64 << 10
		}
		var big strings.Builder
		for i := 0; big.Len() < size; i++ {
			big.WriteString(cmds[i%len(cmds)])
			big.WriteString(sep)
		}
		in = append(in, big.String(), foldIgnoreCase(Normalize(big.String())))
	}
	for _, unit := range []string{
		"rm -rm ", "rm ", "rm -", " ", "\u2028", "git push ", "git push -", "sudo -", "sudo -s",
		"chmod --recursive ", "tee ", "cp ./a/b/", "a/", ".env.", "> ", ">> '", "; ", "& ",
		"find . -exec ", "xargs ", "delete from t ", "dd if=x ", "ı", "K", "ſ", "\xff", "é",
		"curl x | ", "kill -9 ", "killall -a ", "systemctl -q ", ":(){ ", "$(pgrep ",
	} {
		long := strings.Repeat(unit, (6<<10)/len(unit)+1)
		in = append(in, long, long+"/", long+"rm -rf /", "rm -rf "+long, long+"\n", long[:len(long)-1])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"rm", " ", "-", "r", "f", "/", "\n", ";", "&", "|", "$(", "`", "sudo", "-s",
		"git", "push", "--force", "etc", "~", ".ssh", "tee", ".env", "config.yaml", "'", "\"", "é", "\u00a0",
		"delete", "from", "where", "chmod", "777", "kill", "-1", "sh", "-c", "curl", "bash", "<", "(", ">", "dev/sda",
		"find", "-exec", "-delete", "python", "<<", "hermes", "update", "docker", "stop", "x", "1", "_"}
	for range 200 {
		var b strings.Builder
		n := rng.IntN(2000)
		for range n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in = append(in, b.String())
	}
	return in
}

// dfaMatch runs the rule's DFA on text whatever its length; ok is false
// when the DFA gave up (it grew past dfaMaxStates). On a folded text it
// runs it twice, jumping to the lead literal and not, and fails when the
// two disagree.
func dfaMatch(t testing.TB, r *rule, text string) (bool, bool) {
	t.Helper()
	m, ok := r.re.dfa.matchString(r.re.src, text, false)
	if isFolded(text) {
		mf, okf := r.re.dfa.matchString(r.re.src, text, true)
		if ok && okf && m != mf {
			t.Fatalf("line %d: the DFA says %v, %v jumping to %q, on %.200q", r.line, m, mf, r.re.dfa.p.lead, text)
		}
	}
	return m, ok
}

// TestDFALead: the rules that begin with a literal jump to it (most of the
// table does), and the lead literals are what the patterns begin with.
func TestDFALead(t *testing.T) {
	rs := rules()
	n := 0
	for i := range rs {
		r := &rs[i]
		r.re.dfa.matchString(r.re.src, strings.Repeat("x", dfaMinLen), true)
		lead := r.re.dfa.p.lead
		if lead == "" {
			continue
		}
		n++
		plain := strings.ReplaceAll(strings.TrimPrefix(strings.ToLower(r.src), `\b`), `\`, "")
		if !strings.HasPrefix(plain, lead) {
			t.Errorf("line %d: lead %q, pattern %s", r.line, lead, r.src)
		}
	}
	if n < len(rs)/2 {
		t.Errorf("only %d of %d rules have a lead literal", n, len(rs))
	}
}

// TestDFAEqualsRegexp: for every rule, the DFA says a text matches exactly
// when Go's regexp does, so the fast path for long texts cannot change a
// verdict.
func TestDFAEqualsRegexp(t *testing.T) {
	rs := rules()
	inputs := dfaInputs(t)
	for i := range rs {
		r := &rs[i]
		re := r.re.get()
		for _, text := range inputs {
			got, ok := dfaMatch(t, r, text)
			if !ok {
				t.Errorf("line %d: the DFA gave up on a %d-byte text", r.line, len(text))
				continue
			}
			if want := re.MatchString(text); got != want {
				t.Errorf("line %d (%s): DFA %v, regexp %v on %.200q (%d bytes)", r.line, r.desc, got, want, text, len(text))
			}
		}
	}
}

// classifyRegexp is classify with every rule matched by Go's regexp alone.
func classifyRegexp(rs []rule, command string) Verdict {
	text := foldIgnoreCase(Normalize(command))
	v := Verdict{Level: "low"}
	for i := range rs {
		r := &rs[i]
		dup := false
		for _, m := range v.Matches {
			dup = dup || m.Description == r.desc
		}
		if dup {
			continue
		}
		var ok bool
		if r.notBefore == "" {
			ok = r.re.get().MatchString(text)
		} else {
			ok = notBeforeRegexp(r, text)
		}
		if !ok {
			continue
		}
		v.Matches = append(v.Matches, Match{Kind: r.kind, Description: r.desc, Level: r.level})
		if rankOf(r.level) > rankOf(v.Level) {
			v.Level = r.level
		}
		v.Hardline = v.Hardline || r.kind == KindHardline
	}
	return v
}

// notBeforeRegexp is matchesNotBefore with the match ends found by
// regexp's FindAllStringIndex, whatever the text's length.
func notBeforeRegexp(r *rule, text string) bool {
	free := r.notFollowed(text)
	for _, loc := range r.re.get().FindAllStringIndex(text, -1) {
		if free(loc[1]) {
			return true
		}
	}
	return false
}

// TestNotBeforeLongEqualsRegexp: the lookahead rule (DELETE FROM without a
// WHERE on its line) decides long texts from the DFA's match ends as from
// regexp's matches.
func TestNotBeforeLongEqualsRegexp(t *testing.T) {
	rs := rules()
	var inputs []string
	for _, text := range dfaInputs(t) {
		if len(text) >= dfaMinLen {
			inputs = append(inputs, text)
		}
	}
	for _, unit := range []string{"delete from t where x;\n", "delete from t\n where x ", "delete\nfrom t where x\n",
		"x delete  from where ", "delete from t; where\n", "delete from tá where ", "delete fromwhere\n", "delete from_ where "} {
		long := strings.Repeat(unit, (5<<10)/len(unit)+1)
		inputs = append(inputs, long, long+"delete from t", long+"delete from t\nwhere", "delete from t\n"+long)
	}
	n := 0
	for i := range rs {
		r := &rs[i]
		if r.notBefore == "" {
			continue
		}
		n++
		for _, text := range inputs {
			if got, want := r.matchesNotBefore(text, isFolded(text)), notBeforeRegexp(r, text); got != want {
				t.Errorf("line %d: %v on %.100q… (%d bytes), regexp %v", r.line, got, text, len(text), want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no rule has a trailing lookahead")
	}
}

func rankOf(l interface{ Rank() int }) int { return l.Rank() }

// TestClassifyLongEqualsRegexp: on long texts (where Classify uses the
// DFA) the verdicts are those of the regexp path.
func TestClassifyLongEqualsRegexp(t *testing.T) {
	rs := rules()
	for _, text := range dfaInputs(t) {
		if len(text) < dfaMinLen {
			continue
		}
		got, want := Classify(text), classifyRegexp(rs, text)
		if got.Level != want.Level || got.Hardline != want.Hardline || got.Reason() != want.Reason() {
			t.Errorf("Classify(%.100q…, %d bytes) = %+v, regexp path %+v", text, len(text), got, want)
		}
	}
}

// FuzzDFA compares the DFA and regexp of every rule on fuzzed texts, raw,
// normalised, and repeated past dfaMinLen.
func FuzzDFA(f *testing.F) {
	for _, c := range rowCases {
		for _, cmd := range append(c.pos, c.neg...) {
			f.Add(cmd)
		}
	}
	f.Add("DELETE FROM t;\nSELECT 1 WHERE x \x1b]0;\x07ｒｍ r''m ı\u0085K")
	rs := rules()
	f.Fuzz(func(t *testing.T, s string) {
		s = truncate(s, 512)
		texts := []string{s, foldIgnoreCase(Normalize(s))}
		if s != "" {
			texts = append(texts, strings.Repeat(s, dfaMinLen/len(s)+1))
		}
		for i := range rs {
			r := &rs[i]
			for _, text := range texts {
				got, ok := dfaMatch(t, r, text)
				if ok && got != r.re.get().MatchString(text) {
					t.Fatalf("line %d: DFA %v on %q", r.line, got, text)
				}
			}
		}
	})
}

// TestDFAConcurrent: classifications of long texts at the same time share
// a rule's kept states or take pooled ones, and agree (run with -race).
func TestDFAConcurrent(t *testing.T) {
	texts := []string{
		strings.Repeat("git status; ls -la\n", 400) + "git push --force origin main",
		strings.Repeat("echo ok && make test\n", 400) + "rm -rf /",
		strings.Repeat("cat README.md | grep x\n", 400),
	}
	want := make([]Verdict, len(texts))
	for k, text := range texts {
		want[k] = classifyRegexp(rules(), text)
	}
	done := make(chan error)
	for g := range 4 {
		go func() {
			var err error
			for n := range 20 {
				k := (g + n) % len(texts)
				if got := Classify(texts[k]); got.Reason() != want[k].Reason() || got.Level != want[k].Level {
					err = fmt.Errorf("text %d: %+v, want %+v", k, got, want[k])
				}
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
