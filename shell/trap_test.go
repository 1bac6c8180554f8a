package shell

import "testing"

// trap -- ACTION SIGNAL reads ACTION as trap ACTION SIGNAL does: the
// "--" that ends trap's options does not hide the action.
func TestTrapAfterDashDash(t *testing.T) {
	for _, line := range []string{`trap -- 'rm -rf /tmp/x' EXIT`, `trap 'rm -rf /tmp/x' EXIT`} {
		s := parse(t, line)
		if len(s.Commands) != 1 || sum(s.Commands[0]) != "trap| rm -rf /tmp/x" {
			t.Errorf("%s: %d commands, %s", line, len(s.Commands), sum(s.Commands[0]))
		}
		if w := s.Commands[0].Wrappers[0]; w.Name != "trap" || len(w.Args) != 1 || w.Args[0].Value != "EXIT" {
			t.Errorf("%s: wrapper %+v", line, w)
		}
	}
	for _, line := range []string{`trap -- - EXIT`, `trap -p`, `trap --`} {
		if s := parse(t, line); len(s.Commands) != 1 || s.Commands[0].Name().Value != "trap" {
			t.Errorf("%s: %+v", line, s.Commands)
		}
	}
}
