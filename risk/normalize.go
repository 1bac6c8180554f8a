package risk

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize returns the form of command that the patterns are matched
// against, as Hermes computes it: ANSI escape sequences stripped, NUL bytes
// removed, Unicode NFKC, backslash escapes undone (\x -> x, except before a
// newline), empty quote pairs (” and "") removed in one left-to-right pass,
// and lowercased like Python's str.lower. Invalid UTF-8 bytes become U+FFFD
// first (a Python str cannot hold them).
func Normalize(command string) string {
	s := strings.ToValidUTF8(command, "\uFFFD")
	s = stripANSI(s)
	s = strings.ReplaceAll(s, "\x00", "")
	s = norm.NFKC.String(s)
	s = unescape(s)
	s = removeEmptyQuotes(s)
	return pyLower(s)
}

// pyLower is Python's str.lower for matching purposes: Go's per-rune
// lowercasing plus the one unconditional full mapping Python applies,
// U+0130 (İ) -> "i" U+0307.
func pyLower(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}

// unescape undoes backslash escapes: a backslash followed by any character
// other than a newline is replaced by that character (Python's
// re.sub(r'\\([^\n])', r'\1', s): left to right, so "\\\\" becomes "\\").
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] != '\n' {
			i++ // keep the escaped character (or the first byte of it)
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeEmptyQuotes removes ” and "" pairs in a single left-to-right pass
// (Python's re.sub(r"”|\"\"", "", s)), so `'""'` leaves `”`.
func removeEmptyQuotes(s string) string {
	if !strings.Contains(s, "''") && !strings.Contains(s, `""`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if (s[i] == '\'' || s[i] == '"') && i+1 < len(s) && s[i+1] == s[i] {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// C0 and C1 codes used by the ANSI grammar.
const (
	esc   = 0x1b
	bel   = 0x07
	c1CSI = 0x9b // 8-bit CSI
	c1OSC = 0x9d // 8-bit OSC
	c1ST  = 0x9c // 8-bit string terminator
)

// stripANSI removes ECMA-48 escape sequences the way Hermes' strip_ansi
// does, trying at each ESC, in order: CSI (ESC [ params intermediates
// final), OSC (ESC ] ... ended by BEL or ESC \), DCS/SOS/PM/APC (ESC P, X, ^
// or _ ... ended by ESC \), an nF sequence (ESC, bytes 0x20-0x2f, a byte
// 0x30-0x7e) and a single Fp/Fe/Fs byte (0x30-0x7e). The 8-bit forms
// U+009B (CSI) and U+009D (OSC, ended by BEL or U+009C) are removed the same
// way, and any other C1 control U+0080-U+009F alone. An ESC that starts none
// of these stays. An unterminated string sequence falls back to the shorter
// forms, as the alternatives of Hermes' regular expression do.
//
// It runs in linear time: once a terminator search fails, later searches of
// the same kind are known to fail too.
func stripANSI(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == esc || (r >= 0x80 && r <= 0x9f) }) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	noBelOrST, noST, noC1End := false, false, false
	// after returns the index just past the first terminator at or after i,
	// or -1 (and records that none will be found later either).
	after := func(i int, bellOK, c1 bool, none *bool) int {
		if *none {
			return -1
		}
		for j := i; j < len(s); {
			r, n := utf8.DecodeRuneInString(s[j:])
			switch {
			case bellOK && r == bel:
				return j + 1
			case !c1 && r == esc && j+1 < len(s) && s[j+1] == '\\':
				return j + 2
			case c1 && r == c1ST:
				return j + n
			}
			j += n
		}
		*none = true
		return -1
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		end := -1
		switch {
		case r == esc && i+1 < len(s):
			j := i + 1
			c := s[j]
			switch {
			case c == '[':
				end = csiEnd(s, j+1)
			case c == ']':
				end = after(j+1, true, false, &noBelOrST)
			case c == 'P' || c == 'X' || c == '^' || c == '_':
				end = after(j+1, false, false, &noST)
			case c >= 0x20 && c <= 0x2f:
				for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
					j++
				}
				if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
					end = j + 1
				}
			}
			if end < 0 && c >= 0x30 && c <= 0x7e {
				end = i + 2 // single Fp/Fe/Fs byte, and the fallback of [ ] P X ^ _
			}
		case r == c1CSI:
			end = csiEnd(s, i+n)
		case r == c1OSC:
			end = after(i+n, true, true, &noC1End)
		}
		if end < 0 && r >= 0x80 && r <= 0x9f {
			end = i + n
		}
		if end < 0 {
			b.WriteString(s[i : i+n])
			end = i + n
		}
		i = end
	}
	return b.String()
}

// csiEnd returns the index just past a CSI body starting at i (parameter
// bytes 0x30-0x3f, intermediate bytes 0x20-0x2f, one final byte
// 0x40-0x7e), or -1 when there is no final byte.
func csiEnd(s string, i int) int {
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		return i + 1
	}
	return -1
}
