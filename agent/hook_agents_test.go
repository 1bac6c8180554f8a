package agent

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/rogpeppe/go-internal/txtar"
)

// The same rules for every agent, on the samples of its documentation
// (testdata/AGENT.txtar, each naming its sources).

type hookFunc func(context.Context, io.Reader, HookOptions) HookAnswer

// runAsync runs hook fn on input.
func runAsync(fn hookFunc, input string, o HookOptions) <-chan HookAnswer {
	ch := make(chan HookAnswer, 1)
	go func() { ch <- fn(context.Background(), strings.NewReader(input), o) }()
	return ch
}

// sample is file name of testdata/archive.
func sample(t *testing.T, archive, name string) string {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", archive))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	t.Fatalf("no %s in %s", name, archive)
	return ""
}

// decodeStrict decodes b, one line of JSON, into v, refusing unknown keys.
func decodeStrict(t *testing.T, b []byte, v any) {
	t.Helper()
	if !strings.HasSuffix(string(b), "}\n") || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("not one line: %q", b)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("not the protocol's JSON: %v: %s", err, b)
	}
}

// answerCheck reads an answer as its agent would: its decision ("" for no
// output) and the reason or message it carries.
type answerCheck func(t *testing.T, a HookAnswer) (decision, reason string)

func claudeCheck(t *testing.T, a HookAnswer) (string, string) {
	t.Helper()
	if a.JSON() == nil {
		return "", ""
	}
	return checkJSON(t, a)
}

// codexCheck: a deny is the documented PreToolUse deny; an allow prints
// nothing (Codex's PreToolUse takes no allow).
func codexCheck(t *testing.T, a HookAnswer) (string, string) {
	t.Helper()
	b := a.JSON()
	if b == nil {
		if a.Decision == "allow" && !a.Silent {
			return "allow", a.Reason
		}
		return "", ""
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName            string `json:"hookEventName"`
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	decodeStrict(t, b, &out)
	h := out.HookSpecificOutput
	if h.HookEventName != "PreToolUse" || h.PermissionDecision != "deny" || strings.TrimSpace(h.PermissionDecisionReason) == "" {
		t.Fatalf("not a Codex deny: %s", b)
	}
	return "deny", h.PermissionDecisionReason
}

// geminiCheck: top-level decision, with reason (deny) or systemMessage
// (allow).
func geminiCheck(t *testing.T, a HookAnswer) (string, string) {
	t.Helper()
	b := a.JSON()
	if b == nil {
		return "", ""
	}
	var out struct {
		Decision      string  `json:"decision"`
		Reason        *string `json:"reason"`
		SystemMessage *string `json:"systemMessage"`
	}
	decodeStrict(t, b, &out)
	switch {
	case out.Decision == "deny" && out.Reason != nil && out.SystemMessage == nil:
		return "deny", *out.Reason
	case out.Decision == "allow" && out.Reason == nil && out.SystemMessage != nil:
		return "allow", *out.SystemMessage
	}
	t.Fatalf("not a Gemini answer: %s", b)
	return "", ""
}

type agentCase struct {
	name    string
	fn      hookFunc
	archive string
	check   answerCheck
	// risky is a sample whose command needs approval; id its proposal's id;
	// session its session key; cwd its proposal's cwd.
	risky, id, session, cwd string
	// low is a sample whose command no rule matches; other a call of a tool
	// the hook does not gate; others more events it has no say in.
	low    string
	others []string
}

var agentCases = []agentCase{
	{name: "claude-code", fn: ClaudeCodeHook, archive: "claude-code.txtar", check: claudeCheck,
		risky: "pre-bash-rm.json", id: HookID("abc123", "toolu_01RM"), session: "claude-code:abc123", cwd: "/home/user/my-project",
		low: "pre-bash-npm-test.json", others: []string{"pre-write.json"}},
	{name: "codex", fn: CodexHook, archive: "codex.txtar", check: codexCheck,
		risky: "pre-bash-rm.json", id: CodexHookID("019a3c2e-7d1f-7c8e-9a41-1c2d3e4f5a6b", "call_rm_1"),
		session: "codex:019a3c2e-7d1f-7c8e-9a41-1c2d3e4f5a6b", cwd: "/tmp",
		low: "pre-bash-echo.json", others: []string{"pre-apply-patch.json", "permission-request.json"}},
	{name: "gemini", fn: GeminiHook, archive: "gemini.txtar", check: geminiCheck,
		risky: "before-shell-rm.json", id: GeminiHookID("abc123", "2025-12-01T10:30:00Z", "rm -rf build/"),
		session: "gemini:abc123", cwd: "/path/to/project/web",
		low: "before-shell-ls.json", others: []string{"before-write-file.json", "after-read-file.json"}},
}

func TestAgentHooksWaitForTheOperator(t *testing.T) {
	for _, ac := range agentCases {
		t.Run(ac.name+"/approved", func(t *testing.T) {
			s, o := emptyStore(t)
			ch := runAsync(ac.fn, sample(t, ac.archive, ac.risky), hookOpts(s))
			rec := awaitHookProposal(t, o)
			if rec.ApprovalID != ac.id || rec.Command != "rm -rf build/" || rec.SessionKey != ac.session ||
				rec.Requester != ac.name || rec.Cwd != ac.cwd || rec.RiskLevel != model.RiskHigh {
				t.Fatalf("proposal %+v", rec.Proposal)
			}
			approve(t, o, rec.ApprovalID)
			d, reason := ac.check(t, recvHook(t, ch))
			if d != "allow" || !strings.Contains(reason, "approved by alice@console via tui ("+rec.ApprovalID+")") {
				t.Fatalf("%s %q", d, reason)
			}
		})
		t.Run(ac.name+"/denied", func(t *testing.T) {
			s, o := emptyStore(t)
			ch := runAsync(ac.fn, sample(t, ac.archive, ac.risky), hookOpts(s))
			rec := awaitHookProposal(t, o)
			if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "use make clean"); err != nil {
				t.Fatal(err)
			}
			d, reason := ac.check(t, recvHook(t, ch))
			if d != "deny" || !strings.Contains(reason, rec.ApprovalID+" was denied by alice@console via tui: use make clean") {
				t.Fatalf("%s %q", d, reason)
			}
		})
		t.Run(ac.name+"/timeout withdraws", func(t *testing.T) {
			s, o := emptyStore(t)
			opts := hookOpts(s)
			opts.Timeout = 400 * time.Millisecond
			opts.ParkWindow = -1 // parking off: withdrawn as before
			d, reason := ac.check(t, recvHook(t, runAsync(ac.fn, sample(t, ac.archive, ac.risky), opts)))
			if d != "deny" || !strings.Contains(reason, "requester timed out after 400ms: no decision on "+ac.id+"; withdrawn, not run") {
				t.Fatalf("%s %q", d, reason)
			}
			if r := get(t, o, ac.id); r.EffectiveStatus != model.StatusDenied || r.ConsumedBy != "requester via hook" {
				t.Fatalf("not withdrawn: %s %q", r.EffectiveStatus, r.ConsumedBy)
			}
		})
		t.Run(ac.name+"/garbage and bad input deny", func(t *testing.T) {
			for _, in := range []string{"garbage", "", `["Bash"]`, `{"tool_name":`, `{"session_id":"s"}`} {
				d, reason := ac.check(t, recvHook(t, runAsync(ac.fn, in, noStore(t))))
				if d != "deny" || !strings.Contains(reason, "malformed") || !strings.HasSuffix(reason, "denied to be safe") {
					t.Fatalf("%q: %s %q", in, d, reason)
				}
			}
		})
		t.Run(ac.name+"/other tools and events pass", func(t *testing.T) {
			s, _ := emptyStore(t)
			for _, name := range append([]string{ac.low}, ac.others...) {
				o := noStore(t)
				if name == ac.low {
					o = hookOpts(s) // it reads the policy in force, which names nothing
				}
				a := recvHook(t, runAsync(ac.fn, sample(t, ac.archive, name), o))
				if d, _ := ac.check(t, a); d != "" || !a.Silent || a.JSON() != nil {
					t.Fatalf("%s: want no output, got %+v", name, a)
				}
			}
		})
		t.Run(ac.name+"/hardline denied", func(t *testing.T) {
			s, o := emptyStore(t)
			in := strings.Replace(sample(t, ac.archive, ac.risky), "rm -rf build/", "mkfs.ext4 /dev/sda1", 1)
			d, reason := ac.check(t, recvHook(t, runAsync(ac.fn, in, hookOpts(s))))
			if d != "deny" || !strings.Contains(reason, "hardline") {
				t.Fatalf("%s %q", d, reason)
			}
			if recs, _ := o.List(context.Background(), storage.ListOptions{Status: storage.ListAll}); len(recs) != 0 {
				t.Fatal("submitted")
			}
		})
		t.Run(ac.name+"/answers in its protocol", func(t *testing.T) {
			a := Denied(Agent(ac.name), "approve-tui: no")
			if d, reason := ac.check(t, a); d != "deny" || reason != "approve-tui: no" {
				t.Fatalf("%s %q", d, reason)
			}
			// Anything but allow is a deny.
			if d, _ := ac.check(t, HookAnswer{Agent: Agent(ac.name), Decision: "ask", Reason: "x"}); d != "deny" {
				t.Fatal(d)
			}
		})
	}
}
