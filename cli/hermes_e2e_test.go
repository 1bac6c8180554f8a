package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/internal/pgtest"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Hermes' side, end to end: a Python stand-in of Hermes' host
// (integrations/hermes/testhost/hermes_host.py: request creation and
// digest, bounded workers, deadline, validation of the answer) loads the
// plugin from $HERMES_HOME/plugins/approve-tui, where `approve-tui hermes
// install` put it, and hands it requests; the plugin runs the real binary.

const hermesHostScript = "../integrations/hermes/testhost/hermes_host.py"

// hermesResult is one line of the host's output: what Hermes made of the
// transport's answer.
type hermesResult struct {
	Tag        string   `json:"tag"`
	RequestID  string   `json:"request_id"`
	Command    string   `json:"command"`
	Choice     string   `json:"choice"`
	Failure    *string  `json:"failure"`
	CreatedAt  float64  `json:"created_at"`
	AnsweredAt float64  `json:"answered_at"`
	SessionKey string   `json:"session_key"`
	Index      *float64 `json:"index"`
}

// hermesHost is the stand-in running in its --stdin mode: requests are
// written as they come, results read as they finish.
type hermesHost struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      io.WriteCloser
	mu      sync.Mutex
	results map[string]hermesResult
	stderr  strings.Builder
	arrived chan struct{}
}

// hermesSetup is a HERMES_HOME with the plugin installed by the binary,
// and its store ready.
type hermesSetup struct {
	bin, home, db string
}

func newHermesSetup(t testing.TB) *hermesSetup {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed for Hermes' stand-in host")
	}
	dir := t.TempDir()
	hs := &hermesSetup{bin: buildBinaryTB(t, dir), home: filepath.Join(dir, "hermes")}
	hs.db = filepath.Join(hs.home, "state.db")
	cmd := exec.Command(hs.bin, "hermes", "install", "--hermes-home", hs.home)
	cmd.Env = hermesEnv(hs.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hermes install: %v\n%s", err, out)
	}
	return hs
}

// hermesEnv is the environment of Hermes' processes: HERMES_HOME set, no
// APPROVE_TUI_DB of the caller's.
func hermesEnv(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "APPROVE_TUI_DB=") && !strings.HasPrefix(kv, "HERMES_HOME=") && !strings.HasPrefix(kv, "APPROVE_TUI_BIN=") {
			env = append(env, kv)
		}
	}
	return append(append(env, "HERMES_HOME="+home), extra...)
}

// startHost starts the stand-in with the plugin settings given.
func (hs *hermesSetup) startHost(t testing.TB, settings map[string]any, extraEnv ...string) *hermesHost {
	t.Helper()
	sj, _ := json.Marshal(settings)
	h := &hermesHost{t: t, results: map[string]hermesResult{}, arrived: make(chan struct{}, 64)}
	h.cmd = exec.Command("python3", hermesHostScript, "--hermes-home", hs.home, "--settings", string(sj), "--stdin")
	h.cmd.Env = hermesEnv(hs.home, extraEnv...)
	h.cmd.Stderr = &lockedWriter{w: &h.stderr, mu: &h.mu}
	var err error
	if h.in, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r hermesResult
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("host output %q: %v", sc.Text(), err)
				continue
			}
			h.mu.Lock()
			h.results[r.Tag] = r
			h.mu.Unlock()
			h.arrived <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		h.in.Close()
		done := make(chan struct{})
		go func() { h.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			h.cmd.Process.Kill()
		}
	})
	return h
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// ask hands Hermes' host one request.
func (h *hermesHost) ask(tag, command string, timeout float64, extra map[string]any) {
	h.t.Helper()
	m := map[string]any{"tag": tag, "command": command, "timeout": timeout, "description": "recursive delete",
		"pattern_key": "recursive delete", "pattern_keys": []string{"recursive delete"}, "session_key": "agent:main:telegram:dm:" + tag, "surface": "gateway"}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	if _, err := h.in.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
}

// result waits for the result of request tag.
func (h *hermesHost) result(tag string, within time.Duration) hermesResult {
	h.t.Helper()
	deadline := time.After(within)
	for {
		h.mu.Lock()
		r, ok := h.results[tag]
		h.mu.Unlock()
		if ok {
			return r
		}
		select {
		case <-h.arrived:
		case <-deadline:
			h.mu.Lock()
			defer h.mu.Unlock()
			h.t.Fatalf("no answer for %s within %v; host's log:\n%s", tag, within, h.stderr.String())
		}
	}
}

func (h *hermesHost) log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stderr.String()
}

// hermesProposal waits until the proposal of Hermes' request with the
// command is pending in db, and returns it.
func hermesProposal(t *testing.T, db, command string) *storage.Record {
	t.Helper()
	s, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		recs, _ := s.List(context.Background(), storage.ListOptions{Status: storage.ListAll})
		for _, r := range recs {
			if r.Command == command && r.Requester == "hermes" {
				if ws, err := s.WaiterState(context.Background(), r.ApprovalID); err == nil && ws.State == storage.WaiterLive {
					return r
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no proposal for %q", command)
	return nil
}

func getRecord(t *testing.T, db, id string) *storage.Record {
	t.Helper()
	s, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// consoleInTmux runs the console of bin on db in a real terminal.
func hermesConsole(t *testing.T, bin, db string) *demoInTmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the end-to-end console test (apt-get install tmux)")
	}
	tm := &demoInTmux{t: t, db: db, sock: fmt.Sprintf("approve-tui-hermes-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-")), bin: bin}
	tm.tmux("new-session", "-d", "-s", "e2e", "-x", "80", "-y", "24", "env", "TERM=xterm-256color", bin, "--db", db)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	return tm
}

// The operator's side in the console, Hermes' side in the stand-in: an
// approval typed in the console is once in Hermes, a deny is deny, silence
// is a deny before Hermes' deadline, a hostile command is inert on screen.
func TestHermesTransportWithTheConsole(t *testing.T) {
	hs := newHermesSetup(t)
	host := hs.startHost(t, map[string]any{"binary": hs.bin})
	tm := hermesConsole(t, hs.bin, hs.db)
	tm.waitFor("pending")

	// Approved in the console, its id typed: once.
	host.ask("approve", "rm -rf /srv/app/releases/2024-11-01", 120, nil)
	rec := hermesProposal(t, hs.db, "rm -rf /srv/app/releases/2024-11-01")
	if rec.SessionKey != "agent:main:telegram:dm:approve" || rec.Hermes == nil || rec.Hermes.Surface != "gateway" {
		t.Fatalf("proposal %+v", rec.Proposal)
	}
	tm.waitFor("2024-11-01")
	tm.key("/")
	tm.typeID("2024-11-01")
	tm.key("Enter", "Enter")
	tm.waitFor("Hermes stops waiting at")
	tm.key("End", "a")
	tm.waitFor("Type the approval id")
	tm.typeID(rec.ApprovalID)
	tm.waitFor("approve: press enter")
	tm.key("Enter")
	tm.waitFor("handed to Hermes")
	r := host.result("approve", 30*time.Second)
	if r.Choice != "once" || r.Failure != nil {
		t.Fatalf("Hermes got %+v\n%s", r, host.log())
	}
	if r.SessionKey != rec.SessionKey {
		t.Fatalf("session %q", r.SessionKey)
	}
	// Hermes' post_approval_response is recorded: handed to Hermes.
	eventually(t, 10*time.Second, "the execution was never marked handed_off", func() bool {
		return getRecord(t, hs.db, rec.ApprovalID).ExecutionStatus == model.ExecHandedOff
	})
	tm.key("Escape", "Escape")

	// Denied in the console: deny.
	host.ask("deny", "rm -rf /srv/app/releases/2024-11-02", 120, nil)
	rec = hermesProposal(t, hs.db, "rm -rf /srv/app/releases/2024-11-02")
	tm.waitFor("2024-11-02")
	tm.key("/")
	tm.typeID("2024-11-02")
	tm.key("Enter", "d")
	tm.waitFor("enter deny")
	tm.key("Enter")
	tm.waitFor("denied " + rec.ApprovalID)
	if r := host.result("deny", 30*time.Second); r.Choice != "deny" || r.Failure != nil {
		t.Fatalf("Hermes got %+v", r)
	}
	tm.key("Escape", "Escape")

	// A hostile command: inert on screen, flagged.
	hostile := "rm -rf /tmp/x\x1b[2J\x1b]0;pwned\x07\u202e"
	host.ask("hostile", hostile, 120, nil)
	rec = hermesProposal(t, hs.db, hostile)
	if !rec.Suspicious() {
		t.Fatal("not flagged")
	}
	tm.waitFor(`\x1b[2J`)
	if scr := tm.screen(); !strings.Contains(scr, "<U+202E>") || strings.Contains(scr, "pwned\a") {
		t.Fatalf("not inert:\n%s", scr)
	}
	runBin(t, hs.bin, 0, "--db", hs.db, "deny", "--", rec.ApprovalID)
	if r := host.result("hostile", 30*time.Second); r.Choice != "deny" {
		t.Fatalf("Hermes got %+v", r)
	}

	// Nobody decides: deny before Hermes' deadline (the host saw no
	// timeout of its own), saying the request is parked; a late approval
	// is taken by the same request asked again (same session key and
	// command), once.
	host.ask("silent", "rm -rf /srv/app/releases/2024-11-03", 8, nil)
	rec = hermesProposal(t, hs.db, "rm -rf /srv/app/releases/2024-11-03")
	r = host.result("silent", 30*time.Second)
	if r.Choice != "deny" || r.Failure != nil || r.AnsweredAt-r.CreatedAt >= 8 {
		t.Fatalf("Hermes got %+v", r)
	}
	if got := getRecord(t, hs.db, rec.ApprovalID); got.EffectiveStatus != model.StatusPending || got.Park == nil || got.Park.Reserved() {
		t.Fatalf("not parked: %s %+v", got.EffectiveStatus, got.Park)
	}
	runBin(t, hs.bin, 0, "--db", hs.db, "approve", "--confirm", rec.ApprovalID, "--", rec.ApprovalID)
	host.ask("silent-again", "rm -rf /srv/app/releases/2024-11-03", 8, map[string]any{"session_key": "agent:main:telegram:dm:silent"})
	if r := host.result("silent-again", 30*time.Second); r.Choice != "once" {
		t.Fatalf("the request asked again got %+v", r)
	}
	if got := getRecord(t, hs.db, rec.ApprovalID); got.Park == nil || got.Park.TakenBy == "" {
		t.Fatalf("not taken: %+v", got.Park)
	}
}

// Eight requests at once, Hermes' worker cap: each its own row and its own
// decision, decided by real processes.
func TestHermesTransportEightAtOnce(t *testing.T) {
	hs := newHermesSetup(t)
	// The binary found on PATH, as most installations have it.
	host := hs.startHost(t, map[string]any{}, "PATH="+filepath.Dir(hs.bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	const n = 8
	for i := 0; i < n; i++ {
		host.ask(fmt.Sprint(i), fmt.Sprintf("rm -rf /srv/cache/%d", i), 120, nil)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = hermesProposal(t, hs.db, fmt.Sprintf("rm -rf /srv/cache/%d", i)).ApprovalID
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func(i int, id string) {
			defer wg.Done()
			if i%2 == 0 {
				runBin(t, hs.bin, 0, "--db", hs.db, "approve", "--confirm", id, "--", id)
			} else {
				runBin(t, hs.bin, 0, "--db", hs.db, "deny", "--", id)
			}
		}(i, id)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		r := host.result(fmt.Sprint(i), 30*time.Second)
		if want := map[bool]string{true: "once", false: "deny"}[i%2 == 0]; r.Choice != want || r.Failure != nil || r.Command != fmt.Sprintf("rm -rf /srv/cache/%d", i) {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
}

// Any failure of approve-tui is a deny in Hermes, never an exception out
// of the transport (Hermes would count that as its own "error"), with the
// reason in Hermes' log.
func TestHermesTransportFailsClosed(t *testing.T) {
	hs := newHermesSetup(t)
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name     string
		settings map[string]any
		env      []string
		log      string
	}{
		{"binary missing", map[string]any{"binary": filepath.Join(dir, "nowhere", "approve-tui")}, nil, "which is not an executable file"},
		{"not on PATH", map[string]any{}, []string{"PATH=" + pathWithout(t, "approve-tui")}, "approve-tui not found: install approve-tui on Hermes' PATH"},
		{"garbage answer", map[string]any{"binary": script("garbage", "cat >/dev/null; echo 'not json {'")}, nil, "answer is not JSON"},
		{"empty answer", map[string]any{"binary": script("empty", "cat >/dev/null")}, nil, "gave no answer"},
		{"crash", map[string]any{"binary": script("crash", "cat >/dev/null; kill -9 $$")}, nil, "killed by signal 9"},
		{"non-zero exit", map[string]any{"binary": script("exit3", `cat >/dev/null; echo '{"choice":"once"}'; exit 3`)}, nil, "exited with status 3"},
		{"asks for always", map[string]any{"binary": script("always", `cat >/dev/null; echo '{"choice":"always"}'`)}, nil, "grants only once"},
		{"store unavailable", map[string]any{"binary": hs.bin, "db": filepath.Join(dir, "no", "such.db")}, nil, "the approval store is unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := hs.startHost(t, tc.settings, tc.env...)
			host.ask("x", "rm -rf /srv/app/x", 20, nil)
			r := host.result("x", 30*time.Second)
			if r.Choice != "deny" || r.Failure != nil {
				t.Fatalf("Hermes got %+v\n%s", r, host.log())
			}
			// The log comes through its own pipe: it may follow the result.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(host.log(), tc.log) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if lg := host.log(); !strings.Contains(lg, tc.log) || strings.Contains(lg, "Traceback") {
				t.Fatalf("Hermes' log:\n%s", lg)
			}
		})
	}
}

// The store on PostgreSQL, named by the plugin's db setting.
func TestHermesTransportOnPostgres(t *testing.T) {
	pgtest.Require(t)
	db := pgtest.Schema(t)
	hs := newHermesSetup(t)
	runBin(t, hs.bin, 0, "--db", db, "init")
	host := hs.startHost(t, map[string]any{"binary": hs.bin, "db": db})
	host.ask("pg", "rm -rf /srv/pg-demo", 120, nil)
	rec := hermesProposal(t, db, "rm -rf /srv/pg-demo")
	runBin(t, hs.bin, 0, "--db", db, "approve", "--confirm", rec.ApprovalID, "--", rec.ApprovalID)
	if r := host.result("pg", 30*time.Second); r.Choice != "once" || r.Failure != nil {
		t.Fatalf("Hermes got %+v\n%s", r, host.log())
	}
	eventually(t, 10*time.Second, "not handed off", func() bool {
		return getRecord(t, db, rec.ApprovalID).ExecutionStatus == model.ExecHandedOff
	})
	if rec.ApprovalID != agent.HermesHookID(rec.Hermes.RequestID) {
		t.Fatal(rec.ApprovalID)
	}
}

// pathWithout is $PATH without the directories holding an executable
// named name.
func pathWithout(t *testing.T, name string) string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// runBin runs bin with args and wants exit code want.
func runBin(t *testing.T, bin string, want int, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Fatalf("%v: exit %d, want %d\n%s", args, code, want, out)
	}
	return string(out)
}
