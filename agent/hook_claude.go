package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/approve-tui/approve-tui/model"
)

// The Claude Code adapter (`approve-tui hook claude-code`). Claude Code
// (https://code.claude.com/docs/en/hooks) writes a PreToolUse event as
// JSON on the hook's stdin, and reads on its stdout, when the hook exits 0,
//
//	{"hookSpecificOutput":{"hookEventName":"PreToolUse",
//	  "permissionDecision":"allow"|"deny","permissionDecisionReason":"..."}}
//
// (no output: Claude Code's own permission rules apply). A hook that
// cannot start, times out or exits with another code than 0 or 2 lets the
// call run, unless its settings entry says "onFailure": "block" (Claude
// Code 2.1.295 and later): so the hook always answers, exit 0, in time.
//
// Its shell tools are Bash and, on Windows, PowerShell; both take
// {"command", "description", "timeout", "run_in_background"}. The
// classifier's rules are written for POSIX shells: a PowerShell command
// that no rule matches still needs approval (raised to medium risk).
//
// Registered for PostToolUse and PostToolUseFailure too, the hook records
// what became of a call it let through: executed once Claude Code reports
// it ended; started when it was run_in_background, since Claude Code then
// reports the launch, not the end.

// HookInput is Claude Code's hook input: the keys the hook uses (others are
// ignored). ToolInput is decoded only for the shell tools; other tools'
// inputs have other shapes.
type HookInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	PermissionMode string          `json:"permission_mode"`
	// ToolResponse is PostToolUse's report of the call.
	ToolResponse json.RawMessage `json:"tool_response"`
}

// claudeShellInput is the input of Claude Code's Bash and PowerShell tools.
type claudeShellInput struct {
	Command         *string `json:"command"`
	Description     string  `json:"description"`
	RunInBackground bool    `json:"run_in_background"`
}

// claudeShells are Claude Code's shell tools; the value says whether the
// classifier's rules cover its language.
var claudeShells = map[string]bool{"Bash": true, "PowerShell": false}

var claudeProtocol = &protocol{agent: AgentClaudeCode, requester: "claude-code", idPrefix: "cc-",
	preEvent: "PreToolUse", canAllow: true, decode: decodeClaude}

// ClaudeCodeHook reads one Claude Code hook event from in and decides it
// (see runHook): PreToolUse calls of Bash and PowerShell are gated,
// PostToolUse and PostToolUseFailure of a call it let through are recorded,
// anything else is Silent.
func ClaudeCodeHook(ctx context.Context, in io.Reader, o HookOptions) HookAnswer {
	return runHook(ctx, in, o, claudeProtocol)
}

// HookID is the approval id of Claude Code's call tool_use_id of session
// sessionID: the same call always maps to the same proposal, so a second
// hook process on it (Claude Code runs matching hooks in parallel) waits on
// the first one's proposal instead of submitting another. "cc-" and 9
// bytes of SHA-256, URL-safe base64: 15 characters an operator can type.
func HookID(sessionID, toolUseID string) string {
	return callID("cc-", sessionID, toolUseID)
}

func decodeClaude(data []byte) (hookCall, string) {
	var hin HookInput
	if err := decodeOne(data, &hin); err != nil {
		return hookCall{}, fmt.Sprintf("malformed PreToolUse input (%v)", err)
	}
	c := hookCall{tool: hin.ToolName, sessionID: hin.SessionID, cwd: hin.Cwd, key: hin.ToolUseID}
	switch hin.HookEventName {
	case "", "PreToolUse":
		c.event = eventPre
	case "PostToolUse", "PostToolUseFailure":
		c.event = eventPost
	default:
		return c, ""
	}
	covered, shell := claudeShells[hin.ToolName]
	if c.event == eventPost {
		var si claudeShellInput
		if !shell || decodeOne(hin.ToolInput, &si) != nil {
			return c, "" // not a call the hook gated: nothing to record
		}
		c.guarded, c.command = true, si.Command
		c.outcome, c.outcomeReason = claudeOutcome(hin.HookEventName, si.RunInBackground, hin.ToolResponse)
		return c, ""
	}
	if hin.ToolName == "" {
		return c, "malformed PreToolUse input: no tool_name"
	}
	if !shell {
		return c, ""
	}
	if len(hin.ToolInput) == 0 {
		return c, "malformed PreToolUse input: a " + hin.ToolName + " call without tool_input"
	}
	var si claudeShellInput
	if err := decodeOne(hin.ToolInput, &si); err != nil {
		return c, fmt.Sprintf("malformed %s tool_input (%v)", hin.ToolName, err)
	}
	c.guarded, c.command, c.description = true, si.Command, si.Description
	c.unknownRisk, c.background = !covered, si.RunInBackground
	// A deferred call that Claude Code cannot resume falls through to its
	// own permission rules, which run it in the modes that skip asking: defer
	// only where that fall-through is a refusal.
	c.canDefer = hin.PermissionMode == "default" || hin.PermissionMode == "plan"
	return c, ""
}

// claudeOutcome is what Claude Code's post-tool event says of a call. A
// background call's PostToolUse comes once it was launched: it started,
// and Claude Code reports nothing when it ends.
func claudeOutcome(event string, background bool, response json.RawMessage) (model.ExecutionStatus, string) {
	var resp struct {
		Interrupted bool `json:"interrupted"`
	}
	_ = json.Unmarshal(response, &resp)
	switch {
	case background && event == "PostToolUseFailure":
		return model.ExecStarted, "launched in the background by Claude Code, which reported a failure (PostToolUseFailure); whether it ran is not known"
	case background:
		return model.ExecStarted, "launched in the background by Claude Code (" + event + "); its end is not reported"
	case resp.Interrupted:
		return model.ExecExecuted, "ran in Claude Code, interrupted (" + event + ")"
	case event == "PostToolUseFailure":
		return model.ExecExecuted, "ran in Claude Code, which reported a failure (PostToolUseFailure)"
	}
	return model.ExecExecuted, "ran in Claude Code (" + event + ")"
}

// claudeJSON is a's PreToolUse answer in Claude Code's protocol.
func claudeJSON(a HookAnswer) []byte {
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	var out struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}
	out.HookSpecificOutput = specific{HookEventName: "PreToolUse", PermissionDecision: a.Decision,
		PermissionDecisionReason: a.Reason}
	return encodeLine(out)
}
