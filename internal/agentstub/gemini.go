package agentstub

import (
	"encoding/json"
	"net/http"
)

// geminiState reads a generateContent request: the function responses in
// its last content, and whether it offers run_shell_command.
func geminiState(req map[string]any) (results []string, tool bool) {
	for _, t := range list(req["tools"]) {
		m, _ := t.(map[string]any)
		for _, d := range list(m["functionDeclarations"]) {
			if f, ok := d.(map[string]any); ok && f["name"] == "run_shell_command" {
				tool = true
			}
		}
	}
	contents := list(req["contents"])
	if len(contents) == 0 {
		return nil, tool
	}
	last, _ := contents[len(contents)-1].(map[string]any)
	for _, p := range list(last["parts"]) {
		m, _ := p.(map[string]any)
		if fr, ok := m["functionResponse"].(map[string]any); ok {
			b, _ := json.Marshal(fr["response"])
			results = append(results, string(b))
		}
	}
	return results, tool
}

// gemini answers a generateContent request: a functionCall of
// run_shell_command, or a text; as server-sent events when streaming.
func (s *Server) gemini(w http.ResponseWriter, t turn, stream bool) {
	var part map[string]any
	switch t {
	case turnTool:
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
			"args": map[string]any{"command": s.command, "description": s.description}}}
	case turnFinal:
		part = map[string]any{"text": FinalText}
	default:
		part = map[string]any{"text": "ok"}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-stand-in",
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "", resp)
}
