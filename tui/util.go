package tui

import (
	"fmt"
	"github.com/approve-tui/approve-tui/model"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// padRight pads s with spaces to w cells (never cuts).
func padRight(s string, w int) string {
	if n := lipgloss.Width(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// fitWidth cuts s to w cells with a visible ellipsis, or pads it to w.
func fitWidth(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return padRight(s, w)
}

// wrapIndented lays value after prefix (of width indent) and wraps the rest
// of it under the value, never cutting anything.
func wrapIndented(prefix, value string, indent, width int) []string {
	avail := max(width-indent, 8)
	wrapped := strings.Split(ansi.Wrap(value, avail, ""), "\n")
	out := make([]string, len(wrapped))
	pad := strings.Repeat(" ", indent)
	for i, l := range wrapped {
		if i == 0 {
			out[i] = padRight(prefix, indent) + l
		} else {
			out[i] = pad + l
		}
	}
	return out
}

// plural is one when n is 1, else many: the grammar of every count the
// console says in words.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// nLines is n lines in words: "1 line", "18 lines".
func nLines(n int) string { return fmt.Sprintf("%d %s", n, plural(n, "line", "lines")) }

// moreBelow is the marker of a pane whose lines go on below it, n of them
// not shown (hiddenBelow): "▼ 18 more lines below".
func moreBelow(n int) string {
	return fmt.Sprintf("▼ %d more %s below", n, plural(n, "line", "lines"))
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// shortDur is a compact duration: 45s, 3m12s, 2h05m, 3d04h.
func shortDur(d time.Duration) string { return model.ShortDuration(d) }

// ago says how long before now t was ("just now" under a second): to the
// second under a minute, to the minute under a day (3m ago, 2h05m ago), to
// the hour beyond, as most consoles show an age. A countdown (shortDur)
// keeps its seconds for its last hour: how long is left is what a
// decision is made against, how long ago something happened is context.
func ago(t time.Time, now time.Time) string {
	d := now.Sub(t)
	if d < time.Second && d > -time.Second {
		return "just now"
	}
	if d < 0 {
		return "in " + ageText(-d)
	}
	return ageText(d) + " ago"
}

// ageText is d (not negative) as ago shows it.
func ageText(d time.Duration) string {
	if r := d.Round(time.Second); ageInMinutes(r) {
		return fmt.Sprintf("%dm", int(r.Minutes()))
	}
	return shortDur(d)
}

// ageInMinutes: an age r (rounded to the second) is shown to the minute
// where a duration would show seconds too (ageText, untilAgoChanges).
func ageInMinutes(r time.Duration) bool { return r >= time.Minute && r < time.Hour }
