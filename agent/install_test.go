package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The hashes the real Codex (0.171, codex app-server hooks/list) reported
// for the README's two handlers.
func TestCodexHookHashKnown(t *testing.T) {
	pre := CodexHookHash(CodexHandler{Event: "pre_tool_use", Matcher: "^Bash$",
		Command: "approve-tui hook codex --timeout 900s", Timeout: 930, StatusMessage: "Waiting for approval in approve-tui"})
	if pre != "sha256:cccfb09e486966fd3e13cb34dbb618efb9b6eaf2443f019ecdd2c373b69c3315" {
		t.Errorf("pre: %s", pre)
	}
	post := CodexHookHash(CodexHandler{Event: "post_tool_use", Matcher: "^Bash$", Command: "approve-tui hook codex"})
	if post != "sha256:6e812e129ac3b91285244e3a008036fe2a86df34f1f4e4f41cdbb28484afcd2a" {
		t.Errorf("post: %s", post)
	}
	// Unset timeout is 600.
	if CodexHookHash(CodexHandler{Event: "post_tool_use", Matcher: "^Bash$", Command: "approve-tui hook codex", Timeout: 600}) != post {
		t.Error("timeout 600 should hash as unset")
	}
	if CodexHookKey("/h/.codex/hooks.json", "pre_tool_use", 1, 0) != "/h/.codex/hooks.json:pre_tool_use:1:0" {
		t.Error("key")
	}
}

func TestSerdeString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`a"b\c`, `"a\"b\\c"`},
		{"\b\t\n\f\r\x01\x1f\x7f", `"\b\t\n\f\r\u0001\u001f` + "\x7f" + `"`},
		{"<&> é \u2028", "\"<&> é \u2028\""},
	} {
		var b bytes.Buffer
		serdeString(&b, c.in)
		if got := b.String(); got != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
	}
}

const codexCfg = `# my settings
model = "o3" # inline comment

[projects."/srv/app"]
trust_level = "trusted"

[hooks.state."/h/.codex/hooks.json:pre_tool_use:0:0"]
enabled = true # mine
trusted_hash = "sha256:old"

[hooks.state."/h/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:other"

[tui]
notifications = true
`

func TestSetHookTrust(t *testing.T) {
	cfg, err := ParseCodexConfig([]byte(codexCfg))
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{
		"/h/.codex/hooks.json:pre_tool_use:0:0":  "sha256:new",
		"/h/.codex/hooks.json:post_tool_use:0:0": "sha256:post",
	}
	out, err := cfg.SetHookTrust(hashes)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	want := strings.Replace(codexCfg, `trusted_hash = "sha256:old"`, `trusted_hash = "sha256:new"`, 1) +
		"\n[hooks.state.\"/h/.codex/hooks.json:post_tool_use:0:0\"]\ntrusted_hash = \"sha256:post\"\n"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	// Again: the same bytes.
	cfg2, err := ParseCodexConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	out2, err := cfg2.SetHookTrust(hashes)
	if err != nil || string(out2) != got {
		t.Fatalf("not idempotent: %v\n%s", err, out2)
	}
	st, ok := cfg2.HookState("/h/.codex/hooks.json:pre_tool_use:0:0")
	if !ok || st.TrustedHash != "sha256:new" || !st.HasEnabled || !st.Enabled {
		t.Fatalf("state %+v %v", st, ok)
	}
	if ok, _ := cfg2.ProjectTrusted("/srv/app"); !ok {
		t.Error("project trust lost")
	}

	// A table without trusted_hash gets one after its header; an empty
	// file gets the tables alone.
	cfg3, _ := ParseCodexConfig([]byte("[hooks.state.\"k\"] # c\nenabled = false\n[x]\ny = 1"))
	out3, err := cfg3.SetHookTrust(map[string]string{"k": "sha256:a", "j\"\\": "sha256:b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[hooks.state.\"k\"] # c\ntrusted_hash = \"sha256:a\"\nenabled = false\n[x]\ny = 1\n\n[hooks.state.\"j\\\"\\\\\"]\ntrusted_hash = \"sha256:b\"\n"; string(out3) != want {
		t.Fatalf("got %q", out3)
	}
	empty, _ := ParseCodexConfig(nil)
	out4, err := empty.SetHookTrust(map[string]string{"k": "sha256:a"})
	if err != nil || string(out4) != "[hooks.state.\"k\"]\ntrusted_hash = \"sha256:a\"\n" {
		t.Fatalf("%v %q", err, out4)
	}
}

func TestSetHookTrustRefuses(t *testing.T) {
	for name, src := range map[string]string{
		"dotted":       "[hooks]\nstate.\"k\".trusted_hash = \"x\"\n",
		"inline state": "[hooks]\nstate = { \"k\" = { trusted_hash = \"x\" } }\n",
		"inline hooks": "hooks = { PreToolUse = [] }\n",
	} {
		cfg, err := ParseCodexConfig([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out, err := cfg.SetHookTrust(map[string]string{"k": "sha256:a"}); err == nil {
			t.Errorf("%s: accepted:\n%s", name, out)
		}
	}
	if _, err := ParseCodexConfig([]byte("[a\nb = ")); err == nil || !strings.Contains(err.Error(), "line") {
		t.Errorf("malformed: %v", err)
	}
}

func TestJSONObjectKeepsOrder(t *testing.T) {
	src := `{"z": 1, "a": {"y": [1, 2.50, 12345678901234567890], "b": "<&>"}, "m": null}`
	o, err := ParseJSONObject([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := FormatJSON(o)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"z\": 1,\n  \"a\": {\n    \"y\": [\n      1,\n      2.50,\n      12345678901234567890\n    ],\n    \"b\": \"<&>\"\n  },\n  \"m\": null\n}\n"
	if string(out) != want {
		t.Fatalf("got:\n%s", out)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} x`, `[1]`, `{"a":`, `{"a":1}{}`} {
		if _, err := ParseJSONObject([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestMergeHookGroups(t *testing.T) {
	src := `{"model":"x","hooks":{
  "PreToolUse":[
    {"matcher":"Bash","hooks":[{"type":"command","command":"/old/bin/approve-tui hook claude-code --timeout 60s"},{"type":"command","command":"my-linter"}]},
    {"matcher":"Write","hooks":[{"type":"command","command":"fmt"}]},
    {"matcher":"Bash","hooks":[{"type":"command","command":"approve-tui hook claude-code"}]}],
  "Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}],
  "PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"'/a b/approve-tui' hook claude-code"}]}]}}`
	o, err := ParseJSONObject([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	h := NewJSONObject()
	h.Set("type", "command")
	h.Set("command", "/new/approve-tui hook claude-code")
	moves, err := MergeHookGroups(o, AgentClaudeCode, []HookGroup{{Event: "PreToolUse", Matcher: "Bash|PowerShell", Handlers: []*JSONObject{h}}})
	if err != nil {
		t.Fatal(err)
	}
	// The new group takes the place of the first that held ours (right
	// after it, since my-linter stays there); the others that moved are
	// said.
	if len(moves) != 2 || moves[0] != (HookMove{Event: "PreToolUse", OldGroup: 0, OldHandler: 1, NewGroup: 0, NewHandler: 0, Matcher: "Bash", Fields: moves[0].Fields}) ||
		moves[1].OldGroup != 1 || moves[1].NewGroup != 2 || moves[1].Matcher != "Write" {
		t.Errorf("moves %+v", moves)
	}
	out, _ := FormatJSON(o)
	var back struct {
		Model string
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Command string }
		}
	}
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	pre := back.Hooks["PreToolUse"]
	if back.Model != "x" || len(pre) != 3 || len(pre[0].Hooks) != 1 || pre[0].Hooks[0].Command != "my-linter" ||
		pre[1].Hooks[0].Command != "/new/approve-tui hook claude-code" || pre[2].Hooks[0].Command != "fmt" ||
		len(back.Hooks["Stop"]) != 1 || len(back.Hooks["PostToolUse"]) != 0 {
		t.Fatalf("merged:\n%s", out)
	}
	if got := FindHooks(o, AgentClaudeCode); len(got) != 1 || got[0].Group != 1 || got[0].Matcher != "Bash|PowerShell" {
		t.Fatalf("found %+v", got)
	}
	// Again: in place, nothing else moves.
	moves, _ = MergeHookGroups(o, AgentClaudeCode, []HookGroup{{Event: "PreToolUse", Matcher: "Bash|PowerShell", Handlers: []*JSONObject{h}}})
	if out2, _ := FormatJSON(o); len(moves) != 0 || string(out2) != string(out) {
		t.Fatalf("second merge: %+v\n%s", moves, out2)
	}
	if IsApproveTUIHook("approve-tui hook codex", AgentClaudeCode) || !IsApproveTUIHook("approve-tui hook codex --db x", AgentCodex) ||
		IsApproveTUIHook("not-approve-tui hook codex", AgentCodex) {
		t.Error("IsApproveTUIHook")
	}
}

func TestStripJSONComments(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": "x // not a comment", "b": 1} // c`:  `{"a": "x // not a comment", "b": 1}     `,
		"{\"a\": \"q\\\"/*\" /* c\nd */, \"b\": 2}": "{\"a\": \"q\\\"/*\"     \n    , \"b\": 2}",
		"// one\r\n{}":                              "      \r\n{}",
		`{"url": "http://x"} /* unterminated`:       `{"url": "http://x"}                `,
		`{"s": "\\"} // after an escaped backslash`: `{"s": "\\"}                              `,
	} {
		if got := string(StripJSONComments([]byte(in))); got != want {
			t.Errorf("StripJSONComments(%q) = %q, want %q", in, got, want)
		}
	}
}

// Codex reads a config.toml that starts with a byte order mark (checked
// with the real Codex): so does the install, and the mark stays.
func TestCodexConfigBOM(t *testing.T) {
	src := "\xef\xbb\xbf# mine\n[features]\nhooks = false\n"
	cfg, err := ParseCodexConfig([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if name, off := cfg.HooksFeatureOff(); !off || name != "features.hooks" {
		t.Fatalf("HooksFeatureOff = %q, %v", name, off)
	}
	out, err := cfg.SetHookTrust(map[string]string{"/h/hooks.json:pre_tool_use:0:0": "sha256:ab"})
	if err != nil {
		t.Fatal(err)
	}
	want := src + "\n[hooks.state.\"/h/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:ab\"\n"
	if string(out) != want {
		t.Fatalf("SetHookTrust:\n%q\nwant\n%q", out, want)
	}
	if string(cfg.Bytes()) != src {
		t.Fatalf("Bytes = %q", cfg.Bytes())
	}
}
