package cli

import (
	"github.com/approve-tui/approve-tui/agent"
	"github.com/spf13/cobra"
)

func (a *app) geminiHookCmd() *cobra.Command {
	return a.agentHookCmd(&cobra.Command{
		Use:   "gemini [--timeout D] [--low pass|allow]",
		Short: "Gemini CLI BeforeTool hook: shell commands wait for approval",
		Long: `A Gemini CLI BeforeTool hook for its shell tool, run_shell_command. It reads
the tool call as JSON on stdin (session_id, cwd, timestamp, tool_name,
tool_input.command, tool_input.description, tool_input.dir_path,
tool_input.is_background) and answers on stdout with one JSON object:

  {"decision":"deny","reason":"..."}         the reason goes to the model
  {"decision":"allow","systemMessage":"..."}  the message goes to the user

"allow" lets the tool go on; Gemini CLI's own confirmation rules still
apply.

  - Other tools: no output (Gemini CLI's own rules apply).
  - A command no rule matches: --low pass (the default) prints nothing;
    --low allow allows it, audited as allowed by policy.
` + hookRulesHelp + `
    The event has no call id: the proposal's id derives from the session,
    the event's timestamp and the command. The proposal's cwd is dir_path
    when the call gives one.

For a shell call it exits 0 with a JSON answer on every failure it can
see: malformed input, a missing or locked store, a timeout, an interrupt,
an internal error. Bad flags (or a bad --lock-timeout) exit 2 with the
reason on stderr, which Gemini CLI also reads as a block. Gemini CLI 0.61
reads a hook that cannot start (the shell's "not found", exit 127) as a
deny too; one that exits 1 or is killed at its "timeout" only warns: the
command runs. So keep --timeout below "timeout", which is in milliseconds
(60000 when not set: hence --timeout defaults to 50s).

"approve-tui hook install gemini" writes this into ~/.gemini/settings.json
(or .gemini/settings.json), with approve-tui's full path and --db: with
GITHUB_SHA set (GitHub Actions) Gemini CLI strips variables such as
APPROVE_TUI_DB from a hook's environment. Gemini CLI runs no hook, user hooks included, in a folder it
does not trust:

  {"hooks": {
    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command",
      "name": "approve-tui", "command": "approve-tui hook gemini --timeout 300s",
      "timeout": 330000}]}]}}

The hooks system is "hooksConfig": {"enabled": true} (on unless set false;
before 0.61 "tools": {"enableHooks": true}). "approve-tui hook doctor gemini"
checks all this.`,
	}, agent.AgentGemini, agent.GeminiHook, agent.DefaultGeminiTimeout, true)
}
