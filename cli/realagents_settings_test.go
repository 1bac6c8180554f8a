package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// installHooksByHand writes the agent's hook settings by hand, with the
// agent's hook timeout (hookTimeout) and the hook's wait (waitFor) as the
// test sets them, even when they disagree, which `hook install` never
// writes; and what else the agent needs to run them (Codex: the trust its
// /hooks review would store, read from `codex app-server`'s hooks/list;
// Gemini CLI: the hooks switch). Every hook setting the tests write by
// hand is here.
func (r *agentRig) installHooksByHand() {
	r.t.Helper()
	r.agentSettings()
	pre, post := r.hookCommand(true), r.hookCommand(false)
	hook := func(command string, timeout int) map[string]any {
		h := map[string]any{"type": "command", "command": command}
		if timeout > 0 {
			h["timeout"] = timeout
		}
		return h
	}
	secs := int(r.hookTimeout / time.Second)
	switch r.agent.name {
	case "claude-code":
		entry := func(command string, timeout int) []any {
			h := hook(command, timeout)
			return []any{map[string]any{"matcher": "Bash|PowerShell", "hooks": []any{h}}}
		}
		preEntry := entry(pre, secs)
		preEntry[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["onFailure"] = "block"
		r.writeJSON(filepath.Join(r.home, ".claude", "settings.json"), map[string]any{"hooks": map[string]any{
			"PreToolUse":         preEntry,
			"PostToolUse":        entry(post, 0),
			"PostToolUseFailure": entry(post, 0),
		}})
	case "codex":
		codexHome := filepath.Join(r.home, ".codex")
		entry := func(command string, timeout int) []any {
			return []any{map[string]any{"matcher": "^Bash$", "hooks": []any{hook(command, timeout)}}}
		}
		r.writeJSON(filepath.Join(codexHome, "hooks.json"), map[string]any{"hooks": map[string]any{
			"PreToolUse":  entry(pre, secs),
			"PostToolUse": entry(post, 0),
		}})
		r.writeFile(filepath.Join(codexHome, "config.toml"), r.codexConfig(""))
		var trust strings.Builder
		for key, hash := range r.codexHookHashes() {
			fmt.Fprintf(&trust, "\n[hooks.state.%q]\ntrusted_hash = %q\n", key, hash)
		}
		r.writeFile(filepath.Join(codexHome, "config.toml"), r.codexConfig(trust.String()))
	case "gemini":
		settings := r.geminiSettings()
		settings["hooksConfig"] = map[string]any{"enabled": true}
		settings["hooks"] = map[string]any{
			"BeforeTool": []any{map[string]any{"matcher": "run_shell_command",
				"hooks": []any{map[string]any{"type": "command", "name": "approve-tui", "command": pre,
					"timeout": int(r.hookTimeout / time.Millisecond)}}}},
			// As hook install writes it: a call run after its BeforeTool
			// hook was killed is reported.
			"AfterTool": []any{map[string]any{"matcher": "run_shell_command",
				"hooks": []any{map[string]any{"type": "command", "name": "approve-tui", "command": post}}}},
		}
		r.writeJSON(filepath.Join(r.home, ".gemini", "settings.json"), settings)
	}
}

// agentSettings writes what the agent needs besides the hook, as its user
// would: the stand-in as its model (Codex: a model provider; Gemini CLI:
// API-key auth, the URL coming from the environment), no usage
// statistics, and (Gemini CLI) the project folder trusted, since Gemini
// CLI runs no hook in a folder it does not trust.
func (r *agentRig) agentSettings() {
	r.t.Helper()
	switch r.agent.name {
	case "codex":
		r.writeFile(filepath.Join(r.home, ".codex", "config.toml"), r.codexConfig(""))
	case "gemini":
		r.writeJSON(filepath.Join(r.home, ".gemini", "settings.json"), r.geminiSettings())
		r.writeJSON(filepath.Join(r.home, ".gemini", "trustedFolders.json"), map[string]any{r.work: "TRUST_FOLDER"})
	}
}

// geminiSettings is Gemini CLI's settings.json without hooks.
func (r *agentRig) geminiSettings() map[string]any {
	return map[string]any{
		// The stand-in is reached through GOOGLE_GEMINI_BASE_URL with an
		// API key (Gemini CLI would take the URL alone for a gateway).
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	}
}

// installHooks sets the hook up as a user would: the agent's own settings,
// then `approve-tui hook install AGENT --scope user` (with this test's
// approve-tui as --binary), then `hook doctor AGENT`, which must find
// nothing wrong.
func (r *agentRig) installHooks() {
	r.t.Helper()
	r.agentSettings()
	for _, args := range [][]string{
		{"--db", r.db, "hook", "install", r.agent.name, "--scope", "user", "--timeout", r.waitFor.String(), "--binary", r.hookBin},
		{"--db", r.db, "hook", "doctor", r.agent.name},
	} {
		cmd := exec.Command(r.hookBin, args...)
		cmd.Env = r.env()
		cmd.Dir = r.work
		out, err := cmd.CombinedOutput()
		if err != nil {
			r.t.Fatalf("approve-tui %s: %v\n%s", strings.Join(args[2:4], " "), err, out)
		}
		r.t.Logf("approve-tui %s:\n%s", strings.Join(args[2:4], " "), out)
	}
}

// codexConfig is Codex's config.toml: the stand-in as its model provider,
// then extra.
func (r *agentRig) codexConfig(extra string) string {
	return fmt.Sprintf(`model = "gpt-5.1-codex"
model_provider = "standin"

[model_providers.standin]
name = "stand-in"
base_url = %q
env_key = "STANDIN_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
%s`, r.stub.URL+"/v1", extra)
}

// codexHookHashes asks `codex app-server` (JSON-RPC hooks/list) for the
// current hash of every hook it found: what its /hooks review stores as
// trusted.
func (r *agentRig) codexHookHashes() map[string]string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(r.modules, ".bin", "codex"), "app-server")
	cmd.Dir = r.work
	cmd.Env = r.env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"approve-tui-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{}}`,
	} {
		if _, err := fmt.Fprintln(stdin, m); err != nil {
			r.t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []struct {
						Key         string `json:"key"`
						CurrentHash string `json:"currentHash"`
					} `json:"hooks"`
				} `json:"data"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		hashes := map[string]string{}
		for _, d := range msg.Result.Data {
			for _, h := range d.Hooks {
				hashes[h.Key] = h.CurrentHash
			}
		}
		if len(hashes) == 0 {
			r.t.Fatalf("codex hooks/list found no hooks: %s", sc.Text())
		}
		return hashes
	}
	r.t.Fatalf("codex app-server gave no hooks/list answer (%v)", sc.Err())
	return nil
}

func (r *agentRig) writeJSON(path string, v any) {
	r.t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		r.t.Fatal(err)
	}
	r.writeFile(path, string(b)+"\n")
}

func (r *agentRig) writeFile(path, content string) {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}
