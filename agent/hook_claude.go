package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"

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
	// A deferred call that Claude Code does not defer falls through to its
	// own permission rules, which run it in the modes that skip asking, and
	// wherever an allow rule matches it (--allowedTools Bash): defer only
	// where that fall-through is a refusal (the permission mode), and only
	// for a call Claude Code defers (the only tool call of its turn).
	if hin.PermissionMode == "default" || hin.PermissionMode == "plan" {
		path, id := hin.TranscriptPath, hin.ToolUseID
		c.canDefer = func() string { return soloToolUse(path, id) }
	}
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

// transcriptTail bounds what is read of a Claude Code transcript: its last
// bytes, where the assistant message of the call being asked is.
const transcriptTail = 8 << 20

// soloToolUse says whether Claude Code's transcript at path shows call
// toolUseID as the only tool call of its assistant reply: "" when it does,
// else why it does not (or cannot be known). Claude Code ignores a defer
// answer for a call whose message holds more than one tool call ("solo
// only") and goes on with its own permission rules, which may run it.
// 2.1.332 keeps a streamed reply as one message per content block (then it
// defers a call of a batch), one not streamed as one message (then it does
// not); the hook input says neither how many calls the turn holds nor how
// the reply was kept. The transcript says how many, whatever the split:
// Claude Code writes the reply before it runs the PreToolUse hooks, as
// lines of type "assistant" sharing the reply's message.id, one per
// content block, and a turn of more than one call is never deferred. The
// file is the agent's, so hostile: only a regular file, not through a
// symbolic link, at most its last transcriptTail bytes; nothing it names
// is opened; a line naming the call that cannot be read, a call not found
// or named in more than one message, a message not known to be complete
// (no line of it carries its stop_reason "tool_use") or one that may
// begin before the part read is "cannot be known".
func soloToolUse(path, toolUseID string) string {
	if path == "" || toolUseID == "" {
		return "the call names no transcript or no tool_use_id, so whether it is the only tool call of its turn is not known"
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "its transcript cannot be read (" + model.Sanitize(err.Error(), model.Line) + ")"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "its transcript is not a regular file"
	}
	off := st.Size() - transcriptTail
	if off < 0 {
		off = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, off, transcriptTail))
	if err != nil {
		return "its transcript cannot be read (" + model.Sanitize(err.Error(), model.Line) + ")"
	}
	lines := bytes.Split(data, []byte("\n"))
	if off > 0 && len(lines) > 0 {
		lines = lines[1:] // begins inside a line
	}
	type entry struct {
		Type    string `json:"type"`
		Message struct {
			ID         string          `json:"id"`
			StopReason *string         `json:"stop_reason"`
			Content    json.RawMessage `json:"content"`
		} `json:"message"`
	}
	type block struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	type assistantLine struct {
		msg    string
		stop   bool
		blocks []block
	}
	var read []assistantLine
	needle := []byte(toolUseID)
	for _, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var e entry
		if err := json.Unmarshal(l, &e); err != nil && bytes.Contains(l, needle) {
			return "its transcript holds a line naming the call that cannot be read"
		} else if err != nil || e.Type != "assistant" {
			read = append(read, assistantLine{}) // another kind of line
			continue
		}
		var blocks []block
		if len(e.Message.Content) > 0 && e.Message.Content[0] == '[' {
			if json.Unmarshal(e.Message.Content, &blocks) != nil {
				if bytes.Contains(l, needle) {
					return "its transcript holds a line naming the call that cannot be read"
				}
				blocks = nil
			}
		}
		read = append(read, assistantLine{msg: e.Message.ID, stop: e.Message.StopReason != nil && *e.Message.StopReason == "tool_use", blocks: blocks})
	}
	// The message of the call: the one message whose lines carry it. Tool
	// call ids are the model API's, unknown before the message, so a line
	// written by anyone else that names the call comes later, under
	// another message id (or adds a tool call to it): more than one
	// message is "cannot be known".
	msg := ""
	for _, l := range read {
		for _, b := range l.blocks {
			if b.Type != "tool_use" || b.ID != toolUseID {
				continue
			}
			switch {
			case l.msg == "":
				return "its transcript shows the call in a message with no id"
			case msg != "" && msg != l.msg:
				return "its transcript shows the call in more than one message"
			}
			msg = l.msg
		}
	}
	if msg == "" {
		return "its transcript does not show the call"
	}
	calls := map[string]bool{}
	stop, first := false, -1
	for i, l := range read {
		if l.msg != msg {
			continue
		}
		if first < 0 {
			first = i
		}
		stop = stop || l.stop
		for _, b := range l.blocks {
			if b.Type == "tool_use" {
				calls[b.ID] = true
			}
		}
	}
	switch {
	case off > 0 && first == 0:
		return "its transcript is longer than what is read, and the call's message may begin before it"
	case len(calls) > 1:
		return fmt.Sprintf("its turn holds %d tool calls: Claude Code defers only the only one of its turn, and would go on with its own permission rules", len(calls))
	case !stop:
		return "its transcript does not show the call's message as complete"
	}
	return ""
}
