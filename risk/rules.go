package risk

import (
	_ "embed"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
)

// patternsTSV is Hermes' pattern table (see the header of the file).
//
//go:embed patterns.tsv
var patternsTSV string

// Kinds of rule, as named in the first column of patterns.tsv.
const (
	KindHardline  = "hardline"
	KindDangerous = "dangerous"
	KindSudoGuard = "sudo_guard"
)

// rule is one compiled row of patterns.tsv.
type rule struct {
	line  int // line number in patterns.tsv, for messages
	kind  string
	level model.RiskLevel
	desc  string
	src   string  // the Python regex with fragments expanded
	re    *lazyRE // its Go translation, compiled on first use
	lit   string  // lowercase ASCII text that every match contains, or ""

	// need is a conjunction of alternatives: every match contains, for
	// each element, one of its lowercase ASCII strings (see
	// requiredLiterals). A text that fails it cannot match, so re is
	// neither compiled nor run for it.
	need [][]string

	// notBefore, when set, is the word of a trailing negative lookahead
	// (?![^\n]*\bWORD\b): a match of re counts only if WORD does not
	// occur as a whole word later on the same line.
	notBefore string
}

// rules returns the table, in file order (hardline, sudo_guard,
// dangerous). It is loaded on first use, not at package initialisation, and
// costs little then: the rows, their translation and their literal
// prefilters come precompiled from table_gen.go (generated from patterns.tsv
// by go generate, checked by TestTableGen), and each rule's regexp is only
// compiled when a command first gets past its prefilter (lazyRE). Parsing,
// checking and compiling the whole table costs 5–12 ms (mostly regexp/syntax
// parsing Python's Unicode classes), which every hook process would pay.
//
// table_gen.go is used only when it was generated from the embedded
// patterns.tsv, byte for byte (it holds a copy); otherwise the embedded table is
// parsed as before, so the rules are always patterns.tsv's. A malformed
// table panics at that first use with mustParse's message, and again at
// every later use: sync.OnceValue repeats the panic of its function, so a
// caller that recovers (the hooks turn a panic into a deny) can never get an
// empty table and classify a command as low.
var rules = sync.OnceValue(func() []rule { return loadRules(patternsTSV) })

// loadRules returns the generated table if it was generated from data, else
// data parsed with mustParse.
func loadRules(data string) []rule {
	if genCurrent(data) {
		return genRules
	}
	return mustParse(data)
}

// genCurrent reports whether table_gen.go was generated from data.
func genCurrent(data string) bool { return data == genPatternsTSV }

// lazyRules returns a function that parses data with mustParse on its first
// call and returns the same rules on every call (or repeats the panic).
func lazyRules(data string) func() []rule {
	return sync.OnceValue(func() []rule { return mustParse(data) })
}

// lazyRegexp returns src compiled on first use: the package's own regexps
// serve only to load the table, so initialisation does not compile them
// either.
func lazyRegexp(src string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
}

// lazyRE is a rule's regular expression (Go syntax, with its (?is)),
// compiled on first use; safe for concurrent use. The sources in
// table_gen.go all compiled when it was generated; should one not compile
// here (another Go release's regexp), its every use panics.
type lazyRE struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
	err  error
	dfa  lazyDFA // for long texts (see dfaMinLen)
}

// compiledRE is re as a lazyRE, already compiled.
func compiledRE(re *regexp.Regexp) *lazyRE {
	l := &lazyRE{src: re.String(), re: re}
	l.once.Do(func() {})
	return l
}

// String returns the source text.
func (l *lazyRE) String() string { return l.src }

// get returns the compiled regexp, compiling it on the first call.
func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re, l.err = regexp.Compile(l.src) })
	if l.err != nil {
		panic(fmt.Sprintf("risk: rule regexp %q does not compile under RE2: %v", l.src, l.err))
	}
	return l.re
}

// matchString reports whether the regexp matches text, as
// regexp.MatchString does; long texts are matched by the DFA (folded as
// for rule.matchesFolded).
func (l *lazyRE) matchString(text string, folded bool) bool {
	if len(text) >= dfaMinLen {
		if m, ok := l.dfa.matchString(l.src, text, folded); ok {
			return m
		}
	}
	return l.get().MatchString(text)
}

func mustParse(data string) []rule {
	rs, err := parseRules(data)
	if err != nil {
		panic("risk: embedded patterns.tsv is malformed: " + err.Error())
	}
	return rs
}

// parseRules parses the pattern table: rows kind<TAB>risk<TAB>regex<TAB>description,
// "#fragment<TAB>NAME<TAB>regex" definitions for the {NAME} placeholders
// (which may nest), and other "#" comment lines.
func parseRules(data string) ([]rule, error) {
	type row struct {
		line   int
		fields []string
	}
	var rows []row
	fragments := map[string]string{}
	for i, text := range strings.Split(data, "\n") {
		line := i + 1
		text = strings.TrimSuffix(text, "\r")
		switch {
		case strings.TrimSpace(text) == "":
		case strings.HasPrefix(text, "#fragment\t"):
			f := strings.Split(text, "\t")
			if len(f) != 3 || f[1] == "" || f[2] == "" {
				return nil, fmt.Errorf("line %d: a fragment needs 3 tab-separated fields, got %d", line, len(f))
			}
			if _, dup := fragments[f[1]]; dup {
				return nil, fmt.Errorf("line %d: fragment %s defined twice", line, f[1])
			}
			fragments[f[1]] = f[2]
		case strings.HasPrefix(text, "#"):
		default:
			f := strings.Split(text, "\t")
			if len(f) != 4 {
				return nil, fmt.Errorf("line %d: a pattern row needs 4 tab-separated fields, got %d", line, len(f))
			}
			rows = append(rows, row{line, f})
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no pattern rows")
	}
	rs := make([]rule, 0, len(rows))
	for _, r := range rows {
		kind, level, src, desc := r.fields[0], model.RiskLevel(r.fields[1]), r.fields[2], r.fields[3]
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d (%q): %s", r.line, desc, fmt.Sprintf(format, args...))
		}
		switch kind {
		case KindHardline, KindDangerous, KindSudoGuard:
		default:
			return nil, fail("unknown kind %q", kind)
		}
		if desc == "" {
			return nil, fail("empty description")
		}
		want := DescriptionRisk(desc)
		if kind == KindHardline {
			want = model.RiskHigh
		}
		if level != want {
			return nil, fail("risk column says %q but the rule gives %q", level, want)
		}
		expanded, err := expand(src, fragments, nil)
		if err != nil {
			return nil, fail("%v", err)
		}
		re, word, err := compilePython(expanded)
		if err != nil {
			return nil, fail("%v", err)
		}
		tree, err := syntax.Parse(re.String(), syntax.Perl)
		if err != nil {
			return nil, fail("does not parse again: %v", err)
		}
		tree = tree.Simplify()
		rs = append(rs, rule{line: r.line, kind: kind, level: level, desc: desc, src: expanded, re: compiledRE(re),
			lit: requiredLiteral(tree), need: requiredLiterals(tree), notBefore: word})
	}
	return rs, nil
}

var placeholder = lazyRegexp(`\{([A-Z][A-Z0-9_]*)\}`)

// expand replaces every {NAME} with its fragment, recursively. stack holds
// the fragments being expanded, to report cycles.
func expand(src string, fragments map[string]string, stack []string) (string, error) {
	var err error
	out := placeholder().ReplaceAllStringFunc(src, func(m string) string {
		name := m[1 : len(m)-1]
		body, ok := fragments[name]
		switch {
		case err != nil:
			return m
		case !ok:
			err = fmt.Errorf("undefined fragment {%s}", name)
			return m
		case slices.Contains(stack, name):
			err = fmt.Errorf("fragment cycle %s -> %s", strings.Join(stack, " -> "), name)
			return m
		}
		var sub string
		sub, err = expand(body, fragments, append(stack, name))
		return sub
	})
	return out, err
}

// Python's \s, \w and \d are Unicode-aware for str patterns; Go's are ASCII.
// These class bodies give Python's meaning (\s is str.isspace, \w is
// str.isalnum or "_", \d is a decimal digit).
const (
	pySpace = `\t\n\v\f\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`
	pyWord  = `\p{L}\p{N}_`
	pyDigit = `\p{Nd}`
)

// pyClasses are those class bodies by the letter of their escape.
var pyClasses = map[byte]string{'s': pySpace, 'w': pyWord, 'd': pyDigit}

// trailingLookahead is the one lookaround the table uses: a negative
// lookahead for a whole word later on the same line, at the very end.
var trailingLookahead = lazyRegexp(`^(.*)\(\?!\[\^\\n\]\*\\b([A-Za-z]+)\\b\)$`)

// compilePython translates a Python regex into an equivalent Go one and
// compiles it with Python's IGNORECASE|DOTALL. It returns the word of a
// trailing (?![^\n]*\bWORD\b), which the caller checks procedurally, and an
// error for every Python construct RE2 cannot express.
func compilePython(py string) (*regexp.Regexp, string, error) {
	var word string
	if m := trailingLookahead().FindStringSubmatch(py); m != nil {
		py, word = m[1], strings.ToLower(m[2])
	}
	goSrc, err := translate(py)
	if err != nil {
		return nil, "", err
	}
	if err := checkEndsInTail(goSrc); err != nil {
		return nil, "", err
	}
	re, err := regexp.Compile("(?is)" + goSrc)
	if err != nil {
		return nil, "", fmt.Errorf("does not compile under RE2: %v", err)
	}
	return re, word, nil
}

// translate rewrites the Python-only parts of a regex: Unicode \s \w \d,
// $ (which in Python also matches before a final newline), \Z and {,n}.
// Lookarounds, atomic groups, possessive quantifiers, backreferences,
// conditionals and flags other than i and s are refused.
func translate(py string) (string, error) {
	var b strings.Builder
	inClass := false
	classStart := 0 // index just after "[" or "[^"
	for i := 0; i < len(py); i++ {
		c := py[i]
		if c == '\\' {
			if i+1 == len(py) {
				return "", fmt.Errorf("trailing backslash")
			}
			i++
			e := py[i]
			switch {
			case inClass && pyClasses[e] != "":
				b.WriteString(pyClasses[e])
			case inClass && (pyClasses[e|0x20] != "" || e == 'b' || e == 'B'):
				return "", fmt.Errorf(`\%c inside a character class is not supported`, e)
			case pyClasses[e] != "":
				b.WriteString("[" + pyClasses[e] + "]")
			case pyClasses[e|0x20] != "":
				// \S, \W, \D: the class of \s, \w, \d negated.
				b.WriteString("[^" + pyClasses[e|0x20] + "]")
			case e == 'Z':
				b.WriteString(`\z`)
			case e >= '1' && e <= '9':
				return "", fmt.Errorf(`backreference \%c is not supported`, e)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			continue
		}
		if inClass {
			switch {
			case c == ']' && i > classStart:
				inClass = false
			case c == '[' && i+1 < len(py) && py[i+1] == ':':
				return "", fmt.Errorf("%q inside a character class means a POSIX class in Go", "[:")
			}
			b.WriteByte(c)
			continue
		}
		switch c {
		case '[':
			inClass = true
			classStart = i + 1
			if i+1 < len(py) && py[i+1] == '^' {
				classStart++
			}
		case '(':
			if err := checkGroup(py[i:]); err != nil {
				return "", err
			}
		case '$':
			b.WriteString(`(?:\n?\z)`)
			continue
		case '*', '+', '?':
			if i+1 < len(py) && py[i+1] == '+' {
				return "", fmt.Errorf("possessive quantifier %q is not supported", py[i:i+2])
			}
		case '{':
			if m := pyRepeat().FindString(py[i:]); m != "" {
				i += len(m) - 1
				if i+1 < len(py) && py[i+1] == '+' {
					return "", fmt.Errorf("possessive quantifier %q is not supported", m+"+")
				}
				if strings.HasPrefix(m, "{,") { // Python's {,n} is {0,n}
					m = "{0" + m[1:]
				}
				b.WriteString(m)
				continue
			}
		}
		b.WriteByte(c)
	}
	if inClass {
		return "", fmt.Errorf("unterminated character class")
	}
	return b.String(), nil
}

// pyRepeat matches a counted repetition: {n}, {m,}, {m,n} or Python's {,n}.
var pyRepeat = lazyRegexp(`^\{(?:\d+|\d*,\d*)\}`)

// checkGroup refuses the group openings RE2 does not share with Python.
func checkGroup(s string) error {
	if !strings.HasPrefix(s, "(?") || strings.HasPrefix(s, "(?:") || strings.HasPrefix(s, "(?P<") {
		return nil
	}
	for _, p := range []string{"(?=", "(?!", "(?<=", "(?<!", "(?>", "(?P=", "(?(", "(?#"} {
		if strings.HasPrefix(s, p) {
			return fmt.Errorf("Python-only construct %q is not supported (only a trailing (?![^\\n]*\\bWORD\\b) is)", p)
		}
	}
	// Inline flags: only i and s (and their removal) mean the same in Go.
	for _, f := range s[2:] {
		switch f {
		case 'i', 's', '-':
		case ':', ')':
			return nil
		default:
			return fmt.Errorf("inline flag %q is not supported", f)
		}
	}
	return fmt.Errorf("unterminated group")
}

// checkEndsInTail verifies that every end-of-text assertion (the
// translation of Python's $) sits where nothing can follow it. There the
// translation \n?\z, which consumes a final newline, decides a match
// exactly like Python's zero-width $.
func checkEndsInTail(goSrc string) error {
	re, err := syntax.Parse(goSrc, syntax.Perl)
	if err != nil {
		return fmt.Errorf("does not compile under RE2: %v", err)
	}
	var walk func(n *syntax.Regexp, tail bool) error
	walk = func(n *syntax.Regexp, tail bool) error {
		switch n.Op {
		case syntax.OpEndText:
			if !tail {
				return fmt.Errorf("$ is followed by more pattern; its Python meaning cannot be kept")
			}
		case syntax.OpConcat:
			for i, sub := range n.Sub {
				if err := walk(sub, tail && i == len(n.Sub)-1); err != nil {
					return err
				}
			}
		case syntax.OpAlternate, syntax.OpCapture, syntax.OpQuest:
			for _, sub := range n.Sub {
				if err := walk(sub, tail); err != nil {
					return err
				}
			}
		default:
			for _, sub := range n.Sub {
				if err := walk(sub, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(re, true)
}

// isPyWord reports whether r is a word character for Python's Unicode \b.
func isPyWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// requiredLiteral returns the longest literal that every match of tree (a
// rule's regexp, parsed and simplified) must contain, lowercased, or ""
// when there is none (or it is not ASCII). On the lowercased text, where
// IGNORECASE can only ever match the lowercase form of an ASCII letter, a
// cheap strings.Contains then rules most patterns out before the regexp
// runs.
func requiredLiteral(tree *syntax.Regexp) string {
	var lit func(n *syntax.Regexp) string
	lit = func(n *syntax.Regexp) string {
		switch n.Op {
		case syntax.OpLiteral:
			s := string(n.Rune)
			for _, r := range s {
				if r >= utf8.RuneSelf {
					return ""
				}
			}
			return strings.ToLower(s)
		case syntax.OpCapture, syntax.OpPlus:
			return lit(n.Sub[0])
		case syntax.OpRepeat:
			if n.Min >= 1 {
				return lit(n.Sub[0])
			}
		case syntax.OpConcat:
			best := ""
			for _, sub := range n.Sub {
				if l := lit(sub); len(l) > len(best) {
					best = l
				}
			}
			return best
		}
		return ""
	}
	return lit(tree)
}

// requiredLiterals returns what every match of tree must contain, as a
// conjunction of alternatives: every match contains, for each element, one
// of its strings. The strings are lowercase ASCII, as requiredLiteral's (of
// which it is a generalisation), so on the normalised, lowercased text
//
//	for each element a: some s in a has strings.Contains(text, s)
//
// is necessary for a match. Literals of a concatenation are each required;
// an alternation requires one of its branches' most selective alternatives,
// when every branch requires something; anything that can match without a
// literal (a class, an optional or starred part) requires nothing. Nil
// means no requirement.
func requiredLiterals(tree *syntax.Regexp) [][]string {
	var need func(n *syntax.Regexp) [][]string
	need = func(n *syntax.Regexp) [][]string {
		switch n.Op {
		case syntax.OpLiteral:
			s := string(n.Rune)
			for _, r := range s {
				if r >= utf8.RuneSelf {
					return nil
				}
			}
			return [][]string{{strings.ToLower(s)}}
		case syntax.OpCapture, syntax.OpPlus:
			return need(n.Sub[0])
		case syntax.OpRepeat:
			if n.Min >= 1 {
				return need(n.Sub[0])
			}
		case syntax.OpConcat:
			var all [][]string
			for _, sub := range n.Sub {
				all = append(all, need(sub)...)
			}
			return simplifyNeed(all)
		case syntax.OpAlternate:
			var alts []string
			for _, sub := range n.Sub {
				best := mostSelective(need(sub))
				if best == nil {
					return nil
				}
				alts = append(alts, best...)
			}
			return [][]string{minimalAlternatives(alts)}
		}
		return nil
	}
	return need(tree)
}

// mostSelective returns the alternatives of need whose shortest string is
// the longest (the fewest alternatives on a tie), or nil.
func mostSelective(need [][]string) []string {
	var best []string
	score := func(a []string) int {
		m := len(a[0])
		for _, s := range a[1:] {
			m = min(m, len(s))
		}
		return m
	}
	for _, a := range need {
		if best == nil || score(a) > score(best) || score(a) == score(best) && len(a) < len(best) {
			best = a
		}
	}
	return best
}

// minimalAlternatives drops duplicates and every string that contains
// another (containing it implies containing the other), keeping order.
func minimalAlternatives(a []string) []string {
	var out []string
	for i, s := range a {
		redundant := false
		for j, t := range a {
			if j != i && strings.Contains(s, t) && (s != t || j < i) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, s)
		}
	}
	return out
}

// simplifyNeed drops every element of a conjunction that another implies
// (each of whose strings contains one of its strings), keeping order; of
// equal elements the first stays.
func simplifyNeed(need [][]string) [][]string {
	implies := func(a, b []string) bool { // every s in a contains some t in b
		for _, s := range a {
			if !slices.ContainsFunc(b, func(t string) bool { return strings.Contains(s, t) }) {
				return false
			}
		}
		return true
	}
	var out [][]string
	for i, b := range need {
		redundant := false
		for j, a := range need {
			if j != i && implies(a, b) && (!implies(b, a) || j < i) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, b)
		}
	}
	return out
}
