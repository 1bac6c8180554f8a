package cli

import (
	"github.com/approve-tui/approve-tui/agent"
	"github.com/spf13/cobra"
)

func (a *app) codexHookCmd() *cobra.Command {
	return a.agentHookCmd(&cobra.Command{
		Use:   "codex [--timeout D]",
		Short: "Codex CLI PreToolUse hook: Bash commands wait for approval",
		Long: `A Codex CLI PreToolUse hook for its shell tool (tool_name "Bash"). It reads
the tool call as JSON on stdin (session_id, turn_id, cwd, tool_name,
tool_input.command, tool_use_id) and answers a deny on stdout with

  {"hookSpecificOutput":{"hookEventName":"PreToolUse",
    "permissionDecision":"deny","permissionDecisionReason":"..."}}

and an approval with no output at all: Codex's PreToolUse takes no "allow"
(it would count the hook as failed), so an approved call goes on under
Codex's own approval policy, which may still ask in Codex.

  - Other tools (apply_patch, MCP tools): no output.
  - A command no rule matches: no output (Codex's own rules apply).
` + hookRulesHelp + `

PermissionRequest events (Codex about to ask for approval) carry no call
id, so an approval in approve-tui cannot be tied to one call there: the hook
prints nothing for them and Codex asks as usual. Registered for PostToolUse,
it records that an approved call ran (execution "executed"); it prints
nothing then. At its hook timeout Codex stops waiting without signalling
the hook and runs the call: its PostToolUse then reports a run nobody
approved, and the proposal is abandoned saying so (the hook still waiting
on it ends).

For a shell call it exits 0 with the deny JSON on every failure it can see:
malformed input, a missing or locked store, a timeout, an interrupt, an
internal error. Bad flags (or a bad --lock-timeout) exit 2 with the reason
on stderr, which Codex also reads as a block. A hook that cannot start,
crashes or outlives its "timeout" lets the call run: Codex has no setting to
block then, so give approve-tui's full path and keep --timeout below
"timeout" (seconds, 600 by default).

Codex runs only the hooks the user trusted (its /hooks review stores a hash
of each in ~/.codex/config.toml, and any edit voids it): "approve-tui hook
install codex" writes this into ~/.codex/hooks.json (or
<repo>/.codex/hooks.json, loaded only in a trusted project), with
approve-tui's full path and --db, and the trust; "approve-tui hook doctor
codex" checks it:

  {"hooks": {
    "PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command",
      "command": "approve-tui hook codex --timeout 300s", "timeout": 330,
      "statusMessage": "Waiting for approval in approve-tui"}]}],
    "PostToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command",
      "command": "approve-tui hook codex"}]}]}}

Hooks are on by default in current Codex; older builds need
"[features] codex_hooks = true" in config.toml.`,
	}, agent.AgentCodex, agent.CodexHook, agent.DefaultHookTimeout, false)
}
