package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A parked call matches its retry only under the same session id: Codex
// and Gemini CLI, resumed headless as docs/agents-and-hooks.md says to ask
// again (codex exec resume --last PROMPT, gemini --resume latest -p
// PROMPT), report the session id of the first run to their hooks. A probe
// hook on the prompt event (Codex's UserPromptSubmit, Gemini CLI's
// BeforeAgent) records it. (Claude Code's resume of a deferred call keeps
// it too: TestRealAgentClaudeDeferResume.)
func TestRealAgentResumeKeepsSession(t *testing.T) {
	for _, a := range realAgents[1:] {
		t.Run(a.name, func(t *testing.T) {
			r := newAgentRig(t, a, "touch marker", "make the marker")
			inputs := filepath.Join(r.home, "probe.jsonl")
			probe := filepath.Join(r.home, "probe.sh")
			r.writeFile(probe, "#!/bin/sh\nin=$(cat)\nprintf '%s\\n' \"$in\" >> '"+inputs+"'\necho '{}'\n")
			if err := os.Chmod(probe, 0o755); err != nil {
				t.Fatal(err)
			}
			r.agentSettings()
			hook := map[string]any{"type": "command", "command": probe}
			switch a.name {
			case "codex":
				r.writeJSON(filepath.Join(r.home, ".codex", "hooks.json"), map[string]any{"hooks": map[string]any{
					"UserPromptSubmit": []any{map[string]any{"hooks": []any{hook}}}}})
				var trust strings.Builder
				for key, hash := range r.codexHookHashes() {
					fmt.Fprintf(&trust, "\n[hooks.state.%q]\ntrusted_hash = %q\n", key, hash)
				}
				r.writeFile(filepath.Join(r.home, ".codex", "config.toml"), r.codexConfig(trust.String()))
			case "gemini":
				s := r.geminiSettings()
				s["hooksConfig"] = map[string]any{"enabled": true}
				hook["name"] = "probe"
				s["hooks"] = map[string]any{"BeforeAgent": []any{map[string]any{"hooks": []any{hook}}}}
				r.writeJSON(filepath.Join(r.home, ".gemini", "settings.json"), s)
			}
			agentRun := func(args ...string) string {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, filepath.Join(r.modules, ".bin", a.bin), args...)
				cmd.Dir, cmd.Env, cmd.Stdin = r.work, r.env(), strings.NewReader("")
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s %v: %v\n%s\nmodel log:\n%s", a.bin, args, err, out, r.stub.Log())
				}
				return string(out)
			}
			switch a.name {
			case "codex":
				agentRun("exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "Create the marker file.")
				agentRun("exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "resume", "--last", "Try again.")
			case "gemini":
				agentRun("-p", "Create the marker file.", "--approval-mode", "yolo", "--output-format", "json", "--model", "gemini-2.5-flash")
				agentRun("--resume", "latest", "-p", "Try again.", "--approval-mode", "yolo", "--output-format", "json", "--model", "gemini-2.5-flash")
			}
			b, err := os.ReadFile(inputs)
			if err != nil {
				t.Fatal(err)
			}
			var ids, prompts []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var in struct {
					SessionID string `json:"session_id"`
					Prompt    string `json:"prompt"`
				}
				if err := json.Unmarshal([]byte(l), &in); err != nil {
					t.Fatalf("%v: %s", err, l)
				}
				ids, prompts = append(ids, in.SessionID), append(prompts, in.Prompt)
			}
			if len(ids) != 2 || ids[0] == "" || ids[0] != ids[1] || prompts[1] != "Try again." {
				t.Fatalf("session ids %q for prompts %q, want one id twice:\n%s", ids, prompts, b)
			}
		})
	}
}
