package agentstub

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicState reads a Messages API request: the tool results in its
// last message, and whether it offers the Bash tool.
func anthropicState(req map[string]any) (results []string, tool bool) {
	for _, t := range list(req["tools"]) {
		if m, ok := t.(map[string]any); ok && m["name"] == "Bash" {
			tool = true
		}
	}
	msgs := list(req["messages"])
	if len(msgs) == 0 {
		return nil, tool
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	for _, c := range list(last["content"]) {
		if m, ok := c.(map[string]any); ok && m["type"] == "tool_result" {
			results = append(results, text(m["content"]))
		}
	}
	return results, tool
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// anthropic answers a Messages API request: a tool_use of Bash, or a text.
func (s *Server) anthropic(w http.ResponseWriter, req map[string]any, t turn, stream bool) {
	model, _ := req["model"].(string)
	var block map[string]any
	var blocks []any
	stop := "end_turn"
	switch t {
	case turnTool:
		input, _ := json.Marshal(map[string]any{"command": s.command, "description": s.description})
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_stand_in_%d", s.ToolCalls()), "name": "Bash", "input": json.RawMessage(input)}
		stop = "tool_use"
		if also := s.second(); also != nil {
			input, _ := json.Marshal(map[string]any{"command": also[0], "description": also[1]})
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": "toolu_stand_in_2", "name": "Bash", "input": json.RawMessage(input)})
		}
	case turnFinal:
		block = map[string]any{"type": "text", "text": FinalText}
	default:
		block = map[string]any{"type": "text", "text": "ok"}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_stand_in", "type": "message", "role": "assistant",
			"model": model, "content": append([]any{block}, blocks...), "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_stand_in",
		"type": "message", "role": "assistant", "model": model, "content": []any{}, "stop_reason": nil,
		"stop_sequence": nil, "usage": usage}})
	switch block["type"] {
	case "tool_use":
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": "Bash", "input": map[string]any{}}
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(block["input"].(json.RawMessage))}})
	default:
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	for i, b := range blocks {
		b := b.(map[string]any)
		start := map[string]any{"type": "tool_use", "id": b["id"], "name": "Bash", "input": map[string]any{}}
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i + 1, "content_block": start})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i + 1,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i + 1})
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop,
		"stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
