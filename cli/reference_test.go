package cli

//go:generate go test -run ^TestReference$ -update .

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/config"
	"github.com/spf13/cobra"
)

// docs/reference is made from the code: every command's help, the exit
// codes from exitTable and commandExits, the configuration file's keys
// from config.Schema and its commented example. It is written again here
// and compared; "go generate ./cli" (or this test with -update) refreshes
// it.
func TestReference(t *testing.T) {
	want := reference(t)
	dir := filepath.Join(repoRoot(t), "docs", "reference")
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for name, text := range want {
			path := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	const refresh = "run go generate ./cli (or go test ./cli -run TestReference -update) to refresh docs/reference"
	have := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		have[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatalf("%v: %s", err, refresh)
	}
	for name, text := range want {
		if got, ok := have[name]; !ok {
			t.Errorf("docs/reference/%s is missing: %s", name, refresh)
		} else if got != text {
			t.Errorf("docs/reference/%s is stale: %s", name, refresh)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/reference/%s is not made from the code any more: %s", name, refresh)
		}
	}
}

// referenceEnv is the environment the reference is made in, so that the
// defaults help prints read the same on every machine.
func referenceEnv(key string) string {
	if key == "HERMES_HOME" {
		return "~/.hermes"
	}
	return ""
}

// reference is docs/reference's files by path: commands/*.md,
// exit-codes.md, config.md and index.md.
func reference(t *testing.T) map[string]string {
	// Defaults that come from the process's environment (serve's host
	// key) read as on a fresh account of user "me".
	t.Setenv("HOME", "/home/me")
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "APPROVE_TUI_DB", "APPROVE_TUI_CONFIG", "HERMES_HOME"} {
		t.Setenv(k, "")
	}
	out := map[string]string{}
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		cmds = append(cmds, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(referenceApp(nil).root())
	codes := map[string]string{} // command path -> the codes its help lists
	for _, c := range cmds {
		help := referenceHelp(t, c.CommandPath())
		codes[c.CommandPath()] = helpExitCodes(help)
		out["commands/"+refFile(c)] = commandPage(c, help)
	}
	out["commands/index.md"] = commandIndex(cmds)
	out["exit-codes.md"] = exitCodesPage(cmds, codes)
	out["config.md"] = configPage()
	return out
}

func referenceApp(stdout *bytes.Buffer) *app {
	if stdout == nil {
		stdout = &bytes.Buffer{}
	}
	a := newApp(strings.NewReader(""), stdout, stdout)
	a.getenv = referenceEnv
	a.isTTY = func() bool { return false }
	a.termW = func() int { return 0 }
	return a
}

// referenceHelp is what "approve-tui PATH --help" prints.
func referenceHelp(t *testing.T, path string) string {
	var out bytes.Buffer
	a := referenceApp(&out)
	args := append(strings.Fields(path)[1:], "--help")
	if code := a.execute(context.Background(), args); code != 0 {
		t.Fatalf("%s --help: exit %d\n%s", path, code, out.String())
	}
	return out.String()
}

func refFile(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

const generated = "<!-- Made from the code by go generate ./cli; do not edit. -->\n\n"

func commandPage(c *cobra.Command, help string) string {
	var b strings.Builder
	b.WriteString(generated)
	fmt.Fprintf(&b, "# %s\n\n%s.\n\n```text\n%s```\n", c.CommandPath(), c.Short, help)
	var subs []*cobra.Command
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			subs = append(subs, s)
		}
	}
	if len(subs) > 0 {
		b.WriteString("\n## Commands\n\n")
		for _, s := range subs {
			fmt.Fprintf(&b, "- [%s](%s): %s\n", s.CommandPath(), refFile(s), s.Short)
		}
	}
	if p := c.Parent(); p != nil {
		fmt.Fprintf(&b, "\nPart of [%s](%s). All commands: [index](index.md).\n", p.CommandPath(), refFile(p))
	}
	return b.String()
}

func commandIndex(cmds []*cobra.Command) string {
	var b strings.Builder
	b.WriteString(generated)
	b.WriteString("# Commands\n\nEvery command's `--help`, one page each.\n\n| command | what it does |\n| --- | --- |\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "| [%s](%s) | %s |\n", c.CommandPath(), refFile(c), c.Short)
	}
	return b.String()
}

// helpExitCodes is the codes a command's help lists under "Exit codes:",
// as "0, 1, 2, 6".
func helpExitCodes(help string) string {
	_, after, ok := strings.Cut(help, "Exit codes")
	if !ok {
		return ""
	}
	block, _, _ := strings.Cut(after, "\n\n")
	var codes []string
	for _, m := range regexp.MustCompile(`(?m)(?:^  |; |, |: )(\d+|N)\b`).FindAllStringSubmatch(block, -1) {
		if !slices.Contains(codes, m[1]) {
			codes = append(codes, m[1])
		}
	}
	return strings.Join(codes, ", ")
}

func exitCodesPage(cmds []*cobra.Command, codes map[string]string) string {
	var b strings.Builder
	b.WriteString(generated)
	b.WriteString("# Exit codes\n\nWhat approve-tui's own exit codes mean, for every command:\n\n| code | meaning |\n| ---: | --- |\n")
	for _, r := range exitTable {
		fmt.Fprintf(&b, "| %s | %s |\n", r.column(), mdCell(r.meaning))
	}
	b.WriteString("\nThe commands whose codes say something of their own:\n")
	for _, c := range commandExits {
		fmt.Fprintf(&b, "\n## %s\n\n| code | meaning |\n| ---: | --- |\n", c.command)
		for _, r := range c.rows {
			fmt.Fprintf(&b, "| %s | %s |\n", r.column(), mdCell(r.meaning))
		}
	}
	b.WriteString("\n## Which command ends with which\n\nAs each command's `--help` lists them:\n\n| command | exit codes |\n| --- | --- |\n")
	for _, c := range cmds {
		if codes[c.CommandPath()] != "" {
			fmt.Fprintf(&b, "| [%s](commands/%s) | %s |\n", c.CommandPath(), refFile(c), codes[c.CommandPath()])
		}
	}
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func configPage() string {
	var b strings.Builder
	b.WriteString(generated)
	b.WriteString("# Configuration keys\n\n" +
		"The configuration file (`$XDG_CONFIG_HOME/approve-tui/config.yaml`, or `--config`,\n" +
		"or `APPROVE_TUI_CONFIG`; the system file anchors `trust:`) and the policy file that\n" +
		"`approve-tui policy set` stores take these keys, and no others: an unknown key is a\n" +
		"problem that `approve-tui config check` reports as `FILE:LINE:COL: what is wrong`.\n" +
		"A key with a flag stands for that command-line flag (the flag wins).\n" +
		"A secret key is given as `NAME_env` (an environment variable) or `NAME_file` (a file).\n\n" +
		"## The configuration file\n")
	section := func(s config.Section) {
		fmt.Fprintf(&b, "\n### %s\n\n| key | flag | value |\n| --- | --- | --- |\n", s.Path)
		for _, k := range s.Keys {
			flagCol := ""
			if k.Flag != "" {
				flagCol = "`--" + k.Flag + "`"
			}
			kind := kindWords[k.Kind]
			if k.Kind == "secret" && strings.HasSuffix(k.Name, "_env") {
				kind = "a secret: the name of the environment variable that holds it"
			} else if k.Kind == "secret" {
				kind = "a secret: the file that holds it (mode 600)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, flagCol, kind)
		}
	}
	file, policy := config.Schema()
	for _, s := range file {
		section(s)
	}
	b.WriteString("\n## The policy file\n")
	for _, s := range policy {
		section(s)
	}
	b.WriteString("\n## The commented example\n\n`approve-tui config example` prints it:\n\n```yaml\n" + config.Example)
	if !strings.HasSuffix(config.Example, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("```\n")
	return b.String()
}

var kindWords = map[string]string{
	"path": "a path (relative to the file's directory)",
	"url":  "a plain http or https URL",
	"argv": "a program and its arguments",
	"zero": "a duration, may be 0",
}

// The help of every command that lists exit codes in prose or by hand
// names the codes exitTable and commandExits give it.
func TestHelpExitCodesFromTheTable(t *testing.T) {
	words := strings.Join(strings.Fields(headlessHelp), " ")
	for _, r := range exitRowsOf("headless") {
		if !strings.Contains(words, fmt.Sprintf("%d %s", r.code, strings.Fields(r.meaning)[0])) {
			t.Errorf("headless --help does not say %d %s", r.code, r.meaning)
		}
	}
	if !strings.Contains(referenceHelp(t, "approve-tui run"), exitRowsText(exitRowsOf("run"))) ||
		!strings.Contains(referenceHelp(t, "approve-tui wait"), exitRowsText(exitRowsOf("wait"))) {
		t.Error("run's or wait's help does not list the table's exit codes")
	}
}
