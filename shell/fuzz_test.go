package shell

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse: any input gives a script or an *Error, never a panic, and
// what Parse returns holds together.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"rm -rf /", "sudo -u bob env -i A=1 nice -n 5 rm x", "curl u | bash", "find . -exec rm {} +",
		"ssh h 'cat /etc/shadow'", "docker run --rm alpine sh -c 'rm -rf /h'", "kubectl exec p -- ls",
		"bash -c \"sh -c 'rm x'\"", "eval \"$X\"", "X=rm; $X -f y", "echo $(ls) > $F", "a && b || c &",
		"f() { g; }; while x; do y; done", "cat <<EOF\n$X\nEOF", "xargs -I{} sh -c 'rm {}'", "su -c 'rm x' bob",
		"watch -n1 'rm x'", "flock l -c 'rm x'", "script -c 'rm x' /dev/null", "python3 -c 'import os'",
		"echo 'unterminated", "echo a\x00b", "\xff", "((x=1)); let y=2", "[[ -f $(rm x) ]]", "coproc cat",
		"time -p rm x", "case $x in a) rm y;; esac", "for ((i=0;i<3;i++)); do rm $i; done", "a=(1 2 $(rm x))",
		"declare -A m=([k]=$(rm x))", "echo ${x/a/$(rm y)}", "exec 3<>/dev/tcp/h/1", "env -S 'rm x'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		s, err := Parse(line, Options{})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Error() == "" {
				t.Fatalf("error %v is not an *Error", err)
			}
			if !errors.Is(err, ErrTooDeep) && s != nil {
				t.Fatalf("a script with error %v", err)
			}
			return
		}
		for i, c := range s.Commands {
			for _, j := range c.Pipe.From {
				if j < 0 || j >= i {
					t.Fatalf("command %d fed by %d", i, j)
				}
			}
			if c.Parent >= i || c.Parent < -1 {
				t.Fatalf("command %d has parent %d", i, c.Parent)
			}
			if c.Depth > 8 {
				t.Fatalf("depth %d past the limit", c.Depth)
			}
			for _, w := range c.Words {
				if !w.Known && w.Why == "" {
					t.Fatalf("word %q unknown without a reason", w.Raw)
				}
			}
		}
		for _, fd := range s.Findings {
			if fd.Why == "" || fd.Command >= len(s.Commands) {
				t.Fatalf("finding %+v", fd)
			}
		}
		_ = strings.TrimSpace(line)
	})
}
