package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/agent"
)

// doctor, with the hook's --defer: an allow rule for the shell in the
// settings Claude Code reads is a warning (a call Claude Code does not
// defer goes on with its rules, which run it); none is ok, with a word on
// --allowedTools, which no settings file shows.
func TestHookDoctorDeferAllowRules(t *testing.T) {
	e := newHookEnv(t)
	dir := filepath.Join(e.home, "headless")
	e.env["CLAUDE_CONFIG_DIR"] = dir
	if code, _, stderr := e.install("claude-code", "--defer"); code != 0 {
		t.Fatal(stderr)
	}
	if _, lines, all := e.doctor("claude-code"); status(lines["allow"]) != "ok" || !strings.Contains(lines["allow"], "--allowedTools Bash") {
		t.Fatalf("no allow rule:\n%s", all)
	}
	path := filepath.Join(dir, "settings.json")
	o, err := agent.ParseJSONObject([]byte(e.read(path)))
	if err != nil {
		t.Fatal(err)
	}
	perms := agent.NewJSONObject()
	perms.Set("allow", []any{"Read", "Bash(rm:*)"})
	o.Set("permissions", perms)
	out, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	e.write(path, string(out))
	if _, lines, all := e.doctor("claude-code"); status(lines["allow"]) != "warning" || !strings.Contains(lines["allow"], `"Bash(rm:*)"`) ||
		strings.Contains(lines["allow"], `"Read"`) {
		t.Fatalf("a Bash allow rule:\n%s", all)
	}
	// Without --defer: not checked.
	if code, _, stderr := e.install("claude-code"); code != 0 {
		t.Fatal(stderr)
	}
	if _, lines, all := e.doctor("claude-code"); lines["allow"] != "" {
		t.Fatalf("no --defer:\n%s", all)
	}
}
