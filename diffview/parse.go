package diffview

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Kind says what part of a unified diff a line is.
type Kind uint8

const (
	// Plain is text outside the diff's structure (a preamble, a stray line,
	// a binary patch payload, or every line of input that is not a diff).
	Plain Kind = iota
	// FileHeader is a per-file header line: "diff --git", "index", modes,
	// renames, "---"/"+++", "Binary files … differ", "GIT binary patch".
	FileHeader
	// HunkHeader is an "@@ -a,b +c,d @@ section" line.
	HunkHeader
	// Context, Added and Removed are a hunk's body lines.
	Context
	Added
	Removed
	// NoNewline is "\ No newline at end of file" (or any "\" line in a hunk).
	NoNewline
)

// Line is one line of the input. A Diff's Lines hold the input whole and in
// order: joining their Raw texts with the line terminator gives it back.
type Line struct {
	Kind Kind
	// Raw is the input line exactly, without its terminator. It is agent
	// text: sanitise it before showing it.
	Raw string
	// Old and New are the line's numbers in the old and new file (0 when it
	// has none on that side; only hunk body lines have numbers).
	Old, New int
}

// Text is Raw without the one-character prefix of a hunk body line.
func (l Line) Text() string {
	switch l.Kind {
	case Context, Added, Removed:
		if l.Raw != "" {
			return l.Raw[1:]
		}
	}
	return l.Raw
}

// Status is what a file diff does to its file.
type Status uint8

// The statuses, from the headers (Modified when nothing says otherwise).
const (
	Modified Status = iota
	Created
	Deleted
	Renamed
	Copied
)

// File is what the headers and hunks say about one file. Names are agent
// text, best effort (quoted git names are unquoted, "a/"/"b/" stripped):
// sanitise them before showing them.
type File struct {
	OldName, NewName string
	Status           Status
	Binary           bool
	Added, Removed   int
}

// Diff is a parsed unified diff.
type Diff struct {
	Lines []Line
	Files []File
	// Problems says, in words and by input line number, what could not be
	// parsed or did not add up; such text is kept as Plain lines.
	Problems []string
	// Raw is set when the input is not a unified diff at all: every line is
	// Plain and is shown as it is.
	Raw bool
	// CRLF is set when every line ended in "\r\n"; Raw texts are then
	// without the "\r". (A "\r" at the end of only some lines is kept, and
	// shown escaped.)
	CRLF bool
}

// Stats counts the files and the added and removed lines.
func Stats(d *Diff) (files, added, removed int) {
	if d == nil {
		return 0, 0, 0
	}
	for _, f := range d.Files {
		added += f.Added
		removed += f.Removed
	}
	return len(d.Files), added, removed
}

// hunkRE matches a hunk header; counts default to 1 when absent.
var hunkRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)
})

// Parse reads a unified diff (git or plain "diff -u" style, any number of
// files). It never fails on bad input and never drops text: what it cannot
// parse becomes Plain lines, named in Problems. The Diff is never nil; the
// error is non-nil exactly when there are Problems, and only summarises them.
func Parse(text string) (*Diff, error) {
	p := &parser{d: &Diff{}, runStart: -1}
	p.lines, p.d.CRLF = splitLines(text)
	p.d.Lines = make([]Line, 0, len(p.lines))
	for p.i < len(p.lines) {
		p.step()
	}
	p.flushRun()
	if len(p.d.Files) == 0 && len(p.lines) > 0 {
		p.d.Raw = true
		p.d.Problems = []string{"not a unified diff: shown as raw text"}
	}
	if p.d.CRLF {
		p.d.Problems = append(p.d.Problems, `every line ends in CRLF: shown without the "\r"`)
	}
	if len(p.d.Problems) > 0 {
		return p.d, fmt.Errorf("diff: %s", strings.Join(p.d.Problems, "; "))
	}
	return p.d, nil
}

// splitLines splits at "\n"; when every terminated line ends in "\r" the
// "\r"s go too.
func splitLines(text string) ([]string, bool) {
	if text == "" {
		return nil, false
	}
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	terminated := strings.Count(text, "\n")
	crlf := terminated > 0
	for _, l := range lines[:terminated] {
		if !strings.HasSuffix(l, "\r") {
			crlf = false
			break
		}
	}
	if crlf {
		for i := range lines[:terminated] {
			lines[i] = strings.TrimSuffix(lines[i], "\r")
		}
	}
	return lines, crlf
}

type parser struct {
	d     *Diff
	lines []string
	i     int // next line

	file      *File // current file, nil before the first
	gitHeader bool  // after "diff --git", before "---"/"@@"
	hasPair   bool  // current file has had its "---"/"+++" pair or a hunk
	binary    bool  // inside a "GIT binary patch" payload
	runStart  int   // first line of the current run of stray Plain lines, or -1
}

func (p *parser) add(k Kind, old, new int) {
	p.d.Lines = append(p.d.Lines, Line{Kind: k, Raw: p.lines[p.i], Old: old, New: new})
	p.i++
}

func (p *parser) problem(format string, args ...any) {
	p.d.Problems = append(p.d.Problems, fmt.Sprintf(format, args...))
}

// stray keeps a line that belongs nowhere as Plain; runs of them are
// reported together.
func (p *parser) stray() {
	if p.runStart < 0 {
		p.runStart = p.i
	}
	p.add(Plain, 0, 0)
}

func (p *parser) flushRun() {
	if p.runStart < 0 {
		return
	}
	if first, last := p.runStart+1, p.i; first == last {
		p.problem("line %d: text outside the diff", first)
	} else {
		p.problem("lines %d-%d: text outside the diff", first, last)
	}
	p.runStart = -1
}

func (p *parser) newFile() {
	p.d.Files = append(p.d.Files, File{})
	p.file = &p.d.Files[len(p.d.Files)-1]
	p.gitHeader, p.hasPair, p.binary = false, false, false
}

// next is the line after the current one ("" at the end).
func (p *parser) next() string {
	if p.i+1 < len(p.lines) {
		return p.lines[p.i+1]
	}
	return ""
}

// step consumes at least one line outside any hunk.
func (p *parser) step() {
	l := p.lines[p.i]
	nextLine := p.next()
	isDiff := strings.HasPrefix(l, "diff --git ") ||
		(strings.HasPrefix(l, "diff ") && strings.HasPrefix(nextLine, "--- "))
	switch {
	case isDiff:
		p.flushRun()
		p.newFile()
		if rest, ok := strings.CutPrefix(l, "diff --git "); ok {
			p.gitHeader = true
			p.file.OldName, p.file.NewName = gitNames(rest)
		}
		p.add(FileHeader, 0, 0)
	case strings.HasPrefix(l, "--- ") && strings.HasPrefix(nextLine, "+++ "):
		p.flushRun()
		if p.file == nil || p.hasPair {
			p.newFile()
		}
		p.gitHeader, p.hasPair = false, true
		p.fileNames(strings.TrimPrefix(l, "--- "), strings.TrimPrefix(nextLine, "+++ "))
		p.add(FileHeader, 0, 0)
		p.add(FileHeader, 0, 0)
	case strings.HasPrefix(l, "@@"):
		p.flushRun()
		if !p.hunk() {
			p.problem("line %d: malformed hunk header", p.i+1)
			p.add(Plain, 0, 0)
		}
	case p.gitHeader:
		p.flushRun()
		if !p.extendedHeader(l) {
			p.problem("line %d: unrecognised file header line", p.i+1)
			p.add(Plain, 0, 0)
			return
		}
		p.add(FileHeader, 0, 0)
	case strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ"):
		p.flushRun()
		p.newFile()
		p.file.Binary = true
		p.add(FileHeader, 0, 0)
	case p.binary:
		p.add(Plain, 0, 0) // base85 payload: part of the diff, nothing to report
	default:
		p.stray()
	}
}

// extendedHeader notes what a git extended header line says; false when
// the line is not one.
func (p *parser) extendedHeader(l string) bool {
	f := p.file
	cut := func(prefix string) (string, bool) {
		if strings.HasPrefix(l, prefix) {
			return unquote(l[len(prefix):]), true
		}
		return "", false
	}
	if v, ok := cut("rename from "); ok {
		f.OldName, f.Status = v, Renamed
	} else if v, ok := cut("rename to "); ok {
		f.NewName, f.Status = v, Renamed
	} else if v, ok := cut("copy from "); ok {
		f.OldName, f.Status = v, Copied
	} else if v, ok := cut("copy to "); ok {
		f.NewName, f.Status = v, Copied
	} else if strings.HasPrefix(l, "new file mode ") {
		f.Status, f.OldName = Created, ""
	} else if strings.HasPrefix(l, "deleted file mode ") {
		f.Status, f.NewName = Deleted, ""
	} else if strings.HasPrefix(l, "GIT binary patch") {
		f.Binary, p.binary, p.gitHeader = true, true, false
	} else if strings.HasPrefix(l, "Binary files ") {
		f.Binary = true
	} else {
		for _, h := range []string{"index ", "old mode ", "new mode ", "similarity index ", "dissimilarity index "} {
			if strings.HasPrefix(l, h) {
				return true
			}
		}
		return false
	}
	return true
}

// fileNames takes the names from a "---"/"+++" pair; /dev/null marks a
// created or deleted file.
func (p *parser) fileNames(old, new string) {
	f := p.file
	old, new = pathOf(old), pathOf(new)
	switch {
	case old == "/dev/null":
		f.Status, f.OldName, f.NewName = Created, "", stripAB(new)
	case new == "/dev/null":
		f.Status, f.OldName, f.NewName = Deleted, stripAB(old), ""
	default:
		if f.Status != Renamed && f.Status != Copied {
			f.OldName, f.NewName = stripAB(old), stripAB(new)
		}
	}
}

// hunk parses a hunk header and its body; false (consuming nothing) when
// the header is malformed. The body is read strictly by the header's
// counts, as git does; a body that ends early is reported.
func (p *parser) hunk() bool {
	m := hunkRE().FindStringSubmatch(p.lines[p.i])
	if m == nil {
		return false
	}
	var n [4]int
	for k, s := range m[1:] {
		v := 1
		if s != "" {
			var err error
			if v, err = strconv.Atoi(s); err != nil || v > 1<<31-1 {
				return false
			}
		}
		n[k] = v
	}
	if p.file == nil {
		p.newFile()
	}
	p.gitHeader, p.hasPair, p.binary = false, true, false
	f := p.file
	header := p.i + 1
	p.add(HunkHeader, 0, 0)

	old, new := n[0], n[2]
	remOld, remNew := n[1], n[3]
	var gotOld, gotNew int
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		c := byte(' ') // an empty line is a context line whose space was lost
		if l != "" {
			c = l[0]
		}
		switch {
		case c == '\\' && p.d.Lines[len(p.d.Lines)-1].Kind != HunkHeader:
			p.add(NoNewline, 0, 0)
			continue
		case remOld == 0 && remNew == 0:
		case c == ' ' && remOld > 0 && remNew > 0:
			p.add(Context, old, new)
			old, new, remOld, remNew = old+1, new+1, remOld-1, remNew-1
			gotOld, gotNew = gotOld+1, gotNew+1
			continue
		case c == '-' && remOld > 0:
			p.add(Removed, old, 0)
			old, remOld, gotOld = old+1, remOld-1, gotOld+1
			f.Removed++
			continue
		case c == '+' && remNew > 0:
			p.add(Added, 0, new)
			new, remNew, gotNew = new+1, remNew-1, gotNew+1
			f.Added++
			continue
		}
		break
	}
	if remOld != 0 || remNew != 0 {
		p.problem("line %d: hunk header says -%d +%d lines, body has -%d +%d", header, n[1], n[3], gotOld, gotNew)
	}
	return true
}

// gitNames splits the names of a "diff --git a/x b/y" line, best effort:
// the line is ambiguous when names hold " b/".
func gitNames(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		if a, rest, ok := cutQuoted(s); ok {
			return stripAB(a), stripAB(unquote(strings.TrimPrefix(rest, " ")))
		}
	}
	if i := strings.Index(s, ` "b/`); i >= 0 {
		return stripAB(s[:i]), stripAB(unquote(s[i+1:]))
	}
	// "a/x b/x": the same name twice is the common case.
	if len(s)%2 == 1 {
		if h := len(s) / 2; s[h] == ' ' && stripAB(s[:h]) == stripAB(s[h+1:]) {
			return stripAB(s[:h]), stripAB(s[h+1:])
		}
	}
	if i := strings.Index(s, " b/"); i >= 0 {
		return stripAB(s[:i]), stripAB(s[i+1:])
	}
	return s, s
}

// pathOf drops the timestamp that plain diff puts after a tab, and unquotes.
func pathOf(s string) string {
	if !strings.HasPrefix(s, `"`) {
		if i := strings.IndexByte(s, '\t'); i >= 0 {
			s = s[:i]
		}
	}
	return unquote(s)
}

func stripAB(s string) string {
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

// unquote undoes git's C-style quoting of names; anything else is kept.
func unquote(s string) string {
	if a, rest, ok := cutQuoted(s); ok && rest == "" {
		return a
	}
	return s
}

// cutQuoted reads a leading C-quoted string (Go's escapes are a superset of
// git's, octal bytes included).
func cutQuoted(s string) (string, string, bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", s, false
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			v, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return "", s, false
			}
			return v, s[i+1:], true
		}
	}
	return "", s, false
}
