package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/notify"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

// hookLockTimeout is the hook's wait for another process's lock unless
// --lock-timeout says otherwise: short, so that a locked store is a quick
// deny rather than a long stall of the agent.
const hookLockTimeout = 2 * time.Second

// hookLockFlag gives a hook command its own --lock-timeout, with the
// hook's default, in place of the global one (whose default is longer), so
// that its help shows the wait it uses.
func hookLockFlag(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "lock-timeout", hookLockTimeout,
		"how long to wait for another process's lock (short: a locked store is a quick deny)")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if *d < 0 {
			return usageErrorf("--lock-timeout must not be negative")
		}
		return nil
	}
}

func (a *app) hookCmd() *cobra.Command {
	hook := &cobra.Command{
		Use:   "hook",
		Short: "Agent hooks: an agent's tool calls wait for an operator's decision",
		Long: `Hooks that agents call before they run a command, so that an operator
decides in approve-tui first: "approve-tui hook claude-code" is Claude
Code's, "approve-tui hook codex" the Codex CLI's, "approve-tui hook gemini"
the Gemini CLI's, and "approve-tui hook hermes" is the adapter of Hermes'
approval transport (its plugin runs it). Each speaks its agent's hook
protocol and fails closed: any failure it can see is a deny in that
protocol. "approve-tui hook install AGENT" writes the agent's settings
(each hook's --help shows what it writes); "approve-tui hook doctor AGENT"
checks that the agent will run the hook; "approve-tui hook uninstall AGENT"
takes it out again.`,
		Args: cobra.NoArgs,
	}
	hook.AddCommand(a.claudeCodeHookCmd(), a.codexHookCmd(), a.geminiHookCmd(), a.hermesHookCmd(),
		a.hookInstallCmd(), a.hookUninstallCmd(), a.hookDoctorCmd())
	return hook
}

// The proposal, wait and fail-closed rules every hook shares, for the
// --help texts.
const hookRulesHelp = `  - What goes without asking is --unasked: low (the default, or the
    configuration file's risk: unasked) lets through what approve-tui's
    judgement finds low, read-only only what it proves read-only (git
    status, ls, cat...), nothing lets nothing through; --low says how such a command is
    answered. A git command whose configuration (the repository's, its
    includes, ~/.gitconfig) names a program git would run (core.fsmonitor,
    a pager, a textconv, a filter...) is asked, at least medium. Everything
    else is asked as below.
  - A command a rule of the store's policy names (approve-tui policy set) by
    command, pattern or effect: asked as below whatever its risk, --unasked
    and --low, the rule named in the reason.
  - A hardline command (rm -rf /, mkfs, dd to a disk...): deny at once,
    audited, never submitted: Hermes never runs one, and an approval must not
    make the agent run it.
  - Otherwise: a proposal (session AGENT:SESSION_ID, requester AGENT, the
    call's description as context, its id derived from the call, so a second
    hook process on the same call waits on the same proposal) and a wait,
    heartbeating as its live waiter. Allow only when an operator approved it,
    its pinned command is this call's command byte for byte, and its risk
    has not risen since; deny when denied (with the reason) or expired.
  - Not decided within --timeout, or the agent stopped waiting (SIGTERM or
    SIGINT: what an agent sends at its own hook timeout; or the process
    that started the hook ended): the proposal is parked for --park-window
    (1h by default; docs/parking.md) and the answer is a deny saying so:
    "not run: parked as ID; ... Ask again later with the exact same
    command in the same directory". The same call asked again (same
    session, command bytes and directory) waits on it, or, once approved,
    takes the approval and is let through, once, after every check above.
  - With --park-window 0s: not decided within --timeout withdraws the
    proposal (denied by actor "requester"); the agent stopping the hook
    abandons it (expired, "ended: abandoned: ..." in show), not denied.`

func (a *app) claudeCodeHookCmd() *cobra.Command {
	return a.agentHookCmd(&cobra.Command{
		Use:   "claude-code [--timeout D] [--low pass|allow]",
		Short: "Claude Code PreToolUse hook: Bash and PowerShell commands wait for approval",
		Long: `A Claude Code PreToolUse hook for its shell tools, Bash and PowerShell. It
reads the tool call as JSON on stdin (session_id, cwd, tool_name,
tool_input.command, tool_input.description, tool_input.run_in_background,
tool_use_id) and answers on stdout with one JSON object:

  {"hookSpecificOutput":{"hookEventName":"PreToolUse",
    "permissionDecision":"allow"|"deny","permissionDecisionReason":"..."}}

  - Other tools: no output (Claude Code's own rules apply).
  - A Bash command no rule matches: --low pass (the default) prints nothing,
    so Claude Code's own permission rules apply; --low allow allows it,
    audited as allowed by policy. (--low defer, the old name of pass, is
    still accepted; it has nothing to do with Claude Code's own "defer",
    which only --defer answers.)
  - --defer, for headless sessions (claude -p): where the input's
    permission_mode is default or plan (there Claude Code refuses a deferred
    call it cannot resume) and the transcript it names shows the call as the
    only tool call of its turn (Claude Code ignores defer in a turn of more
    than one, and goes on with its own permission rules), a call that needs
    approval is parked at once
    and answered "permissionDecision":"defer": the session ends with
    stop_reason "tool_deferred", and "cd DIR && claude -p --resume SESSION
    --permission-mode MODE" asks the same call again (same session and
    tool_use_id, so the same proposal), let through once it is approved. In
    any other case (another mode, a batch, a transcript it cannot read) the
    parked deny instead.
  - A PowerShell command no rule matches needs approval all the same: the
    rules are written for POSIX shells, so its risk is unknown (pinned as
    medium).
` + hookRulesHelp + `

Registered for PostToolUse and PostToolUseFailure too, it records what
became of an approved call once Claude Code reports it: execution "executed"
when it ended; "started" when it was run_in_background, since Claude Code
then reports the launch and never the end. It prints nothing for those
events.

It always exits 0 with a JSON answer for a shell call: malformed input, a
missing or locked store, a timeout, an interrupt, bad flags, even an
internal error are each a deny with the reason. It never rewrites the
command (no updatedInput). The store's lock wait is --lock-timeout (2s by
default, shorter than the other commands' wait).

"approve-tui hook install claude-code" writes this, with approve-tui's full
path and --db, into ~/.claude/settings.json (or .claude/settings.json);
"timeout" is in seconds: keep --timeout below it. "approve-tui hook doctor
claude-code" checks it.

  {"hooks": {
    "PreToolUse": [{"matcher": "Bash|PowerShell", "hooks": [{"type": "command",
      "command": "approve-tui hook claude-code --timeout 300s", "timeout": 330,
      "onFailure": "block"}]}],
    "PostToolUse": [{"matcher": "Bash|PowerShell", "hooks": [{"type": "command",
      "command": "approve-tui hook claude-code"}]}],
    "PostToolUseFailure": [{"matcher": "Bash|PowerShell", "hooks": [{"type": "command",
      "command": "approve-tui hook claude-code"}]}]}}

"onFailure": "block" (Claude Code 2.1.295 and later) makes Claude Code block
the call when the hook cannot start (approve-tui not found: give its full
path), is killed at its timeout, or exits with an unexpected code. Earlier
versions do not honour it: there any such failure lets the command run, and
the hook's own deny answers, given before --timeout, are the only guard.`,
	}, agent.AgentClaudeCode, agent.ClaudeCodeHook, agent.DefaultHookTimeout, true)
}

// agentHookCmd makes cmd (its Use, Short and Long written) the hook
// command of agent who: no arguments, answered by run, failing closed;
// --timeout (def by default), --low when withLow (else unasked commands
// pass), --unasked and --lock.
func (a *app) agentHookCmd(cmd *cobra.Command, who agent.Agent, run func(context.Context, io.Reader, agent.HookOptions) agent.HookAnswer,
	def time.Duration, withLow bool) *cobra.Command {
	var timeout, lock time.Duration
	low := agent.LowPass
	cmd.Args = cobra.NoArgs
	cmd.Annotations = map[string]string{failClosedHook: string(who)}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		a.writeHookAnswer(a.agentHook(cmd, who, run, timeout, lock, low))
		return nil
	}
	cmd.Flags().DurationVar(&timeout, "timeout", def, "deny (and park, or with --park-window 0s withdraw) when no decision came within this long")
	if withLow {
		cmd.Flags().StringVar(&low, "low", agent.LowPass, "how a command that goes unasked is answered: pass (print nothing) or allow")
	}
	unaskedFlag(cmd)
	parkWindowFlag(cmd)
	if who == agent.AgentClaudeCode {
		cmd.Flags().Bool("defer", false, `in a headless session (claude -p) whose permission_mode is default or plan, for the only tool call of its turn, answer Claude Code's "defer" instead of the parked deny: the session ends, and "claude -p --resume SESSION" asks again once it is approved`)
	}
	hookLockFlag(cmd, &lock)
	return cmd
}

// parkWindowFlag gives cmd (run, or a hook) its --park-window.
func parkWindowFlag(cmd *cobra.Command) {
	cmd.Flags().Duration("park-window", agent.DefaultParkWindow,
		"how long the proposal stays open after the wait stops (timeout, the agent's signal), so that the same call asked again takes a late approval once; 0s: off (withdrawn or abandoned); not given: the configuration file's park: window, else the default")
}

// parkWindowOf is the park window run or a hook runs with, as the agent
// side takes it (negative: off): --park-window when given (0s: off), else
// the configuration file's park: window (0s: off), else the default.
func parkWindowOf(cmd *cobra.Command, cfg *config.File) (time.Duration, error) {
	fl := cmd.Flags().Lookup("park-window")
	if fl == nil {
		return -1, nil
	}
	if !fl.Changed {
		return cfg.ParkWindow(), nil
	}
	d, err := time.ParseDuration(fl.Value.String())
	switch {
	case err != nil:
		return 0, err
	case d < 0:
		return 0, usageErrorf("--park-window must not be negative (0s: off)")
	case d == 0:
		return -1, nil
	}
	return d, nil
}

// pagedBy says whether a route of cfg pages about a proposal.
func pagedBy(cfg *config.File) func(*storage.Record) bool {
	return func(rec *storage.Record) bool {
		r := notify.RouteFor(cfg, rec, notify.KindPage)
		return r != nil && len(r.Steps) > 0
	}
}

// writeHookAnswer prints ans, if it says anything.
func (a *app) writeHookAnswer(ans agent.HookAnswer) {
	if b := ans.JSON(); b != nil {
		_, _ = a.rawOut.Write(b)
	}
}

// hookOf is the agent whose hook cmd is ("" for other commands): its
// failures before it runs (flags, global flags included) are answered with
// a deny in that agent's protocol.
func hookOf(cmd *cobra.Command) agent.Agent {
	if cmd == nil {
		return ""
	}
	return agent.Agent(cmd.Annotations[failClosedHook])
}

// hookFailCode is the exit code of such an answer: 0 for Claude Code, which
// lets a call run when its hook exits otherwise (the JSON deny blocks it);
// 2 for Codex and Gemini CLI, which read exit 2 with the reason on stderr
// as a block (their deny JSON is on stdout all the same).
func hookFailCode(who agent.Agent) int {
	if who == agent.AgentClaudeCode {
		return ExitOK
	}
	return ExitUsage
}

// agentHook decides one call with run; it never panics.
func (a *app) agentHook(cmd *cobra.Command, who agent.Agent, run func(context.Context, io.Reader, agent.HookOptions) agent.HookAnswer,
	timeout, lockTimeout time.Duration, low string) (ans agent.HookAnswer) {
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(a.err, "approve-tui hook: panic: %v\n%s", v, debug.Stack())
			ans = agent.Denied(who, fmt.Sprintf("approve-tui: internal error (%v); denied to be safe", v))
		}
	}()
	if timeout <= 0 {
		return agent.Denied(who, "approve-tui: --timeout must be positive; denied to be safe")
	}
	if low == agent.LowDefer {
		fmt.Fprintln(a.err, `approve-tui: --low defer is deprecated: use --low pass (Claude Code's own "defer" decision is something else)`)
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return agent.Denied(who, fmt.Sprintf("approve-tui: %v; denied to be safe", err))
	}
	// The file's risk: unasked, when --unasked is not given.
	if err := applyConfigFlags(cmd, cfg, "risk"); err != nil {
		return agent.Denied(who, fmt.Sprintf("approve-tui: %v; denied to be safe", err))
	}
	unasked := ""
	if fl := cmd.Flags().Lookup("unasked"); fl != nil {
		unasked = fl.Value.String()
	}
	rc := cfg.RiskContext("", a.db)
	trustSet, err := cfg.TrustSettings(storage.DefaultIdentity(a.db), config.AgentSide)
	if err != nil {
		return agent.Denied(who, fmt.Sprintf("approve-tui: %v; under trust required nothing is let through without a trust file it can rely on: denied", err))
	}
	window, err := parkWindowOf(cmd, cfg)
	if err != nil {
		return agent.Denied(who, fmt.Sprintf("approve-tui: %v; denied to be safe", err))
	}
	deferring := false
	if fl := cmd.Flags().Lookup("defer"); fl != nil {
		deferring = fl.Value.String() == "true"
	}
	actor := model.LocalActor(model.SurfaceHook)
	actor.ReadOnly = a.readOnly
	return run(cmd.Context(), a.in, agent.HookOptions{
		ParkWindow: window,
		Paged:      pagedBy(cfg),
		Defer:      deferring,
		Timeout:    timeout,
		Low:        low,
		Unasked:    unasked,
		Risk:       rc,
		Actor:      actor,
		Log:        a.err,
		Store:      a.db,
		Trust:      trustSet,
		Open: func(ctx context.Context) (*storage.Store, error) {
			return storage.Open(ctx, a.db, storage.Options{ReadOnly: a.readOnly, BusyTimeout: lockTimeout, Risk: rc})
		},
	})
}

// unaskedFlag gives cmd (run, or a hook) its --unasked.
func unaskedFlag(cmd *cobra.Command) {
	cmd.Flags().String("unasked", config.DefaultUnasked,
		"what goes without asking: nothing, read-only (only what is proven read-only) or low (everything judged low); default: the configuration file's risk: unasked, else "+config.DefaultUnasked)
}
