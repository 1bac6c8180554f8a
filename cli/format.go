package cli

import (
	"strings"
	"time"
	"unicode"

	"github.com/approve-tui/approve-tui/model"
	"golang.org/x/text/width"
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
	d := model.FromEpoch(sec).Sub(now)
	if d >= 0 {
		return "in " + shortDur(d)
	}
	return shortDur(-d) + " ago"
}

// when is the relative time followed by the absolute one.
func when(sec float64, now time.Time) string {
	return relTime(sec, now) + " (" + absTime(sec) + ")"
}

// shortDur prints a duration compactly, to the second.
func shortDur(d time.Duration) string { return model.ShortDuration(d) }

// cells is the display width of already sanitised text: East Asian wide
// and fullwidth runes take two cells, combining marks none.
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

func runeCells(r rune) int {
	if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) {
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// cut shortens sanitised text to at most w cells, ending with a visible
// ellipsis when anything was cut.
func cut(s string, w int) string {
	if cells(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		c := runeCells(r)
		if used+c > w-1 {
			break
		}
		b.WriteRune(r)
		used += c
	}
	return b.String() + "…"
}

// pad fills sanitised text with spaces to w cells.
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
