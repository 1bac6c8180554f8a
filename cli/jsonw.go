package cli

import (
	"math"
	"strconv"
	"strings"

	"github.com/approve-tui/approve-tui/model"
)

// object writes one JSON object with its keys in the order they are added.
// String values go through model.QuoteJSON, so agent bytes survive exactly
// (invalid UTF-8 as \udcXX, which Python's json and model.DecodePayload read
// back as the same bytes) where encoding/json would substitute U+FFFD.
type object struct {
	b strings.Builder
	n int
}

func newObject() *object { return &object{} }

func (o *object) key(k string) *object {
	if o.n == 0 {
		o.b.WriteByte('{')
	} else {
		o.b.WriteString(", ")
	}
	o.n++
	o.b.WriteString(model.QuoteJSON(k))
	o.b.WriteString(": ")
	return o
}

// Raw adds a value that is already JSON.
func (o *object) Raw(k, raw string) *object {
	o.key(k).b.WriteString(raw)
	return o
}

// Str adds a string.
func (o *object) Str(k, v string) *object { return o.Raw(k, model.QuoteJSON(v)) }

// OptStr adds a string, or null when it is empty.
func (o *object) OptStr(k, v string) *object {
	if v == "" {
		return o.Raw(k, "null")
	}
	return o.Str(k, v)
}

// Num adds a number (null if it is not finite).
func (o *object) Num(k string, v float64) *object { return o.Raw(k, jsonNum(v)) }

// OptNum adds a number, or null for nil.
func (o *object) OptNum(k string, v *float64) *object {
	if v == nil {
		return o.Raw(k, "null")
	}
	return o.Num(k, *v)
}

// Int adds an integer.
func (o *object) Int(k string, v int64) *object { return o.Raw(k, strconv.FormatInt(v, 10)) }

// Bool adds a boolean.
func (o *object) Bool(k string, v bool) *object { return o.Raw(k, strconv.FormatBool(v)) }

// Strs adds an array of strings (never null).
func (o *object) Strs(k string, vs []string) *object { return o.Raw(k, jsonStrings(vs)) }

// jsonStrings writes an array of strings on one line ([] when empty).
func jsonStrings(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = model.QuoteJSON(v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Obj adds a nested object.
func (o *object) Obj(k string, v *object) *object { return o.Raw(k, v.String()) }

// String is the object's JSON text.
func (o *object) String() string {
	if o.n == 0 {
		return "{}"
	}
	return o.b.String() + "}"
}

// jsonArray writes elements that are already JSON as an array, one per line;
// an empty array is [] (never null).
func jsonArray(elems []string) string {
	if len(elems) == 0 {
		return "[]"
	}
	return "[\n  " + strings.Join(elems, ",\n  ") + "\n]"
}

// jsonNum writes a float the way model's payload codec does: shortest
// round-trip form with a decimal point, null when not finite.
func jsonNum(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
