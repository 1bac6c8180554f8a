package agentstub

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// responsesState reads a Responses API request (as Codex sends it): the
// function call outputs in its input after the last message, and whether
// it offers a shell tool.
func responsesState(req map[string]any) (results []string, tool bool) {
	for _, t := range list(req["tools"]) {
		if m, ok := t.(map[string]any); ok && shellTool(m["name"]) != "" {
			tool = true
		}
	}
	for _, it := range list(req["input"]) {
		m, _ := it.(map[string]any)
		switch m["type"] {
		case "message":
			if m["role"] == "user" {
				results = nil // outputs before the user's last word are old
			}
		case "function_call_output", "custom_tool_call_output":
			results = append(results, text(m["output"]))
		}
	}
	return results, tool
}

// shellTool is name when it names a shell tool of Codex's ("" otherwise).
func shellTool(name any) string {
	switch n, _ := name.(string); n {
	case "shell", "shell_command", "exec_command", "local_shell":
		return n
	}
	return ""
}

// responses answers a Responses API request, streaming: a function call
// of Codex's shell tool, or a message.
func (s *Server) responses(w http.ResponseWriter, t turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	resp := map[string]any{"id": "resp_stand_in", "object": "response", "status": "in_progress", "output": []any{}}
	sse(w, "response.created", map[string]any{"type": "response.created", "response": resp})
	var item map[string]any
	switch t {
	case turnTool:
		args, _ := json.Marshal(map[string]any{"cmd": s.command})
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_stand_in_%d", s.ToolCalls()), "call_id": fmt.Sprintf("call_stand_in_%d", s.ToolCalls()),
			"name": "exec_command", "arguments": string(args), "status": "completed"}
	default:
		msg := FinalText
		if t == turnText {
			msg = "ok"
		}
		item = map[string]any{"type": "message", "id": "msg_stand_in", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": msg, "annotations": []any{}}}}
	}
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	done := map[string]any{"id": "resp_stand_in", "object": "response", "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": done})
}
