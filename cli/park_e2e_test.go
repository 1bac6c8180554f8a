package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

// Parked proposals end to end, with real processes: the built binary, a
// real SQLite file, hook processes fed each agent's input and stopped the
// way that agent stops them at its own hook timeout (Claude Code: SIGTERM
// to the hook's process group; Gemini CLI: SIGTERM to the `bash -c` it
// started; Codex: SIGKILL to the `$SHELL -lc` it started, which bash
// execs into the hook: the hook dies without a word). The operator
// approves once the hook is long gone; the same call asked again runs, once;
// every other asker is refused, and no other call ever takes the approval.
//
// No clock of the store can be moved from outside the process, so "ten
// minutes later" is, by default, "after the hook's waiter is judged gone"
// (its heartbeat older than storage.WaiterStaleAfter); set
// APPROVE_TUI_TEST_PARK_LATER=10m to wait that long for real before the
// approval (with go test -timeout 30m). The end of a park window is met
// with a real short window.

// parkRig is a store of the built binary's and a project directory.
type parkRig struct {
	t    *testing.T
	bin  string
	dir  string
	db   string
	work string
}

func newParkRig(t *testing.T) *parkRig {
	t.Helper()
	dir := t.TempDir()
	r := &parkRig{t: t, bin: buildBinaryTB(t, dir), dir: dir, db: filepath.Join(dir, "state.db"), work: filepath.Join(dir, "project")}
	if err := os.MkdirAll(r.work, 0o755); err != nil {
		t.Fatal(err)
	}
	r.must("init")
	return r
}

// env is the test's environment without a store or configuration of its
// own, and with no race-exit delay.
func (r *parkRig) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "APPROVE_TUI_DB=") && !strings.HasPrefix(kv, "APPROVE_TUI_CONFIG=") && !strings.HasPrefix(kv, "HERMES_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "GORACE=atexit_sleep_ms=0", "XDG_CONFIG_HOME="+filepath.Join(r.dir, "xdg"))
}

func (r *parkRig) command(args ...string) *exec.Cmd {
	c := exec.Command(r.bin, append([]string{"--db", r.db}, args...)...)
	c.Env = r.env()
	c.Dir = r.work
	return c
}

// try runs the binary: its standard output, standard error and error.
func (r *parkRig) try(args ...string) (string, string, error) {
	c := r.command(args...)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	return out.String(), errOut.String(), err
}

func (r *parkRig) must(args ...string) string {
	r.t.Helper()
	out, errOut, err := r.try(args...)
	if err != nil {
		r.t.Fatalf("approve-tui %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func (r *parkRig) show(id string) map[string]any {
	r.t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(r.must("--json", "show", "--", id)), &v); err != nil {
		r.t.Fatal(err)
	}
	return v
}

// events is the audit log of id, oldest first.
func (r *parkRig) events(id string) []notifyAuditEvent {
	r.t.Helper()
	var evs []notifyAuditEvent
	if err := json.Unmarshal([]byte(r.must("audit", "--json", "--id", id, "--limit", "100000")), &evs); err != nil {
		r.t.Fatal(err)
	}
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs
}

// count is how many events of id are event with outcome ("" any).
func (r *parkRig) count(id, event, outcome string) int {
	n := 0
	for _, e := range r.events(id) {
		if e.Event == event && (outcome == "" || e.Outcome == outcome) {
			n++
		}
	}
	return n
}

// ids is every proposal's id in the store, any status.
func (r *parkRig) ids() []string {
	r.t.Helper()
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.must("--json", "list", "--status", "all")), &rows); err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, row := range rows {
		id, _ := row["approval_id"].(string)
		out = append(out, id)
	}
	return out
}

// waiterState is show --json's waiter.state of id ("" when none).
func (r *parkRig) waiterState(id string) string {
	w, _ := r.show(id)["waiter"].(map[string]any)
	s, _ := w["state"].(string)
	return s
}

// verify runs audit --verify: the log and every payload intact.
func (r *parkRig) verify() {
	r.t.Helper()
	if out, errOut, err := r.try("audit", "--verify"); err != nil {
		r.t.Fatalf("audit --verify: %v\n%s%s", err, out, errOut)
	}
}

// hookShape is one agent's side of the hook, as the tests feed it.
type hookShape struct {
	agent  string // approve-tui's name for it
	prefix string // its proposals' ids start with it
	// input is its pre-tool event for call key of session in cwd.
	input func(session, key, cwd, command string) string
	// post is its post-tool event for the same call ("" none).
	post func(session, key, cwd, command string) string
	// start starts the hook process as the agent does; stop stops it as
	// the agent does at its hook timeout.
	start func(cmd *exec.Cmd) *exec.Cmd
	stop  func(t *testing.T, cmd *exec.Cmd)
	// killed: the stop gives the hook no chance to say anything.
	killed bool
}

var hookShapes = []hookShape{
	{
		agent: "claude-code", prefix: "cc-",
		input: func(session, key, cwd, command string) string {
			return mustJSON(map[string]any{"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "permission_mode": "default",
				"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": command}, "tool_use_id": key})
		},
		post: func(session, key, cwd, command string) string {
			return mustJSON(map[string]any{"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "permission_mode": "default",
				"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": command}, "tool_use_id": key,
				"tool_response": map[string]any{"stdout": "", "stderr": "", "interrupted": false}})
		},
		// Claude Code: a process group of the hook's own, SIGTERM to the
		// group at the timeout.
		start: func(cmd *exec.Cmd) *exec.Cmd {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			return cmd
		},
		stop: func(t *testing.T, cmd *exec.Cmd) {
			if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		},
	},
	{
		agent: "codex", prefix: "cx-",
		input: func(session, key, cwd, command string) string {
			return mustJSON(map[string]any{"session_id": session, "turn_id": "turn-1", "transcript_path": nil, "cwd": cwd,
				"hook_event_name": "PreToolUse", "model": "gpt-5.1-codex", "permission_mode": "bypassPermissions", "tool_name": "Bash",
				"tool_input": map[string]any{"command": command}, "tool_use_id": key})
		},
		post: func(session, key, cwd, command string) string {
			return mustJSON(map[string]any{"session_id": session, "turn_id": "turn-1", "transcript_path": nil, "cwd": cwd,
				"hook_event_name": "PostToolUse", "model": "gpt-5.1-codex", "permission_mode": "bypassPermissions", "tool_name": "Bash",
				"tool_input": map[string]any{"command": command}, "tool_response": "Exit code: 0\nOutput:\n", "tool_use_id": key})
		},
		// Codex: `$SHELL -lc COMMAND`, SIGKILL to that shell alone;
		// bash execs the one command, so the hook itself is killed.
		start: func(cmd *exec.Cmd) *exec.Cmd {
			line := shellQuote(cmd.Args[0])
			for _, a := range cmd.Args[1:] {
				line += " " + shellQuote(a)
			}
			sh := exec.Command("bash", "-lc", line)
			sh.Env, sh.Dir = cmd.Env, cmd.Dir
			return sh
		},
		stop: func(t *testing.T, cmd *exec.Cmd) {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		},
		killed: true,
	},
	{
		agent: "gemini", prefix: "gm-",
		input: func(session, key, cwd, command string) string {
			// Gemini CLI's calls have no id: the event's timestamp
			// stands for the key.
			return mustJSON(map[string]any{"session_id": session, "transcript_path": "/tmp/t.json", "cwd": cwd, "hook_event_name": "BeforeTool",
				"timestamp": key, "tool_name": "run_shell_command", "tool_input": map[string]any{"command": command, "description": "write the log"}})
		},
		// Gemini CLI: `bash -c COMMAND`, SIGTERM to that child; it waits
		// for the hook to exit.
		start: func(cmd *exec.Cmd) *exec.Cmd {
			line := shellQuote(cmd.Args[0])
			for _, a := range cmd.Args[1:] {
				line += " " + shellQuote(a)
			}
			sh := exec.Command("bash", "-c", line)
			sh.Env, sh.Dir = cmd.Env, cmd.Dir
			return sh
		},
		stop: func(t *testing.T, cmd *exec.Cmd) {
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		},
	},
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// parkHook is one hook process.
type parkHook struct {
	cmd    *exec.Cmd
	stdin  *os.File // the write end, until the input is given
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// startHook starts the hook of shape sh with extra flags, its input not
// given yet (see give): the process is up and reading its standard input.
func (r *parkRig) startHook(sh hookShape, flags ...string) *parkHook {
	r.t.Helper()
	cmd := sh.start(r.command(append([]string{"hook", sh.agent}, flags...)...))
	pr, pw, err := os.Pipe()
	if err != nil {
		r.t.Fatal(err)
	}
	h := &parkHook{cmd: cmd, stdin: pw, done: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pr, &h.stdout, &h.stderr
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	pr.Close()
	go func() { h.err = cmd.Wait(); close(h.done) }()
	r.t.Cleanup(func() {
		select {
		case <-h.done:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Process.Kill()
			<-h.done
		}
	})
	return h
}

// give writes the input and closes the hook's standard input.
func (h *parkHook) give(t *testing.T, input string) {
	t.Helper()
	if _, err := h.stdin.WriteString(input); err != nil {
		t.Fatal(err)
	}
	h.stdin.Close()
}

func (h *parkHook) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(within):
		t.Fatalf("the hook did not answer within %s\nstdout: %s\nstderr: %s", within, h.stdout.String(), h.stderr.String())
	}
}

// askHook runs one hook call to its answer.
func (r *parkRig) askHook(sh hookShape, input string, flags ...string) *parkHook {
	r.t.Helper()
	h := r.startHook(sh, flags...)
	h.give(r.t, input)
	h.wait(r.t, 60*time.Second)
	return h
}

// verdict is the hook's answer in its agent's protocol: "allow", "deny" or
// "none" (no output), with the reason shown.
func (h *parkHook) verdict(t *testing.T, agent string) (decision, reason string) {
	t.Helper()
	out := bytes.TrimSpace(h.stdout.Bytes())
	if h.err != nil {
		return "failed", fmt.Sprintf("%v: %s", h.err, h.stderr.String())
	}
	if len(out) == 0 {
		if agent == "codex" {
			// Codex's allow is no output, exit 0.
			return "allow", ""
		}
		return "none", ""
	}
	switch agent {
	case "gemini":
		var a struct{ Decision, Reason string }
		if err := json.Unmarshal(out, &a); err != nil {
			t.Fatalf("answer %q: %v", out, err)
		}
		return a.Decision, a.Reason
	default:
		var a struct {
			HookSpecificOutput struct {
				PermissionDecision       string `json:"permissionDecision"`
				PermissionDecisionReason string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &a); err != nil {
			t.Fatalf("answer %q: %v", out, err)
		}
		return a.HookSpecificOutput.PermissionDecision, a.HookSpecificOutput.PermissionDecisionReason
	}
}

// parkedWords is the agent-facing parked deny: "approve-tui: not run:
// parked as ID; ... Ask again later ...".
var parkedWords = regexp.MustCompile(`^approve-tui: not run: parked as (\S+); .*Ask again later with the exact same command in the same directory`)

// awaitProposal waits for a pending proposal with prefix other than those
// in not, and for its waiter to be live.
func (r *parkRig) awaitProposal(prefix string, not ...string) string {
	r.t.Helper()
	var id string
	eventually(r.t, 30*time.Second, "no proposal "+prefix+" with a live waiter", func() bool {
		id = ""
		for _, x := range r.ids() {
			if strings.HasPrefix(x, prefix) && !slices.Contains(not, x) {
				id = x
			}
		}
		return id != "" && r.waiterState(id) == "live"
	})
	return id
}

// later waits until id's waiter is no longer live, and then as long as
// APPROVE_TUI_TEST_PARK_LATER says.
func (r *parkRig) later(id string) {
	r.t.Helper()
	eventually(r.t, 3*storage.WaiterStaleAfter+10*time.Second, "the stopped hook still looks like a live waiter", func() bool {
		return r.waiterState(id) != "live"
	})
	if v := os.Getenv("APPROVE_TUI_TEST_PARK_LATER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			r.t.Fatalf("APPROVE_TUI_TEST_PARK_LATER: %v", err)
		}
		r.t.Logf("waiting %s before the approval (APPROVE_TUI_TEST_PARK_LATER)", d)
		time.Sleep(d)
	}
}

// fileLines is how many lines the file at path holds (0: none, or no file).
func fileLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// The done-when of parking with each agent's hook input: the hook is
// stopped as its agent stops it while the operator has not decided; the
// proposal stays open (parked, or reserved with its waiter gone); the
// operator approves it after the hook is long gone; other calls (another
// directory, command, session, agent) never get the approval; the same
// call asked again twice at once: one asker is let through and runs the
// command, the other is refused; a later ask is refused too; the command
// ran exactly once, and the audit log says who took the approval.
func TestParkE2EHookStoppedApprovedLaterRunsOnce(t *testing.T) {
	for _, sh := range hookShapes {
		t.Run(sh.agent, func(t *testing.T) {
			r := newParkRig(t)
			ran := filepath.Join(r.work, "ran.log")
			command := "sh -c 'echo ran >> ran.log'"
			session := "sess-" + sh.agent
			flags := []string{"--timeout", "120s", "--park-window", "1h"}

			// 1. The agent asks; the hook waits; the agent stops it.
			first := r.startHook(sh, flags...)
			first.give(t, sh.input(session, "call-1", r.work, command))
			id := r.awaitProposal(sh.prefix)
			sh.stop(t, first.cmd)
			first.wait(t, 30*time.Second)
			rec := r.show(id)
			if rec["status"] != "pending" {
				t.Fatalf("after the agent stopped the hook: status %v, want pending (parked or reserved)\nreason %v", rec["status"], rec["terminal_reason"])
			}
			if sh.killed {
				t.Logf("%s: hook killed (%v); record: waiter %v, park %v", sh.agent, first.err, rec["waiter"], rec["park"])
				if strings.TrimSpace(first.stdout.String()) != "" {
					t.Logf("note: the killed hook answered %q (its shell did not exec it)", first.stdout.String())
				}
			} else {
				d, why := first.verdict(t, sh.agent)
				m := parkedWords.FindStringSubmatch(why)
				if d != "deny" || m == nil || m[1] != id {
					t.Fatalf("the stopped hook answered %s %q, want the parked deny naming %s\nstderr: %s", d, why, id, first.stderr.String())
				}
				if n := r.count(id, "park", "ok"); n != 1 {
					t.Errorf("%d park events, want 1: %+v", n, r.events(id))
				}
			}
			t.Logf("show after the stop: park %v, waiter %v", rec["park"], rec["waiter"])

			// 2. Later, the operator approves it: the hook is long gone.
			r.later(id)
			if out, errOut, err := r.try("approve", id, "--confirm", id); err != nil {
				t.Fatalf("approving the parked proposal: %v\n%s%s", err, out, errOut)
			}

			// 3. Other calls never take it: another directory, another
			// command (one byte more), another session, another agent.
			other := filepath.Join(r.dir, "elsewhere")
			if err := os.MkdirAll(other, 0o755); err != nil {
				t.Fatal(err)
			}
			short := []string{"--timeout", "1500ms", "--park-window", "1h"}
			for _, c := range []struct {
				what  string
				shape hookShape
				input string
			}{
				{"another directory", sh, sh.input(session, "call-x1", other, command)},
				{"another command", sh, sh.input(session, "call-x2", r.work, command+" ")},
				{"another session", sh, sh.input(session+"-other", "call-x3", r.work, command)},
				{"another agent", hookShapes[(indexOfShape(sh.agent)+1)%len(hookShapes)], hookShapes[(indexOfShape(sh.agent)+1)%len(hookShapes)].input(session, "call-x4", r.work, command)},
			} {
				h := r.askHook(c.shape, c.input, short...)
				if d, why := h.verdict(t, c.shape.agent); d == "allow" || strings.Contains(why, id) {
					t.Errorf("%s: answered %s %q: the approval of %s reached another call", c.what, d, why, id)
				}
			}
			if n := r.count(id, "take", ""); n != 0 {
				t.Fatalf("a call that is not the parked one tried to take it: %+v", r.events(id))
			}

			// 4. The same call asked again, twice at once (the processes
			// up and reading, the inputs given together).
			a, b := r.startHook(sh, flags...), r.startHook(sh, flags...)
			time.Sleep(300 * time.Millisecond)
			var wg sync.WaitGroup
			for i, h := range []*parkHook{a, b} {
				wg.Add(1)
				go func(h *parkHook, key string) {
					defer wg.Done()
					if _, err := h.stdin.WriteString(sh.input(session, key, r.work, command)); err == nil {
						h.stdin.Close()
					}
				}(h, fmt.Sprintf("call-retry-%d", i+1))
			}
			wg.Wait()
			allowed := 0
			for i, h := range []*parkHook{a, b} {
				// A loser that did not see the parked proposal waits on
				// one of its own: stopped as its agent would.
				select {
				case <-h.done:
				case <-time.After(10 * time.Second):
					sh.stop(t, h.cmd)
					h.wait(t, 30*time.Second)
				}
				d, why := h.verdict(t, sh.agent)
				t.Logf("retry %d: %s %q", i+1, d, why)
				switch {
				case d == "allow":
					allowed++
					// The agent runs the command it was let through.
					run := exec.Command("sh", "-c", command)
					run.Dir = r.work
					if out, err := run.CombinedOutput(); err != nil {
						t.Fatalf("running the command: %v\n%s", err, out)
					}
					if sh.post != nil {
						r.askHook(sh, sh.post(session, fmt.Sprintf("call-retry-%d", i+1), r.work, command))
					}
				case strings.Contains(why, "taken"):
					if !strings.Contains(why, id) {
						t.Errorf("the taken refusal does not name %s: %q", id, why)
					}
				case sh.killed && d == "failed" || d == "deny":
					// It saw no parked call (the other took it first) and
					// waited on a new proposal of its own.
					if strings.Contains(why, id) {
						t.Errorf("retry %d names %s without saying it was taken: %q", i+1, id, why)
					}
				default:
					t.Errorf("retry %d: %s %q", i+1, d, why)
				}
			}
			if allowed != 1 {
				t.Fatalf("%d of two retries of one approved parked call were let through, want exactly 1", allowed)
			}

			// 5. A later ask of the same call: refused.
			h := r.askHook(sh, sh.input(session, "call-retry-3", r.work, command), short...)
			if d, why := h.verdict(t, sh.agent); d == "allow" {
				t.Fatalf("a third ask of the call was let through: %q", why)
			} else {
				t.Logf("third ask: %s %q", d, why)
			}

			// The command ran once; the record and the log say who took it.
			if n := fileLines(ran); n != 1 {
				t.Fatalf("the command ran %d times, want once", n)
			}
			rec = r.show(id)
			if rec["status"] != "consumed" {
				t.Errorf("status %v, want consumed", rec["status"])
			}
			if rec["execution_status"] == "ran_without_approval" {
				t.Errorf("the approved call's run is recorded as ran_without_approval: %v", rec["execution_reason"])
			}
			t.Logf("record: execution %v (%v), park %v", rec["execution_status"], rec["execution_reason"], rec["park"])
			if n := r.count(id, "take", "ok"); n != 1 {
				t.Errorf("%d take events ok, want 1: %+v", n, r.events(id))
			}
			r.verify()
		})
	}
}

func indexOfShape(agent string) int {
	for i, s := range hookShapes {
		if s.agent == agent {
			return i
		}
	}
	return -1
}

// A hook killed -9 while it waits (nothing said, nothing recorded at the
// kill) leaves its proposal reserved; once its waiter is judged gone, the
// same call asked again attaches to it rather than submitting another,
// waits as its waiter, and is let through when the operator approves.
func TestParkE2EKilledHookRetryAttachesAndWaits(t *testing.T) {
	sh := hookShapes[indexOfShape("claude-code")]
	r := newParkRig(t)
	command := "sh -c 'echo ran >> ran.log'"
	flags := []string{"--timeout", "120s", "--park-window", "1h"}
	first := r.startHook(sh, flags...)
	first.give(t, sh.input("sess-k", "call-1", r.work, command))
	id := r.awaitProposal(sh.prefix)
	if err := syscall.Kill(-first.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.wait(t, 10*time.Second)
	if rec := r.show(id); rec["status"] != "pending" {
		t.Fatalf("status %v after kill -9, want pending (reserved)", rec["status"])
	}
	r.later(id)
	retry := r.startHook(sh, flags...)
	retry.give(t, sh.input("sess-k", "call-2", r.work, command))
	eventually(t, 30*time.Second, "the retry never became the parked proposal's waiter", func() bool {
		return r.waiterState(id) == "live"
	})
	if ids := r.ids(); len(ids) != 1 {
		t.Fatalf("the retry submitted another proposal: %v", ids)
	}
	r.must("approve", id, "--confirm", id)
	retry.wait(t, 30*time.Second)
	if d, why := retry.verdict(t, sh.agent); d != "allow" {
		t.Fatalf("the retry waiting on the approved proposal answered %s %q\nstderr: %s", d, why, retry.stderr.String())
	}
	if n := r.count(id, "take", "ok"); n != 1 {
		t.Errorf("%d take events, want 1 (every allow of a parked proposal takes it)", n)
	}
	r.verify()
}

// A parked proposal's window ends: approving it is refused, saying so,
// and the same call asked again is not let through.
func TestParkE2EApprovalAfterTheWindowRefused(t *testing.T) {
	sh := hookShapes[indexOfShape("gemini")]
	r := newParkRig(t)
	command := "sh -c 'echo ran >> ran.log'"
	// The hook's own timeout stops it: it parks for 3 s.
	h := r.askHook(sh, sh.input("sess-w", "2026-12-05T10:00:00Z", r.work, command), "--timeout", "1s", "--park-window", "3s")
	d, why := h.verdict(t, sh.agent)
	m := parkedWords.FindStringSubmatch(why)
	if d != "deny" || m == nil {
		t.Fatalf("the hook at its own timeout answered %s %q, want the parked deny\nstderr: %s", d, why, h.stderr.String())
	}
	id := m[1]
	time.Sleep(4 * time.Second)
	out, errOut, err := r.try("approve", id, "--confirm", id)
	if err == nil || !strings.Contains(out+errOut, "park window") {
		t.Fatalf("approving after the park window: %v\n%s%s", err, out, errOut)
	}
	t.Logf("refusal: %s", strings.TrimSpace(errOut))
	if rec := r.show(id); rec["status"] == "consumed" {
		t.Fatal("approved after its park window")
	}
	h = r.askHook(sh, sh.input("sess-w", "2026-12-05T10:05:00Z", r.work, command), "--timeout", "1s", "--park-window", "3s")
	if d, why := h.verdict(t, sh.agent); d == "allow" || strings.Contains(why, id) {
		t.Fatalf("the call asked after the window: %s %q", d, why)
	}
	if n := fileLines(filepath.Join(r.work, "ran.log")); n != 0 {
		t.Fatalf("the command ran %d times", n)
	}
	r.verify()
}

// `run --timeout` parks too: exit 12, saying parked as ID; approved later,
// the same command run again in the same directory runs, once; a third run
// does not; another directory never matches.
func TestParkE2ERunTimeoutThenRunsOnce(t *testing.T) {
	r := newParkRig(t)
	script := "echo ran >> ran.log"
	run := func(dir string) (string, int) {
		c := r.command("run", "--timeout", "2s", "--park-window", "1h", "--", "sh", "-c", script)
		c.Dir = dir
		var errOut bytes.Buffer
		c.Stderr = &errOut
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return errOut.String(), code
	}
	msg, code := run(r.work)
	m := regexp.MustCompile(`parked as (\S+?)[;:, ]`).FindStringSubmatch(msg)
	if code != ExitWaitTimeout || m == nil {
		t.Fatalf("run --timeout: exit %d, want %d, saying parked\n%s", code, ExitWaitTimeout, msg)
	}
	id := m[1]
	if rec := r.show(id); rec["status"] != "pending" {
		t.Fatalf("status %v, want pending (parked)", rec["status"])
	}
	r.must("approve", id, "--confirm", id)
	other := filepath.Join(r.dir, "elsewhere")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if msg, code := run(other); code == 0 || fileLines(filepath.Join(other, "ran.log")) != 0 {
		t.Fatalf("the same command in another directory ran on the approval: exit %d\n%s", code, msg)
	}
	if msg, code := run(r.work); code != 0 {
		t.Fatalf("the retry of the approved parked command: exit %d\n%s", code, msg)
	}
	if msg, code := run(r.work); code == 0 {
		t.Fatalf("a third run ran too\n%s", msg)
	} else {
		t.Logf("third run: exit %d: %s", code, strings.TrimSpace(msg))
	}
	if n := fileLines(filepath.Join(r.work, "ran.log")); n != 1 {
		t.Fatalf("the command ran %d times, want once", n)
	}
	rec := r.show(id)
	if rec["status"] != "consumed" || rec["execution_status"] != "executed" {
		t.Errorf("record: %v, %v; want consumed, executed", rec["status"], rec["execution_status"])
	}
	if n := r.count(id, "take", "ok"); n != 1 {
		t.Errorf("%d take events, want 1", n)
	}
	r.verify()
}

// The same call (the same tool_use_id: Claude Code re-emits a deferred
// call so, and nothing stops an agent from sending an id again) asked
// again after its approval was taken and its run recorded: not let
// through a second time.
func TestParkE2ESameCallIDAfterItRanRefused(t *testing.T) {
	for _, sh := range hookShapes {
		if sh.post == nil {
			continue
		}
		t.Run(sh.agent, func(t *testing.T) {
			r := newParkRig(t)
			command := "sh -c 'echo ran >> ran.log'"
			flags := []string{"--timeout", "1s", "--park-window", "1h"}
			h := r.askHook(sh, sh.input("sess-same", "call-1", r.work, command), flags...)
			d, why := h.verdict(t, sh.agent)
			m := parkedWords.FindStringSubmatch(why)
			if d != "deny" || m == nil {
				t.Fatalf("the hook at its own timeout answered %s %q", d, why)
			}
			id := m[1]
			r.must("approve", id, "--confirm", id)
			h = r.askHook(sh, sh.input("sess-same", "call-1", r.work, command), flags...)
			if d, why := h.verdict(t, sh.agent); d != "allow" {
				t.Fatalf("the parked call asked again with its own id: %s %q", d, why)
			}
			r.askHook(sh, sh.post("sess-same", "call-1", r.work, command))
			if rec := r.show(id); rec["execution_status"] != "executed" {
				t.Fatalf("the run is not recorded: execution %v (%v)", rec["execution_status"], rec["execution_reason"])
			}
			h = r.askHook(sh, sh.input("sess-same", "call-1", r.work, command), flags...)
			if d, why := h.verdict(t, sh.agent); d == "allow" {
				t.Fatalf("the same call id asked again after its run was let through again (%q): its approval ran twice\nstderr: %s", why, h.stderr.String())
			}
			if n := r.count(id, "take", "ok"); n != 1 {
				t.Errorf("%d take events, want 1", n)
			}
		})
	}
}
