package model

import "errors"

// A small strict scanner for the one shape payload_json has: a JSON object
// whose values are read lazily by key. It replaces encoding/json's
// reflection-driven map decoding on the hot path (listing hundreds of rows)
// and keeps raw value bytes for the exact-bytes string codec.

type jsonMember struct {
	key []byte // unescaped; a slice of the scanned data when it had no escape
	raw []byte
}

var errJSON = errors.New("malformed JSON")

// scanObject splits a JSON object into its members (in order; a repeated key
// appears twice and the later one wins, as in Python). Anything that is not
// exactly one well-formed JSON object, surrounded only by whitespace, fails.
// The members are appended to buf (which may be nil).
func scanObject(data []byte, buf []jsonMember) ([]jsonMember, error) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errJSON
	}
	members, end, err := objectMembers(data, i, buf)
	if err != nil {
		return nil, err
	}
	if skipWS(data, end) != len(data) {
		return nil, errTrailing
	}
	return members, nil
}

var errTrailing = errors.New("trailing data after the JSON object")

// ObjectMembers calls fn with each member of the JSON object data, in
// order (a repeated key each time): its key, unescaped, and its value's raw
// bytes. It fails, before calling fn, on anything that is not exactly one
// well-formed JSON object surrounded only by whitespace.
func ObjectMembers(data []byte, fn func(key, raw []byte)) error {
	var buf [16]jsonMember
	members, err := scanObject(data, buf[:0])
	if err != nil {
		return err
	}
	for _, m := range members {
		fn(m.key, m.raw)
	}
	return nil
}

// objectMembers parses the object starting at data[i] == '{' and returns its
// members, appended to buf (which may be nil), and the index after the
// closing brace.
func objectMembers(data []byte, i int, buf []jsonMember) ([]jsonMember, int, error) {
	members := buf
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return members, i + 1, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, 0, errJSON
		}
		kend, err := skipString(data, i)
		if err != nil {
			return nil, 0, err
		}
		key, err := memberKey(data[i:kend])
		if err != nil {
			return nil, 0, err
		}
		i = skipWS(data, kend)
		if i >= len(data) || data[i] != ':' {
			return nil, 0, errJSON
		}
		i = skipWS(data, i+1)
		vend, err := skipValue(data, i, 0)
		if err != nil {
			return nil, 0, err
		}
		members = append(members, jsonMember{key: key, raw: data[i:vend]})
		i = skipWS(data, vend)
		if i >= len(data) {
			return nil, 0, errJSON
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			return members, i + 1, nil
		default:
			return nil, 0, errJSON
		}
	}
}

// memberKey is the string literal lit unescaped: lit's own bytes inside
// the quotes when it has no escape (unquoteJSON's plain case, without
// copying them), unquoteJSON's result otherwise.
func memberKey(lit []byte) ([]byte, error) {
	if len(lit) >= 2 && lit[0] == '"' && lit[len(lit)-1] == '"' && plainJSON(lit[1:len(lit)-1]) {
		return lit[1 : len(lit)-1], nil
	}
	s, err := unquoteJSON(lit)
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

func skipWS(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string literal at data[i] == '"'.
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '\\':
			j++
		case c == '"':
			return j + 1, nil
		case c < 0x20:
			return 0, errJSON
		}
	}
	return 0, errJSON
}

const maxJSONDepth = 64

// skipValue returns the index after the JSON value at data[i].
func skipValue(data []byte, i, depth int) (int, error) {
	if i >= len(data) || depth > maxJSONDepth {
		return 0, errJSON
	}
	switch c := data[i]; {
	case c == '"':
		return skipString(data, i)
	case c == '{':
		j := skipWS(data, i+1)
		if j < len(data) && data[j] == '}' {
			return j + 1, nil
		}
		for {
			if j >= len(data) || data[j] != '"' {
				return 0, errJSON
			}
			k, err := skipString(data, j)
			if err != nil {
				return 0, err
			}
			j = skipWS(data, k)
			if j >= len(data) || data[j] != ':' {
				return 0, errJSON
			}
			if j, err = skipValue(data, skipWS(data, j+1), depth+1); err != nil {
				return 0, err
			}
			j = skipWS(data, j)
			if j < len(data) && data[j] == ',' {
				j = skipWS(data, j+1)
				continue
			}
			if j < len(data) && data[j] == '}' {
				return j + 1, nil
			}
			return 0, errJSON
		}
	case c == '[':
		j := skipWS(data, i+1)
		if j < len(data) && data[j] == ']' {
			return j + 1, nil
		}
		for {
			var err error
			if j, err = skipValue(data, j, depth+1); err != nil {
				return 0, err
			}
			j = skipWS(data, j)
			if j < len(data) && data[j] == ',' {
				j = skipWS(data, j+1)
				continue
			}
			if j < len(data) && data[j] == ']' {
				return j + 1, nil
			}
			return 0, errJSON
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(data, i)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
				return i + len(lit), nil
			}
		}
		return 0, errJSON
	}
}

// skipNumber checks JSON number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func skipNumber(data []byte, i int) (int, error) {
	digits := func(j int) int {
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		return j
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(i)
	default:
		return 0, errJSON
	}
	if i < len(data) && data[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, errJSON
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, errJSON
		}
		i = j
	}
	return i, nil
}

// arrayElements splits the JSON array data (data[0] == '[') into its
// elements' raw bytes; data must be exactly the array.
func arrayElements(data []byte) ([][]byte, error) {
	var out [][]byte
	i := skipWS(data, 1)
	if i < len(data) && data[i] == ']' {
		if skipWS(data, i+1) != len(data) {
			return nil, errJSON
		}
		return out, nil
	}
	for {
		end, err := skipValue(data, i, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, data[i:end])
		i = skipWS(data, end)
		if i >= len(data) {
			return nil, errJSON
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case ']':
			if skipWS(data, i+1) != len(data) {
				return nil, errJSON
			}
			return out, nil
		default:
			return nil, errJSON
		}
	}
}
