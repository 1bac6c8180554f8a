package risk

import (
	"strings"
	"testing"
)

// The words of a finding are words of the line, as written: the console
// shows them to say what triggered it.
func TestFindingWordsOnTheLine(t *testing.T) {
	lines := []string{
		"kubectl rollout restart deploy/x",
		"go test ./...",
		"rm -rf $(cat list)",
		"rm -rf \"$D\"/build",
		"sort --out=/tmp/x y",
		"TAR_OPTIONS=x tar -tf x.tar",
		"env TAR_OPTIONS=x tar -tf x.tar",
		"env GIT_PAGER=sh git log",
		"env LD_PRELOAD=/tmp/x.so ls",
		"echo $GITHUB_TOKEN",
		"grep -r password /etc/",
	}
	for _, c := range attackTable {
		lines = append(lines, c.cmd)
	}
	lines = append(lines, readOnlyControls...)
	for _, line := range lines {
		j := Judge(line, attackContext())
		flat := unquoteAll(line)
		for _, f := range j.Findings {
			for _, w := range f.Words {
				if w == "" {
					t.Errorf("%q: finding %s %q names an empty word", line, f.Rule, f.Why)
					continue
				}
				if n, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(v, n+"=") {
					t.Errorf("%q: finding %s %q names %q, the assignment twice", line, f.Rule, f.Why, w)
				}
				if !onTheLine(flat, unquoteAll(strings.TrimSuffix(w, "…"))) {
					t.Errorf("%q: finding %s %q names %q, not on the line", line, f.Rule, f.Why, w)
				}
			}
		}
	}
}

// unquoteAll drops quotes, backslashes and blanks: a word after quote
// removal (core.pager=sh -c x from core.pager='sh -c x') is on the line.
func unquoteAll(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\'' || r == '"' || r == '\\' || r == ' ' {
			return -1
		}
		return r
	}, s)
}

// onTheLine: w is on the line, or is a part the analysis names from it:
// one letter of a cluster of short options (-f of -af, -x of xf), a
// redirection with its target (>/dev/tcp/...), a word read for where it
// points ({} (below ~)), or what a changed PATH may hold (PATH=?).
func onTheLine(line, w string) bool {
	switch {
	case strings.Contains(line, w):
		return true
	case len(w) == 2 && w[0] == '-':
		return strings.Contains(line, w[1:])
	case strings.HasPrefix(w, ">&"), strings.HasPrefix(w, ">"):
		return strings.Contains(line, strings.TrimLeft(w, ">&"))
	case strings.Contains(w, "(below"):
		return strings.Contains(line, w[:strings.Index(w, "(below")])
	case strings.HasSuffix(w, "=?"):
		return strings.Contains(line, strings.TrimSuffix(w, "=?"))
	case strings.HasPrefix(w, "(") && strings.HasSuffix(w, ")"):
		return true // (words from its input): what xargs adds, not on the line by nature
	case w == "sh":
		return strings.Contains(line, "sudo-s") || strings.Contains(line, "sudo-i") // the shell sudo -s starts, named sh
	}
	return false
}
