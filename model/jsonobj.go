package model

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// JSONObject writes one JSON object with its keys in the order they are
// added, in Python's json.dumps spacing. String values go through the
// exact-bytes codec (invalid UTF-8 as \udcXX, which Python's json and
// DecodePayload read back as the same bytes) where encoding/json would
// substitute U+FFFD. The payload codec and every --json output use it.
type JSONObject struct {
	b strings.Builder
	n int
}

// NewJSONObject starts an empty object.
func NewJSONObject() *JSONObject { return &JSONObject{} }

func (o *JSONObject) key(k string) *JSONObject {
	if o.n == 0 {
		o.b.WriteByte('{')
	} else {
		o.b.WriteString(", ")
	}
	o.n++
	o.b.WriteString(quoteJSON(k))
	o.b.WriteString(": ")
	return o
}

// Raw adds a value that is already JSON.
func (o *JSONObject) Raw(k, raw string) *JSONObject {
	o.key(k).b.WriteString(raw)
	return o
}

// Str adds a string.
func (o *JSONObject) Str(k, v string) *JSONObject { return o.Raw(k, quoteJSON(v)) }

// OptStr adds a string, or null when it is empty.
func (o *JSONObject) OptStr(k, v string) *JSONObject {
	if v == "" {
		return o.Raw(k, "null")
	}
	return o.Str(k, v)
}

// Num adds a number (null if it is not finite).
func (o *JSONObject) Num(k string, v float64) *JSONObject { return o.Raw(k, formatFloat(v)) }

// OptNum adds a number, or null for nil.
func (o *JSONObject) OptNum(k string, v *float64) *JSONObject {
	if v == nil {
		return o.Raw(k, "null")
	}
	return o.Num(k, *v)
}

// Int adds an integer.
func (o *JSONObject) Int(k string, v int64) *JSONObject { return o.Raw(k, strconv.FormatInt(v, 10)) }

// Bool adds a boolean.
func (o *JSONObject) Bool(k string, v bool) *JSONObject { return o.Raw(k, strconv.FormatBool(v)) }

// Strs adds an array of strings (never null).
func (o *JSONObject) Strs(k string, vs []string) *JSONObject { return o.Raw(k, JSONStrings(vs)) }

// JSONStrings writes an array of strings on one line ([] when empty).
func JSONStrings(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = quoteJSON(v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// JSONObjects writes an array of objects on one line ([] when empty).
func JSONObjects(objs []*JSONObject) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = o.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// StrMap adds an object of strings, keys sorted.
func (o *JSONObject) StrMap(k string, m map[string]string) *JSONObject {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	inner := NewJSONObject()
	for _, name := range names {
		inner.Str(name, m[name])
	}
	return o.Obj(k, inner)
}

// Obj adds a nested object.
func (o *JSONObject) Obj(k string, v *JSONObject) *JSONObject { return o.Raw(k, v.String()) }

// String is the object's JSON text.
func (o *JSONObject) String() string {
	if o.n == 0 {
		return "{}"
	}
	return o.b.String() + "}"
}

// formatFloat writes a float the way Python's json module reads it back
// exactly (shortest round-trip form, always with a decimal point or exponent
// so Python reads a float); null when not finite.
func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
