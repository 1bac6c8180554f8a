package agent

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

var hookActor = model.Actor{Surface: model.SurfaceHook, Name: "dev@laptop", Person: "dev"}

// bashCall is Claude Code's PreToolUse input for a Bash call.
func bashCall(command, toolUseID string) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": "sess-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/srv/app",
		"hook_event_name": "PreToolUse", "tool_name": "Bash", "permission_mode": "default",
		"tool_input":  map[string]any{"command": command, "description": "clean the build dir"},
		"tool_use_id": toolUseID,
	})
	return string(b)
}

func hookOpts(s *storage.Store) HookOptions {
	return HookOptions{
		Timeout:        10 * time.Second,
		Actor:          hookActor,
		HeartbeatEvery: 50 * time.Millisecond,
		Open: func(ctx context.Context) (*storage.Store, error) {
			return storage.Open(ctx, s.Path(), storage.Options{BusyTimeout: 2 * time.Second})
		},
	}
}

func noStore(t *testing.T) HookOptions {
	return HookOptions{Timeout: 5 * time.Second, Actor: hookActor, Open: func(context.Context) (*storage.Store, error) {
		t.Error("the store was opened")
		return nil, errors.New("no store")
	}}
}

func hookAsync(input string, o HookOptions) <-chan HookAnswer {
	ch := make(chan HookAnswer, 1)
	go func() { ch <- ClaudeCodeHook(context.Background(), strings.NewReader(input), o) }()
	return ch
}

func recvHook(t *testing.T, ch <-chan HookAnswer) HookAnswer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("the hook did not answer")
	}
	return HookAnswer{}
}

// checkJSON decodes an answer as Claude Code would and returns its decision
// and reason; it fails on anything but exactly the documented keys.
func checkJSON(t *testing.T, a HookAnswer) (string, string) {
	t.Helper()
	b := a.JSON()
	if !strings.HasSuffix(string(b), "}\n") || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("not one line: %q", b)
	}
	var out map[string]map[string]string
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	hso, ok := out["hookSpecificOutput"]
	if len(out) != 1 || !ok || len(hso) != 3 || hso["hookEventName"] != "PreToolUse" {
		t.Fatalf("shape: %s", b)
	}
	if _, ok := hso["updatedInput"]; ok {
		t.Fatal("updatedInput")
	}
	return hso["permissionDecision"], hso["permissionDecisionReason"]
}

func TestHookInputsItDoesNotHandleOrCannotRead(t *testing.T) {
	for _, c := range []struct {
		name, input string
		deny        string // "" for no output
	}{
		{"garbage", "garbage", "malformed PreToolUse input"},
		{"empty", "", "malformed PreToolUse input (empty input)"},
		{"two values", `{"tool_name":"Read"} {}`, "more than one JSON value"},
		{"trailing", `{"tool_name":"Read"}]`, "trailing data"},
		{"not an object", `["Bash"]`, "malformed PreToolUse input"},
		{"no tool", `{"session_id":"s"}`, "no tool_name"},
		{"other tool", `{"tool_name":"Read","tool_input":{"file_path":"/etc/passwd"}}`, ""},
		{"mcp tool with an odd command", `{"tool_name":"mcp__x","tool_input":{"command":{"a":1}}}`, ""},
		{"other event", `{"hook_event_name":"Notification","tool_name":"Bash","tool_input":{"command":"rm -rf /x"}}`, ""},
		{"post tool use without an id", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /x"}}`, ""},
		{"post tool use of another tool", `{"hook_event_name":"PostToolUse","tool_name":"Read","tool_use_id":"t","tool_input":{}}`, ""},
		{"bash without input", `{"tool_name":"Bash"}`, "without tool_input"},
		{"bash without command", `{"tool_name":"Bash","tool_input":{"description":"x"}}`, "without a command"},
		{"bash command not a string", `{"tool_name":"Bash","tool_input":{"command":42}}`, "malformed Bash tool_input"},
		{"bash blank command", `{"tool_name":"Bash","tool_input":{"command":"  "}}`, "without a command"},
		{"lone surrogate", `{"tool_name":"Bash","tool_input":{"command":"rm -rf \udcff"}}`, "cannot be pinned exactly"},
		{"low risk, passed", bashCall("ls -la", "toolu_1"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := noStore(t)
			if c.name == "low risk, passed" {
				// It reads the policy in force, which names nothing.
				s, _ := emptyStore(t)
				o = hookOpts(s)
			}
			a := recvHook(t, hookAsync(c.input, o))
			if c.deny == "" {
				if !a.Silent || a.JSON() != nil {
					t.Fatalf("want no output, got %+v", a)
				}
				return
			}
			d, reason := checkJSON(t, a)
			if d != "deny" || !strings.Contains(reason, c.deny) {
				t.Fatalf("got %s %q, want deny with %q", d, reason, c.deny)
			}
		})
	}
}

func TestHookLowAllowIsAudited(t *testing.T) {
	s, _ := emptyStore(t)
	o := hookOpts(s)
	o.Low = LowAllow
	d, reason := checkJSON(t, recvHook(t, hookAsync(bashCall("ls -la", "toolu_1"), o)))
	if d != "allow" || !strings.Contains(reason, "no dangerous pattern matched") {
		t.Fatalf("%s %q", d, reason)
	}
	evs, _ := s.Audit(context.Background(), storage.AuditQuery{})
	if len(evs) != 1 || evs[0].Event != storage.EventPolicy || evs[0].Reason != storage.PolicyAllow ||
		evs[0].Detail["session"] != "claude-code:sess-1" || evs[0].Surface != "hook" {
		t.Fatalf("audit %+v", evs)
	}
	// Unauditable: deny.
	o.Open = func(context.Context) (*storage.Store, error) { return nil, errors.New("disk on fire") }
	if d, reason := checkJSON(t, recvHook(t, hookAsync(bashCall("ls -la", "toolu_2"), o))); d != "deny" || !strings.Contains(reason, "disk on fire") {
		t.Fatalf("%s %q", d, reason)
	}
	o.Low = "sometimes"
	if d, _ := checkJSON(t, recvHook(t, hookAsync(bashCall("ls -la", "toolu_3"), o))); d != "deny" {
		t.Fatal("a bad --low policy allowed")
	}
}

func TestHookHardlineDeniedWithoutProposal(t *testing.T) {
	s, _ := emptyStore(t)
	d, reason := checkJSON(t, recvHook(t, hookAsync(bashCall("sudo rm -rf /", "toolu_1"), hookOpts(s))))
	if d != "deny" || !strings.Contains(reason, "hardline") {
		t.Fatalf("%s %q", d, reason)
	}
	if recs, _ := s.List(context.Background(), storage.ListOptions{Status: storage.ListAll}); len(recs) != 0 {
		t.Fatal("submitted")
	}
	evs, _ := s.Audit(context.Background(), storage.AuditQuery{})
	if len(evs) != 1 || evs[0].Reason != storage.PolicyDeny || evs[0].Detail["command"] != "sudo rm -rf /" {
		t.Fatalf("audit %+v", evs)
	}
}

// awaitDuplicateSubmit waits for a second submit of id to be refused as
// a duplicate (audited), so the process behind it waits on the first
// one's proposal; what says which process never got there.
func awaitDuplicateSubmit(t *testing.T, o *storage.Store, id, what string) {
	t.Helper()
	eventually(t, 10*time.Second, what, func() bool {
		evs, _ := o.Audit(context.Background(), storage.AuditQuery{ApprovalID: id})
		for _, e := range evs {
			if e.Event == storage.EventSubmit && e.Reason == "duplicate" {
				return true
			}
		}
		return false
	})
}

// awaitHookProposal returns the pending proposal once a hook waits on it.
func awaitHookProposal(t *testing.T, o *storage.Store) *storage.Record {
	t.Helper()
	rec := awaitWaiting(t, o)
	if w := waiterState(t, o, rec.ApprovalID).Waiter; w.Surface != "hook" {
		t.Fatalf("waiter %+v", w)
	}
	return rec
}

func TestHookWaitsForTheOperator(t *testing.T) {
	const cmd = "rm -rf build/"
	t.Run("approved", func(t *testing.T) {
		s, o := emptyStore(t)
		ch := hookAsync(bashCall(cmd, "toolu_A"), hookOpts(s))
		rec := awaitHookProposal(t, o)
		if rec.ApprovalID != HookID("sess-1", "toolu_A") || rec.Command != cmd || rec.SessionKey != "claude-code:sess-1" ||
			rec.Requester != "claude-code" || rec.Cwd != "/srv/app" || rec.RiskReason != "recursive delete" ||
			rec.RequesterContext != "clean the build dir" {
			t.Fatalf("proposal %+v", rec.Proposal)
		}
		approve(t, o, rec.ApprovalID)
		d, reason := checkJSON(t, recvHook(t, ch))
		if d != "allow" || !strings.Contains(reason, "approved by alice@console via tui ("+rec.ApprovalID+")") {
			t.Fatalf("%s %q", d, reason)
		}
		// The hook cannot see Claude Code run it: nothing is claimed.
		if r := get(t, o, rec.ApprovalID); r.ExecutionStatus != model.ExecNotStarted {
			t.Fatalf("execution %s", r.ExecutionStatus)
		}
		// The same call again: the same proposal, already approved.
		if d, _ := checkJSON(t, recvHook(t, hookAsync(bashCall(cmd, "toolu_A"), hookOpts(s)))); d != "allow" {
			t.Fatal(d)
		}
		if recs, _ := o.List(context.Background(), storage.ListOptions{Status: storage.ListAll}); len(recs) != 1 {
			t.Fatalf("%d proposals", len(recs))
		}
	})
	t.Run("denied", func(t *testing.T) {
		s, o := emptyStore(t)
		ch := hookAsync(bashCall(cmd, "toolu_B"), hookOpts(s))
		rec := awaitHookProposal(t, o)
		if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "use make clean"); err != nil {
			t.Fatal(err)
		}
		d, reason := checkJSON(t, recvHook(t, ch))
		if d != "deny" || !strings.Contains(reason, "denied by alice@console via tui: use make clean") {
			t.Fatalf("%s %q", d, reason)
		}
	})
	t.Run("timeout withdraws", func(t *testing.T) {
		s, o := emptyStore(t)
		opts := hookOpts(s)
		opts.Timeout = 400 * time.Millisecond
		opts.ParkWindow = -1 // parking off: withdrawn as before
		start := time.Now()
		d, reason := checkJSON(t, recvHook(t, hookAsync(bashCall(cmd, "toolu_C"), opts)))
		if d != "deny" || !strings.Contains(reason, "timed out after 400ms") {
			t.Fatalf("%s %q", d, reason)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("answered after %v", el)
		}
		id := HookID("sess-1", "toolu_C")
		r := get(t, o, id)
		if r.EffectiveStatus != model.StatusDenied || r.ConsumedBy != "requester via hook" {
			t.Fatalf("not withdrawn: %s %q", r.EffectiveStatus, r.ConsumedBy)
		}
		// Its expiry is near the hook's deadline in any case.
		if r.ExpiresAt == nil || *r.ExpiresAt-r.CreatedAt > 10 {
			t.Fatalf("expires_at %v", r.ExpiresAt)
		}
	})
	// Interrupted: the agent stopped waiting (it signals its hook at its
	// own hook timeout) and may run the command under its own rules. Nobody
	// denied it: the proposal is abandoned (expired, its reason audited),
	// and the answer still denies, should the agent read it.
	t.Run("interrupted abandons", func(t *testing.T) {
		s, o := emptyStore(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		ch := make(chan HookAnswer, 1)
		opts := hookOpts(s)
		opts.ParkWindow = -1 // parking off: abandoned as before
		go func() { ch <- ClaudeCodeHook(ctx, strings.NewReader(bashCall(cmd, "toolu_D")), opts) }()
		rec := awaitHookProposal(t, o)
		cancel(errors.New("terminated signal received"))
		if d, reason := checkJSON(t, recvHook(t, ch)); d != "deny" || !strings.Contains(reason, "Claude Code stopped waiting (SIGTERM)") {
			t.Fatalf("%s %q", d, reason)
		}
		r := get(t, o, rec.ApprovalID)
		if r.EffectiveStatus != model.StatusExpired {
			t.Fatalf("not abandoned: %s", r.EffectiveStatus)
		}
		why, err := o.AbandonReason(context.Background(), rec.ApprovalID)
		if err != nil || !strings.Contains(why, "whether it ran is not known") {
			t.Fatalf("abandon reason %q, %v", why, err)
		}
		if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, model.Actor{Surface: model.SurfaceCLI, Name: "op"}); err == nil {
			t.Fatal("an abandoned proposal was approved")
		}
	})
}

// Two hook processes on the same call (Claude Code runs matching hooks in
// parallel) share one proposal and one decision.
func TestHookSameToolUseIDSharesTheProposal(t *testing.T) {
	s, o := emptyStore(t)
	in := bashCall("git push --force origin main", "toolu_same")
	a, b := hookAsync(in, hookOpts(s)), hookAsync(in, hookOpts(s))
	rec := awaitHookProposal(t, o)
	// The second submit was refused as a duplicate (audited): that hook then
	// waits on the first one's proposal. (In one process both share one
	// waiter row; the script tests run them as two processes.)
	awaitDuplicateSubmit(t, o, rec.ApprovalID, "the second hook never submitted")
	approve(t, o, rec.ApprovalID)
	for _, ch := range []<-chan HookAnswer{a, b} {
		if d, _ := checkJSON(t, recvHook(t, ch)); d != "allow" {
			t.Fatal(d)
		}
	}
	if recs, _ := o.List(context.Background(), storage.ListOptions{Status: storage.ListAll}); len(recs) != 1 {
		t.Fatalf("%d proposals", len(recs))
	}
	// The same id for another command is refused.
	if d, reason := checkJSON(t, recvHook(t, hookAsync(bashCall("rm -rf /srv/other", "toolu_same"), hookOpts(s)))); d != "deny" ||
		!strings.Contains(reason, "already exists for another command") {
		t.Fatalf("%s %q", d, reason)
	}
}

// A proposal pinned low whose command classifies high (the rules changed
// since it was pinned) is approved but denied at run time, and recorded
// blocked_after_consume.
func TestHookRuntimeGuard(t *testing.T) {
	s, o := emptyStore(t)
	const cmd = "rm -rf build/"
	id := HookID("sess-1", "toolu_G")
	db, err := sql.Open("sqlite", "file:"+s.Path()+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := float64(time.Now().Unix())
	payload := fmt.Sprintf(`{"approval_id": %q, "created_at": %v, "expires_at": %v, "session_key": "claude-code:sess-1", "requester": "claude-code",
		"command": %q, "cwd": "/srv/app", "risk_level": "low", "risk_reason": "pinned by an older rule set",
		"policy_decision": "needs_approval", "default_decision": "deny"}`, id, now, now+3600, cmd)
	if _, err := db.Exec(`INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES (?, ?, ?, 'pending', ?)`,
		id, now, now+3600, payload); err != nil {
		t.Fatal(err)
	}
	ch := hookAsync(bashCall(cmd, "toolu_G"), hookOpts(s))
	rec := awaitHookProposal(t, o)
	if rec.ApprovalID != id || rec.RiskLevel != model.RiskLow {
		t.Fatalf("%+v", rec.Proposal)
	}
	approve(t, o, id)
	d, reason := checkJSON(t, recvHook(t, ch))
	if d != "deny" || !strings.Contains(reason, "risk guard") {
		t.Fatalf("%s %q", d, reason)
	}
	if r := get(t, o, id); r.ExecutionStatus != model.ExecBlockedAfterConsume || !strings.Contains(r.ExecutionReason, "above its pinned risk low") {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
}

func TestHookStoreProblemsDeny(t *testing.T) {
	o := noStore(t)
	o.Open = func(context.Context) (*storage.Store, error) { return nil, storage.ErrMissing }
	if d, reason := checkJSON(t, recvHook(t, hookAsync(bashCall("rm -rf build/", "t"), o))); d != "deny" || !strings.Contains(reason, "database file not found") {
		t.Fatalf("%s %q", d, reason)
	}
	// A read-only store cannot take the proposal.
	s, _ := emptyStore(t)
	o = hookOpts(s)
	o.Open = func(ctx context.Context) (*storage.Store, error) {
		return storage.Open(ctx, s.Path(), storage.Options{ReadOnly: true})
	}
	if d, reason := checkJSON(t, recvHook(t, hookAsync(bashCall("rm -rf build/", "t"), o))); d != "deny" || !strings.Contains(reason, "read-only") {
		t.Fatalf("%s %q", d, reason)
	}
}

func TestHookNeverPanics(t *testing.T) {
	o := noStore(t)
	o.Open = func(context.Context) (*storage.Store, error) { panic("boom") }
	d, reason := checkJSON(t, recvHook(t, hookAsync(bashCall("rm -rf build/", "t"), o)))
	if d != "deny" || !strings.Contains(reason, "internal error (boom)") {
		t.Fatalf("%s %q", d, reason)
	}
}

func TestHookAnswerJSON(t *testing.T) {
	if got := string(HookAnswer{Decision: "allow", Reason: "ok <x> \x1b[31m"}.JSON()); got !=
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok <x> \\x1b[31m"}}`+"\n" {
		t.Fatalf("%s", got)
	}
	// Anything but allow is a deny.
	if d, _ := checkJSON(t, HookAnswer{Decision: "ask"}); d != "deny" {
		t.Fatal(d)
	}
}

func TestHookID(t *testing.T) {
	a, b := HookID("s", "toolu_1"), HookID("s", "toolu_2")
	if a == b || a != HookID("s", "toolu_1") || HookID("s1", "x") == HookID("s", "1x") {
		t.Fatal("not a function of both")
	}
	p := &model.Proposal{ApprovalID: a, CreatedAt: 1, SessionKey: "s", Command: "x", RiskReason: "r", RiskLevel: model.RiskLow,
		PolicyDecision: model.PolicyNeedsApproval, DefaultDecision: model.DefaultDeny}
	if err := p.Validate(); err != nil || len(a) != 15 || !strings.HasPrefix(a, "cc-") {
		t.Fatalf("%q: %v", a, err)
	}
}

// PostToolUse of a call the hook let through records executed, after the
// fact; nothing else is marked.
func TestHookPostToolUseRecordsExecuted(t *testing.T) {
	s, o := emptyStore(t)
	const cmd = "rm -rf build/"
	ch := hookAsync(bashCall(cmd, "toolu_P"), hookOpts(s))
	rec := awaitHookProposal(t, o)
	approve(t, o, rec.ApprovalID)
	if d, _ := checkJSON(t, recvHook(t, ch)); d != "allow" {
		t.Fatal(d)
	}
	post := func(event, command, toolUseID, response string) {
		in := strings.Replace(bashCall(command, toolUseID), `"hook_event_name":"PreToolUse"`, `"hook_event_name":"`+event+`"`, 1)
		in = strings.TrimSuffix(in, "}") + `,"tool_response":` + response + "}"
		if a := recvHook(t, hookAsync(in, hookOpts(s))); !a.Silent {
			t.Fatalf("PostToolUse answered %+v", a)
		}
	}
	// Another command under the same id, or another id: left alone.
	post("PostToolUse", "rm -rf elsewhere/", "toolu_P", `{}`)
	post("PostToolUse", cmd, "toolu_other", `{}`)
	if r := get(t, o, rec.ApprovalID); r.ExecutionStatus != model.ExecNotStarted {
		t.Fatalf("marked by another call: %s", r.ExecutionStatus)
	}
	// The same call running another command than the one approved (its
	// input changed after the approval): reported, with what ran.
	evs, err := o.Audit(context.Background(), storage.AuditQuery{ApprovalID: rec.ApprovalID, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	reported := 0
	for _, e := range evs {
		if e.Event == storage.EventReport && strings.Contains(e.Reason, "ran another command than the one approved") && e.Detail["command_run"] == "rm -rf elsewhere/" {
			reported++
		}
	}
	if reported != 1 {
		t.Fatalf("the changed command reported %d times: %+v", reported, evs)
	}
	post("PostToolUse", cmd, "toolu_P", `{"stdout":"","stderr":"","interrupted":false}`)
	r := get(t, o, rec.ApprovalID)
	if r.ExecutionStatus != model.ExecExecuted || r.ExecutionReason != "ran in Claude Code (PostToolUse)" {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
	// Once only.
	post("PostToolUseFailure", cmd, "toolu_P", `{}`)
	if r := get(t, o, rec.ApprovalID); r.ExecutionReason != "ran in Claude Code (PostToolUse)" {
		t.Fatalf("recorded again: %q", r.ExecutionReason)
	}
}

// Low risk: pass (the default) and its old name defer print nothing; an
// unknown policy denies.
func TestHookLowPolicies(t *testing.T) {
	in := sample(t, "claude-code.txtar", "pre-bash-npm-test.json")
	s, _ := emptyStore(t)
	for _, low := range []string{"", LowPass, LowDefer} {
		o := hookOpts(s) // the policy in force is read: it names nothing
		o.Low = low
		if a := recvHook(t, hookAsync(in, o)); !a.Silent || a.JSON() != nil {
			t.Fatalf("--low %q: %+v", low, a)
		}
	}
	o := noStore(t)
	o.Low = "defer-to-claude"
	if d, reason := checkJSON(t, recvHook(t, hookAsync(in, o))); d != "deny" || !strings.Contains(reason, "want pass or allow") {
		t.Fatalf("%s %q", d, reason)
	}
}

// PowerShell commands are proposals like Bash commands; one no rule
// matches needs approval all the same (pinned medium), and is never
// passed or allowed by the --low policy.
func TestHookGuardsPowerShell(t *testing.T) {
	s, o := emptyStore(t)
	opts := hookOpts(s)
	opts.Low = LowAllow
	ch := hookAsync(sample(t, "claude-code.txtar", "pre-powershell.json"), opts)
	rec := awaitHookProposal(t, o)
	if rec.ApprovalID != HookID("abc123", "toolu_01PS") || rec.Command != `Remove-Item -Recurse -Force .\build` ||
		rec.RiskLevel != model.RiskMedium || !strings.Contains(rec.RiskReason, "PowerShell command: the rules are written for POSIX shells, so its risk is unknown") ||
		strings.Contains(rec.RiskReason, "Remove the build directory") || rec.RequesterContext != "Remove the build directory" ||
		rec.Cwd != `C:\Users\user\my-project` {
		t.Fatalf("proposal %+v", rec.Proposal)
	}
	approve(t, o, rec.ApprovalID)
	if d, _ := checkJSON(t, recvHook(t, ch)); d != "allow" {
		t.Fatal(d)
	}
	// Without its command, or with a malformed input: deny, as for Bash.
	for in, want := range map[string]string{
		`{"tool_name":"PowerShell","tool_input":{"description":"x"}}`: "a PowerShell call without a command",
		`{"tool_name":"PowerShell","tool_input":{"command":7}}`:       "malformed PowerShell tool_input",
		`{"tool_name":"PowerShell"}`:                                  "a PowerShell call without tool_input",
	} {
		if d, reason := checkJSON(t, recvHook(t, hookAsync(in, noStore(t)))); d != "deny" || !strings.Contains(reason, want) {
			t.Fatalf("%s: %s %q", in, d, reason)
		}
	}
	// A PowerShell command the judgement finds a risk in keeps its level and
	// words, above the medium pinned for an unknown one: a force push to
	// main is HIGH.
	s2, o2 := emptyStore(t)
	in := strings.Replace(sample(t, "claude-code.txtar", "pre-powershell.json"), `Remove-Item -Recurse -Force .\\build`, "git push --force origin main", 1)
	ch = hookAsync(in, hookOpts(s2))
	if rec := awaitHookProposal(t, o2); rec.RiskLevel != model.RiskHigh ||
		!strings.HasPrefix(rec.RiskReason, "force-pushes to main, a shared branch") || !strings.Contains(rec.RiskReason, "may miss more of its risk") {
		t.Fatalf("risk %s: %q", rec.RiskLevel, rec.RiskReason)
	}
	if _, err := o2.Deny(context.Background(), HookID("abc123", "toolu_01PS"), operator, "no"); err != nil {
		t.Fatal(err)
	}
	if d, _ := checkJSON(t, recvHook(t, ch)); d != "deny" {
		t.Fatal(d)
	}
}

// A run_in_background call is launched, not run to its end, when Claude
// Code sends its PostToolUse: it is recorded started, with that said.
func TestHookBackgroundCallRecordedStarted(t *testing.T) {
	s, o := emptyStore(t)
	ch := hookAsync(sample(t, "claude-code.txtar", "pre-bash-background.json"), hookOpts(s))
	rec := awaitHookProposal(t, o)
	if !strings.Contains(rec.RiskReason, "runs in the background") || rec.RequesterContext != "Publish in the background" {
		t.Fatalf("reason %q, context %q", rec.RiskReason, rec.RequesterContext)
	}
	approve(t, o, rec.ApprovalID)
	if d, _ := checkJSON(t, recvHook(t, ch)); d != "allow" {
		t.Fatal(d)
	}
	if a := recvHook(t, hookAsync(sample(t, "claude-code.txtar", "post-bash-background.json"), hookOpts(s))); !a.Silent {
		t.Fatalf("PostToolUse answered %+v", a)
	}
	r := get(t, o, rec.ApprovalID)
	if r.ExecutionStatus != model.ExecStarted || r.ExecutionReason != "launched in the background by Claude Code (PostToolUse); its end is not reported" {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
	// A failure reported for a background call says nothing of its end
	// either.
	if st, why := claudeOutcome("PostToolUseFailure", true, nil); st != model.ExecStarted || !strings.Contains(why, "whether it ran is not known") {
		t.Fatalf("%s %q", st, why)
	}
}
