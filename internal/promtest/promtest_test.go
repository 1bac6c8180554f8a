package promtest

import (
	"strings"
	"testing"
)

func TestValue(t *testing.T) {
	text := `# TYPE c counter
c{a="1",b="2"} 3
c{a="1"} 4
c{a="1",b=""} 9
# TYPE g gauge
g 5
# TYPE h histogram
h_bucket{le="+Inf"} 6
h_sum 1
h_count 6
# TYPE u untyped
u 7
`
	fams, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
		ok     bool
	}{
		{"c", []string{"a", "1", "b", "2"}, 3, true},
		{"c", []string{"b", "2", "a", "1"}, 3, true},
		{"c", []string{"a", "1"}, 4, true},
		{"c", []string{"a", "2"}, 0, false},
		{"c", []string{"a", "1", "c", ""}, 0, false}, // c="" is not b=""
		{"c", nil, 0, false},
		{"g", nil, 5, true},
		{"h", nil, 6, true},
		{"u", nil, 7, true},
		{"missing", nil, 0, false},
	} {
		if got, ok := Value(fams, c.name, c.labels...); got != c.want || ok != c.ok {
			t.Errorf("Value(%s, %q) = %v %v, want %v %v", c.name, c.labels, got, ok, c.want, c.ok)
		}
	}
}
