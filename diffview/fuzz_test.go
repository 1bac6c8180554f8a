package diffview

import (
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// FuzzRender: whatever an agent sends, Parse keeps every byte of it and
// Render neither panics, nor overflows the width, nor lets anything but our
// own SGR styling reach the terminal, nor drops text.
func FuzzRender(f *testing.F) {
	for _, s := range []string{deploy, twoFiles, hostile, bigDiff(60),
		"", "\n", "@@ -1 +1 @@\n", "--- a\n+++ b\n@@ -1,2 +1 @@\n-\xff\n\\\n+漢字\u0301\n",
		"diff --git a/x b/x\nGIT binary patch\nliteral 0\n\n@@ -1 +1 @@\n-a\n+b\n",
		"@@ -1 +1 @@\n-\u2615\ufe0f x\n+\ufe0f\u0301🇺🇸🇫 x\n", "a\r\nb\r\n", "+\u0d4ea\n"} {
		f.Add(s, uint8(40))
	}
	ascii, colour := testStyles(termenv.Ascii), testStyles(termenv.ANSI256)
	f.Fuzz(func(t *testing.T, in string, w uint8) {
		width := MinWidth + int(w)%100
		d, _ := Parse(in)
		checkLossless(t, in, d)
		checkInert(t, Render(d, width, colour), width)
		plain := Render(d, width, ascii)
		checkInert(t, plain, width)
		// Nothing the lines hold is missing from the output (wrapping and
		// the gutter only add).
		have := map[rune]int{}
		for _, l := range plain {
			count(have, ansi.Strip(l), 1)
		}
		for _, l := range d.Lines {
			count(have, clean(l.Text()).s, -1)
		}
		for r, n := range have {
			if n < 0 {
				t.Fatalf("%d of %q missing from the output:\n%s", -n, r, strings.Join(plain, "\n"))
			}
		}
	})
}

// count adds sign for each rune of s that is not a space.
func count(m map[rune]int, s string, sign int) {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			m[r] += sign
		}
	}
}
