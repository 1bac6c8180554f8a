package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/agentstub"
)

// The real agents' programs (Claude Code, Codex CLI, Gemini CLI, from their
// npm packages), each run non-interactively against a loopback stand-in of
// its model API (internal/agentstub) with approve-tui's hook configured in
// a fresh HOME. APPROVE_TUI_TEST_AGENTS names the node_modules directory
// holding the packages (.ci/run installs them when the registry answers);
// without it the tests skip, saying why.

// agentsDir is the node_modules directory of the real agents, or a skip.
func agentsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("APPROVE_TUI_TEST_AGENTS")
	if dir == "" {
		t.Skip("APPROVE_TUI_TEST_AGENTS is not set: no real agents to run (it names a node_modules directory with @anthropic-ai/claude-code, @openai/codex and @google/gemini-cli; .ci/run installs them)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the real agents cannot run")
	}
	return dir
}

// realAgent is one agent as the tests drive it.
type realAgent struct {
	name string        // approve-tui's name for it: claude-code, codex, gemini
	bin  string        // its program under node_modules/.bin
	api  agentstub.API // the model API it speaks
	// idPrefix starts its proposals' ids.
	idPrefix string
}

var realAgents = []realAgent{
	{name: "claude-code", bin: "claude", api: agentstub.Anthropic, idPrefix: "cc-"},
	{name: "codex", bin: "codex", api: agentstub.Responses, idPrefix: "cx-"},
	{name: "gemini", bin: "gemini", api: agentstub.Gemini, idPrefix: "gm-"},
}

// agentRig is one agent run: a HOME of its own, a project directory, a
// store, the stand-in model and the hook configured.
type agentRig struct {
	t       *testing.T
	agent   realAgent
	modules string
	home    string
	work    string
	db      string
	hookBin string
	stub    *agentstub.Server
	// hookTimeout is the agent's own hook timeout; waitFor the hook's
	// --timeout.
	hookTimeout, waitFor time.Duration
	// preArgs are more arguments of the pre-tool hook (--defer).
	preArgs string
}

// newAgentRig prepares agent a to ask, through the stand-in model, to run
// command with description.
func newAgentRig(t *testing.T, a realAgent, command, description string) *agentRig {
	t.Helper()
	modules := agentsDir(t)
	if _, err := os.Stat(filepath.Join(modules, ".bin", a.bin)); err != nil {
		t.Skipf("%s is not installed in APPROVE_TUI_TEST_AGENTS (%v)", a.bin, err)
	}
	hookBin, err := exec.LookPath("approve-tui")
	if err != nil {
		t.Skip("approve-tui is not in $PATH:", err)
	}
	root := t.TempDir()
	r := &agentRig{t: t, agent: a, modules: modules, home: filepath.Join(root, "home"), work: filepath.Join(root, "project"),
		db: filepath.Join(root, "approvals.db"), hookBin: hookBin, hookTimeout: 120 * time.Second, waitFor: 90 * time.Second}
	for _, d := range []string{r.home, r.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := approveTUI(t, "--db", r.db, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	r.stub = agentstub.Start(t, a.api, command, description)
	return r
}

// env is the agent's environment: a fresh HOME, fake keys, the stand-in's
// URL, and nothing of the test's own environment but PATH.
func (r *agentRig) env() []string {
	path := filepath.Join(r.modules, ".bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	env := []string{"PATH=" + path, "HOME=" + r.home, "TERM=dumb", "NO_COLOR=1", "LANG=C.UTF-8",
		"GORACE=atexit_sleep_ms=0", "TMPDIR=" + os.TempDir()}
	switch r.agent.name {
	case "claude-code":
		env = append(env, "ANTHROPIC_BASE_URL="+r.stub.URL, "ANTHROPIC_API_KEY=sk-ant-stand-in",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1", "CLAUDE_CONFIG_DIR="+filepath.Join(r.home, ".claude"))
	case "codex":
		env = append(env, "CODEX_HOME="+filepath.Join(r.home, ".codex"), "STANDIN_API_KEY=sk-stand-in")
	case "gemini":
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+r.stub.URL, "GEMINI_API_KEY=stand-in",
			"GEMINI_CLI_NO_RELAUNCH=true")
	}
	return env
}

// hookCommand is the hook's command line as the agent's settings give it.
func (r *agentRig) hookCommand(pre bool) string {
	cmd := fmt.Sprintf("%s --db %s hook %s", r.hookBin, r.db, r.agent.name)
	if pre {
		cmd += fmt.Sprintf(" --timeout %s", r.waitFor) + r.preArgs
	}
	return cmd
}

// agentRun is a running agent.
type agentRun struct {
	cmd     *exec.Cmd
	stdout  bytes.Buffer
	stderr  bytes.Buffer
	done    chan error
	cancel  context.CancelFunc
	started time.Time
}

// installAndAsk installs the hooks, starts the agent on "Create the marker
// file." and returns the run with the id of the proposal its shell call
// became.
func (r *agentRig) installAndAsk() (*agentRun, string) {
	r.t.Helper()
	r.installHooks()
	run := r.start("Create the marker file.")
	return run, r.pendingID(run)
}

// start runs the agent on prompt in the project directory.
func (r *agentRig) start(prompt string, more ...string) *agentRun {
	r.t.Helper()
	var args []string
	switch r.agent.name {
	case "claude-code":
		args = append([]string{"-p", prompt, "--output-format", "json", "--model", "claude-sonnet-4-5"}, more...)
		if prompt == "" { // a resume asks with no prompt
			args = append(args[:1:1], args[2:]...)
		}
	case "codex":
		args = []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt}
	case "gemini":
		// A named model: with "auto" Gemini CLI first asks the model
		// to route the prompt (JSON the stand-in does not play).
		args = []string{"-p", prompt, "--approval-mode", "yolo", "--output-format", "json", "--model", "gemini-2.5-flash"}
	}
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

// wait waits for the agent to end and returns its outputs.
func (r *agentRig) wait(run *agentRun) (stdout, stderr string) {
	r.t.Helper()
	select {
	case err := <-run.done:
		run.done <- err
		r.t.Logf("%s: ended after %s", r.agent.bin, time.Since(run.started).Round(time.Millisecond))
		if err != nil {
			r.t.Logf("%s ended: %v", r.agent.bin, err)
		}
	case <-time.After(4 * time.Minute):
		r.t.Fatalf("%s did not end\nstdout: %s\nstderr: %s\nmodel log:\n%s", r.agent.bin, run.stdout.String(), run.stderr.String(), r.stub.Log())
	}
	return run.stdout.String(), run.stderr.String()
}

// pendingID waits until the agent's proposal is pending in the store and
// returns its id (failing with what the agent said when it never comes).
func (r *agentRig) pendingID(run *agentRun) string {
	r.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		out, err := approveTUI(r.t, "--db", r.db, "--json", "list").Output()
		if err == nil {
			var rows []map[string]any
			if json.Unmarshal(out, &rows) == nil {
				for _, row := range rows {
					if id, _ := row["approval_id"].(string); strings.HasPrefix(id, r.agent.idPrefix) {
						r.t.Logf("%s: proposal %s after %s", r.agent.bin, id, time.Since(run.started).Round(time.Millisecond))
						return id
					}
				}
			}
		}
		select {
		case err := <-run.done:
			run.done <- err
			r.t.Fatalf("%s ended (%v) with no proposal\ntool results: %q\nstdout: %s\nstderr: %s\nmodel log:\n%s", r.agent.bin, err, r.stub.ToolResults(),
				run.stdout.String(), run.stderr.String(), r.stub.Log())
		case <-time.After(200 * time.Millisecond):
		}
	}
	r.t.Fatalf("no proposal from %s\nstdout: %s\nstderr: %s\nmodel log:\n%s", r.agent.bin, run.stdout.String(), run.stderr.String(), r.stub.Log())
	return ""
}

// show is `show --json ID` of the rig's store.
func (r *agentRig) show(id string) map[string]any {
	return showJSON(r.t, r.db, id)
}
