package shell

import (
	"fmt"
	"testing"
)

// A shell's own words: the options set and shopt take from them, the
// start-up files it runs, where its operands start, and what stops the
// reading (a word not certain, --version); sh -c reads its script by the
// same rule (shellStep).
func TestReadShellArgs(t *testing.T) {
	for line, want := range map[string]string{
		`bash -eP -o posix +O dotglob -c 'rm x'`:  "set=[-e -P -o posix] shopt=[-u dotglob] startup=false c=true s=false info=-1 rc=-1 unknown=-1 end=6",
		`bash --posix -lc 'rm x'`:                 "set=[-o posix] shopt=[] startup=true c=true s=false info=-1 rc=-1 unknown=-1 end=2",
		`bash --rcfile rc -O globstar -ic 'rm x'`: "set=[] shopt=[-s globstar] startup=true c=true s=false info=-1 rc=0 unknown=-1 end=5",
		`sh -s -- a b`:                            "set=[] shopt=[] startup=false c=false s=true info=-1 rc=-1 unknown=-1 end=2",
		`sh -e "$O" -c 'rm x'`:                    "set=[-e] shopt=[] startup=false c=false s=false info=-1 rc=-1 unknown=1 end=1",
		`bash --version -c 'rm x'`:                "set=[] shopt=[] startup=false c=false s=false info=0 rc=-1 unknown=-1 end=0",
		`sh +c script.sh`:                         "set=[] shopt=[] startup=false c=false s=false info=-1 rc=-1 unknown=-1 end=1",
		`sh -o`:                                   "set=[] shopt=[] startup=false c=false s=false info=-1 rc=-1 unknown=-1 end=1",
	} {
		s := parse(t, "echo "+line)
		ws := s.Commands[0].Words[2:] // the shell's words after its name
		r := ReadShellArgs(ws)
		got := fmt.Sprintf("set=%v shopt=%v startup=%v c=%v s=%v info=%d rc=%d unknown=%d end=%d",
			r.Set, r.Shopt, r.Startup, r.Command, r.Input, r.Info, r.RCFile, r.Unknown, r.End)
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", line, got, want)
		}
	}
}
