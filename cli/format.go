package cli

import (
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/charmbracelet/x/ansi"
)

// line sanitises an agent string for one line of output.
func line(s string) string { return model.Sanitize(s, model.Line) }

// block sanitises an agent string shown as several lines.
func block(s string) string { return model.Sanitize(s, model.Block) }

// absTime formats epoch seconds as UTC.
func absTime(sec float64) string {
	return model.FromEpoch(sec).UTC().Format("2006-01-02T15:04:05Z")
}

// relTime says "in 4m12s" or "2m10s ago".
func relTime(sec float64, now time.Time) string {
	return human.Relative(model.FromEpoch(sec), now)
}

// when is the relative time followed by the absolute one.
func when(sec float64, now time.Time) string {
	return relTime(sec, now) + " (" + absTime(sec) + ")"
}

// cells is the display width of terminal-safe text, as the terminal
// lays it out: wide runes take two cells, combining marks none, styles
// none.
func cells(s string) int { return ansi.StringWidth(s) }

// cut shortens terminal-safe text to at most w cells, ending with a
// visible ellipsis when anything was cut.
func cut(s string, w int) string { return ansi.Truncate(s, w, "…") }

// pad fills terminal-safe text with spaces to w cells.
func pad(s string, w int) string {
	if n := cells(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// indent prefixes every line of s after the first with prefix.
func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// wrapProse wraps each line of s that is wider than width cells at its
// spaces, never inside a word: an id, a path or a hash stays whole (a word
// too wide for its column goes on a line of its own, from the left edge).
// A wrapped line's
// continuation is indented to where its value starts, so that columns
// ("risk reason:   …", "ok  plugin  …") stay columns. s is terminal-safe
// text (sanitised; it may hold approve-tui's own styles, which take no
// room). Lines holding a tab are left alone: their width is the terminal's.
func wrapProse(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		if ansi.StringWidth(body) <= width || strings.ContainsRune(body, '\t') {
			b.WriteString(l)
			continue
		}
		b.WriteString(wrapLine(body, width))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// wrapLine wraps one line wider than width (see wrapProse).
func wrapLine(s string, width int) string {
	at := hangingIndent(s, width)
	// The prefix (up to the hanging indent) stays as it is; the rest is
	// laid out word by word.
	prefix, rest := splitAtCell(s, at)
	pad := strings.Repeat(" ", at)
	var b strings.Builder
	b.WriteString(prefix)
	col, first := at, true
	for _, w := range strings.Split(rest, " ") {
		ww := ansi.StringWidth(w)
		switch {
		case first && at+ww > width && at > 0:
			first = false
			b.WriteString("\n" + w)
			col = width
		case first:
			b.WriteString(w)
			col += ww
			first = false
		case col+1+ww <= width:
			b.WriteString(" " + w)
			col += 1 + ww
		case w == "":
			// A run of spaces at the break: dropped with the break.
		case at+ww > width:
			// Too wide for the column: on a line of its own, from the
			// left edge, where the terminal cuts it least if at all.
			b.WriteString("\n" + w)
			col = width
		default:
			b.WriteString("\n" + pad + w)
			col = at + ww
		}
	}
	ls := strings.Split(b.String(), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(ls, "\n")
}

// hangingIndent is the column a wrapped line's continuation starts at:
// after the last run of two or more spaces in the line's first half (not
// its indent), else after a leading label ("note: ", "approve-tui: "),
// else two columns in from the line's indent.
func hangingIndent(s string, width int) int {
	limit := width / 2
	at, col, spaces := 0, 0, 0
	leading := true
	for _, r := range ansi.Strip(s) {
		if col >= limit {
			break
		}
		col += ansi.StringWidth(string(r))
		if r == ' ' {
			spaces++
			if spaces >= 2 && !leading {
				at = col
			}
			continue
		}
		leading, spaces = false, 0
	}
	if at > 0 {
		return at
	}
	plain := ansi.Strip(s)
	if m := leadingLabel().FindString(plain); m != "" && cells(m) < limit {
		return cells(m)
	}
	// Otherwise two columns in from the line's own indent, so that a
	// continuation does not read as a line of its own.
	return min(len(plain)-len(strings.TrimLeft(plain, " "))+2, limit)
}

// leadingLabel is a label that starts a line of prose: "note: ".
var leadingLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9 _-]{0,24}: `) })

// splitAtCell splits s after its first n cells (styles count none).
func splitAtCell(s string, n int) (string, string) {
	if n <= 0 {
		return "", s
	}
	for i := 1; i <= len(s); i++ {
		if ansi.StringWidth(s[:i]) >= n && (i == len(s) || utf8.RuneStart(s[i])) {
			return s[:i], s[i:]
		}
	}
	return s, ""
}
