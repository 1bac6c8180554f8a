package shell

import (
	"errors"
	"strings"
	"testing"
)

// TestHugeLines: a line of 1 MiB of each kind is read or refused, without
// a crash.
func TestHugeLines(t *testing.T) {
	for _, unit := range []string{"a&&", "a|", "a;", "$(a)", "'x'", "{ a;}", "x=$y ", "sh -c a ", "find -exec a ; "} {
		line := strings.Repeat(unit, (1<<20)/len(unit))
		line = strings.TrimRight(line, "&|; ")
		s, err := Parse(line, Options{})
		var e *Error
		if err != nil && !errors.As(err, &e) || err == nil && len(s.Commands) == 0 {
			t.Errorf("%q x %d: %v", unit, (1<<20)/len(unit), err)
		}
	}
}
