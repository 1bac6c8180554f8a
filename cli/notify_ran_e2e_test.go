package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A Codex call run without approval, with real processes: Codex's
// PreToolUse hook waits on its proposal; Codex, done waiting, runs the
// command and sends PostToolUse, which records the call as run without
// approval (the waiting hook answers deny and ends); the notifier pages it
// once to the channel paged so far and to the route that selects only
// that kind (events: [ran_without_approval]), which paged nothing while
// the proposal waited; show says what happened.
func TestNotifyE2ERanWithoutApprovalIsPaged(t *testing.T) {
	r := newNotifyRig(t, "")
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = "whsec-ran-1"
	ran := newReceiver(t, "webhook", "ran")
	ran.secret = "whsec-ran-2"
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret, "NT_RAN_SECRET=" + ran.secret}
	r.writeConfig(fmt.Sprintf(`channels:
  hook: {type: webhook, url: %q, secret_env: NT_HOOK_SECRET}
  ran:  {type: webhook, url: %q, secret_env: NT_RAN_SECRET}
routes:
  - events: [ran_without_approval]
    steps:
      - {after: 0s, notify: [ran]}
  - match: {risk: high}
    steps:
      - {after: 0s, notify: [hook]}
`, hook.url(), ran.url()))
	r.startNotifier()

	const session = "019a3c2e-7d1f-7c8e-9a41-1c2d3e4f5a6b"
	input := func(event string) []byte {
		b, _ := json.Marshal(map[string]any{"session_id": session, "turn_id": "turn-1", "cwd": r.dir, "hook_event_name": event,
			"model": "gpt-5", "permission_mode": "default", "tool_name": "Bash",
			"tool_input": map[string]any{"command": "rm -rf /srv/app/releases/old"}, "tool_use_id": "call_ran_1",
			"tool_response": map[string]any{"exit_code": 0, "output": ""}})
		return b
	}
	pre := r.command("hook", "codex", "--timeout", "60s")
	pre.Stdin = bytes.NewReader(input("PreToolUse"))
	var preOut bytes.Buffer
	pre.Stdout = &preOut
	if err := pre.Start(); err != nil {
		t.Fatal(err)
	}
	preDone := make(chan error, 1)
	go func() { preDone <- pre.Wait() }()
	hook.waitFor("the page", 15*time.Second, func(hs []nhit) bool {
		for _, h := range hs {
			if h.event == "page" {
				return true
			}
		}
		return false
	})
	h := hook.snapshot()[0]
	id := h.approvalID
	if !strings.HasPrefix(id, "cx-") {
		t.Fatalf("paged %q", id)
	}

	post := r.command("hook", "codex")
	post.Stdin = bytes.NewReader(input("PostToolUse"))
	if out, err := post.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) != 0 && !strings.Contains(string(out), "approve-tui:") {
		t.Fatalf("PostToolUse: %v %s", err, out)
	}
	select {
	case <-preDone:
		if !strings.Contains(preOut.String(), `"permissionDecision":"deny"`) {
			t.Fatalf("the waiting hook answered %s", preOut.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the waiting hook did not end")
	}

	for _, rv := range []*nreceiver{hook, ran} {
		rv.waitFor("the ran_without_approval page", 15*time.Second, func([]nhit) bool { return rv.has(id, "ran_without_approval") })
		h, _ := rv.find(id, "ran_without_approval")
		if p := h.wh; p.Outcome == nil || *p.Outcome != "ran without approval (the proposal is expired)" || p.Requester != "codex" ||
			p.SessionKey != "codex:"+session || p.Command == nil || *p.Command != "rm -rf /srv/app/releases/old" ||
			!strings.HasPrefix(p.Summary, "RAN WITHOUT APPROVAL: "+id) {
			t.Errorf("%s: %s", rv.channel, h.body)
		}
	}
	var rec struct {
		Status          string `json:"status"`
		ExecutionStatus string `json:"execution_status"`
	}
	if err := json.Unmarshal([]byte(r.run("show", id, "--json")), &rec); err != nil || rec.Status != "expired" || rec.ExecutionStatus != "ran_without_approval" {
		t.Fatalf("show: %+v %v", rec, err)
	}
	time.Sleep(1500 * time.Millisecond)
	if got := exactlyOnce(t, ran); len(got) != 1 {
		t.Errorf("ran received %d deliveries, want the one:\n%s", len(got), describeHits(ran.snapshot()))
	}
	exactlyOnce(t, hook)
}
