package cli

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

// hookLockTimeout is the hook's wait for another process's lock unless
// --lock-timeout says otherwise: short, so that a locked store is a quick
// deny rather than a long stall of Claude Code.
const hookLockTimeout = 2 * time.Second

func (a *app) hookCmd() *cobra.Command {
	hook := &cobra.Command{
		Use:   "hook",
		Short: "Agent hooks: an agent's tool calls wait for an operator's decision",
		Long: `Hooks that agents call before they run a command, so that an operator decides
in approve-tui first. "approve-tui hook claude-code" is Claude Code's.`,
		Args: cobra.NoArgs,
	}
	var (
		timeout time.Duration
		low     string
	)
	cc := &cobra.Command{
		Use:   "claude-code [--timeout D] [--low defer|allow]",
		Short: "Claude Code PreToolUse hook: Bash commands wait for approval",
		Long: `A Claude Code PreToolUse hook for the Bash tool. It reads the tool call as
JSON on stdin (session_id, cwd, tool_name, tool_input.command,
tool_input.description, tool_use_id, permission_mode) and answers on stdout
with one JSON object:

  {"hookSpecificOutput":{"hookEventName":"PreToolUse",
    "permissionDecision":"allow"|"deny","permissionDecisionReason":"..."}}

  - Other tools than Bash: no output (Claude Code's own rules apply).
  - A command no rule matches: --low defer (the default) prints nothing, so
    Claude Code's own permission rules apply; --low allow allows it, audited
    as allowed by policy.
  - A hardline command (rm -rf /, mkfs, dd to a disk...): deny at once,
    audited, never submitted: Hermes never runs one, and an approval must not
    make Claude Code run it.
  - Otherwise: a proposal (session claude-code:SESSION_ID, requester
    claude-code, the description as context, the id derived from
    tool_use_id, so a second hook on the same call waits on the same
    proposal) and a wait, heartbeating as its live waiter. Allow only when
    an operator approved it, its pinned command is this call's command byte
    for byte, and its risk has not risen since; deny when denied (with the
    reason), expired, or not decided within --timeout (the proposal is then
    withdrawn: denied by actor "requester").

Registered for PostToolUse and PostToolUseFailure too, it records that an
approved call ran (execution "executed"), once Claude Code reports it ended;
it prints nothing for those events.

It always exits 0 with a JSON answer for a Bash call: malformed input, a
missing or locked store, a timeout, an interrupt, even an internal error are
each a deny with the reason, because Claude Code lets a call run when its
hook crashes, times out or exits otherwise. It never rewrites the command (no
updatedInput). The store's lock wait is 2s unless --lock-timeout is given.

Keep --timeout below the hook's timeout in .claude/settings.json (seconds):

  {"hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
      "command": "approve-tui hook claude-code --timeout 300s", "timeout": 330}]}],
    "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
      "command": "approve-tui hook claude-code"}]}]}}`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{failClosedHook: "claude-code"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			ans := a.claudeCodeHook(cmd, timeout, low)
			if b := ans.JSON(); b != nil {
				_, _ = a.rawOut.Write(b)
			}
			return nil
		},
	}
	cc.Flags().DurationVar(&timeout, "timeout", agent.DefaultHookTimeout, "deny (and withdraw) when no decision came within this long")
	cc.Flags().StringVar(&low, "low", agent.LowDefer, "commands no rule matches: defer (print nothing) or allow")
	hook.AddCommand(cc)
	return hook
}

// claudeCodeHook decides one call; it never panics.
func (a *app) claudeCodeHook(cmd *cobra.Command, timeout time.Duration, low string) (ans agent.HookAnswer) {
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(a.err, "approve-tui hook: panic: %v\n%s", v, debug.Stack())
			ans = agent.HookAnswer{Decision: "deny", Reason: fmt.Sprintf("approve-tui: internal error (%v); denied to be safe", v)}
		}
	}()
	if timeout <= 0 {
		return agent.HookAnswer{Decision: "deny", Reason: "approve-tui: --timeout must be positive; denied to be safe"}
	}
	lockTimeout := hookLockTimeout
	if f := cmd.Flag("lock-timeout"); f != nil && f.Changed {
		lockTimeout = a.lockTimeout
	}
	actor := model.LocalActor(model.SurfaceHook)
	actor.ReadOnly = a.readOnly
	return agent.ClaudeCodeHook(cmd.Context(), a.in, agent.HookOptions{
		Timeout: timeout,
		Low:     low,
		Actor:   actor,
		Log:     a.err,
		Open: func(ctx context.Context) (*storage.Store, error) {
			return storage.Open(ctx, a.db, storage.Options{ReadOnly: a.readOnly, BusyTimeout: lockTimeout})
		},
	})
}
