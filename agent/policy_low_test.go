package agent

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// A rule of the policy in force that names a command binds it whatever
// the classifier says of it: run and every hook ask, with the rule named
// in the reason, where without the rule the command would go unasked.

// deployRule puts a two-person rule on make deploy in force.
func deployRule(t *testing.T, o *storage.Store) {
	t.Helper()
	p := &policy.Policy{Rules: []policy.Rule{{Match: policy.Match{Command: "make deploy*"}, Approvals: 2, Line: 5}}}
	if _, _, err := o.SetPolicy(context.Background(), []byte("deploys"), p, model.Actor{Surface: model.SurfaceCLI, Name: "root@test", Person: "root"}); err != nil {
		t.Fatal(err)
	}
}

// deployDir is a workspace whose Makefile has a deploy target: `make
// deploy` there is a build recipe of the workspace, judged low, and
// previews completely (nothing to raise it), so it goes unasked unless a
// rule names it.
func deployDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed: skipped (run runs make deploy)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("deploy:\n\ttrue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if j := risk.Judge(makeDeploy, risk.Context{Cwd: dir}); j.Level != model.RiskLow {
		t.Fatalf("%s is judged %s (%s): these tests need a low command", makeDeploy, j.Level, j.Reason())
	}
	return dir
}

const makeDeploy = "make deploy"

const deployRuleWhy = `policy v1 asks for approval (2 approvers): rule 1 (line 5): the command matches "make deploy*"`

func TestRunAsksWhatAPolicyRuleNames(t *testing.T) {
	dir := deployDir(t)
	s, o := emptyStore(t)

	// Without the rule, it runs at once (allowed by policy, audited).
	out := recvRun(t, startRun(s, runReq(dir, "make", "deploy")))
	if out.err != nil || out.res.Outcome != RunRan || out.res.ApprovalID != "" {
		t.Fatalf("without a rule: %+v %v", out.res, out.err)
	}

	deployRule(t, o)
	req := runReq(dir, "make", "deploy")
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	if rec.Command != makeDeploy || rec.RiskLevel != model.RiskLow || !strings.Contains(rec.RiskReason, deployRuleWhy) {
		t.Fatalf("proposal %q %s %q", rec.Command, rec.RiskLevel, rec.RiskReason)
	}
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "not today"); err != nil {
		t.Fatal(err)
	}
	if out := recvRun(t, ch); out.err != nil || out.res.Outcome != RunDenied {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}

	// A command no rule names still runs unasked.
	if out := recvRun(t, startRun(s, runReq(dir, "true"))); out.err != nil || out.res.Outcome != RunRan {
		t.Fatalf("true: %+v %v", out.res, out.err)
	}
}

// hookInput is sample name of archive with its command and cwd replaced.
func hookInput(t *testing.T, archive, name, command, cwd string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(sample(t, archive, name)), &m); err != nil {
		t.Fatal(err)
	}
	ti, ok := m["tool_input"].(map[string]any)
	if !ok {
		t.Fatalf("%s has no tool_input", name)
	}
	ti["command"] = command
	delete(ti, "dir_path") // Gemini's: the command runs in cwd itself
	m["cwd"] = cwd
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHooksAskWhatAPolicyRuleNames(t *testing.T) {
	dir := deployDir(t)
	for _, ac := range agentCases {
		lows := []string{LowPass}
		if ac.name != "codex" {
			lows = append(lows, LowAllow) // Codex's protocol cannot say allow
		}
		for _, low := range lows {
			t.Run(ac.name+"/--low "+low, func(t *testing.T) {
				s, o := emptyStore(t)
				opts := hookOpts(s)
				opts.Low = low
				in := hookInput(t, ac.archive, ac.risky, makeDeploy, dir)

				// Without the rule: not asked (passed, or allowed).
				want := ""
				if low == LowAllow {
					want = "allow"
				}
				if d, reason := ac.check(t, recvHook(t, runAsync(ac.fn, in, opts))); d != want {
					t.Fatalf("without a rule: %q %q", d, reason)
				}

				deployRule(t, o)
				ch := runAsync(ac.fn, in, opts)
				rec := awaitHookProposal(t, o)
				if rec.Command != makeDeploy || rec.RiskLevel != model.RiskLow || !strings.Contains(rec.RiskReason, deployRuleWhy) {
					t.Fatalf("proposal %q %s %q", rec.Command, rec.RiskLevel, rec.RiskReason)
				}
				if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "two people, please"); err != nil {
					t.Fatal(err)
				}
				if d, reason := ac.check(t, recvHook(t, ch)); d != "deny" || !strings.Contains(reason, "two people, please") {
					t.Fatalf("%q %q", d, reason)
				}

				// A command no rule names is still not asked.
				other := hookInput(t, ac.archive, ac.risky, "true", dir)
				if d, reason := ac.check(t, recvHook(t, runAsync(ac.fn, other, opts))); d != want {
					t.Fatalf("true: %q %q", d, reason)
				}
			})
		}
	}
}

// --low pass on a store that does not exist: no policy can be in it, so a
// command no rule matches passes; one that cannot be read denies.
func TestHookLowPassReadsThePolicy(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.db")
	opts := HookOptions{Timeout: 5 * time.Second, Actor: hookActor, Open: func(ctx context.Context) (*storage.Store, error) {
		return storage.Open(ctx, missing, storage.Options{})
	}}
	if a := recvHook(t, hookAsync(bashCall("true", "toolu_1"), opts)); !a.Silent {
		t.Fatalf("missing store: %+v", a)
	}
	garbage := filepath.Join(t.TempDir(), "garbage.db")
	if err := os.WriteFile(garbage, []byte("not a database, not at all, no"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Open = func(ctx context.Context) (*storage.Store, error) {
		return storage.Open(ctx, garbage, storage.Options{})
	}
	a := recvHook(t, hookAsync(bashCall("true", "toolu_2"), opts))
	if d, reason := checkJSON(t, a); d != "deny" || !strings.Contains(reason, "unavailable to read its policy") {
		t.Fatalf("%q %q", d, reason)
	}
}
