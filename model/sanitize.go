package model

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Every string that came from an agent passes through this sanitiser before
// it is shown anywhere (invariant 7). Control characters, escape sequences,
// bidirectional controls, zero-width and other invisible format characters,
// line separators and invalid UTF-8 are replaced by a visible escape:
//
//	ESC          -> \x1b        (C0 controls and DEL as \xNN)
//	U+009B (CSI) -> <U+009B>    (C1 controls)
//	U+202E       -> <U+202E>    (bidi, zero-width, other format chars)
//	byte 0xff    -> \xff        (invalid UTF-8)
//
// Newline is kept in Block mode (multi-line heredocs read as lines) and tab
// expands to spaces there; in Line mode both are escaped too, so one row
// stays one row.

// SanitizeMode chooses how newlines and tabs are shown.
type SanitizeMode int

const (
	// Line keeps the result on one line: \n and \t are escaped.
	Line SanitizeMode = iota
	// Block keeps newlines and expands tabs to the next multiple of 4.
	Block
)

// Segment is a run of sanitised text; Escaped marks a visible escape that
// stands for something the agent sent, so renderers can set it apart.
type Segment struct {
	Text    string
	Escaped bool
}

// Sanitize returns s with everything unsafe made visible.
func Sanitize(s string, mode SanitizeMode) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	walk(s, mode, func(text string, _ bool, _ string) { b.WriteString(text) })
	return b.String()
}

// SanitizeSegments is Sanitize split into plain and escaped runs.
func SanitizeSegments(s string, mode SanitizeMode) []Segment {
	var segs []Segment
	var cur strings.Builder
	curEsc := false
	walk(s, mode, func(text string, esc bool, _ string) {
		if cur.Len() > 0 && esc != curEsc {
			segs = append(segs, Segment{Text: cur.String(), Escaped: curEsc})
			cur.Reset()
		}
		curEsc = esc
		cur.WriteString(text)
	})
	if cur.Len() > 0 {
		segs = append(segs, Segment{Text: cur.String(), Escaped: curEsc})
	}
	return segs
}

// Suspicious reports whether s holds anything the sanitiser must escape
// other than newlines and tabs: such a proposal is flagged.
func Suspicious(s string) bool {
	return len(Findings(s)) > 0
}

// Findings names each kind of hidden content in s, in order of first
// appearance (empty when s is clean).
func Findings(s string) []string {
	if isPlain(s) {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	walk(s, Block, func(_ string, _ bool, kind string) {
		if kind != "" && !seen[kind] {
			seen[kind] = true
			out = append(out, kind)
		}
	})
	return out
}

// isPlain is the fast path: printable ASCII only.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// maxCombining is how many combining marks in a row are drawn on one base
// character; more (a "Zalgo" flood that draws over other rows) are escaped.
const maxCombining = 2

// walk splits s into plain text and visible escapes. kind names what an
// escape stands for (a finding; "" for newlines and tabs escaped in Line
// mode, which are not hidden content).
func walk(s string, mode SanitizeMode, emit func(text string, escaped bool, kind string)) {
	col := 0
	start := 0
	marks := 0 // combining marks since the last base character
	// The word being walked through ends at wordEnd; wordMixed: it mixes
	// Latin with Cyrillic or Greek letters.
	wordEnd, wordMixed := 0, false
	flush := func(end int) {
		if end > start {
			emit(s[start:end], false, "")
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var rep, kind string
		plain := false
		if unicode.In(r, unicode.Mn, unicode.Me) {
			marks++
		} else {
			marks = 0
		}
		if i >= wordEnd && (r < 0x80 && isASCIILetter(byte(r)) || r >= 0x80 && unicode.IsLetter(r)) {
			wordEnd, wordMixed = mixedWord(s, i)
		}
		switch {
		case r >= 0x20 && r < 0x7f:
			// printable ASCII: the common case
		case r == utf8.RuneError && size == 1:
			rep, kind = fmt.Sprintf(`\x%02x`, s[i]), "invalid UTF-8"
		case r == '\n' && mode == Block:
			col = -1
		case r == '\t' && mode == Block:
			n := 4 - col%4
			rep, plain = strings.Repeat(" ", n), true
			col += n - 1
		case r == '\n':
			rep = `\n`
		case r == '\t':
			rep = `\t`
		case r == 0x1b:
			rep, kind = `\x1b`, "escape sequence"
		case r == '\r':
			rep, kind = fmt.Sprintf(`\x%02x`, r), "carriage return"
		case r < 0x20 || r == 0x7f:
			rep, kind = fmt.Sprintf(`\x%02x`, r), "control character"
		case escapedRune(r):
			rep, kind = fmt.Sprintf("<U+%04X>", r), escapeKind(r)
		case marks > maxCombining:
			rep, kind = fmt.Sprintf("<U+%04X>", r), "run of combining marks"
		case wordMixed && i < wordEnd && isLookalikeScript(r):
			rep, kind = fmt.Sprintf("<U+%04X>", r), "mixed-script word"
		}
		if rep != "" {
			flush(i)
			emit(rep, !plain, kind)
			start = i + size
			if !plain {
				col += len(rep) - 1
			}
		}
		col++
		i += size
	}
	flush(len(s))
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// mixedWord looks at the word (letters, marks and digits) starting at i and
// reports where it ends and whether it mixes Latin letters with Cyrillic or
// Greek ones: a look-alike ("pаypal" with a Cyrillic а) that reads as
// something it is not.
func mixedWord(s string, i int) (end int, mixed bool) {
	latin, other := false, false
	for end = i; end < len(s); {
		r, size := utf8.DecodeRuneInString(s[end:])
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Me)) {
			break
		}
		switch {
		case unicode.Is(unicode.Latin, r):
			latin = true
		case isLookalikeScript(r):
			other = true
		}
		end += size
	}
	return end, latin && other
}

func isLookalikeScript(r rune) bool {
	return unicode.In(r, unicode.Cyrillic, unicode.Greek)
}

// escapeKind names the finding of an escaped non-ASCII rune.
func escapeKind(r rune) string {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return "C1 control character"
	case isBidi(r):
		return "bidirectional override"
	case isZeroWidth(r):
		return "zero-width character"
	case isVariationSelector(r):
		return "variation selector"
	case r >= 0x1f3fb && r <= 0x1f3ff:
		return "emoji modifier"
	case r >= 0x1f1e6 && r <= 0x1f1ff:
		return "regional indicator"
	case isOddSpace(r):
		return "non-ASCII space"
	case unicode.Is(unicode.Me, r):
		return "enclosing mark"
	case isFullwidthASCII(r):
		return "fullwidth look-alike"
	}
	return "invisible format character"
}

// escapedRune reports whether a non-ASCII rune is shown as <U+XXXX>. The
// answers for the Basic Multilingual Plane are computed once, on first use.
func escapedRune(r rune) bool {
	if r < 0x10000 {
		escapeOnce.Do(func() {
			for c := rune(0x80); c < 0x10000; c++ {
				if escapedSlow(c) {
					escapeBMP[c>>6] |= 1 << (c & 63)
				}
			}
		})
		return escapeBMP[r>>6]&(1<<(r&63)) != 0
	}
	return escapedSlow(r)
}

var (
	escapeOnce sync.Once
	escapeBMP  [0x10000 / 64]uint64
)

// escapedSlow: C1 controls, bidi controls, zero-width and other invisible
// format characters, and the characters whose width terminals and this
// program may not agree on: variation selectors (VS15/VS16 switch a
// character between one and two cells on some terminals only), emoji
// skin-tone modifiers and regional indicators (drawn joined, or as two
// separate wide characters), enclosing marks (keycaps), and spaces other
// than the ASCII one.
func escapedSlow(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || isBidi(r) || isZeroWidth(r) || needsEscape(r) ||
		isVariationSelector(r) || (r >= 0x1f3fb && r <= 0x1f3ff) || (r >= 0x1f1e6 && r <= 0x1f1ff) ||
		isOddSpace(r) || unicode.Is(unicode.Me, r) || isFullwidthASCII(r)
}

// isFullwidthASCII: the fullwidth forms of ASCII letters, digits and
// punctuation (ｒｍ reads as rm, and is not).
func isFullwidthASCII(r rune) bool { return r >= 0xff01 && r <= 0xff5e }

func isVariationSelector(r rune) bool {
	return (r >= 0xfe00 && r <= 0xfe0f) || (r >= 0xe0100 && r <= 0xe01ef) || (r >= 0x180b && r <= 0x180d) || r == 0x180f
}

func isOddSpace(r rune) bool {
	return r == 0xa0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200a) || r == 0x202f || r == 0x205f || r == 0x3000
}

func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x200e || r == 0x200f || r == 0x061c
}

func isZeroWidth(r rune) bool {
	switch r {
	case 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x180e, 0x034f, 0x115f, 0x1160, 0x3164, 0xffa0:
		return true
	}
	return false
}

// needsEscape covers the rest: Unicode format characters (Cf, including tag
// characters and soft hyphens), line and paragraph separators and
// non-characters, which a terminal may render invisibly or oddly.
func needsEscape(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) ||
		(r >= 0xfdd0 && r <= 0xfdef) || r&0xfffe == 0xfffe ||
		(r >= 0xe0000 && r <= 0xe007f)
}

// TerminalSafe is the last guard before bytes reach a terminal: it keeps
// newlines, tabs and SGR sequences (colour and weight, as the program's own
// styles write them; never conceal, which hides text) and passes everything
// else through the sanitiser, so that no escape sequence, control, bidi or
// invisible character can reach the terminal raw even if a caller forgot to
// sanitise a string. It changes nothing in text that was sanitised.
func TerminalSafe(s string) string {
	if safeFast(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	start := 0
	flush := func(end int) {
		if end > start {
			chunk := s[start:end]
			for len(chunk) > 0 {
				i := strings.IndexAny(chunk, "\n\t")
				if i < 0 {
					b.WriteString(Sanitize(chunk, Line))
					break
				}
				b.WriteString(Sanitize(chunk[:i], Line))
				b.WriteByte(chunk[i])
				chunk = chunk[i+1:]
			}
		}
	}
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if n := sgrLen(s[i:]); n > 0 {
				flush(i)
				b.WriteString(s[i : i+n])
				i += n
				start = i
				continue
			}
		}
		i++
	}
	flush(len(s))
	return b.String()
}

// safeFast: printable ASCII, newlines and tabs only.
func safeFast(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// sgrLen is the length of the SGR sequence (ESC [ params m) at the start of
// s, or 0 when s does not start with one the guard lets through: only
// digits, ';' and ':' as parameters, and no conceal (8) among them.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	end := 2
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == ';' || s[end] == ':') {
		end++
	}
	if end >= len(s) || s[end] != 'm' || end-2 > 64 {
		return 0
	}
	params := strings.FieldsFunc(s[2:end], func(r rune) bool { return r == ';' || r == ':' })
	for i := 0; i < len(params); i++ {
		switch params[i] {
		case "38", "48", "58": // extended colour: 5;N or 2;R;G;B follow
			if i+1 < len(params) && params[i+1] == "5" {
				i += 2
			} else if i+1 < len(params) && params[i+1] == "2" {
				i += 4
			}
		case "8":
			return 0
		}
	}
	return end + 1
}
