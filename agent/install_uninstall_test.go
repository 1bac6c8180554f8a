package agent

import (
	"strings"
	"testing"
)

// EditHookTrust removes the tables of drop with the blank line before
// them, keeps comments that end a table for what follows, refuses dotted
// keys, and gives a key it both drops and sets a fresh table.
func TestEditHookTrustDrops(t *testing.T) {
	src := "# top\nmodel = \"o3\"\n\n[hooks.state.\"a\"]\ntrusted_hash = \"sha256:a\"\nenabled = false\n\n# about projects\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"b\"]\ntrusted_hash = \"sha256:b\" # mine\n"
	c, err := ParseCodexConfig([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.EditHookTrust(nil, map[string]bool{"a": true, "b": true, "absent": true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "# top\nmodel = \"o3\"\n\n# about projects\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n"; string(out) != want {
		t.Fatalf("got:\n%q\nwant:\n%q", out, want)
	}
	out, err = c.EditHookTrust(map[string]string{"a": "sha256:new"}, map[string]bool{"a": true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(out), "\n[hooks.state.\"a\"]\ntrusted_hash = \"sha256:new\"\n") || strings.Contains(string(out), "enabled") {
		t.Fatalf("replaced:\n%s", out)
	}
	// SetHookTrust after a drop gives back the file install started from.
	base := "model = \"o3\"\n"
	c, _ = ParseCodexConfig([]byte(base))
	set, err := c.SetHookTrust(map[string]string{"k1": "sha256:1", "k2": "sha256:2"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ = ParseCodexConfig(set)
	if back, err := c.EditHookTrust(nil, map[string]bool{"k1": true, "k2": true}); err != nil || string(back) != base {
		t.Fatalf("%v:\n%q", err, back)
	}
	c, _ = ParseCodexConfig([]byte("hooks.state.\"a\".trusted_hash = \"sha256:a\"\n"))
	if _, err := c.EditHookTrust(nil, map[string]bool{"a": true}); err == nil || !strings.Contains(err.Error(), "dotted keys") {
		t.Fatalf("dotted keys: %v", err)
	}
}

// RemoveHooks drops what the removal empties, and only that.
func TestRemoveHooks(t *testing.T) {
	s, err := ParseJSONObject([]byte(`{"a": 1, "hooks": {"Stop": [], "Pre": [
  {"matcher": "x", "hooks": [{"command": "approve-tui hook codex"}]},
  {"matcher": "y", "hooks": [{"command": "mine"}, {"command": "/p/approve-tui hook codex --db d"}]}],
 "Post": [{"hooks": [{"command": "approve-tui hook codex"}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	found, moves, err := RemoveHooks(s, AgentCodex)
	if err != nil || len(found) != 3 || len(moves) != 1 || moves[0].OldGroup != 1 || moves[0].NewGroup != 0 {
		t.Fatalf("%v %+v %+v", err, found, moves)
	}
	b, _ := FormatJSON(s)
	want := "{\n  \"a\": 1,\n  \"hooks\": {\n    \"Stop\": [],\n    \"Pre\": [\n      {\n        \"matcher\": \"y\",\n        \"hooks\": [\n          {\n            \"command\": \"mine\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	if string(b) != want {
		t.Fatalf("got:\n%s", b)
	}
	if found, _, _ := RemoveHooks(s, AgentCodex); found != nil {
		t.Fatal("a second removal found entries")
	}
	s, _ = ParseJSONObject([]byte(`{"hooks": {"Pre": [{"hooks": [{"command": "approve-tui hook gemini"}]}]}}`))
	RemoveHooks(s, AgentGemini)
	if b, _ := FormatJSON(s); string(b) != "{}\n" {
		t.Fatalf("got %s", b)
	}
}
