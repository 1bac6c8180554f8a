package cli

import (
	"context"
	"errors"
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
)

func (a *app) runCmd() *cobra.Command {
	var (
		f       submitFlags
		timeout time.Duration
		shell   string
	)
	cmd := &cobra.Command{
		Use:   "run [flags] [--timeout D] (-- COMMAND [ARGS...] | --shell 'LINE')",
		Short: "Run a command once an operator approves it (agent side)",
		Long: `Run a command only once an operator has approved it: the agent side of
approve-tui. The command is judged as submit judges it:

  - judged low (and no --risk, and no rule of the store's policy names it,
    by command, pattern or effect) and let through by --unasked: it runs at
    once, audited as allowed by policy ("policy" events in the audit log).
    --unasked nothing asks for every command; read-only runs at once only
    what is proven read-only (git status, ls, cat...); low (the default,
    or the configuration file's risk: unasked) everything judged low. A
    git command whose configuration names a program git would run
    (core.fsmonitor, a pager, a textconv, a filter...) is asked;
  - a hardline rule matches: refused without a proposal (audited), exit 13;
  - otherwise a proposal pins the exact command, directory and risk, and run
    waits for the decision, watching the store and heartbeating as the
    proposal's live waiter (the console and show say so).

Approved: the runtime guard re-classifies the command (if its risk now ranks
above the pinned risk, it does not run), the consumed proposal's command must
be the bytes that were submitted, and then exactly those bytes run, in the
pinned directory, with stdin, stdout, stderr and signals passed through. The
outcome is recorded at the execution boundary: started (with the pid) once the
process exists, executed with "exit code N" once it has ended,
dispatch_failed if it could not start, blocked_after_consume if it was refused
after the approval. Never before. While the command runs, run goes on
heartbeating: if run is killed mid-command, show and the console say "runner
died, outcome unknown" rather than guess.

Denied, expired, timed out or interrupted: it never runs. On --timeout, or
SIGTERM or SIGHUP while waiting, the proposal is parked for --park-window
(1h by default; docs/parking.md): it stays open, and the same run asked
again (same requester, session, command bytes and directory) waits on it
or, once it is approved, takes the approval and runs, once; asked again at
once after that, it is refused as taken. With --park-window 0s, and on
SIGINT, the proposal is withdrawn (denied by actor "requester"), so that
nobody approves a request nobody waits on.

-- COMMAND ARGS... runs that argument vector without a shell. It is pinned as
one POSIX-quoted line that means exactly that vector (rm -rf 'my dir'): a word
with any character a shell treats specially is single-quoted. --shell 'LINE'
runs /bin/sh -c LINE and pins LINE itself.

While the command runs, SIGINT, SIGTERM and SIGHUP are passed on to it (SIGINT
not when this process is in the foreground of a terminal: the terminal has
already delivered it to the command).

Defaults: --session run:USER@HOST, --requester approve-tui-run, --cwd the
current directory, --ttl 10m, --timeout 0 (until decided or expired).

` + exitRowsText(exitRowsOf("run")) + `
A command can exit with any of these codes itself: the "approve-tui:" line on
stderr and the audit log tell them apart.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.run(cmd, f, timeout, shell, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	addSubmitFlags(cmd, &f, "run", "approve-tui-run", "attach the diff in `file`, byte for byte (not -: stdin goes to the command)")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "stop waiting after this long: park (or, with --park-window 0s, withdraw), exit 12 (0: until decided or expired)")
	cmd.Flags().StringVar(&shell, "shell", "", "run this shell `line` with /bin/sh -c instead of COMMAND ARGS...")
	unaskedFlag(cmd)
	parkWindowFlag(cmd)
	return cmd
}

func (a *app) run(cmd *cobra.Command, f submitFlags, timeout time.Duration, shell string, args []string) error {
	if err := a.configFlags(cmd, "risk"); err != nil { // the file's risk: unasked, when --unasked is not given
		return err
	}
	shellMode := cmd.Flags().Changed("shell")
	switch {
	case shellMode && len(args) > 0:
		return usageErrorf("give either --shell 'LINE' or -- COMMAND ARGS..., not both")
	case shellMode && strings.TrimSpace(shell) == "":
		return usageErrorf("the --shell line is empty")
	case !shellMode && len(args) == 0:
		return usageErrorf("nothing to run: give -- COMMAND ARGS... or --shell 'LINE'")
	case !shellMode && args[0] == "":
		return usageErrorf("the command name is empty")
	case f.diffFile == "-":
		return usageErrorf("--diff-file - is not available to run: stdin goes to the command")
	case timeout < 0:
		return usageErrorf("--timeout must not be negative (0: until decided or expired)")
	}
	window, err := parkWindowOf(cmd)
	if err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	actor := model.LocalActor(model.SurfaceRunner)
	actor.ReadOnly = a.readOnly
	d, err := a.draft(f, "", "run", actor)
	if err != nil {
		return err
	}
	if d.Cwd != "" {
		if d.Cwd, err = filepath.Abs(d.Cwd); err != nil {
			return usageErrorf("--cwd: %v", err)
		}
		if fi, err := os.Stat(d.Cwd); err != nil || !fi.IsDir() {
			return usageErrorf("--cwd %s is not a directory", d.Cwd)
		}
	}
	if d.Judging, err = a.riskContext(d.Cwd); err != nil {
		return err
	}
	// Where the configuration requires signatures, nothing runs without
	// them: a trust file that cannot be used refuses before anything is
	// submitted.
	trustSet, err := a.agentTrust()
	if err != nil {
		return err
	}
	s, err := a.openSide(cmd.Context(), false, config.AgentSide)
	if err != nil {
		return err
	}
	defer s.Close()

	// Signals reach the runner through sigs: while it waits they withdraw the
	// proposal, while the command runs they are passed on. The context is
	// not cancelled by them (a running command's outcome is still recorded).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	req := agent.RunRequest{Draft: d, Timeout: timeout, Stdin: a.in, Stdout: a.rawOut, Stderr: a.rawErr,
		Log: a.err, Signals: sigs, Actor: actor, Unasked: cmd.Flags().Lookup("unasked").Value.String(), Trust: trustSet,
		ParkWindow: window, Paged: pagedBy(cfg)}
	if shellMode {
		req.Shell = shell
	} else {
		req.Argv = args
	}
	res, err := agent.Run(context.WithoutCancel(cmd.Context()), s, req)
	var lower *risk.LowerRiskError
	switch {
	case errors.As(err, &lower):
		return usageErrorf("--risk %s would lower the classifier's risk %s: --risk may only raise it", lower.Asked, lower.Classified)
	case err != nil:
		return err
	case res.Outcome == agent.RunRan:
		// The command's own exit code, and nothing more to say.
		return &exitError{code: res.ExitCode, passthrough: true}
	}
	return &exitError{code: res.ExitCode, msg: res.Message}
}

// agentTrust is the trust configuration run and the hooks verify with:
// nil when the configuration asks for none (trust: off, or no
// allowed_signers); the trust file loaded as the agent side must (one its
// own user cannot change), else an error saying why, and nothing runs.
func (a *app) agentTrust() (*trust.Settings, error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, err
	}
	set, err := cfg.TrustSettings(storage.DefaultIdentity(a.db), config.AgentSide)
	if err != nil {
		return nil, exitf(ExitError, "%v; under trust required nothing runs without a trust file it can rely on", err)
	}
	return set, nil
}
