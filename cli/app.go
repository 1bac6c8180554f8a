// Package cli is approve-tui's scriptable command line: init, submit, list,
// show, approve, deny, expire, wait and audit, over the durable approval
// store, and the agent side: run and hook claude-code. Every decision goes through storage's one decision path; every
// agent string printed for a human goes through model.Sanitize.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
	"github.com/spf13/cobra"
	sshagent "golang.org/x/crypto/ssh/agent"
	"golang.org/x/term"
)

// app holds the streams, the global flags and the hooks tests replace.
type app struct {
	in       io.Reader
	out, err io.Writer

	// out and err guard every line (guardWriter); rawOut and rawErr are
	// the process's own, for the console, run's command and the hooks.
	rawOut, rawErr io.Writer
	guards         []*guardWriter
	// as is who decides when another surface runs the command (ExecuteAs).
	as *model.Actor
	// follow: the console starts following this operator's console.
	follow string
	// consoleKey: the console signs with this key file (--key), not the
	// ssh-agent at $SSH_AUTH_SOCK.
	consoleKey string
	// openID: the console starts on this proposal (--open ID); args, the
	// command line as given, tells --open ID from --open=ID.
	openID string
	args   []string

	// judging, when set, is the judgement's context in place of the
	// configuration file's (an SSH session judges as the server does).
	judging *risk.Context
	// trusting is the trust configuration of the process whose session
	// runs the command (ExecuteAs: a.as set), which reads no file; and
	// sessionAgent the agent that session's client forwarded (nil: none).
	trusting     *trust.Settings
	sessionAgent sshagent.Agent
	// trustSide is the side this command loads the trust file for (the
	// agent's for what the agent runs: submit, wait, run, the hooks).
	trustSide config.Side
	// systemPath is the system configuration file (config.SystemConfigPath,
	// fixed at build time: never from the environment or a flag); system
	// and systemErr what reading it gave, once (systemRead).
	systemPath string
	system     *config.System
	systemErr  error
	systemRead bool
	// trustWarned: the user file's trust: section set aside or differing
	// from the system file's has been said once.
	trustWarned bool

	getenv func(string) string
	isTTY  func() bool // is stdin a terminal (prompts allowed)
	termW  func() int  // width of stdout's terminal, 0 when not a terminal
	now    func() time.Time

	db          string
	json        bool
	lockTimeout time.Duration
	readOnly    bool
	// dbExisted: the SQLite file at --db was there before init opened it.
	dbExisted bool
	color     string // --color: auto, always or never
	config    string // --config: the configuration file (cli/config.go)
	bell      string // --bell: the least risk that rings the terminal
	// readers sizes the reader pool on PostgreSQL (0: the store's default,
	// enough for a console; serve asks for more).
	readers int

	// started is set once flags and arguments parsed: errors before it are
	// usage errors.
	started bool
}

// Execute runs the command line args (without the program name) and
// returns the process exit code. It is the whole CLI: main calls it, tests
// call it in-process.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return newApp(stdin, stdout, stderr).execute(ctx, args)
}

// ExecuteAs runs a subcommand for another surface that has already said who
// decides (an SSH session's actor, read-only for a watcher): on database
// db, with none of this process's environment, and without a terminal.
// The caller chooses which subcommands it offers.
func ExecuteAs(ctx context.Context, args []string, db string, actor model.Actor, stdin io.Reader, stdout, stderr io.Writer) int {
	return executeAs(ctx, args, db, actor, nil, stdin, stdout, stderr)
}

// executeAs is ExecuteAs judging with judging (the serving process's
// context, from its configuration file; nil: the defaults'), since a
// session reads no file of this host's.
func executeAs(ctx context.Context, args []string, db string, actor model.Actor, judging *risk.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	return executeSession(ctx, args, db, actor, session{Judging: judging}, stdin, stdout, stderr)
}

// session is what the serving process gives a command its session runs:
// it reads no file of this host's and no environment.
type session struct {
	// Judging is the judgement's context (nil: the defaults').
	Judging *risk.Context
	// Trust is the serving process's trust configuration (nil: off).
	Trust *trust.Settings
	// Agent is the agent the session's client forwarded (ssh -A), which
	// signs the session's decisions (nil: none forwarded).
	Agent sshagent.Agent
}

// executeSession is ExecuteAs with the serving process's context.
func executeSession(ctx context.Context, args []string, db string, actor model.Actor, sess session, stdin io.Reader, stdout, stderr io.Writer) int {
	a := newApp(stdin, stdout, stderr)
	a.judging = sess.Judging
	a.trusting, a.sessionAgent = sess.Trust, sess.Agent
	a.getenv = func(string) string { return "" }
	a.isTTY = func() bool { return false }
	a.termW = func() int { return 0 }
	a.as = &actor
	flags := []string{"--db", db}
	if actor.ReadOnly {
		flags = append(flags, "--read-only")
	}
	return a.execute(ctx, append(flags, args...))
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *app {
	gout, gerr := &guardWriter{w: stdout}, &guardWriter{w: stderr}
	a := &app{in: stdin, out: gout, err: gerr, rawOut: stdout, rawErr: stderr, guards: []*guardWriter{gout, gerr},
		getenv: os.Getenv, now: time.Now, systemPath: config.SystemConfigPath}
	a.isTTY = func() bool { return isTerminal(stdin) }
	a.termW = func() int {
		if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil {
				return w
			}
		}
		return 0
	}
	return a
}

// wrapToTerminal makes the prose that cmd writes to a terminal wrap at its
// width (see wrapProse), stdout and stderr each at its own. Not piped or
// redirected output (one line per field, for grep and cut), not --json,
// and not what is code or data for another program: a shell's completion
// script, a configuration example, the console's and headless
// screens, the server's and notifier's logs, an agent hook's answer.
func (a *app) wrapToTerminal(cmd *cobra.Command) {
	if a.json || cmd == nil || hookOf(cmd) != "" {
		return
	}
	for c := cmd; c != nil; c = c.Parent() {
		switch c.CommandPath() {
		case "approve-tui completion", "approve-tui config example", "approve-tui demo", "approve-tui headless",
			"approve-tui notify", "approve-tui serve":
			return
		}
	}
	a.guards[0].width = a.termW()
	if f, ok := a.rawErr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			a.guards[1].width = w
		}
	}
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) execute(ctx context.Context, args []string) int {
	defer a.flush()
	a.args = args
	root := a.root()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code, msg := exitCode(err, a.now())
	if !a.started {
		code = ExitUsage
	}
	if who := hookOf(cmd); who != "" {
		// An agent hook answers every failure, flags included, with a deny
		// in its agent's protocol, and the exit code that agent reads as a
		// block (see hookFailCode).
		reason := line(msg) + "; denied to be safe"
		if msg == "" {
			reason = "the hook failed; denied to be safe"
		}
		_, _ = a.rawOut.Write(agent.Denied(who, "approve-tui: "+reason).JSON())
		fmt.Fprintln(a.err, "approve-tui: "+reason)
		return hookFailCode(who)
	}
	if msg != "" {
		a.wrapToTerminal(cmd)
		// Messages may quote agent strings (actors, corrupt reasons): one
		// line, sanitised.
		fmt.Fprintln(a.err, "approve-tui: "+line(msg))
	}
	var ee *exitError
	if code == ExitUsage && cmd != nil && !(errors.As(err, &ee) && ee.passthrough) {
		fmt.Fprintf(a.err, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// flush writes out what the guarded writers hold.
func (a *app) flush() {
	for _, g := range a.guards {
		_ = g.Flush()
	}
}

// failClosedHook annotates commands that answer every error, usage errors
// included, with a deny in their agent's protocol.
const failClosedHook = "approve-tui/fail-closed-hook"

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "approve-tui",
		Short: "Approve or deny the dangerous shell commands AI agents propose",
		Long: `approve-tui: a human approves or denies the shell commands AI agents propose,
through the Hermes-compatible approval table in a SQLite file (one host) or a
PostgreSQL database (agents on many hosts).

With no command it opens the console: pending proposals, most urgent first,
each shown whole before it can be approved by retyping its id. --read-only
opens it as a watcher. "approve-tui demo" opens it on a fresh demo database.
--open ID (the id a page gives; --open=ID if it starts with -) starts on
that proposal, its detail on screen; one decided or expired is said so,
and shown in the history.

The database is --db, else $APPROVE_TUI_DB, else $HERMES_HOME/state.db
(HERMES_HOME defaults to ~/.hermes): a path (or sqlite:PATH) for SQLite, a
postgres://user@host/db?sslmode=... URL for PostgreSQL.
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable, ExitInterrupted),
		Version:       Build.String(),
		Args:          cobra.ArbitraryArgs,
		RunE:          a.consoleRun,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			a.started = true
			if a.lockTimeout < 0 {
				return usageErrorf("--lock-timeout must not be negative")
			}
			switch a.color {
			case "auto", "always", "never":
			default:
				return usageErrorf("--color %q: want auto, always or never", a.color)
			}
			a.wrapToTerminal(cmd)
			if agentSideCommand(cmd) {
				a.trustSide = config.AgentSide
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "unknown shorthand flag") {
			return usageErrorf("%v (an approval id that starts with - must follow --: %s -- ID)", err, c.CommandPath())
		}
		return usageErrorf("%v", err)
	})
	root.SetVersionTemplate("approve-tui {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVar(&a.db, "db", a.defaultDB(), "approval database: a SQLite file `path`, or a postgres:// URL (env APPROVE_TUI_DB)")
	pf.BoolVar(&a.json, "json", false, "machine-readable JSON output")
	pf.DurationVar(&a.lockTimeout, "lock-timeout", storage.DefaultBusyTimeout, "how long to wait for another process's lock")
	pf.BoolVar(&a.readOnly, "read-only", false, "watch only: every decision is refused by the store, and the refusal audited (exit 6)")
	pf.StringVar(&a.color, "color", "auto", "colour in output: auto (only on a terminal, without NO_COLOR or TERM=dumb), always or never")
	pf.StringVar(&a.config, "config", "", "configuration `file` (env APPROVE_TUI_CONFIG; default $XDG_CONFIG_HOME/approve-tui/config.yaml)")

	root.Flags().StringVar(&a.follow, "follow", "", "start following the console of this `name` (pairing; f in the console)")
	root.Flags().StringVar(&a.openID, "open", "", "start on the proposal of this `id`, shown whole")
	root.Flags().StringVar(&a.consoleKey, "key", "", "where signatures are required, sign with this unencrypted private key `file` instead of the ssh-agent at $SSH_AUTH_SOCK")
	root.Flags().StringVar(&a.bell, "bell", "", "ring the terminal (BEL and a desktop notification) when a proposal at or above this `risk` arrives (--bell alone: high)")
	root.Flags().Lookup("bell").NoOptDefVal = string(model.RiskHigh)
	root.AddCommand(a.initCmd(), a.submitCmd(), a.listCmd(), a.showCmd(), a.approveCmd(),
		a.denyCmd(), a.expireCmd(), a.waitCmd(), a.auditCmd(), a.demoCmd(), a.runCmd(), a.hookCmd(), a.headlessCmd(), a.lockoutsCmd(), a.serveCmd(), a.copyCmd(),
		a.hermesCmd(), a.notifyCmd(), a.statsCmd(), a.manCmd(), a.classifyCmd())
	root.AddCommand(a.configCmd(), a.policyCmd())
	// The streams are set before the completion command is made: it keeps
	// the writer it finds then.
	root.SetIn(a.in)
	root.SetOut(a.out)
	root.SetErr(a.err)
	a.addCompletions(root)
	refuseUnknownSubcommands(root)
	_ = root.RegisterFlagCompletionFunc("open", a.completeIDs(storage.ListAll))
	root.SuggestionsMinimumDistance = 2
	return root
}

// defaultDB is $APPROVE_TUI_DB, else $HERMES_HOME/state.db, else
// ~/.hermes/state.db.
func (a *app) defaultDB() string {
	if p := a.getenv("APPROVE_TUI_DB"); p != "" {
		return p
	}
	home := a.getenv("HERMES_HOME")
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".hermes")
		} else {
			home = ".hermes"
		}
	}
	return filepath.Join(home, "state.db")
}

// agentSideCommand reports whether cmd is one the agent runs (run,
// submit, wait and the agent hooks), which takes its trust settings as
// the agent side: from the system configuration where there is one.
func agentSideCommand(cmd *cobra.Command) bool {
	if hookOf(cmd) != "" {
		return true
	}
	switch cmd.CommandPath() {
	case "approve-tui run", "approve-tui submit", "approve-tui wait":
		return true
	}
	return false
}

// systemConfig is the system configuration file (nil: none), read once,
// under the ownership rules of this command's side. A session of another
// surface (serve) reads no file of this host's: its trust settings are
// the serving process's.
func (a *app) systemConfig() (*config.System, error) {
	if a.as != nil {
		return nil, nil
	}
	if !a.systemRead {
		a.system, a.systemErr = config.LoadSystemAt(a.systemPath, a.trustSide)
		a.systemRead = true
	}
	return a.system, a.systemErr
}

// open opens the store named by the global flags, with the trust
// configuration of a.trustSide.
func (a *app) open(ctx context.Context, create bool) (*storage.Store, error) {
	return a.openSide(ctx, create, a.trustSide)
}

// openSide is open with the trust file loaded for side.
func (a *app) openSide(ctx context.Context, create bool, side config.Side) (*storage.Store, error) {
	// --read-only makes this process a watcher: the store is opened for
	// writing where it can be, so that the decision path itself refuses each
	// attempt and records the refusal (SPEC §3.3, §3.9). A file that cannot
	// be written opens read-only and refuses everything unrecorded.
	rc, err := a.riskContext("")
	if err != nil {
		return nil, err
	}
	ts, err := a.trustSettings(side)
	if err != nil {
		return nil, err
	}
	s, err := storage.Open(ctx, a.db, storage.Options{Create: create, BusyTimeout: a.lockTimeout, Readers: a.readers, Risk: rc, Trust: ts})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, &storeOpenError{err: err}
	}
	return s, nil
}

// actor is who this process decides as.
func (a *app) actor() model.Actor {
	if a.as != nil {
		return *a.as
	}
	act := model.LocalActor(model.SurfaceCLI)
	act.ReadOnly = a.readOnly
	return act
}

// colorful reports whether output may carry colour: --color always, or
// auto on a terminal without NO_COLOR (any value) or TERM=dumb.
func (a *app) colorful() bool {
	switch a.color {
	case "always":
		return true
	case "never":
		return false
	}
	return a.termW() > 0 && a.getenv("NO_COLOR") == "" && a.getenv("TERM") != "dumb"
}

// needTerminal refuses to start the console without a terminal on both
// stdin and stdout: piped, it would draw into the pipe and wait for keys
// that never come.
func (a *app) needTerminal(what string) error {
	in, out := isTerminal(a.in), isTerminal(a.rawOut)
	var which string
	switch {
	case in && out:
		return nil
	case !in && !out:
		which = "neither stdin nor stdout is a terminal"
	case !in:
		which = "stdin is not a terminal"
	default:
		which = "stdout is not a terminal"
	}
	return usageErrorf("%s needs a terminal, and %s (piped or redirected): for scripts use list, show, approve, deny or wait (--json), or headless to drive the console from a tape",
		what, which)
}

// width is the output width for tables.
func (a *app) width() int {
	if w := a.termW(); w > 0 {
		return w
	}
	if v := a.getenv("COLUMNS"); v != "" {
		var w int
		if _, err := fmt.Sscan(v, &w); err == nil && w > 0 {
			return w
		}
	}
	return 100
}

// printf writes to stdout.
func (a *app) printf(format string, args ...any) { fmt.Fprintf(a.out, format, args...) }

// note writes a message for the human to stderr.
func (a *app) note(format string, args ...any) { fmt.Fprintf(a.err, format+"\n", args...) }

// prompt writes question to stderr and reads one line of stdin without its
// line ending. An interrupt (SIGINT) while it waits ends it with
// context.Canceled: the signal is caught for clean exits, so the read must
// not outlive it.
func (a *app) prompt(ctx context.Context, question string) (string, error) {
	fmt.Fprint(a.err, question)
	a.flush()
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := readLine(a.in)
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		if errors.Is(r.err, io.EOF) {
			r.err = nil
		}
		return r.s, r.err
	case <-ctx.Done():
		fmt.Fprintln(a.err)
		return "", ctx.Err()
	}
}

// readLine reads up to a newline, byte by byte so that nothing after it is
// consumed, and drops the line ending.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	var c [1]byte
	for {
		n, err := r.Read(c[:])
		if n == 1 {
			if c[0] == '\n' {
				return strings.TrimSuffix(b.String(), "\r"), nil
			}
			b.WriteByte(c[0])
		}
		if err != nil {
			return strings.TrimSuffix(b.String(), "\r"), err
		}
	}
}
