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
	walk(s, mode, func(text string, _ bool) { b.WriteString(text) })
	return b.String()
}

// SanitizeSegments is Sanitize split into plain and escaped runs.
func SanitizeSegments(s string, mode SanitizeMode) []Segment {
	var segs []Segment
	var cur strings.Builder
	curEsc := false
	walk(s, mode, func(text string, esc bool) {
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
	note := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			note("invalid UTF-8")
		case r == 0x1b:
			note("escape sequence")
		case r == '\n' || r == '\t':
		case r == '\r':
			note("carriage return")
		case r < 0x20 || r == 0x7f:
			note("control character")
		case r >= 0x80 && r <= 0x9f:
			note("C1 control character")
		case isBidi(r):
			note("bidirectional override")
		case isZeroWidth(r):
			note("zero-width character")
		case needsEscape(r):
			note("invisible format character")
		}
		i += size
	}
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

func walk(s string, mode SanitizeMode, emit func(string, bool)) {
	col := 0
	start := 0
	flush := func(end int) {
		if end > start {
			emit(s[start:end], false)
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var rep string
		plain := false
		switch {
		case r == utf8.RuneError && size == 1:
			rep = fmt.Sprintf(`\x%02x`, s[i])
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
		case r < 0x20 || r == 0x7f:
			rep = fmt.Sprintf(`\x%02x`, r)
		case r >= 0x20 && r < 0x7f:
			// printable ASCII: the common case
		case escapedRune(r):
			rep = fmt.Sprintf("<U+%04X>", r)
		}
		if rep != "" {
			flush(i)
			emit(rep, !plain)
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

func escapedSlow(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || isBidi(r) || isZeroWidth(r) || needsEscape(r)
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
