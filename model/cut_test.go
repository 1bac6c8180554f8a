package model

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutRunes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"}, {"abcd", 3, "ab…"}, {"héllo wörld", 5, "héll…"}, {"", 1, ""}, {"ab", 1, "…"}, {"ab", 0, ""},
	} {
		if got := CutRunes(tc.in, tc.n); got != tc.want {
			t.Errorf("CutRunes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	if got := CutRunes(strings.Repeat("é", 400), 300); utf8.RuneCountInString(got) != 300 || !utf8.ValidString(got) {
		t.Errorf("%d runes", utf8.RuneCountInString(got))
	}
}
