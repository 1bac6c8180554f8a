package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/human"
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

// nLines is n lines in words: "1 line", "18 lines".
func nLines(n int) string { return fmt.Sprintf("%d %s", n, human.Plural(n, "line", "lines")) }

// moreBelow is the marker of a pane whose lines go on below it, n of them
// not shown (hiddenBelow): "▼ 18 more lines below".
func moreBelow(n int) string {
	return fmt.Sprintf("▼ %d more %s below", n, human.Plural(n, "line", "lines"))
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
