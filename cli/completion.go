package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Shell completion (cobra's `completion bash|zsh|fish|powershell`): command
// and flag names, pending approval ids with their command as the
// description, statuses and the other enumerated flag values. Man pages are
// generated from the same command tree (`man DIR`).

// completionLockTimeout bounds a completion's wait for the store: a shell
// must not hang on a tab.
const completionLockTimeout = 500 * time.Millisecond

// completeIDs lists the ids of proposals in status, most urgent first, each
// with its risk and command (sanitised, cut) as the description.
func (a *app) completeIDs(status storage.StatusFilter) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
		defer cancel()
		s, err := storage.Open(ctx, a.db, storage.Options{ReadOnly: true, BusyTimeout: completionLockTimeout})
		if err != nil {
			cobra.CompDebugln("approve-tui: "+err.Error(), true)
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		defer s.Close()
		recs, err := s.List(ctx, storage.ListOptions{Status: status, Limit: 500})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, r := range recs {
			id := r.ApprovalID
			// Only a plain token (model.IsPlainID: A-Za-z0-9_-, no
			// leading '-') is offered: an id another program wrote may be
			// any text ($(...), ';', a flag, an escape sequence), and the
			// shell would put it on the command line as is.
			if !model.IsPlainID(id) || !strings.HasPrefix(id, toComplete) {
				continue
			}
			out = append(out, cobra.CompletionWithDesc(id, cut(r.EffectiveRisk.Short()+" "+line(r.Command), 60)))
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// addCompletions wires the completions into the command tree.
func (a *app) addCompletions(root *cobra.Command) {
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	_ = root.RegisterFlagCompletionFunc("color", fixed("auto", "always", "never"))
	// cobra's completion command, made now so that a shell it has no script
	// for is a usage error, not its help and exit 0.
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		var shells []string
		for _, sh := range c.Commands() {
			shells = append(shells, sh.Name())
		}
		c.Args = func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("completion: %q is not a supported shell; approve-tui has completion for %s",
					line(args[0]), strings.Join(shells, ", "))
			}
			return nil
		}
		c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
	for _, c := range root.Commands() {
		switch c.Name() {
		case "approve", "deny", "wait":
			c.ValidArgsFunction = a.completeIDs(storage.ListPending)
		case "show":
			c.ValidArgsFunction = a.completeIDs(storage.ListAll)
		case "list":
			_ = c.RegisterFlagCompletionFunc("status", fixed("pending", "consumed", "denied", "expired", "blocked", "all"))
		case "audit":
			_ = c.RegisterFlagCompletionFunc("id", a.completeIDs(storage.ListAll))
		case "submit", "run":
			_ = c.RegisterFlagCompletionFunc("risk", fixed("low", "medium", "high"))
			if c.Flags().Lookup("unasked") != nil {
				_ = c.RegisterFlagCompletionFunc("unasked", fixed(config.UnaskedModes...))
			}
		case "hook":
			for _, h := range c.Commands() {
				if h.Flags().Lookup("low") != nil {
					_ = h.RegisterFlagCompletionFunc("low", fixed("pass", "allow"))
				}
				if h.Flags().Lookup("unasked") != nil {
					_ = h.RegisterFlagCompletionFunc("unasked", fixed(config.UnaskedModes...))
				}
			}
		}
	}
}

func (a *app) manCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write the man pages (section 1) of every command into DIR",
		Long: `Write one man page per command (approve-tui.1, approve-tui-list.1, ...) into
DIR, made from the same help text as --help. Install them where man looks
(for example ~/.local/share/man/man1), or read one with man -l FILE.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return exitf(ExitError, "man pages: %v", err)
			}
			date, err := manDate()
			if err != nil {
				return exitf(ExitError, "man pages: %v", err)
			}
			h := manHeader{title: "APPROVE-TUI", section: "1", date: date,
				source: "approve-tui " + Build.resolved().Version, manual: "approve-tui manual"}
			if err := writeManTree(cmd.Root(), h, dir); err != nil {
				return exitf(ExitError, "man pages: %v", err)
			}
			n := 0
			if entries, err := os.ReadDir(dir); err == nil {
				for _, e := range entries {
					if strings.HasSuffix(e.Name(), ".1") {
						n++
					}
				}
			}
			a.printf("wrote %d man pages to %s\n", n, dir)
			return nil
		},
	}
}

// manHeader is what the .TH line of every page says.
type manHeader struct {
	title, section, date, source, manual string
}

// manDate is the month the pages are dated: now, or SOURCE_DATE_EPOCH's
// (seconds since 1970) for a reproducible build.
func manDate() (string, error) {
	now := time.Now()
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return "", fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", epoch)
		}
		now = time.Unix(sec, 0).UTC()
	}
	return now.Format("Jan 2006"), nil
}

// writeManTree writes the man page of cmd and of each of its commands into
// dir (approve-tui.1, approve-tui-run.1, …): name and short text, synopsis
// (the lines of --help's Usage:), description (--help's text), options and
// the options inherited, and the pages of the parent and the commands.
func writeManTree(cmd *cobra.Command, h manHeader, dir string) error {
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := writeManTree(c, h, dir); err != nil {
			return err
		}
	}
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-")
	path := filepath.Join(dir, name+"."+h.section)
	return os.WriteFile(path, []byte(manPage(cmd, h)), 0o644)
}

// manPage is the man page of cmd, in roff (the man macros).
func manPage(cmd *cobra.Command, h manHeader) string {
	cmd.InitDefaultHelpFlag()
	var b strings.Builder
	b.WriteString(".nh\n")
	fmt.Fprintf(&b, ".TH %q %q %q %s %s\n", h.title, h.section, h.date, roffArg(h.source), roffArg(h.manual))
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-")
	b.WriteString(".SH NAME\n")
	b.WriteString(roffText(name+" - "+cmd.Short) + "\n")

	// The lines of --help's "Usage:", as cobra's usage template writes
	// them, left-aligned: a synopsis wrapped at the terminal's width keeps
	// its single spaces.
	var use []string
	if cmd.Runnable() {
		use = append(use, cmd.UseLine())
	}
	if cmd.HasAvailableSubCommands() {
		use = append(use, cmd.CommandPath()+" [command]")
	}
	b.WriteString(".SH SYNOPSIS\n.ad l\n")
	for k, u := range use {
		if k > 0 {
			b.WriteString(".br\n")
		}
		b.WriteString("\\fB" + roffText(u) + "\\fR\n")
	}
	b.WriteString(".ad\n")

	long := cmd.Long
	if long == "" {
		long = cmd.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	manDescription(&b, long)

	if fs := cmd.NonInheritedFlags(); fs.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS\n")
		manFlags(&b, fs)
	}
	if fs := cmd.InheritedFlags(); fs.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS INHERITED FROM PARENT COMMANDS\n")
		manFlags(&b, fs)
	}

	var see []string
	if cmd.HasParent() {
		see = append(see, strings.ReplaceAll(cmd.Parent().CommandPath(), " ", "-"))
	}
	children := slices.Clone(cmd.Commands())
	slices.SortFunc(children, func(x, y *cobra.Command) int { return strings.Compare(x.Name(), y.Name()) })
	for _, c := range children {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			see = append(see, name+"-"+c.Name())
		}
	}
	if len(see) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		for k, s := range see {
			sep := ","
			if k == len(see)-1 {
				sep = ""
			}
			b.WriteString(".BR " + roffArg(s) + " " + roffArg("("+h.section+")"+sep) + "\n")
		}
	}
	return b.String()
}

// manFlags writes the flags of fs as a tagged list: the flag, its value's
// name as --help gives it, then its usage and default.
func manFlags(b *strings.Builder, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		varname, usage := pflag.UnquoteUsage(f)
		b.WriteString(".TP\n")
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			b.WriteString("\\fB" + roffText("-"+f.Shorthand) + "\\fR, ")
		}
		b.WriteString("\\fB" + roffText("--"+f.Name) + "\\fR")
		if varname != "" {
			b.WriteString(" \\fI" + roffText(varname) + "\\fR")
		}
		b.WriteString("\n")
		switch def := f.DefValue; {
		case def == "" || def == "false" || def == "0" || def == "[]" || def == "0s":
		case f.Value.Type() == "string":
			usage += fmt.Sprintf(" (default %q)", def)
		default:
			usage += " (default " + def + ")"
		}
		b.WriteString(roffText(usage) + "\n")
	})
}

// manDescription writes long, the text of --help, as the DESCRIPTION: a
// paragraph with an indented line (a table, an example) goes out line for
// line (no fill), one column in rather than the section's seven, so that
// --help's 80-column lines fit an 80-column man page; the others are
// filled.
func manDescription(d *strings.Builder, long string) {
	for k, para := range strings.Split(strings.Trim(long, "\n"), "\n\n") {
		para = strings.Trim(para, "\n")
		if para == "" {
			continue
		}
		if k > 0 {
			d.WriteString(".PP\n")
		}
		lines := strings.Split(para, "\n")
		block := false
		for _, l := range lines {
			block = block || strings.HasPrefix(l, " ")
		}
		if !block {
			d.WriteString(roffText(strings.Join(lines, " ")) + "\n")
			continue
		}
		d.WriteString(".nf\n.in -6n\n")
		for _, l := range lines {
			d.WriteString(roffText(l) + "\n")
		}
		d.WriteString(".in\n.fi\n")
	}
}

// roffArg is s as one quoted argument of a request, its text as roffText
// writes it (a double quote is \(dq, no end of the argument).
func roffArg(s string) string {
	return `"` + roffText(s) + `"`
}

// roffText is s as roff text that prints s as it is: a backslash as \e,
// hyphen-minus, quotes and the other ASCII characters a UTF-8 device draws
// as typographic ones by their names, and \& first so that a leading . or
// ' is no request.
func roffText(s string) string {
	var b strings.Builder
	b.WriteString("\\&")
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString("\\e")
		case '-':
			b.WriteString("\\-")
		case '\'':
			b.WriteString("\\(aq")
		case '`':
			b.WriteString("\\(ga")
		case '"':
			b.WriteString("\\(dq")
		case '^':
			b.WriteString("\\(ha")
		case '~':
			b.WriteString("\\(ti")
		case '\n':
			b.WriteString(" ")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// unknownCommand is the error for a word that is no command, with cobra's
// suggestions of what was meant.
func unknownCommand(root *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q", word)
	if s := root.SuggestionsFor(word); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usageErrorf("%s", msg)
}
