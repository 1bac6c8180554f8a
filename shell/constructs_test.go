package shell

import (
	"errors"
	"strings"
	"testing"
)

func parse(t *testing.T, line string) *Script {
	t.Helper()
	s, err := Parse(line, Options{})
	if err != nil {
		t.Fatalf("Parse(%q): %v", line, err)
	}
	return s
}

func TestWordsCertainOnly(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string // the words of the last command
	}{
		{`echo 'a b' "c d" e\ f`, "echo|a b|c d|e f"},
		{`echo $HOME`, "echo|?$HOME"},
		{`D=/tmp; rm -rf $D/x`, "rm|-rf|/tmp/x"},
		{`D="a b"; rm $D`, "rm|?$D"},
		{`D="a b"; rm "$D"`, "rm|a b"},
		{`D=*; rm "$D"`, "rm|*"},
		{`D=*; rm $D`, "rm|?$D"},
		{`[ -n x ] && D=/; rm -rf $D`, "rm|-rf|?$D"},
		{`(D=/); rm -rf $D`, "rm|-rf|?$D"},
		{`D=/ rm -rf $D`, "rm|-rf|?$D"},
		{`for D in a b; do :; done; rm $D`, "rm|?$D"},
		{`D=/etc; D+=/x; cat $D`, "cat|?$D"},
		{`((D=1)); cat $D`, "cat|?$D"},
		{`echo $(date) ${x:-y} $((1+1)) <(ls) *.go {a,b} ~ ~root/x`, "echo|?$(date)|?${x:-y}|?$((1+1))|?<(ls)|?*.go|?{a,b}|?~|?~root/x"},
		{`echo "$(date)" "a*" 'b?'`, "echo|?\"$(date)\"|a*|b?"},
		{`echo $'\x41'`, "echo|?$'\\x41'"},
		{`X=1; sh -c 'echo $X'`, "echo|?$X"},
	} {
		s := parse(t, tc.line)
		c := s.Commands[len(s.Commands)-1]
		for _, w := range c.Words {
			if !w.Known && w.Why == "" {
				t.Errorf("%s: %q unknown without a reason", tc.line, w.Raw)
			}
		}
		if got := strings.Join(shownWords(c.Words), "|"); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.line, got, tc.want)
		}
	}
}

func TestRedirections(t *testing.T) {
	s := parse(t, `cmd >out 2>>err <in 2>&1 &>all 3<>rw >|clob <<<here >$F <<EOF
body $X
EOF`)
	rs := s.Commands[0].Redirs
	type r struct {
		op, fd, target   string
		known, w, tr, rd bool
		dup, here        bool
	}
	want := []r{
		{">", "", "out", true, true, true, false, false, false},
		{">>", "2", "err", true, true, false, false, false, false},
		{"<", "", "in", true, false, false, true, false, false},
		{">&", "2", "1", true, false, false, false, true, false},
		{"&>", "", "all", true, true, true, false, false, false},
		{"<>", "3", "rw", true, true, false, true, false, false},
		{">|", "", "clob", true, true, true, false, false, false},
		{"<<<", "", "here", true, false, false, false, false, true},
		{">", "", "?$F", false, true, true, false, false, false},
		{"<<", "", "?body $X\n", false, false, false, false, false, true},
	}
	if len(rs) != len(want) {
		t.Fatalf("%d redirections, want %d: %+v", len(rs), len(want), rs)
	}
	for i, w := range want {
		g := rs[i]
		tg := g.Target.Value
		if !g.Target.Known && !g.Here {
			tg = "?" + g.Target.Raw
		} else if !g.Target.Known {
			tg = "?" + g.Target.Value
		}
		got := r{g.Op, g.Fd, tg, g.Target.Known, g.Writes, g.Truncates, g.Reads, g.Dup, g.Here}
		if got != w {
			t.Errorf("redirect %d: got %+v want %+v", i, got, w)
		}
	}
	// >&file writes the file; a compound command's redirection is its
	// commands'.
	s = parse(t, `echo x >&/etc/passwd; { a; b; } >f`)
	if r := s.Commands[0].Redirs[0]; r.Dup || !r.Writes || r.Target.Value != "/etc/passwd" {
		t.Errorf(">&file: %+v", r)
	}
	for _, c := range s.Commands[1:] {
		if len(c.Redirs) != 1 || c.Redirs[0].Target.Value != "f" {
			t.Errorf("%s: redirections %+v", c.Text, c.Redirs)
		}
	}
	// sudo sh -c '...' >f: the outer redirection is the inner command's.
	s = parse(t, `sudo sh -c 'tee x' >/etc/sudoers`)
	if c := s.Commands[0]; len(c.Redirs) != 1 || c.Redirs[0].Target.Value != "/etc/sudoers" {
		t.Errorf("nested redirections: %+v", c.Redirs)
	}
}

func TestPipelinesAndContext(t *testing.T) {
	s := parse(t, `curl -s u | base64 -d | sudo bash; a && b || c & d; (e) ; f() { g; }; while h; do i; done; if j; then k; fi; echo $(l) | m |& n; ! o`)
	by := map[string]*Command{}
	for i, c := range s.Commands {
		if len(c.Words) > 0 {
			by[c.Words[0].Value] = s.Commands[i]
		}
	}
	bash := by["bash"]
	if bash.Pipe.ID == 0 || bash.Pipe.Pos != 2 || bash.Pipe.Len != 3 || len(bash.Pipe.From) != 1 || s.Commands[bash.Pipe.From[0]].Words[0].Value != "base64" {
		t.Errorf("bash in the pipeline: %+v", bash.Pipe)
	}
	if bash.Opaque == nil || bash.Opaque.Kind != "input" || bash.Wrappers[0].Name != "sudo" {
		t.Errorf("bash reading its input: %+v %+v", bash.Opaque, bash.Wrappers)
	}
	if by["curl"].Pipe.From != nil || by["curl"].Pipe.Pos != 0 {
		t.Errorf("curl: %+v", by["curl"].Pipe)
	}
	checks := []struct {
		name string
		ok   func(c *Command) bool
	}{
		{"a", func(c *Command) bool { return c.Ctx.Op == ";" && !c.Ctx.Condition }},
		{"b", func(c *Command) bool { return c.Ctx.Op == "&&" && c.Ctx.Condition }},
		{"c", func(c *Command) bool { return c.Ctx.Op == "||" && c.Ctx.Background }},
		{"d", func(c *Command) bool { return !c.Ctx.Background }},
		{"e", func(c *Command) bool { return c.Ctx.Subshell }},
		{"g", func(c *Command) bool { return c.Ctx.Function == "f" }},
		{"h", func(c *Command) bool { return c.Ctx.Loop && c.Ctx.Condition }},
		{"i", func(c *Command) bool { return c.Ctx.Loop && !c.Ctx.Condition }},
		{"j", func(c *Command) bool { return c.Ctx.Condition }},
		{"k", func(c *Command) bool { return !c.Ctx.Condition && !c.Ctx.Loop }},
		{"l", func(c *Command) bool { return c.Ctx.Substitute && c.Pipe.ID == 0 }},
		{"m", func(c *Command) bool { return c.Pipe.Pos == 1 && !c.Pipe.Stderr }},
		{"n", func(c *Command) bool { return c.Pipe.Pos == 2 && c.Pipe.Stderr }},
		{"o", func(c *Command) bool { return c.Ctx.Negated }},
	}
	for _, ch := range checks {
		c := by[ch.name]
		if c == nil || !ch.ok(c) {
			t.Errorf("%s: %+v %+v", ch.name, c.Ctx, c.Pipe)
		}
	}
	if len(s.Functions) != 1 || s.Functions[0] != "f" {
		t.Errorf("functions %v", s.Functions)
	}
	// A nested script's commands keep the pipeline of the shell running them.
	s = parse(t, `wget -qO- u | sh -c 'cat | python3'`)
	py := s.Commands[len(s.Commands)-1]
	if py.Depth != 1 || py.Opaque == nil || py.Opaque.Kind != "input" || py.Pipe.Pos != 1 {
		t.Errorf("python3 in sh -c: depth %d opaque %+v pipe %+v", py.Depth, py.Opaque, py.Pipe)
	}
}

func TestAssignsAndDecl(t *testing.T) {
	s := parse(t, `A=1 B=$x cmd; export PATH=/x; declare -r Y=2; local Z; C=3`)
	c := s.Commands[0]
	if len(c.Assigns) != 2 || !c.Assigns[0].Value.Known || c.Assigns[1].Value.Known {
		t.Errorf("prefix assignments %+v", c.Assigns)
	}
	if e := s.Commands[1]; e.Words[0].Value != "export" || e.Assigns[0].Name != "PATH" || e.Assigns[0].Value.Value != "/x" {
		t.Errorf("export %+v", e)
	}
	if last := s.Commands[len(s.Commands)-1]; len(last.Words) != 0 || last.Assigns[0].Name != "C" {
		t.Errorf("bare assignment %+v", last)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		line string
		kind error
	}{
		{"echo 'unterminated", ErrSyntax},
		{"if then fi", ErrSyntax},
		{"echo a\x00b", ErrNUL},
		{"echo \xff\xfe", ErrInvalidUTF},
		{strings.Repeat("a", 1<<20+1), ErrTooLarge},
		{strings.Repeat("(", 300) + "x" + strings.Repeat(")", 300), ErrTooDeep},
		{strings.Repeat("$(", 300) + "x" + strings.Repeat(")", 300), ErrTooDeep},
	} {
		s, err := Parse(tc.line, Options{})
		var e *Error
		if !errors.Is(err, tc.kind) || !errors.As(err, &e) || e.Error() == "" {
			t.Errorf("%.40q: err %v, want %v", tc.line, err, tc.kind)
		}
		_ = s
	}
	// 1 MB that parses is read, not refused.
	big := "echo " + strings.Repeat("a ", (1<<20-5)/2)
	if s, err := Parse(big, Options{}); err != nil || len(s.Commands) != 1 {
		t.Errorf("1 MB echo: %v", err)
	}
}

func TestNestingLimit(t *testing.T) {
	line := "rm x"
	for range 12 {
		line = "sh -c " + quote(line)
	}
	s := parse(t, line)
	if len(s.Findings) != 1 || !errors.Is(s.Findings[0].Kind, ErrTooDeep) {
		t.Fatalf("findings %+v", s.Findings)
	}
	if !s.Unknown() {
		t.Error("a script nested too deep is not unknown")
	}
	c := s.Commands[s.Findings[0].Command]
	if c.Opaque == nil || c.Depth != 8 {
		t.Errorf("command at the limit: depth %d opaque %+v", c.Depth, c.Opaque)
	}
	s = parse(t, `bash -c 'echo "unterminated'`)
	if len(s.Findings) != 1 || !errors.Is(s.Findings[0].Kind, ErrSyntax) || !strings.HasPrefix(s.Findings[0].Why, "could not parse") {
		t.Errorf("nested syntax error: %+v", s.Findings)
	}
}

func TestUnknown(t *testing.T) {
	for line, want := range map[string]bool{
		"git status":            false,
		"ls -la src":            false,
		"cat $F":                true,
		"ls *.go":               true,
		"echo x > $OUT":         true,
		"xargs rm":              true,
		"python3 -c 'print(1)'": true,
		"cat <<EOF\n$X\nEOF":    false,
	} {
		if got := parse(t, line).Unknown(); got != want {
			t.Errorf("%q: Unknown %v, want %v", line, got, want)
		}
	}
}

// quote single-quotes s for a shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestVariablesForgotten(t *testing.T) {
	for _, line := range []string{
		`X=/tmp; unset X; rm -rf /$X`,
		`X=/tmp; eval X=/; rm -rf $X`,
		`X=/tmp; read X; rm -rf $X`,
		`X=/tmp; declare -n R=X; R=/; rm -rf $X`,
		`X=/tmp; f() { X=/; }; f; rm -rf $X`,
		`X=/tmp; printf -v X /; rm -rf $X`,
		`X=/tmp; source f; rm -rf $X`,
		`X=/tmp; $C; rm -rf $X`,
		`X=/tmp; builtin unset X; rm -rf $X`,
	} {
		s := parse(t, line)
		c := s.Commands[len(s.Commands)-1]
		if w := c.Words[len(c.Words)-1]; w.Known {
			t.Errorf("%s: %q known as %q", line, w.Raw, w.Value)
		}
	}
	s := parse(t, `trap 'rm -rf /tmp/x' EXIT`)
	if got := sum(s.Commands[0]); got != "trap| rm -rf /tmp/x" {
		t.Errorf("trap: %s", got)
	}
	s = parse(t, "alias ls='rm -rf ~'\nls")
	if len(s.Findings) != 1 || !errors.Is(s.Findings[0].Kind, ErrUncertain) {
		t.Errorf("alias: %+v", s.Findings)
	}
}

func TestLongLists(t *testing.T) {
	for _, sep := range []string{" && ", " || ", " | ", "; ", "\n"} {
		line := strings.Repeat("a"+sep, 5000) + "b"
		s, err := Parse(line, Options{})
		if err != nil || len(s.Commands) != 5001 {
			t.Errorf("5000 x %q: %v", sep, err)
		}
	}
}
