package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What docs/agents-and-hooks.md says of Claude Code's defer, with the real
// agent (headless, against the stand-in model) and a probe hook that
// answers defer, then allow: the run ends with stop_reason tool_deferred
// (exit 0) and the call in deferred_tool_use, the model told nothing;
// `claude -p --resume SESSION_ID --permission-mode MODE`, with no prompt,
// from the same directory, sends the same call (same session id, call id,
// command and directory) through PreToolUse again, and an allow runs it.
func TestRealAgentClaudeDeferResume(t *testing.T) {
	r := newAgentRig(t, realAgents[0], "touch marker", "make the marker")
	inputs := filepath.Join(r.home, "probe.jsonl")
	allow := filepath.Join(r.home, "allow")
	probe := filepath.Join(r.home, "probe.sh")
	r.writeFile(probe, "#!/bin/sh\nin=$(cat)\nprintf '%s\\n' \"$in\" >> '"+inputs+"'\n"+
		"if [ -f '"+allow+"' ]; then d=allow; else d=defer; fi\n"+
		"printf '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"%s\"}}\\n' \"$d\"\n")
	if err := os.Chmod(probe, 0o755); err != nil {
		t.Fatal(err)
	}
	r.writeJSON(filepath.Join(r.home, ".claude", "settings.json"), map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": probe, "timeout": 30}}}}}})

	type result struct {
		StopReason string `json:"stop_reason"`
		SessionID  string `json:"session_id"`
		Deferred   *struct {
			ID    string         `json:"id"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"deferred_tool_use"`
	}
	runClaude := func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(r.modules, ".bin", "claude"), args...)
		cmd.Dir, cmd.Env, cmd.Stdin = r.work, r.env(), strings.NewReader("")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("claude %v: %v\n%s\nmodel log:\n%s", args, err, out, r.stub.Log())
		}
		var res result
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("claude %v: %v\n%s", args, err, out)
		}
		return res
	}
	first := runClaude("-p", "Create the marker file.", "--output-format", "json", "--model", "claude-sonnet-4-5")
	if first.StopReason != "tool_deferred" || first.Deferred == nil || first.Deferred.Name != "Bash" ||
		first.Deferred.Input["command"] != "touch marker" || len(r.stub.ToolResults()) != 0 {
		t.Fatalf("deferred run: %+v, tool results %q", first, r.stub.ToolResults())
	}
	if _, err := os.Stat(filepath.Join(r.work, "marker")); err == nil {
		t.Fatal("the deferred call ran")
	}

	if err := os.WriteFile(allow, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	second := runClaude("-p", "--resume", first.SessionID, "--permission-mode", "default", "--output-format", "json", "--model", "claude-sonnet-4-5")
	if second.StopReason != "end_turn" || second.SessionID != first.SessionID {
		t.Fatalf("resumed run: %+v", second)
	}
	if _, err := os.Stat(filepath.Join(r.work, "marker")); err != nil {
		t.Fatalf("the resumed call did not run: %v", err)
	}
	b, err := os.ReadFile(inputs)
	if err != nil {
		t.Fatal(err)
	}
	var seen []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var in map[string]any
		if err := json.Unmarshal([]byte(l), &in); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		seen = append(seen, in)
	}
	if len(seen) != 2 {
		t.Fatalf("PreToolUse ran %d times, want 2:\n%s", len(seen), b)
	}
	for _, k := range []string{"session_id", "tool_use_id", "cwd", "permission_mode"} {
		if seen[0][k] != seen[1][k] {
			t.Errorf("%s: %v at first, %v on resume", k, seen[0][k], seen[1][k])
		}
	}
	if seen[1]["tool_use_id"] != first.Deferred.ID || seen[1]["permission_mode"] != "default" {
		t.Errorf("resume: %v", seen[1])
	}
	if c, _ := seen[1]["tool_input"].(map[string]any); c["command"] != "touch marker" {
		t.Errorf("resume: command %v", seen[1]["tool_input"])
	}
}
