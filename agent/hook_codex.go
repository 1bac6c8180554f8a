package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/approve-tui/approve-tui/model"
)

// The Codex CLI adapter (`approve-tui hook codex`), after Codex's hooks
// documentation (https://developers.openai.com/codex/hooks) and its hook
// engine (openai/codex, codex-rs/hooks: src/events/pre_tool_use.rs,
// src/events/permission_request.rs, src/engine/output_parser.rs, and the
// schemas in schema/generated/).
//
// Codex writes a PreToolUse event on the hook's stdin: session_id, turn_id,
// transcript_path, cwd, hook_event_name, model, permission_mode,
// tool_name ("Bash" for its shell tools, also apply_patch and MCP tools),
// tool_input ({"command": "..."} for Bash) and tool_use_id. On exit 0 it
// reads stdout: no output is no decision (the call goes on under Codex's
// own approval policy);
//
//	{"hookSpecificOutput":{"hookEventName":"PreToolUse",
//	  "permissionDecision":"deny","permissionDecisionReason":"..."}}
//
// blocks the call, the reason going to the model. Codex's PreToolUse does
// not take "allow" (nor "ask"): an allow without updatedInput is reported
// as a failed hook and decides nothing. So an approved call is answered
// with no output, and Codex's own approval rules still apply to it. Exit 2
// with a reason on stderr also blocks; a hook that crashes, exits
// otherwise, prints invalid JSON or outlives its timeout (600 s unless the
// hook's "timeout" says otherwise, in seconds) decides nothing: the call
// runs. Hence the hook answers every failure with the deny JSON and exit 0,
// in time.
//
// PermissionRequest (Codex about to ask the user for approval) carries no
// tool_use_id, so an operator's approval cannot be tied to one call there:
// the hook prints nothing for it, and Codex asks as it would. PostToolUse
// (tool_use_id, tool_input, tool_response) of a call it let through is
// recorded as executed.

// CodexHookInput is Codex's hook input: the keys the hook uses.
type CodexHookInput struct {
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	Model          string          `json:"model"`
	PermissionMode string          `json:"permission_mode"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ToolResponse   json.RawMessage `json:"tool_response"`
}

// codexShellInput is the input of Codex's Bash tool.
type codexShellInput struct {
	Command     *string `json:"command"`
	Description string  `json:"description"`
}

var codexProtocol = &protocol{agent: AgentCodex, requester: "codex", idPrefix: "cx-",
	preEvent: "PreToolUse", canAllow: false, decode: decodeCodex}

// CodexHook reads one Codex hook event from in and decides it (see
// runHook): PreToolUse calls of Bash are gated, PostToolUse of a call it
// let through is recorded, anything else (PermissionRequest included) is
// Silent. An allow prints nothing: Codex's PreToolUse cannot say allow.
func CodexHook(ctx context.Context, in io.Reader, o HookOptions) HookAnswer {
	return runHook(ctx, in, o, codexProtocol)
}

// CodexHookID is the approval id of Codex's call tool_use_id of session
// sessionID ("cx-" and 12 characters; see HookID).
func CodexHookID(sessionID, toolUseID string) string {
	return callID("cx-", sessionID, toolUseID)
}

func decodeCodex(data []byte) (hookCall, string) {
	var cin CodexHookInput
	if err := decodeOne(data, &cin); err != nil {
		return hookCall{}, fmt.Sprintf("malformed PreToolUse input (%v)", err)
	}
	c := hookCall{tool: cin.ToolName, sessionID: cin.SessionID, cwd: cin.Cwd, key: cin.ToolUseID}
	switch cin.HookEventName {
	case "", "PreToolUse":
		c.event = eventPre
	case "PostToolUse":
		c.event = eventPost
	default:
		return c, "" // PermissionRequest and the rest: no say
	}
	shell := cin.ToolName == "Bash"
	if c.event == eventPost {
		var si codexShellInput
		if !shell || decodeOne(cin.ToolInput, &si) != nil {
			return c, ""
		}
		c.guarded, c.command = true, si.Command
		c.outcome, c.outcomeReason = model.ExecExecuted, "ran in Codex (PostToolUse)"
		return c, ""
	}
	if cin.ToolName == "" {
		return c, "malformed PreToolUse input: no tool_name"
	}
	if !shell {
		return c, ""
	}
	if len(cin.ToolInput) == 0 {
		return c, "malformed PreToolUse input: a Bash call without tool_input"
	}
	var si codexShellInput
	if err := decodeOne(cin.ToolInput, &si); err != nil {
		return c, fmt.Sprintf("malformed Bash tool_input (%v)", err)
	}
	c.guarded, c.command, c.description = true, si.Command, si.Description
	return c, ""
}

// codexJSON is a's PreToolUse answer in Codex's protocol: a deny, or
// nothing (no decision) for an allow.
func codexJSON(a HookAnswer) []byte {
	if a.Decision == "allow" {
		return nil
	}
	if a.Reason == "" {
		a.Reason = "approve-tui: denied" // Codex ignores a deny without a reason
	}
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	var out struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}
	out.HookSpecificOutput = specific{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: a.Reason}
	return encodeLine(out)
}
