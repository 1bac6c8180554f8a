package model

import "unicode/utf8"

// CutRunes cuts s to at most n runes, the last being "…" when cut (n of
// at least 1). It counts runes, not terminal cells: for text bounded by
// size (a page, a field of the detail), not laid out to a width.
func CutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}
