package storage

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// encodeDetail is an audit event's detail as stored: the bytes
// json.Marshal(d) writes (keys sorted, HTML-safe escaping, invalid UTF-8 as
// U+FFFD), written by hand for the values transitions put there (strings,
// booleans, numbers) and by json.Marshal for anything else. An event's hash
// covers these bytes as stored, so VerifyAudit never re-encodes them; the
// hand-written form stays byte-identical to json.Marshal's all the same
// (auditjson_test.go), so events read the same whichever wrote them.
func encodeDetail(d map[string]any) (string, error) {
	if len(d) == 0 {
		return "", nil
	}
	var keyBuf [16]string
	keys := keyBuf[:0]
	for k, v := range d {
		switch x := v.(type) {
		case string, bool, int, int64:
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return marshalDetail(d) // json.Marshal's own error
			}
		default:
			return marshalDetail(d)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 64*len(keys))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		switch x := d[k].(type) {
		case string:
			b = appendJSONString(b, x)
		case bool:
			b = strconv.AppendBool(b, x)
		case int:
			b = strconv.AppendInt(b, int64(x), 10)
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case float64:
			b = appendJSONFloat(b, x)
		}
	}
	b = append(b, '}')
	return string(b), nil
}

func marshalDetail(d map[string]any) (string, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// appendJSONFloat is encoding/json's float64 form (ES6 number to string).
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json does.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const jsonHex = "0123456789abcdef"

// appendJSONString is encoding/json's string form with HTML escaping (what
// json.Marshal writes): ", \ and control bytes escaped (\b \f \n \r \t
// short), <, > and & as \u003c \u003e \u0026, U+2028 and U+2029 escaped,
// each byte of invalid UTF-8 as \ufffd.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', jsonHex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
