package catalogue

import (
	"slices"
	"strings"
	"testing"
)

// Every finding names words that are on the line, and a node's own
// finding names the words as written and describes the node they reach:
// kubectl rollout restart is not reported as "kubectl rollout undo", nor
// go test as "go build".
func TestFindingWordsAreOnTheLine(t *testing.T) {
	c := mustDefault(t)
	checked := 0
	check := func(line []string, n *Command) {
		checked++
		r := c.Lookup(line)
		for _, f := range r.Findings {
			for _, w := range f.Words {
				if !slices.Contains(line, w) {
					t.Errorf("%q: finding %s names %q, which is not on the line (words %q)", strings.Join(line, " "), f.Effect, w, f.Words)
				}
			}
		}
		if len(n.Verbs) > 0 || len(r.Findings) == 0 {
			return
		}
		f := r.Findings[0]
		if !slices.Equal(f.Words, line) {
			t.Errorf("%q: first finding's words %q, want the line's", strings.Join(line, " "), f.Words)
		}
		if want := strings.Join(line, " ") + ": " + n.About; n.About != "" && f.Why != want {
			t.Errorf("%q: why %q, want %q", strings.Join(line, " "), f.Why, want)
		}
	}
	var walk func(line []string, n *Command)
	walk = func(line []string, n *Command) {
		check(line, n)
		for _, s := range n.Subcommands {
			for _, name := range append([]string{s.Name}, s.Aliases...) {
				walk(append(slices.Clone(line), name), s)
			}
		}
	}
	for _, p := range c.Programs() {
		for _, name := range append([]string{p.Name}, p.Aliases...) {
			walk([]string{name}, p)
		}
	}
	t.Logf("%d lines checked", checked)
}

func TestFindingWordsAsWritten(t *testing.T) {
	c := mustDefault(t)
	for _, tc := range []struct {
		line, words, why string
	}{
		{"kubectl rollout restart deploy/x", "kubectl rollout restart", "kubectl rollout restart: changes a rollout"},
		{"go test ./...", "go test", "go test: "},
		{"oc rollout history deploy/x", "oc rollout history", "oc rollout history: shows a rollout"},
		{"/usr/bin/git log", "/usr/bin/git log", "git log: "},
	} {
		r := c.Lookup(strings.Fields(tc.line))
		if len(r.Findings) == 0 {
			t.Errorf("%q: no finding", tc.line)
			continue
		}
		f := r.Findings[0]
		if strings.Join(f.Words, " ") != tc.words || !strings.HasPrefix(f.Why, tc.why) {
			t.Errorf("%q: words %q why %q, want words %q why starting %q", tc.line, f.Words, f.Why, tc.words, tc.why)
		}
	}
}
