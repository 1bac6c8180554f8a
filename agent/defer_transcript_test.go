package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// transcriptLine is one line of a Claude Code transcript: an assistant
// message id's content blocks (tool_use ids; a text block when none),
// stop_reason when not "".
func transcriptLine(msg, stop string, toolUseIDs ...string) []byte {
	content := []any{}
	if len(toolUseIDs) == 0 {
		content = append(content, map[string]any{"type": "text", "text": "I will run it."})
	}
	for _, id := range toolUseIDs {
		content = append(content, map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": "ls"}})
	}
	m := map[string]any{"id": msg, "role": "assistant", "type": "message", "content": content, "stop_reason": nil}
	if stop != "" {
		m["stop_reason"] = stop
	}
	b, _ := json.Marshal(map[string]any{"type": "assistant", "sessionId": "s", "message": m})
	return append(b, '\n')
}

// writeTranscript writes lines (after a user line and a large request
// blob, as Claude Code writes them) and returns the file's path.
func writeTranscript(t *testing.T, lines ...[]byte) string {
	t.Helper()
	blob, _ := json.Marshal(map[string]any{"type": "api-request-blob", "message": map[string]any{"id": "msg_old",
		"content": []any{map[string]any{"type": "tool_use", "id": "toolu_old"}}}})
	data := append([]byte(`{"type":"user","message":{"role":"user","content":"go"}}`+"\n"), blob...)
	data = append(data, '\n')
	for _, l := range lines {
		data = append(data, l...)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// withTranscript is call with its transcript_path set to path.
func withTranscript(t *testing.T, call, path string) string {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal([]byte(call), &in); err != nil {
		t.Fatal(err)
	}
	in["transcript_path"] = path
	b, _ := json.Marshal(in)
	return string(b)
}

// Defer is answered only for the only tool call of a complete assistant
// message, as the transcript says it; anything else, or a transcript that
// cannot be read, is "cannot be known".
func TestSoloToolUse(t *testing.T) {
	const id = "toolu_S1"
	ok := func(path string) {
		t.Helper()
		if why := soloToolUse(path, id); why != "" {
			t.Fatalf("not solo: %s", why)
		}
	}
	not := func(path, want string) {
		t.Helper()
		if why := soloToolUse(path, id); !strings.Contains(why, want) {
			t.Fatalf("got %q, want %q", why, want)
		}
	}
	// As Claude Code 2.1.332 writes a turn of one call.
	ok(writeTranscript(t, transcriptLine("msg_1", "tool_use", id), []byte(`{"type":"last-prompt"}`+"\n")))
	// Split over lines of one message id.
	ok(writeTranscript(t, transcriptLine("msg_1", ""), transcriptLine("msg_1", "tool_use", id)))
	not(writeTranscript(t, transcriptLine("msg_1", "tool_use", id, "toolu_S2")), "2 tool calls")
	not(writeTranscript(t, transcriptLine("msg_1", "", id), transcriptLine("msg_1", "tool_use", "toolu_S2")), "2 tool calls")
	not(writeTranscript(t, transcriptLine("msg_1", "", id)), "complete")
	not(writeTranscript(t, transcriptLine("msg_0", "tool_use", "toolu_S0")), "does not show")
	// A line written later under another message id that names the call.
	not(writeTranscript(t, transcriptLine("msg_1", "tool_use", id, "toolu_S2"), transcriptLine("msg_9", "tool_use", id)), "more than one message")
	not(writeTranscript(t, transcriptLine("", "tool_use", id)), "no id")
	not(writeTranscript(t, []byte(`{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"`+id+`"},`+"\n")), "cannot be read")
	not("", "no transcript")
	not(filepath.Join(t.TempDir(), "missing.jsonl"), "cannot be read")
	// Not a regular file; not through a symbolic link.
	dir := t.TempDir()
	not(dir, "not a regular file")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	not(fifo, "not a regular file")
	real := writeTranscript(t, transcriptLine("msg_1", "tool_use", id))
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	not(link, "cannot be read")
	// Longer than what is read: the message at the start of the part read
	// may begin before it.
	big := filepath.Join(dir, "big.jsonl")
	pad := make([]byte, transcriptTail)
	for i := range pad {
		pad[i] = 'x'
	}
	data := append(append(pad, '\n'), transcriptLine("msg_1", "tool_use", id)...)
	if err := os.WriteFile(big, data, 0o600); err != nil {
		t.Fatal(err)
	}
	not(big, "may begin before")
	data = append(append(append(pad, '\n'), []byte(`{"type":"user"}`+"\n")...), transcriptLine("msg_1", "tool_use", id)...)
	if err := os.WriteFile(big, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ok(big)
}
