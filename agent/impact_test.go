package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/impact"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// The preview is pinned at submit (payload, diff_summary); a target that
// grew between the approval and the run blocks it: blocked_after_consume,
// impact_grew, what grew reported, nothing deleted.
func TestRunRefusesWhenTheImpactGrew(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	build := filepath.Join(dir, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, "a.o"), []byte("obj"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := runReq(dir, "rm", "-rf", build)
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	if rec.Impact == nil || rec.Impact.Entries != 2 || !strings.HasPrefix(rec.DiffSummary, "impact: deletes 1 directory, 1 file, 3 B") {
		t.Fatalf("pinned impact %+v, diff summary %q", rec.Impact, rec.DiffSummary)
	}
	for i := 0; i < 40; i++ {
		if err := os.WriteFile(filepath.Join(build, fmt.Sprintf("new-%d.o", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	approve(t, o, rec.ApprovalID)
	out := recvRun(t, ch)
	if out.res.Outcome != RunBlocked || !strings.Contains(out.res.Message, "grew") {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	r := get(t, o, rec.ApprovalID)
	if r.ExecutionStatus != model.ExecBlockedAfterConsume || r.ExecutionReason != ReasonImpactGrew {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
	if _, err := os.Stat(filepath.Join(build, "a.o")); err != nil {
		t.Fatal("deleted although the impact grew")
	}
	if got := strings.Join(auditOf(t, o, rec.ApprovalID), " "); !strings.Contains(got, "report:impact: ") {
		t.Fatalf("audit: %s", got)
	}
}

// Unchanged, it runs.
func TestRunRunsWhenTheImpactIsAsApproved(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	build := filepath.Join(dir, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	ch := startRun(s, runReq(dir, "rm", "-rf", build))
	rec := awaitWaiting(t, o)
	approve(t, o, rec.ApprovalID)
	if out := recvRun(t, ch); out.res.Outcome != RunRan {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if _, err := os.Stat(build); !os.IsNotExist(err) {
		t.Fatal("not deleted")
	}
}

// The Claude Code hook pins the preview at submit and refuses, at the
// moment it would answer allow, an approval whose impact grew since.
func TestHookRefusesWhenTheImpactGrew(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	call, _ := json.Marshal(map[string]any{
		"session_id": "sess-i", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "rm -rf build"}, "tool_use_id": "toolu_I",
	})
	ch := hookAsync(string(call), hookOpts(s))
	rec := awaitHookProposal(t, o)
	if rec.Impact == nil || len(rec.Impact.Targets) != 1 || rec.Impact.Targets[0].Path != filepath.Join(dir, "build") {
		t.Fatalf("pinned impact %+v", rec.Impact)
	}
	for i := 0; i < 30; i++ {
		if err := os.WriteFile(filepath.Join(dir, "build", fmt.Sprintf("f%d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	approve(t, o, rec.ApprovalID)
	d, reason := checkJSON(t, recvHook(t, ch))
	if d != "deny" || !strings.Contains(reason, "grew") {
		t.Fatalf("%s %q", d, reason)
	}
	if r := get(t, o, rec.ApprovalID); r.ExecutionStatus != model.ExecBlockedAfterConsume || r.ExecutionReason != ReasonImpactGrew {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
}

// A command no rule matches is let through, unless its impact raises it:
// truncating a big file with > asks.
func TestHookAsksWhenTheImpactRaisesACommandNoRuleMatches(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	for i := 0; i < 1100; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	call := func(command, id string) string {
		b, _ := json.Marshal(map[string]any{"session_id": "sess-r", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": command}, "tool_use_id": id})
		return string(b)
	}
	opts := hookOpts(s)
	opts.Low = LowAllow
	if d, _ := checkJSON(t, recvHook(t, hookAsync(call("echo hi > f0001", "toolu_small"), opts))); d != "allow" {
		t.Fatalf("a small overwrite no rule matches: %s", d)
	}
	ch := hookAsync(call("chmod 600 *", "toolu_big"), opts)
	rec := awaitHookProposal(t, o)
	if rec.RiskLevel != model.RiskMedium || rec.Impact == nil || rec.Impact.Entries < 1000 {
		t.Fatalf("raised to %s, impact %+v", rec.RiskLevel, rec.Impact)
	}
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "no"); err != nil {
		t.Fatal(err)
	}
	if d, _ := checkJSON(t, recvHook(t, ch)); d != "deny" {
		t.Fatal(d)
	}
}

// cdTrap is a working directory whose data is a decoy, and a prod whose
// data a CDPATH reaches: each holds files.
func cdTrap(t *testing.T) (work, prod string) {
	t.Helper()
	root := t.TempDir()
	work, prod = filepath.Join(root, "work"), filepath.Join(root, "prod")
	for d, n := range map[string]int{filepath.Join(work, "data"): 2, filepath.Join(prod, "data"): 5} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d", i)), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return work, prod
}

// entries is how many names dir holds.
func entries(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// onlyUnder: every target of m lies in dir, and there are n.
func onlyUnder(t *testing.T, m *model.Impact, dir string, n int) {
	t.Helper()
	if m == nil || len(m.Targets) != n || len(m.Unknown) != 0 {
		t.Fatalf("pinned impact %+v", m)
	}
	for _, tg := range m.Targets {
		if filepath.Dir(tg.Path) != dir {
			t.Fatalf("pinned target %s, not in %s", tg.Path, dir)
		}
	}
}

// previewAndApprove runs shell in work, checks that the impact pinned
// with its proposal is n entries under dir alone, runs between (when
// set), approves the proposal and returns how the run ended.
func previewAndApprove(t *testing.T, s, o *storage.Store, work, shell, dir string, n int, between func()) runOut {
	t.Helper()
	req := runReq(work)
	req.Argv, req.Shell = nil, shell
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	onlyUnder(t, rec.Impact, dir, n)
	if between != nil {
		between()
	}
	approve(t, o, rec.ApprovalID)
	return recvRun(t, ch)
}

// CDPATH set in the command sends cd to prod, not to the decoy in the
// working directory: the preview pinned says prod, the check before the
// run computes the same, and what runs empties what was shown.
func TestRunPreviewsCDPATHAsTheShellGoes(t *testing.T) {
	t.Setenv("CDPATH", "")
	s, o := emptyStore(t)
	work, prod := cdTrap(t)
	if out := previewAndApprove(t, s, o, work, "CDPATH="+prod+"; cd data && rm -rf *", filepath.Join(prod, "data"), 5, nil); out.res.Outcome != RunRan {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if entries(t, filepath.Join(prod, "data")) != 0 || entries(t, filepath.Join(work, "data")) != 2 {
		t.Fatal("what ran is not what the preview showed")
	}
}

// CDPATH from the environment the command runs in counts the same; and
// when that environment changes between the preview and the run, the
// command does not run: what was approved is what runs, or nothing.
func TestRunPreviewsCDPATHFromTheEnvironment(t *testing.T) {
	s, o := emptyStore(t)
	work, prod := cdTrap(t)
	t.Setenv("CDPATH", prod)
	if out := previewAndApprove(t, s, o, work, "cd data && rm -rf *", filepath.Join(prod, "data"), 5, nil); out.res.Outcome != RunRan || entries(t, filepath.Join(prod, "data")) != 0 {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}

	work, prod = cdTrap(t)
	t.Setenv("CDPATH", "")
	out := previewAndApprove(t, s, o, work, "cd data && rm -rf *", filepath.Join(work, "data"), 2, func() {
		t.Setenv("CDPATH", prod) // the run would now go to prod
	})
	if out.res.Outcome != RunBlocked || !strings.Contains(out.res.Message, "grew") {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if entries(t, filepath.Join(prod, "data")) != 5 || entries(t, filepath.Join(work, "data")) != 2 {
		t.Fatal("ran although where it goes changed since the approval")
	}
}

// The hook's environment is the agent's: its CDPATH and HOME decide
// where the previewed cd goes.
func TestHookPreviewsCdWithTheAgentsEnvironment(t *testing.T) {
	s, o := emptyStore(t)
	work, prod := cdTrap(t)
	t.Setenv("CDPATH", prod)
	t.Setenv("HOME", prod)
	for i, command := range []string{"cd data && rm -rf *", "cd && cd data && rm -rf *", "rm -rf ~/data/*"} {
		call, _ := json.Marshal(map[string]any{
			"session_id": "sess-cd", "cwd": work, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": command}, "tool_use_id": fmt.Sprintf("toolu_cd%d", i),
		})
		ch := hookAsync(string(call), hookOpts(s))
		rec := awaitHookProposal(t, o)
		onlyUnder(t, rec.Impact, filepath.Join(prod, "data"), 5)
		if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "no"); err != nil {
			t.Fatal(err)
		}
		if d, _ := checkJSON(t, recvHook(t, ch)); d != "deny" {
			t.Fatal(d)
		}
	}
}

// chmod -R 000 of the live release, named through its symlink with a
// slash or entered with cd, matches no rule; its impact makes it ask.
func TestHookAsksForAModeChangeThroughALiveLink(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "releases", "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "releases", "1", "bin"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("releases/1", filepath.Join(dir, "current")); err != nil {
		t.Fatal(err)
	}
	opts := hookOpts(s)
	opts.Low = LowAllow
	for i, command := range []string{"chmod -R 000 current/", "cd current && chmod -R 000 ."} {
		call, _ := json.Marshal(map[string]any{"session_id": "sess-l", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": command}, "tool_use_id": fmt.Sprintf("toolu_l%d", i)})
		ch := hookAsync(string(call), opts)
		rec := awaitHookProposal(t, o)
		if rec.RiskLevel != model.RiskHigh || rec.Impact == nil || len(rec.Impact.Targets) != 1 ||
			rec.Impact.Targets[0].Path != filepath.Join(dir, "releases", "1") || rec.Impact.Targets[0].Entries != 2 {
			t.Fatalf("%s: raised to %s, impact %+v", command, rec.RiskLevel, rec.Impact)
		}
		if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "no"); err != nil {
			t.Fatal(err)
		}
		if d, _ := checkJSON(t, recvHook(t, ch)); d != "deny" {
			t.Fatal(d)
		}
	}
}

// spendPreviews sets the previews' bounds to a nanosecond for t: every
// preview that names a file is cut before it looks at it.
func spendPreviews(t *testing.T) {
	was, wasHook := previewTime, hookPreviewTime
	previewTime, hookPreviewTime = time.Nanosecond, time.Nanosecond
	t.Cleanup(func() { previewTime, hookPreviewTime = was, wasHook })
}

// Nothing the preview could not see goes without a proposal: a command no
// rule matches, naming a file, is let through by every hook (--low allow,
// or pass where the protocol cannot say allow) while its preview is whole;
// cut short, it is a proposal, at least MEDIUM, its reason saying why.
func TestHooksAskWhatThePreviewCouldNotSee(t *testing.T) {
	const command = "echo hi > out.txt"
	for _, ac := range agentCases {
		t.Run(ac.name, func(t *testing.T) {
			dir := t.TempDir()
			root := ac.cwd
			if ac.name == "gemini" {
				root = "/path/to/project" // the proposal's cwd is its dir_path under it
			}
			cwd := strings.Replace(ac.cwd, root, dir, 1)
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cwd, "out.txt"), []byte("kept"), 0o644); err != nil {
				t.Fatal(err)
			}
			in := strings.Replace(sample(t, ac.archive, ac.risky), "rm -rf build/", command, 1)
			in = strings.ReplaceAll(in, `"`+root+`"`, `"`+dir+`"`)
			s, o := emptyStore(t)
			opts := hookOpts(s)
			want := "allow"
			opts.Low = LowAllow
			if ac.name == "codex" {
				opts.Low, want = LowPass, "" // Codex's protocol cannot say allow
			}
			if d, reason := ac.check(t, recvHook(t, runAsync(ac.fn, in, opts))); d != want {
				t.Fatalf("previewed whole: %q %q, want %q", d, reason, want)
			}
			spendPreviews(t)
			ch := runAsync(ac.fn, in, opts)
			rec := awaitHookProposal(t, o)
			if rec.RiskLevel != model.RiskMedium || rec.Impact == nil || rec.Impact.Complete ||
				!strings.Contains(rec.RiskReason, "incomplete preview: the 1ns time bound ran out") {
				t.Fatalf("proposal %s %q, impact %+v", rec.RiskLevel, rec.RiskReason, rec.Impact)
			}
			if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "look first"); err != nil {
				t.Fatal(err)
			}
			if d, _ := ac.check(t, recvHook(t, ch)); d != "deny" {
				t.Fatalf("denied proposal answered %q", d)
			}
		})
	}
}

// run: the same command runs at once while its preview is whole; cut
// short, it is submitted, at least MEDIUM, and denied it never runs.
func TestRunAsksWhatThePreviewCouldNotSee(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	req := runReq(dir)
	req.Argv, req.Shell = nil, "echo hi > out.txt"
	if res := recvRun(t, startRun(s, req)); res.err != nil || res.res.Outcome != RunRan {
		t.Fatalf("previewed whole: %+v %v", res.res, res.err)
	}
	if err := os.WriteFile(out, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	spendPreviews(t)
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	if rec.RiskLevel != model.RiskMedium || rec.Impact == nil || rec.Impact.Complete ||
		!strings.Contains(rec.DiffSummary, "incomplete: the 1ns time bound ran out") {
		t.Fatalf("proposal %s, diff summary %q", rec.RiskLevel, rec.DiffSummary)
	}
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "look first"); err != nil {
		t.Fatal(err)
	}
	if res := recvRun(t, ch); res.res.Outcome == RunRan {
		t.Fatal("ran although denied")
	}
	if b, _ := os.ReadFile(out); string(b) != "kept" {
		t.Fatalf("out.txt %q", b)
	}
}

// No preview (a surface that makes none) is never a reason to let a
// command through.
func TestNoPreviewIsAsked(t *testing.T) {
	v := risk.Judge("ls -la", risk.Context{Cwd: "/work"})
	if unasked(UnaskedLow, model.RiskLow, v, nil) {
		t.Fatal("let through without a preview")
	}
	if !unasked(UnaskedLow, model.RiskLow, v, &model.Impact{Complete: true}) {
		t.Fatal("a whole preview of nothing asks")
	}
	if unasked(UnaskedLow, model.RiskLow, v, &model.Impact{Complete: true, Unknown: []string{"$X"}}) {
		t.Fatal("let through with a part not previewed")
	}
}

// terraform apply PLAN where the plan cannot be read (terraform is not on
// the hook's PATH, and the file is no plan): a part not previewed, so a
// proposal, never allowed by --low allow. The judgement finds terraform
// apply MEDIUM already; the preview pinned with it asks on its own too.
func TestHookAsksForAPlanItCannotRead(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "destroy.plan"), []byte("not a plan"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	call, _ := json.Marshal(map[string]any{"session_id": "sess-tf", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "terraform apply destroy.plan"}, "tool_use_id": "toolu_tf"})
	opts := hookOpts(s)
	opts.Low = LowAllow
	ch := hookAsync(string(call), opts)
	rec := awaitHookProposal(t, o)
	if rec.RiskLevel != model.RiskMedium || !strings.Contains(rec.DiffSummary, "could not preview: terraform apply destroy.plan") ||
		rec.Impact == nil || len(rec.Impact.Unknown) == 0 {
		t.Fatalf("proposal %s %q, diff summary %q", rec.RiskLevel, rec.RiskReason, rec.DiffSummary)
	}
	// The pinned preview asks by itself: were the judgement to find nothing
	// in the command, the plan it could not read would still hold it.
	if level, why := impact.Raise(rec.Impact); level != model.RiskMedium || !strings.Contains(why, "could not preview terraform apply destroy.plan") {
		t.Fatalf("the preview raises to %q: %q", level, why)
	}
	if unasked(UnaskedLow, model.RiskLow, risk.Judgement{Level: model.RiskLow}, rec.Impact) {
		t.Fatal("a preview that could not read the plan lets a low command through")
	}
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "no"); err != nil {
		t.Fatal(err)
	}
	if d, _ := checkJSON(t, recvHook(t, ch)); d != "deny" {
		t.Fatal(d)
	}
}

// rm -f many/* over 12,000 files, which no rule matches, in a hook with
// --low allow: counted whole it is HIGH, cut by the hook's bound at least
// MEDIUM; either way a proposal, never allowed.
func TestHookAsksForManyFiles(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	many := filepath.Join(dir, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12_000; i++ {
		f, err := os.Create(filepath.Join(many, fmt.Sprintf("f%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	call, _ := json.Marshal(map[string]any{"session_id": "sess-m", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "rm -f many/*"}, "tool_use_id": "toolu_many"})
	opts := hookOpts(s)
	opts.Low = LowAllow
	ch := hookAsync(string(call), opts)
	rec := awaitHookProposal(t, o)
	switch m := rec.Impact; {
	case m == nil:
		t.Fatal("no preview pinned")
	case m.Complete && (rec.RiskLevel != model.RiskHigh || m.Entries != 12_000):
		t.Fatalf("whole: %s, %d entries", rec.RiskLevel, m.Entries)
	case !m.Complete && (rec.RiskLevel.Rank() < model.RiskMedium.Rank() || !strings.Contains(rec.DiffSummary, "incomplete: ")):
		t.Fatalf("cut: %s, %q", rec.RiskLevel, rec.DiffSummary)
	}
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "no"); err != nil {
		t.Fatal(err)
	}
	if d, _ := checkJSON(t, recvHook(t, ch)); d != "deny" {
		t.Fatal(d)
	}
}

// --unasked: nothing asks everything; read-only lets through only what the
// judgement proves read-only; low everything judged low; a mode not known
// asks. The --low answer is another matter (how an unasked command is
// answered).
func TestUnaskedModes(t *testing.T) {
	whole := &model.Impact{Complete: true}
	status := risk.Judge("git status", risk.Context{Cwd: "/work"})
	if !status.ReadOnly || status.Level != model.RiskLow {
		t.Fatalf("git status: %+v", status)
	}
	touch := risk.Judge("touch build/x", risk.Context{Cwd: "/work"})
	if touch.ReadOnly {
		t.Fatalf("touch: %+v", touch)
	}
	for _, tc := range []struct {
		mode string
		j    risk.Judgement
		want bool
	}{
		{UnaskedNothing, status, false},
		{UnaskedReadOnly, status, true},
		{UnaskedLow, status, true},
		{"", status, true},
		{UnaskedReadOnly, touch, false},
		{UnaskedLow, touch, touch.Level == model.RiskLow},
		{"everything", status, false},
	} {
		if got := unasked(tc.mode, model.RiskLow, tc.j, whole); got != tc.want {
			t.Errorf("unasked(%q, %v): %v, want %v", tc.mode, tc.j.Effects, got, tc.want)
		}
	}
	// A level pinned above the judgement's (raised) is asked whatever the mode.
	if unasked(UnaskedLow, model.RiskMedium, status, whole) {
		t.Error("a raised level went unasked")
	}
	for _, m := range []string{"", UnaskedNothing, UnaskedReadOnly, UnaskedLow} {
		if _, err := checkUnasked(m); err != nil {
			t.Error(err)
		}
	}
	if _, err := checkUnasked("all"); err == nil {
		t.Error("--unasked all taken")
	}
}
