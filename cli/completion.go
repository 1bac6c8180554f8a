package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
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
			root := cmd.Root()
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{Title: "APPROVE-TUI", Section: "1", Source: "approve-tui " + Build.resolved().Version,
				Manual: "approve-tui manual"}
			if err := writeManTree(root, header, dir); err != nil {
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

// writeManTree writes the man page of cmd and of each of its commands into
// dir, as doc.GenManTree does (approve-tui-run.1, …), each with its
// synopsis written here (manSynopsis), the lines of its --help's Usage:
// doc renders the use line as Markdown, where "[--timeout D] (-- COMMAND
// … | --shell 'LINE')" is a link with a title.
func writeManTree(cmd *cobra.Command, header *doc.GenManHeader, dir string) error {
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := writeManTree(c, header, dir); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	h := *header
	if err := doc.GenMan(cmd, &h, &b); err != nil {
		return err
	}
	// The lines of --help's "Usage:", as cobra's usage template writes them.
	var usage []string
	if cmd.Runnable() {
		usage = append(usage, cmd.UseLine())
	}
	if cmd.HasAvailableSubCommands() {
		usage = append(usage, cmd.CommandPath()+" [command]")
	}
	page, err := manSynopsis(b.String(), usage)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if cmd.Long != "" {
		if page, err = manDescription(page, cmd.Long); err != nil {
			return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
		}
	}
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-") + "." + header.Section
	return os.WriteFile(filepath.Join(dir, name), []byte(page), 0o644)
}

// manSynopsis puts the lines of use, in bold, as the synopsis of the man
// page page.
func manSynopsis(page string, use []string) (string, error) {
	const head = ".SH SYNOPSIS\n"
	i := strings.Index(page, head)
	if i < 0 {
		return "", errors.New("the man page has no SYNOPSIS section")
	}
	i += len(head)
	j := strings.Index(page[i:], "\n.SH ")
	if j < 0 {
		return "", errors.New("the man page ends in its SYNOPSIS section")
	}
	// Left-aligned: a synopsis wrapped at the terminal's width keeps its
	// single spaces.
	var syn strings.Builder
	syn.WriteString(".ad l\n")
	for k, u := range use {
		if k > 0 {
			syn.WriteString(".br\n")
		}
		syn.WriteString("\\fB" + roffText(u) + "\\fR\n")
	}
	syn.WriteString(".ad\n")
	return page[:i] + syn.String() + "\n" + page[i+j:], nil
}

// manDescription writes long, the text of --help, as the DESCRIPTION of
// page, instead of doc's reading of it as Markdown (which takes an indented
// block's first line out of the block, and fills the rest past the page's
// width). A paragraph with an indented line (a table, an example) goes out
// line for line (no fill), one column in rather than the section's seven,
// so that --help's 80-column lines fit an 80-column man page; the others
// are filled.
func manDescription(page, long string) (string, error) {
	const head = ".SH DESCRIPTION\n"
	i := strings.Index(page, head)
	if i < 0 {
		return "", errors.New("the man page has no DESCRIPTION section")
	}
	i += len(head)
	j := strings.Index(page[i:], "\n.SH ")
	if j < 0 {
		j = len(page) - i
	}
	var d strings.Builder
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
	return page[:i] + d.String() + page[i+j:], nil
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
