package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every man page's synopsis, rendered by groff as man renders it, reads
// exactly as the usage lines of the command's --help: brackets, parentheses,
// quotes and ASCII hyphens kept ("[--timeout D] (-- COMMAND [ARGS...] |
// --shell 'LINE')" once rendered as ⟨-- COMMAND … | --shell⟩, the rest
// taken for a Markdown link and its title).
func TestManSynopsisIsTheUseLine(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is needed to render the man pages (apt-get install groff-base); roffText's rules are tested without it")
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := Execute([]string{"man", dir}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("man: exit %d: %s", code, errb.String())
	}
	root := newApp(strings.NewReader(""), &out, &errb).root()
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() && !s.IsAdditionalHelpTopicCommand() {
				walk(s)
			}
		}
		n++
		page := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		// As man -l renders it, on a line long enough for any synopsis,
		// without bold or underlining.
		cmd := exec.Command(groff, "-man", "-Tutf8", "-rLL=400n", "-P-cbou", page)
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
		text, err := cmd.Output()
		if err != nil {
			t.Fatalf("groff %s: %v", page, err)
		}
		_, after, ok := strings.Cut(string(text), "\nSYNOPSIS\n")
		syn, _, ok2 := strings.Cut(after, "\nDESCRIPTION\n")
		if !ok || !ok2 {
			t.Fatalf("%s: no SYNOPSIS then DESCRIPTION:\n%s", page, text)
		}
		// The use line --help prints: the first line under "Usage:".
		var help, herr bytes.Buffer
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		if code := Execute(args, strings.NewReader(""), &help, &herr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, herr.String())
		}
		_, usage, ok := strings.Cut(help.String(), "Usage:\n")
		if !ok {
			t.Fatalf("%v printed no usage:\n%s", args, help.String())
		}
		usage, _, _ = strings.Cut(usage, "\n\n")
		if got, want := lines(syn), lines(usage); got != want {
			t.Errorf("man %s: the synopsis reads\n  %q\nand --help\n  %q", filepath.Base(page), got, want)
		}
	}
	walk(root)
	entries, _ := os.ReadDir(dir)
	if n < 30 || len(entries) != n {
		t.Fatalf("%d commands, %d man pages", n, len(entries))
	}
}

// lines is s line by line, blank lines left out, the spaces in each line
// made one.
func lines(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// roffText keeps every character as it is once rendered: a backslash is
// no escape, a leading dot or quote no request, hyphens, quotes, ^ and ~
// are named so that a UTF-8 device does not draw typographic ones.
func TestRoffText(t *testing.T) {
	for in, want := range map[string]string{
		`run [flags] (-- CMD | --shell 'LINE')`: `\&run [flags] (\-\- CMD | \-\-shell \(aqLINE\(aq)`,
		`.TH x`:                                 `\&.TH x`,
		`a\fBb`:                                 `\&a\efBb`,
		"`x` \"y\" ^z ~w":                       `\&\(gax\(ga \(dqy\(dq \(haz \(tiw`,
	} {
		if got := roffText(in); got != want {
			t.Errorf("roffText(%q) = %q, want %q", in, got, want)
		}
	}
}

// The indented lines of --help (a table, an example, the exit codes) read
// line for line in the man page as man renders it on an 80-column terminal:
// not refilled, not broken mid-line, the block's first line kept in it.
func TestManDescriptionKeepsBlocks(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is needed to render the man pages (apt-get install groff-base)")
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := Execute([]string{"man", dir}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("man: exit %d: %s", code, errb.String())
	}
	root := newApp(strings.NewReader(""), &out, &errb).root()
	checked := 0
	for _, path := range [][]string{{"hook", "doctor"}, {"hook", "install"}, {"run"}, {"approve"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		cmd := exec.Command(groff, "-man", "-Tutf8", "-rLL=78n", "-P-cbou", page)
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
		text, err := cmd.Output()
		if err != nil {
			t.Fatalf("groff %s: %v", page, err)
		}
		rendered := map[string]bool{}
		for _, l := range strings.Split(string(text), "\n") {
			rendered[strings.Join(strings.Fields(l), " ")] = true
			if w := len([]rune(l)); w > 80 {
				t.Errorf("%s: a line of %d columns: %q", filepath.Base(page), w, l)
			}
		}
		for _, l := range strings.Split(c.Long, "\n") {
			if !strings.HasPrefix(l, "  ") || len(l) > 79 {
				continue
			}
			checked++
			if want := strings.Join(strings.Fields(l), " "); !rendered[want] {
				t.Errorf("%s: the --help line %q is not a line of the page", filepath.Base(page), l)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d indented lines checked", checked)
	}
}

// Every flag --help lists is in the man page's OPTIONS (or the options
// inherited), as man renders it: its name, its value's name and its text;
// the page names its parent's page and its commands' pages under SEE
// ALSO, and SOURCE_DATE_EPOCH dates the pages.
func TestManOptionsAndSeeAlso(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is needed to render the man pages (apt-get install groff-base)")
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1780000000") // 2026-05-28
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := Execute([]string{"man", dir}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("man: exit %d: %s", code, errb.String())
	}
	root := newApp(strings.NewReader(""), &out, &errb).root()
	for _, path := range [][]string{{}, {"hook"}, {"hook", "claude-code"}, {"run"}, {"policy", "set"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		c.InitDefaultHelpFlag()
		page := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		cmd := exec.Command(groff, "-man", "-Tutf8", "-rLL=4000n", "-P-cbou", page)
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("groff %s: %v", page, err)
		}
		text := lines(string(b))
		if !strings.Contains(text, "May 2026") {
			t.Errorf("%s is not dated by SOURCE_DATE_EPOCH:\n%s", filepath.Base(page), text)
		}
		_, opts, ok := strings.Cut(text, "\nOPTIONS\n")
		if !ok {
			t.Fatalf("%s: no OPTIONS:\n%s", filepath.Base(page), text)
		}
		for _, fs := range []*pflag.FlagSet{c.NonInheritedFlags(), c.InheritedFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if f.Hidden {
					return
				}
				varname, usage := pflag.UnquoteUsage(f)
				want := strings.TrimSpace("--" + f.Name + " " + varname)
				if f.Shorthand != "" {
					want = "-" + f.Shorthand + ", " + want
				}
				if !strings.Contains(opts, want) || !strings.Contains(opts, strings.Join(strings.Fields(usage), " ")) {
					t.Errorf("%s: the flag %q (%q) is not in its OPTIONS:\n%s", filepath.Base(page), want, usage, opts)
				}
			})
		}
		_, see, ok := strings.Cut(text, "\nSEE ALSO\n")
		if c.HasParent() {
			if parent := strings.ReplaceAll(c.Parent().CommandPath(), " ", "-") + "(1)"; !ok || !strings.Contains(see, parent) {
				t.Errorf("%s: SEE ALSO does not name %s:\n%s", filepath.Base(page), parent, see)
			}
		}
		for _, s := range c.Commands() {
			if sub := strings.ReplaceAll(s.CommandPath(), " ", "-") + "(1)"; s.IsAvailableCommand() && !strings.Contains(see, sub) {
				t.Errorf("%s: SEE ALSO does not name %s", filepath.Base(page), sub)
			}
		}
	}
}
