package model

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Agent strings are bytes, not always valid UTF-8, and the command that runs
// must be exactly the command that was pinned. encoding/json replaces invalid
// bytes with U+FFFD in both directions, so the string fields of the payload
// use this small codec instead. It follows Python's surrogateescape
// convention: an invalid byte 0xXY (0x80-0xFF) is written as the lone
// surrogate \udcXY, which Python's json module reads and writes unchanged,
// and a lone \udc80-\udcff is read back as that byte. Raw invalid bytes
// inside a JSON string are kept as they are.

var errBadString = errors.New("malformed JSON string")

// quoteJSON returns s as a JSON string literal, escaping controls, quotes,
// backslashes, C1 controls, bidi, zero-width and other invisible format
// characters (as \uXXXX), and invalid bytes as \udcXX.
func quoteJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b.WriteString(`\"`)
			case c == '\\':
				b.WriteString(`\\`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20 || c == 0x7f:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigit(c >> 4))
				b.WriteByte(hexDigit(c & 0xf))
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\udc`)
			b.WriteByte(hexDigit(c >> 4))
			b.WriteByte(hexDigit(c & 0xf))
			i++
			continue
		}
		if escapedRune(r) {
			// C1 controls, bidi, zero-width and other invisible format
			// characters (U+2028/U+2029 among them) as \uXXXX: the same
			// string, but a terminal showing the JSON cannot be fooled.
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				writeU(&b, r1)
				writeU(&b, r2)
			} else {
				writeU(&b, r)
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

func hexDigit(n byte) byte { return "0123456789abcdef"[n&0xf] }

func writeU(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigit(byte(r >> shift)))
	}
}

// plainJSON says whether in, a string literal's bytes inside its quotes,
// has nothing to unescape: they are then the string itself.
func plainJSON(in []byte) bool {
	for _, c := range in {
		if c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return true
}

// unquoteJSON decodes a JSON string literal (with its quotes), mapping lone
// \udc80-\udcff escapes back to raw bytes and keeping raw invalid bytes.
func unquoteJSON(lit []byte) (string, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", errBadString
	}
	in := lit[1 : len(lit)-1]
	if plainJSON(in) {
		return string(in), nil
	}
	var b strings.Builder
	b.Grow(len(in))
	for i := 0; i < len(in); {
		c := in[i]
		if c == '"' {
			return "", errBadString
		}
		if c != '\\' {
			if c < 0x20 {
				return "", errBadString
			}
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(in) {
			return "", errBadString
		}
		esc := in[i+1]
		i += 2
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r1, ok := hex4(in, i)
			if !ok {
				return "", errBadString
			}
			i += 4
			switch {
			case utf16.IsSurrogate(rune(r1)) && r1 < 0xdc00:
				// High surrogate: a valid pair needs a low one next.
				if r2, ok2 := hex4At(in, i); ok2 && r2 >= 0xdc00 && r2 <= 0xdfff {
					b.WriteRune(utf16.DecodeRune(rune(r1), rune(r2)))
					i += 6
				} else {
					b.WriteRune(utf8.RuneError)
				}
			case r1 >= 0xdc80 && r1 <= 0xdcff:
				b.WriteByte(byte(r1 & 0xff)) // surrogateescape
			case utf16.IsSurrogate(rune(r1)):
				b.WriteRune(utf8.RuneError)
			default:
				b.WriteRune(rune(r1))
			}
		default:
			return "", errBadString
		}
	}
	return b.String(), nil
}

// hex4 reads four hex digits at in[i:].
func hex4(in []byte, i int) (uint16, bool) {
	if i+4 > len(in) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(in[i:i+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	return uint16(v), true
}

// hex4At reads a \uXXXX escape at in[i:].
func hex4At(in []byte, i int) (uint16, bool) {
	if i+6 > len(in) || in[i] != '\\' || in[i+1] != 'u' {
		return 0, false
	}
	return hex4(in, i+2)
}

// UnquoteJSON decodes one JSON string literal (with its quotes) by the
// exact-bytes codec: \udc80-\udcff escapes back to raw bytes, raw invalid
// bytes kept.
func UnquoteJSON(lit []byte) (string, error) { return unquoteJSON(lit) }
