package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/notify"
)

// pageReceiver is a loopback HTTP receiver of webhook pages: it keeps
// every body whose signature verifies, and answers 200.
type pageReceiver struct {
	t      *testing.T
	secret string
	srv    *httptest.Server
	mu     sync.Mutex
	pages  []map[string]any
}

func newPageReceiver(t *testing.T, secret string) *pageReceiver {
	rv := &pageReceiver{t: t, secret: secret}
	rv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := notify.VerifyWebhook([]byte(secret), r.Header.Get(notify.WebhookSignatureHeader), body, time.Now(), 0); err != nil {
			t.Errorf("page with a bad signature: %v\n%s", err, body)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var p map[string]any
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("page body: %v\n%s", err, body)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rv.mu.Lock()
		rv.pages = append(rv.pages, p)
		rv.mu.Unlock()
	}))
	t.Cleanup(rv.srv.Close)
	return rv
}

// of is every page received for id.
func (rv *pageReceiver) of(id string) []map[string]any {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	var out []map[string]any
	for _, p := range rv.pages {
		if p["approval_id"] == id {
			out = append(out, p)
		}
	}
	return out
}

// Codex with its own hook timeout shorter than the hook's wait: it stops
// waiting, runs the command under its own rules, and its PostToolUse
// reports the run. The record says so (execution ran_without_approval, the
// proposal no longer approvable), the console in a real terminal shows "ran
// without approval", and a route that selects only that kind pages it to a
// loopback receiver (and nothing else of that proposal).
func TestRealAgentCodexRanWithoutApprovalPagedAndShown(t *testing.T) {
	a := realAgents[1]
	if a.name != "codex" {
		t.Fatal("realAgents changed order")
	}
	marker := "unapproved-marker"
	r := newAgentRig(t, a, "sh -c 'touch "+marker+"'", "create the marker file")
	bin := buildBinaryTB(t, t.TempDir())
	r.hookBin = bin
	r.hookTimeout, r.waitFor = 4*time.Second, 40*time.Second

	// The notifier, with a route that pages only calls run without
	// approval; the same file is the hooks' configuration (HOME's).
	secret := "whsec-ran-without-approval"
	rv := newPageReceiver(t, secret)
	cfg := filepath.Join(r.home, ".config", "approve-tui", "config.yaml")
	r.writeFile(cfg, fmt.Sprintf(`channels:
  hook: {type: webhook, url: %q, secret_env: RWA_HOOK_SECRET}
routes:
  - match: {requester: codex}
    events: [ran_without_approval]
    steps:
      - {after: 0s, notify: [hook]}
`, rv.srv.URL+"/hook"))
	notifier := exec.Command(bin, "--db", r.db, "notify", "--config", cfg)
	notifier.Env = append(r.env(), "RWA_HOOK_SECRET="+secret)
	var nlog strings.Builder
	var nmu sync.Mutex
	notifier.Stdout, notifier.Stderr = &lockedWriter{w: &nlog, mu: &nmu}, &lockedWriter{w: &nlog, mu: &nmu}
	if err := notifier.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = notifier.Process.Kill()
		_ = notifier.Wait()
		nmu.Lock()
		t.Logf("notifier:\n%s", nlog.String())
		nmu.Unlock()
	})

	// The console, in a real terminal, wide enough for the detail.
	tm := &demoInTmux{t: t, db: r.db, sock: fmt.Sprintf("approve-tui-rwa-%d", os.Getpid()), bin: bin}
	tm.tmux("new-session", "-d", "-s", "e2e", "-x", "160", "-y", "45", "env", "TERM=xterm-256color", "HOME="+r.home, bin, "--db", r.db)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })

	r.installHooksByHand()
	run := r.start("Create the marker file.")
	id := r.pendingID(run)
	tm.waitFor(id)
	stdout, stderr := r.wait(run)
	if _, err := os.Stat(filepath.Join(r.work, marker)); err != nil {
		t.Fatalf("Codex did not run the command after its hook timeout (%v): the case is not met\nstdout: %s\nstderr: %s\nmodel log:\n%s", err, stdout, stderr, r.stub.Log())
	}

	var rec map[string]any
	eventually(t, 60*time.Second, "the run without approval was never recorded", func() bool {
		rec = r.show(id)
		return rec["execution_status"] == "ran_without_approval"
	})
	t.Logf("record: status %v, execution %v (%v), terminal_reason %v", rec["status"], rec["execution_status"], rec["execution_reason"], rec["terminal_reason"])
	if rec["status"] == "pending" || rec["status"] == "consumed" || rec["status"] == "denied" {
		t.Errorf("status %v: a call run without approval is closed as expired (never pending, approved or denied by a person)", rec["status"])
	}
	out, err := exec.Command(bin, "--db", r.db, "approve", id, "--confirm", id).CombinedOutput()
	if err == nil {
		t.Errorf("a proposal whose call ran without approval was approved:\n%s", out)
	}
	t.Logf("approving it afterwards: %v: %s", err, strings.TrimSpace(string(out)))
	show, _ := exec.Command(bin, "--db", r.db, "show", "--", id).CombinedOutput()
	if !strings.Contains(string(show), "ran without approval") {
		t.Errorf("show does not say it ran without approval:\n%s", show)
	}

	// The page: the kind selected, once; no page of another kind.
	deadline := time.Now().Add(30 * time.Second)
	for len(rv.of(id)) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // anything else would have come by now
	pages := rv.of(id)
	if len(pages) != 1 || pages[0]["event"] != "ran_without_approval" {
		t.Fatalf("pages of %s: %v, want one ran_without_approval", id, pages)
	}
	t.Logf("page: %v", pages[0]["summary"])

	// The console: the proposal left the pending list; the history says
	// what happened.
	tm.key("Tab")
	if !screenShows(tm, "ran without approval", 10*time.Second) {
		tm.key("Enter")
		if !screenShows(tm, "ran without approval", 10*time.Second) {
			t.Fatalf("the console never shows \"ran without approval\":\n%s", tm.screen())
		}
	}
	t.Logf("console:\n%s", tm.screen())
}

// screenShows polls tm's screen for want.
func screenShows(tm *demoInTmux, want string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if strings.Contains(tm.screen(), want) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// startArgs runs the agent with args in the project directory (start's
// command line given whole: a resumed session).
func (r *agentRig) startArgs(args ...string) *agentRun {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	cmd := exec.CommandContext(ctx, filepath.Join(r.modules, ".bin", r.agent.bin), args...)
	cmd.Dir = r.work
	cmd.Env = r.env()
	cmd.Stdin = strings.NewReader("")
	run := &agentRun{cmd: cmd, done: make(chan error, 1), cancel: cancel, started: time.Now()}
	cmd.Stdout, cmd.Stderr = &run.stdout, &run.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		r.t.Fatalf("start %s: %v", r.agent.bin, err)
	}
	go func() { run.done <- cmd.Wait() }()
	r.t.Cleanup(func() {
		cancel()
		<-run.done
	})
	return run
}

// askAgain resumes the agent's last session with a prompt that makes the
// stand-in model ask for the same command again (a new call: a new
// tool_use_id, the same session, command and directory).
func (r *agentRig) askAgain(sessionID string) (stdout, stderr string) {
	r.t.Helper()
	var args []string
	switch r.agent.name {
	case "claude-code":
		args = []string{"-p", "Ask again.", "--resume", sessionID, "--output-format", "json", "--model", "claude-sonnet-4-5"}
	case "codex":
		args = []string{"exec", "resume", "--last", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "Ask again."}
	case "gemini":
		args = []string{"--resume", "latest", "-p", "Ask again.", "--approval-mode", "yolo", "--output-format", "json", "--model", "gemini-2.5-flash"}
	}
	return r.wait(r.startArgs(args...))
}

// The done-when with the real agents: the call waits past the hook's
// answer (Claude Code: its own hook timeout, 4 s, SIGTERM to the hook, which
// parks and, with onFailure block, the call is blocked; Codex and Gemini
// CLI: the hook's wait, 3 s, ends first, as hook install sets them, since
// both run the command when they kill the hook), and the call is not run.
// The operator approves the parked proposal; the agent's session, resumed,
// asks again: the command runs, once; resumed once more, it does not.
func TestRealAgentParkedRetryRunsOnce(t *testing.T) {
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			r := newAgentRig(t, a, "sh -c 'echo ran >> ran.log'", "log a run")
			r.hookBin = buildBinaryTB(t, t.TempDir())
			if a.name == "claude-code" {
				r.hookTimeout, r.waitFor = 4*time.Second, 40*time.Second
			} else {
				r.hookTimeout, r.waitFor = 30*time.Second, 3*time.Second
			}
			ranLog := filepath.Join(r.work, "ran.log")
			r.installHooksByHand()
			run := r.start("Log a run.")
			id := r.pendingID(run)
			stdout, stderr := r.wait(run)
			if n := fileLines(ranLog); n != 0 {
				t.Fatalf("the command ran %d times before any approval\nstdout: %s\nstderr: %s", n, stdout, stderr)
			}
			t.Logf("first ask: tool results %q", r.stub.ToolResults())
			rec := r.show(id)
			if rec["status"] != "pending" {
				t.Fatalf("after the first ask: status %v (%v), want pending (parked)", rec["status"], rec["terminal_reason"])
			}
			if a.name != "claude-code" && !strings.Contains(strings.Join(r.stub.ToolResults(), "\n"), "parked as "+id) {
				t.Errorf("the model was not told the call is parked as %s: %q", id, r.stub.ToolResults())
			}
			session := ""
			if a.name == "claude-code" {
				var res struct {
					SessionID string `json:"session_id"`
				}
				if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &res); err != nil || res.SessionID == "" {
					t.Fatalf("Claude Code's result has no session_id (%v): %s", err, stdout)
				}
				session = res.SessionID
			}

			if out, err := exec.Command(r.hookBin, "--db", r.db, "approve", id, "--confirm", id).CombinedOutput(); err != nil {
				t.Fatalf("approve: %v\n%s", err, out)
			}
			stdout, stderr = r.askAgain(session)
			if n := fileLines(ranLog); n != 1 {
				t.Fatalf("asked again after the approval, the command ran %d times, want once\ntool results %q\nstdout: %s\nstderr: %s\nmodel log:\n%s",
					n, r.stub.ToolResults(), stdout, stderr, r.stub.Log())
			}
			rec = r.show(id)
			t.Logf("after the retry: status %v, execution %v (%v)", rec["status"], rec["execution_status"], rec["execution_reason"])
			if rec["status"] != "consumed" || rec["execution_status"] == "ran_without_approval" {
				t.Errorf("record after the retry: status %v, execution %v", rec["status"], rec["execution_status"])
			}
			// Asked once more: not run. The stand-in asks for the
			// command only when the conversation ends on the prompt; a
			// resumed Claude Code session may send the last tool result
			// with it, and the stand-in then just answers: that ask is
			// not made here (the hook's tests make it).
			calls := r.stub.ToolCalls()
			stdout, stderr = r.askAgain(session)
			if n := fileLines(ranLog); n != 1 {
				t.Fatalf("asked a third time, the command ran again (%d runs)\nstdout: %s\nstderr: %s", n, stdout, stderr)
			}
			if r.stub.ToolCalls() == calls {
				t.Logf("note: the resumed %s session did not ask for the command a third time (the stand-in answered the prompt sent with the last tool result)", a.bin)
				return
			}
			t.Logf("third ask: tool results %q", r.stub.ToolResults())
		})
	}
}
