package agent

import (
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestQuoteArgs(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"ls", "-la", "/srv/app"}, "ls -la /srv/app"},
		{[]string{"rm", "-rf", "my dir"}, "rm -rf 'my dir'"},
		{[]string{"echo", "it's"}, `echo 'it'\''s'`},
		{[]string{"printf", "%s\n", ""}, "printf '%s\n' ''"},
		{[]string{"dd", "if=/dev/zero", "of=/tmp/x"}, "dd if=/dev/zero of=/tmp/x"},
		{[]string{"FOO=bar", "x=1"}, "'FOO=bar' x=1"},
		{[]string{"echo", "$HOME", "~", "*", "#c", "a;b", "`id`", "\x1b[2J", "\xff"},
			"echo '$HOME' '~' '*' '#c' 'a;b' '`id`' '\x1b[2J' '\xff'"},
		{[]string{"git", "push", "--force", "origin", "main"}, "git push --force origin main"},
	} {
		if got := QuoteArgs(c.argv); got != c.want {
			t.Errorf("QuoteArgs(%q) = %q, want %q", c.argv, got, c.want)
		}
		back, err := SplitQuoted(c.want)
		if err != nil || !reflect.DeepEqual(back, c.argv) {
			t.Errorf("SplitQuoted(%q) = %q, %v; want %q", c.want, back, err, c.argv)
		}
	}
}

// What the shell makes of a quoted line is the vector itself.
func TestQuoteArgsMeansTheVectorToAShell(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	argv := []string{"printf", "[%s]\n", "a b", "it's", "", "$HOME", "*", "x\ny", "\\n", "-e", "'", "''", "é\xff"}
	out, err := exec.Command("sh", "-c", QuoteArgs(argv)).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, a := range argv[2:] {
		want.WriteString("[" + a + "]\n")
	}
	if string(out) != want.String() {
		t.Fatalf("sh printed %q, want %q", out, want.String())
	}
}

func TestSplitQuotedRefusesWhatQuoteArgsNeverWrites(t *testing.T) {
	for _, line := range []string{
		"", " ", "ls  -la", " ls", "ls ", "ls\t-la", `echo "a b"`, "echo 'a", "echo $HOME", "ls *",
		"a;b", "echo a\\ b", "echo 'abc'", "'ls'", "FOO=bar ls", "ls\n", "echo 'a''b'",
	} {
		if argv, err := SplitQuoted(line); err == nil || !errors.Is(err, ErrNotCanonical) {
			t.Errorf("SplitQuoted(%q) = %q, %v; want ErrNotCanonical", line, argv, err)
		}
	}
}

func FuzzQuoteRoundTrip(f *testing.F) {
	f.Add("rm", "-rf", "my dir")
	f.Add("echo", "it's", "''")
	f.Add("a=b", "\x00", "\xff\n")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		argv := []string{a, b, c}
		line := QuoteArgs(argv)
		back, err := SplitQuoted(line)
		if err != nil || !reflect.DeepEqual(back, argv) {
			t.Fatalf("round trip of %q via %q: %q, %v", argv, line, back, err)
		}
	})
}
