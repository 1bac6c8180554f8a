package cli

import (
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
