package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// The Gemini CLI adapter (`approve-tui hook gemini`), after Gemini CLI's
// hooks reference (https://geminicli.com/docs/hooks/reference,
// google-gemini/gemini-cli docs/hooks/reference.md and docs/hooks/index.md)
// and its hook runner (packages/core/src/hooks/hookRunner.ts, types.ts,
// hookAggregator.ts).
//
// Gemini CLI writes a BeforeTool event on the hook's stdin: session_id,
// transcript_path, cwd, hook_event_name, timestamp (ISO 8601), tool_name
// ("run_shell_command" for its shell tool), tool_input ({"command",
// "description", "dir_path", "is_background"} for it) and, for MCP tools,
// mcp_context. On exit 0 it parses stdout as JSON; top-level
//
//	{"decision":"deny","reason":"..."}
//
// (or "block") stops the tool, the reason going to the model as the tool's
// error; "allow", or no output, lets it go on (Gemini CLI's own
// confirmation rules still apply). Exit 2 with a reason on stderr also
// blocks. Any other exit code, a crash, a hook that cannot start and a
// hook killed at its timeout ("timeout" in its settings entry, in
// milliseconds, default 60000) are warnings: the tool runs. Hence the hook
// answers every failure with the deny JSON and exit 0, in time; its
// --timeout defaults to DefaultGeminiTimeout, inside the default hook
// timeout.
//
// The event carries no call id: the proposal's id derives from the
// session, the event's timestamp and the command, which every hook process
// on one event shares. AfterTool (registered too) carries none either, nor
// BeforeTool's timestamp: its report of a call is tied to the proposal by
// the call's match (session, command and directory), only when exactly one
// proposal can be that call.

// DefaultGeminiTimeout is `hook gemini`'s default --timeout: an answer
// within Gemini CLI's default 60 s hook timeout.
const DefaultGeminiTimeout = 50 * time.Second

// GeminiHookInput is Gemini CLI's hook input: the keys the hook uses.
type GeminiHookInput struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	Timestamp     string          `json:"timestamp"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	// ToolResponse is AfterTool's report of the call.
	ToolResponse json.RawMessage `json:"tool_response"`
}

// geminiShellInput is the input of Gemini CLI's run_shell_command tool.
type geminiShellInput struct {
	Command      *string `json:"command"`
	Description  string  `json:"description"`
	DirPath      string  `json:"dir_path"`
	IsBackground bool    `json:"is_background"`
}

// geminiShell is Gemini CLI's shell tool.
const geminiShell = "run_shell_command"

var geminiProtocol = &protocol{agent: AgentGemini, requester: "gemini", idPrefix: "gm-",
	preEvent: "BeforeTool", canAllow: true, decode: decodeGemini}

// GeminiHook reads one Gemini CLI hook event from in and decides it (see
// runHook): BeforeTool calls of run_shell_command are gated, AfterTool of
// one is recorded (tied by its match), anything else is Silent.
func GeminiHook(ctx context.Context, in io.Reader, o HookOptions) HookAnswer {
	if o.Timeout <= 0 {
		o.Timeout = DefaultGeminiTimeout
	}
	return runHook(ctx, in, o, geminiProtocol)
}

// GeminiHookID is the approval id of Gemini CLI's call of command at event
// timestamp in session sessionID ("gm-" and 12 characters; see HookID).
func GeminiHookID(sessionID, timestamp, command string) string {
	return callID("gm-", sessionID, timestamp+"\x00"+command)
}

func decodeGemini(data []byte) (hookCall, string) {
	var gin GeminiHookInput
	if err := decodeOne(data, &gin); err != nil {
		return hookCall{}, fmt.Sprintf("malformed BeforeTool input (%v)", err)
	}
	c := hookCall{tool: gin.ToolName, sessionID: gin.SessionID, cwd: gin.Cwd}
	switch gin.HookEventName {
	case "", "BeforeTool":
		c.event = eventPre
	case "AfterTool":
		return decodeGeminiAfter(gin, c), ""
	default:
		return c, "" // the rest: no say
	}
	if gin.ToolName == "" {
		return c, "malformed BeforeTool input: no tool_name"
	}
	if gin.ToolName != geminiShell {
		return c, ""
	}
	if len(gin.ToolInput) == 0 {
		return c, "malformed BeforeTool input: a " + geminiShell + " call without tool_input"
	}
	var si geminiShellInput
	if err := decodeOne(gin.ToolInput, &si); err != nil {
		return c, fmt.Sprintf("malformed %s tool_input (%v)", geminiShell, err)
	}
	c.guarded, c.command, c.description, c.background = true, si.Command, si.Description, si.IsBackground
	c.cwd = geminiDir(c.cwd, si.DirPath)
	if gin.Timestamp != "" && si.Command != nil {
		c.key = gin.Timestamp + "\x00" + *si.Command
	}
	return c, ""
}

// geminiDir is the directory Gemini CLI runs a shell command in: dir_path,
// resolved against its target directory (the event's cwd).
func geminiDir(cwd, dirPath string) string {
	switch {
	case dirPath == "":
		return cwd
	case filepath.IsAbs(dirPath) || cwd == "":
		return filepath.Clean(dirPath)
	}
	return filepath.Join(cwd, dirPath)
}

// decodeGeminiAfter reads AfterTool: Gemini CLI ran a tool (after its
// BeforeTool hook allowed it, or failed: timed out or crashed). A shell
// call is reported run, with no key (AfterTool names no call): the hook
// ties it by its match.
func decodeGeminiAfter(gin GeminiHookInput, c hookCall) hookCall {
	c.event = eventPost
	var si geminiShellInput
	if gin.ToolName != geminiShell || decodeOne(gin.ToolInput, &si) != nil || si.Command == nil {
		return c // not a call the hook gated: nothing to record
	}
	c.guarded, c.command, c.cwd = true, si.Command, geminiDir(c.cwd, si.DirPath)
	var resp struct {
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(gin.ToolResponse, &resp)
	failed := len(resp.Error) > 0 && string(resp.Error) != "null" && string(resp.Error) != `""`
	switch {
	case si.IsBackground:
		c.outcome, c.outcomeReason = model.ExecStarted, "launched in the background by Gemini CLI (AfterTool); its end is not reported"
	case failed:
		c.outcome, c.outcomeReason = model.ExecExecuted, "ran in Gemini CLI, which reported an error (AfterTool)"
	default:
		c.outcome, c.outcomeReason = model.ExecExecuted, "ran in Gemini CLI (AfterTool)"
	}
	return c
}

// geminiJSON is a's BeforeTool answer in Gemini CLI's protocol: decision
// and reason at the top level; an allow's reason goes to the user as a
// systemMessage (Gemini CLI reads reason only for a deny).
func geminiJSON(a HookAnswer) []byte {
	if a.Decision == "allow" {
		return encodeLine(struct {
			Decision      string `json:"decision"`
			SystemMessage string `json:"systemMessage,omitempty"`
		}{"allow", a.Reason})
	}
	if a.Reason == "" {
		a.Reason = "approve-tui: denied"
	}
	return encodeLine(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"deny", a.Reason})
}
