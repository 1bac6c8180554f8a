package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// wrapProse breaks lines at spaces only: every word comes out whole and in
// order, no line is wider than the width unless one word alone is, and a
// continuation starts at its line's value column.
func TestWrapProse(t *testing.T) {
	for _, c := range []struct {
		name, in string
		width    int
		want     string
	}{
		{"fits", "id:            emFPxa1MShBg", 80, "id:            emFPxa1MShBg"},
		{"field column", "policy:        needs_approval (version approve-tui/1), default deny, explicit approval true", 80,
			"policy:        needs_approval (version approve-tui/1), default deny, explicit\n               approval true"},
		{"a hash stays whole", "payload:       sha256 4a83568354cf715b1a7ae4a4a8dc54a414dcfb2317824a573e7a87bb02a5503a", 80,
			"payload:       sha256\n               4a83568354cf715b1a7ae4a4a8dc54a414dcfb2317824a573e7a87bb02a5503a"},
		{"doctor columns", "ok       timeout    approvals.timeout is not set (300s): an operator has 4m55s to decide", 60,
			"ok       timeout    approvals.timeout is not set (300s): an\n                    operator has 4m55s to decide"},
		{"label", "note: no live process is waiting on k2wAm6sAWYIi: the approval may run nothing until its agent checks the store", 80,
			"note: no live process is waiting on k2wAm6sAWYIi: the approval may run nothing\n      until its agent checks the store"},
		{"indented prose", "  chat (line 39): slack, url $SLACK_WEBHOOK_URL (not set), without the command, timeout 10s", 80,
			"  chat (line 39): slack, url $SLACK_WEBHOOK_URL (not set), without the command,\n    timeout 10s"},
		{"no hyphen break", "warning  binary     /tmp/nu/go/bin/approve-tui is approve-tui devel; set plugins.entries.approve-tui.settings.binary", 60,
			"warning  binary     /tmp/nu/go/bin/approve-tui is\n                    approve-tui devel; set\nplugins.entries.approve-tui.settings.binary"},
		{"word wider than the line", "x " + strings.Repeat("a", 30) + " b", 20, "x\n" + strings.Repeat("a", 30) + "\n  b"},
		{"first word too wide for the column", "ok  plugin  " + strings.Repeat("p", 20) + " is here", 30, "ok  plugin\n" + strings.Repeat("p", 20) + "\n            is here"},
		{"word too wide for the column", "store:     " + strings.Repeat("a", 15) + " b c", 24, "store:\n" + strings.Repeat("a", 15) + "\n           b c"},
		{"tab: the terminal's width", "EVENT\tID\t" + strings.Repeat("word ", 30), 40, "EVENT\tID\t" + strings.Repeat("word ", 30)},
		{"styles take no room", "risk:          \x1b[31mHIGH\x1b[0m and a long tail of words that goes on past the edge", 50,
			"risk:          \x1b[31mHIGH\x1b[0m and a long tail of words that\n               goes on past the edge"},
		{"wide runes", "note: " + strings.Repeat("日本 ", 20), 40, "note: 日本 日本 日本 日本 日本 日本 日本\n      日本 日本 日本 日本 日本 日本 日本\n      日本 日本 日本 日本 日本 日本"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := wrapProse(c.in, c.width)
			if got != c.want {
				t.Errorf("wrapProse(%q, %d)\n got %q\nwant %q", c.in, c.width, got, c.want)
			}
			if !slices.Equal(strings.Fields(ansi.Strip(got)), strings.Fields(ansi.Strip(c.in))) {
				t.Errorf("words changed: %q", got)
			}
		})
	}
}

// Hostile text is made visible before it is wrapped, and a line written
// as verbatim (a command) goes out whole.
func TestGuardWriterWrapsSanitisedText(t *testing.T) {
	var buf bytes.Buffer
	g := &guardWriter{w: &buf, width: 40}
	g.Write([]byte("reason:        \x1b]0;pwn\a set the title and \u202e reverse everything after it\n"))
	verbatim(g, func() { g.Write([]byte("    rm -rf /srv/a /srv/b /srv/c /srv/d /srv/e /srv/f /srv/g\n")) })
	g.Write([]byte("after:         wrapped again, as the prose it is, once more\n"))
	got := buf.String()
	if strings.ContainsAny(got, "\x1b\a\u202e") {
		t.Fatalf("raw control or bidi bytes reached the terminal: %q", got)
	}
	want := "reason:        \\x1b]0;pwn\\x07 set the\n" +
		"               title and <U+202E>\n" +
		"               reverse everything after\n" +
		"               it\n" +
		"    rm -rf /srv/a /srv/b /srv/c /srv/d /srv/e /srv/f /srv/g\n" +
		"after:         wrapped again, as the\n" +
		"               prose it is, once more\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// show, policy explain, hermes doctor and config check in a real terminal
// (tmux) 80 and 120 columns wide: no line is wider than the terminal (the
// terminal wrapped none, mid-word), and the words are those the same
// command prints piped, whole and in order. Piped, nothing is wrapped.
func TestProseWrapsToTheTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for this test (apt-get install tmux)")
	}
	dir := homeDir(t)
	bin := buildBinary(t, dir)
	home := filepath.Join(dir, "home")
	db := filepath.Join(dir, "state.db")
	cfg := filepath.Join(dir, "config.yaml")
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + dir + ":/usr/bin:/bin", "LANG=C.UTF-8", "TERM=xterm-256color", "PS1=$ ", "APPROVE_TUI_HOST=vm"}
	piped := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	piped("--db", db, "init")
	if err := os.WriteFile(policy, []byte("policy:\n  - match: {risk: high, session: \"agent:prod:*\"}\n    approvals: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	piped("--db", db, "policy", "set", policy)
	id := strings.TrimSpace(piped("--db", db, "submit", "--session", "agent:prod:db", "--ttl", "1h",
		"--reason", "archive exported to s3://acme-archive/2023/ last night \x1b]0;pwn\a by the nightly job, checked twice",
		"--", "psql -c 'DROP TABLE users'"))
	if len(id) != 12 {
		t.Fatalf("submit: %q", id)
	}
	example := piped("config", "example")
	if err := os.WriteFile(cfg, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	piped("hermes", "install")

	cmds := [][]string{
		{"--db", db, "show", id},
		{"--db", db, "policy", "explain", id},
		{"hermes", "doctor"},
		{"config", "check", "--config", cfg},
	}
	for _, w := range []int{80, 120} {
		wrappedOnce := false
		for i, args := range cmds {
			t.Run(fmt.Sprintf("%d-%d", w, i), func(t *testing.T) {
				sh := startShell(t, dir, env, w, 60)
				line := "approve-tui " + quoteArgs(args)
				sh.send(line)
				sh.waitPrompt(t, 1)
				joined := sh.lines()
				rows := strings.Split(strings.TrimRight(sh.tmux("capture-pane", "-p", "-S", "-", "-t", "e2e"), "\n "), "\n")
				// The command line itself may be wider than the terminal:
				// only the output counts.
				out := joined[1 : len(joined)-1]
				cmdRows := (len("$ "+line) + w - 1) / w
				if len(rows)-cmdRows-1 != len(out) {
					t.Errorf("at %d columns, %v: the terminal wrapped a line itself:\n%s", w, args, strings.Join(rows, "\n"))
				}
				for _, l := range out {
					if n := ansi.StringWidth(l); n > w {
						t.Errorf("at %d columns, %v: a line of %d cells: %q", w, args, n, l)
					}
				}
				want := piped(args...)
				// Ages move on between the two runs: compared as placeholders.
				if normal(strings.Join(out, "\n")) != normal(want) {
					t.Errorf("at %d columns, %v: the words differ from the piped output\nterminal:\n%s\npiped:\n%s", w, args, strings.Join(out, "\n"), want)
				}
				if strings.Contains(strings.Join(out, "\n"), "\x1b]0;") {
					t.Errorf("a raw escape reached the terminal")
				}
				for _, l := range strings.Split(want, "\n") {
					if ansi.StringWidth(l) > w {
						wrappedOnce = true
					}
				}
			})
		}
		if !wrappedOnce {
			t.Errorf("at %d columns no piped line was wider than the terminal: the test shows nothing", w)
		}
	}
}

// quoteArgs quotes each argument for bash.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
