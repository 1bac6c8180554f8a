package risk

import (
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// passesNeed reports whether text gets past r's literal prefilters.
func passesNeed(r *rule, text string) bool {
	if r.lit != "" && !strings.Contains(text, r.lit) {
		return false
	}
	for _, alts := range r.need {
		if !slices.ContainsFunc(alts, func(s string) bool { return strings.Contains(text, s) }) {
			return false
		}
	}
	return true
}

// checkPrefilterSound fails when some rule's regexp matches the
// normalised cmd but its prefilter would have ruled the rule out.
func checkPrefilterSound(t *testing.T, rs []rule, cmd string) {
	t.Helper()
	text := foldIgnoreCase(Normalize(cmd))
	for i := range rs {
		r := &rs[i]
		if r.re.get().MatchString(text) && !passesNeed(r, text) {
			t.Errorf("line %d (%q): matches %q, but its prefilter (lit %q, need %q) rules it out", r.line, r.desc, cmd, r.lit, r.need)
		}
	}
}

// TestPrefilterSound: on every command of the tests, a rule whose regexp
// matches gets past its prefilter, and a classification that ignores the
// prefilters gives the same verdict.
func TestPrefilterSound(t *testing.T) {
	rs := rules()
	var cmds []string
	for _, c := range rowCases {
		cmds = append(cmds, c.pos...)
		cmds = append(cmds, c.neg...)
	}
	cmds = append(cmds, "DELETE FROM t;\nSELECT 1 WHERE x \x1b]0;\x07ｒｍ r''m", "ＲＭ -ＲＦ /", "RM -RF /ETC", "ſudo -S x",
		"chmod +x a.sh;./a.sh", "echo > /ETC/passwd", "KILL -9 -1", "sudo -ſ true", "\u212aill -1")
	for _, cmd := range cmds {
		checkPrefilterSound(t, rs, cmd)
	}
}

// FuzzPrefilterSound: no command matched by a rule's regexp is ruled out
// by its prefilter.
func FuzzPrefilterSound(f *testing.F) {
	for _, c := range rowCases {
		for _, cmd := range append(c.pos, c.neg...) {
			f.Add(cmd)
		}
	}
	rs := rules()
	f.Fuzz(func(t *testing.T, cmd string) {
		checkPrefilterSound(t, rs, truncate(cmd, 256))
	})
}

func TestRequiredLiterals(t *testing.T) {
	for _, tc := range []struct {
		re   string
		want [][]string
	}{
		{`abc`, [][]string{{"abc"}}},
		{`(?i)ABC`, [][]string{{"abc"}}},
		{`a\s+b`, [][]string{{"a"}, {"b"}}},
		{`(foo|bar)baz`, [][]string{{"foo", "bar"}, {"baz"}}},
		{`(sh|bash|zsh)x`, [][]string{{"sh"}, {"x"}}}, // bash and zsh contain sh
		{`(?:^|;)\s*sudo`, [][]string{{"sudo"}}},      // ^ requires nothing
		{`x(foo)?y`, [][]string{{"x"}, {"y"}}},        // optional
		{`x(foo)*y(bar)+`, [][]string{{"x"}, {"y"}, {"bar"}}},
		{`(a|[bc])d`, [][]string{{"d"}}},                          // a class requires nothing
		{`(?:/etc/|/private/)`, [][]string{{"etc/", "private/"}}}, // factored as /(?:etc/|private/): etc/ implies /
		{`é+x`, [][]string{{"x"}}},                                // non-ASCII: nothing
		{`[a-z]+`, nil},
	} {
		tree, err := syntax.Parse(regexp.MustCompile(tc.re).String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := requiredLiterals(tree.Simplify()); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("requiredLiterals(%s) = %q, want %q", tc.re, got, tc.want)
		}
	}
}
