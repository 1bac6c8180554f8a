package shell

import (
	"reflect"
	"strings"
	"testing"
)

// TestReleaseReuse: a line parsed with the memory of released scripts
// reads as one parsed fresh, and a script not released is not changed
// by later parses.
func TestReleaseReuse(t *testing.T) {
	long := strings.Repeat("rm -f a b c | tee x; sudo -u bob sh -c 'ls -l; cat y' && find . -exec rm {} +\n", 100)
	lines := []string{long, "git status", "x=1; $x -rf /", long[:len(long)/3], "for f in *; do echo $f; done"}
	// What each line reads as, its Commands and their words copied out.
	snapshot := func(s *Script) []Command {
		var out []Command
		for _, c := range s.Commands {
			cc := *c
			cc.Words = append([]Word(nil), c.Words...)
			cc.stmt = nil
			out = append(out, cc)
		}
		return out
	}
	var want [][]Command
	var kept []*Script
	for _, l := range lines {
		s, err := Parse(l, Options{})
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		want = append(want, snapshot(s))
		kept = append(kept, s)
	}
	for round := 0; round < 3; round++ {
		for i := len(lines) - 1; i >= 0; i-- {
			s, err := Parse(lines[i], Options{})
			if err != nil {
				t.Fatalf("%q: %v", lines[i], err)
			}
			if got := snapshot(s); !reflect.DeepEqual(got, want[i]) {
				t.Errorf("round %d: line %d reads differently after released scripts", round, i)
			}
			s.Release()
			if s.Commands != nil {
				t.Errorf("a released script keeps its commands")
			}
		}
	}
	for i, s := range kept {
		if got := snapshot(s); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("line %d: a script not released changed after later parses", i)
		}
	}
	var none *Script
	none.Release() // a nil script (a line that did not parse) is fine
}
