package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

// classifyMaxCommand is the longest command classify --stdin judges (the
// decoded string); classifyMaxLine the longest line it reads for one: the
// command JSON-quoted at worst (every byte a six-character \u escape), its
// quotes and some blank space around them.
const (
	classifyMaxCommand = 1 << 20
	classifyMaxLine    = 6*classifyMaxCommand + 2 + 1024
)

func (a *app) classifyCmd() *cobra.Command {
	var (
		cwd   string
		stdin bool
	)
	cmd := &cobra.Command{
		Use:   "classify [--json] [--cwd DIR] (-- COMMAND | --stdin)",
		Short: "Say how urgent a command is and why, without running it",
		Long: `Judge a shell command, and say why it gets its level: the level (low,
medium or high: never below what Hermes' pattern table says), whether a
hardline rule matches (Hermes never runs it), whether it is proven read-only
(every part of it known to only read, nothing redirected into a file,
nothing unknown), and each finding: the rule that found it, its level, the
effect (delete, write, network, ...), the words of the command that
triggered it, and why. Nothing is run, and no proposal is made. The line is
judged alone: the hooks and run also read a git command's configuration
(a program it names makes the command at least medium); classify does not.

COMMAND is one argument, the command line as written (quote it for your
shell: approve-tui classify -- 'rm -rf "$DIR"'). Several arguments are joined
with single spaces into one line, as a shell would read them unquoted.

--cwd DIR is the directory the command would run in: the workspace, inside
which paths are less urgent than outside it (default: the current
directory). The sensitive paths include approve-tui's own database and
configuration file.

--json prints one object: command, level, hardline, read_only, effects,
findings ([{rule, level, effect, words, why}]; effect "" when none),
table_level (the pattern table's level alone), version (of the rules that
judged it) and cwd (the directory it was judged in). Strings keep their
exact bytes (invalid UTF-8 as \udcXX escapes).

--stdin reads commands from stdin, one JSON string per line ("rm -rf /"; a
command holding invalid UTF-8 writes each invalid byte as \udcXX), and prints
one such object per line, in order, as soon as each is judged. Blank lines
are skipped. A line that is not one JSON string, or holds a command longer
than 1 MiB, prints {"line": N, "error": "..."} instead, and the rest is read
on; a line longer than the longest quoting of such a command is not held in
memory: its error says so. The exit code then says that something was bad.
` + exitCodesWhere(map[int]string{
			ExitOK:    "every command was judged",
			ExitError: "--stdin: some line was not a JSON string, or too long (each said so on its own line); or stdin could not be read",
			ExitUsage: "bad flags or arguments: no command, a command and --stdin, or --cwd not a directory",
		}, ExitOK, ExitError, ExitUsage),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case stdin && len(args) > 0:
				return usageErrorf("classify takes a command or --stdin, not both")
			case !stdin && len(args) == 0:
				return usageErrorf("classify needs a command: approve-tui classify -- 'COMMAND', or --stdin")
			}
			dir, err := classifyDir(cwd)
			if err != nil {
				return err
			}
			jc, err := a.riskContext(dir)
			if err != nil {
				return err
			}
			if stdin {
				// JSON lines: never wrapped to a terminal.
				a.guards[0].width = 0
				return a.classifyStream(a.in, jc)
			}
			command := strings.Join(args, " ")
			j := risk.Judge(command, jc)
			if a.json {
				a.printf("%s\n", judgementJSON(command, jc.Cwd, j))
				return nil
			}
			writeClassify(a.out, command, j)
			return nil
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "the `dir`ectory the command would run in: the workspace (default: the current directory)")
	cmd.Flags().BoolVar(&stdin, "stdin", false, "judge the commands on stdin, one JSON string per line, answering one JSON object per line")
	_ = cmd.MarkFlagDirname("cwd")
	return cmd
}

// classifyDir is --cwd made absolute (the current directory when not
// given); it must be a directory.
func classifyDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", exitf(ExitError, "the current directory: %v", err)
		}
		return wd, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageErrorf("--cwd %s: %v", line(dir), err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", usageErrorf("--cwd %s: no such directory", line(dir))
	case err != nil:
		return "", usageErrorf("--cwd %s: %v", line(dir), err)
	case !fi.IsDir():
		return "", usageErrorf("--cwd %s: not a directory", line(dir))
	}
	return filepath.Clean(abs), nil
}

// classifyStream is classify --stdin: each line a JSON string, answered by
// one JSON line. Nothing read is held beyond classifyMaxLine.
func (a *app) classifyStream(in io.Reader, jc risk.Context) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var (
		bad  int
		n    int
		buf  []byte
		long bool
	)
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			if !long {
				if len(buf)+len(chunk) > classifyMaxLine {
					long, buf = true, buf[:0]
				} else {
					buf = append(buf, chunk...)
				}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		end := err == nil || (errors.Is(err, io.EOF) && (len(buf) > 0 || long))
		if end {
			n++
			if !a.classifyLine(n, buf, long, jc) {
				bad++
			}
			buf, long = buf[:0], false
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return exitf(ExitError, "reading stdin after line %d: %v", n, err)
		}
	}
	if bad > 0 {
		return exitf(ExitError, "%s of %d not judged (see the error objects)", human.CountNo(bad, "line"), n)
	}
	return nil
}

// classifyLine answers line n of classify --stdin; false when it was bad.
// A blank line is skipped.
func (a *app) classifyLine(n int, raw []byte, long bool, jc risk.Context) bool {
	fail := func(msg string) bool {
		a.printf("%s\n", model.NewJSONObject().Int("line", int64(n)).Str("error", msg))
		return false
	}
	if long {
		return fail(fmt.Sprintf("line longer than %d bytes: a command is at most %d bytes (1 MiB), as one JSON string", classifyMaxLine, classifyMaxCommand))
	}
	lit := bytes.TrimSpace(raw)
	if len(lit) == 0 {
		return true
	}
	if lit[0] != '"' {
		return fail(`not a JSON string: write each command as one JSON string on its own line ("rm -rf /")`)
	}
	command, err := model.UnquoteJSON(lit)
	if err != nil {
		return fail(`not one JSON string: write each command as one JSON string on its own line, control characters escaped ("a\tb"), nothing after it`)
	}
	if len(command) > classifyMaxCommand {
		return fail(fmt.Sprintf("the command is %d bytes: at most %d (1 MiB) are judged", len(command), classifyMaxCommand))
	}
	a.printf("%s\n", judgementJSON(command, jc.Cwd, risk.Judge(command, jc)))
	return true
}

// judgementJSON is classify's object for command judged in cwd.
func judgementJSON(command, cwd string, j risk.Judgement) *model.JSONObject {
	return judgementFields(model.NewJSONObject().Str("command", command), j).Str("cwd", cwd)
}

// judgementFields adds a judgement's keys to o: level, hardline,
// read_only, effects, findings, table_level and version.
func judgementFields(o *model.JSONObject, j risk.Judgement) *model.JSONObject {
	return o.Str("level", string(j.Level)).
		Bool("hardline", j.Hardline).Bool("read_only", j.ReadOnly).
		Strs("effects", nonNil(j.Effects)).
		Raw("findings", findingsJSON(j.Findings)).
		Str("table_level", string(j.Table.Level)).
		Str("version", risk.Version)
}

// findingsJSON is a judgement's findings as a JSON array ([] when none).
func findingsJSON(fs []risk.Finding) string {
	objs := make([]*model.JSONObject, len(fs))
	for i, f := range fs {
		objs[i] = model.NewJSONObject().Str("rule", f.Rule).Str("level", string(f.Level)).
			Str("effect", f.Effect).Strs("words", nonNil(f.Words)).Str("why", f.Why)
	}
	return model.JSONObjects(objs)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// levelWord is a judgement's level in capitals (HIGH, MEDIUM, LOW).
func levelWord(l model.RiskLevel) string {
	if l == model.RiskTier2 {
		return "CRITICAL"
	}
	return strings.ToUpper(line(string(l)))
}

// wordsText shows a finding's words sanitised, each quoted when it holds
// a space or a quote or is empty, so that where one ends shows.
func wordsText(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		s := line(w)
		if s == "" || strings.ContainsAny(s, " \t\"") {
			s = `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
		}
		out[i] = s
	}
	return strings.Join(out, " ")
}

// writeClassify prints a judgement for a human: the level, hardline,
// read-only, then each finding. Every string from the command is
// sanitised.
func writeClassify(w io.Writer, command string, j risk.Judgement) {
	field := func(name, value string) { fmt.Fprintf(w, "%-14s %s\n", name+":", value) }
	field("command", line(command))
	level := levelWord(j.Level)
	if j.Table.Level != j.Level {
		level += fmt.Sprintf(" (the pattern table alone: %s)", levelWord(j.Table.Level))
	}
	field("level", level)
	if j.Hardline {
		field("hardline", "yes: Hermes never runs it, and it cannot be approved")
	} else {
		field("hardline", "no")
	}
	if j.ReadOnly {
		field("read-only", "yes: proven to only read")
	} else {
		field("read-only", "no: not proven to only read")
	}
	if len(j.Effects) > 0 {
		field("effects", line(strings.Join(j.Effects, ", ")))
	}
	if len(j.Findings) == 0 {
		field("findings", "none: nothing matched and nothing was found")
		return
	}
	field("findings", fmt.Sprintf("%d", len(j.Findings)))
	for i, f := range j.Findings {
		fmt.Fprintf(w, "%-14s %s\n", fmt.Sprintf("%d. rule:", i+1), line(f.Rule))
		sub := func(name, value string) { fmt.Fprintf(w, "   %-11s %s\n", name+":", value) }
		sub("level", levelWord(f.Level))
		if f.Effect != "" {
			sub("effect", line(f.Effect))
		}
		if len(f.Words) > 0 {
			sub("words", wordsText(f.Words))
		}
		sub("why", line(f.Why))
	}
}
