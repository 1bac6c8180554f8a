package tui

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The history shows a policy event's decision (allow, deny, executed) in
// the outcome column, as it shows an execution event's outcome.
func TestHistoryShowsPolicyDecisions(t *testing.T) {
	f := newFixture(t)
	runner := model.Actor{Surface: model.SurfaceRunner, Name: "dev@laptop", Person: "dev"}
	for _, r := range []*storage.PolicyRecord{
		{Decision: storage.PolicyAllow, Reason: "no dangerous pattern matched", Command: "ls -la", Risk: model.RiskLow},
		{Decision: storage.PolicyDeny, Reason: "hardline: format filesystem (mkfs)", Command: "mkfs.ext4 /dev/sdz", Risk: model.RiskHigh},
	} {
		if err := f.s.RecordPolicy(t.Context(), r, runner); err != nil {
			t.Fatal(err)
		}
	}
	m := console(t, f, operator, 120, 40)
	press(m, "tab")
	screenHas(t, m, "policy allow", "policy deny", "reason=hardline: format filesystem")
}

// A command recorded as started and never ended shows in the history as
// running while its runner heartbeats, and as "runner died" with the outcome
// unknown once the runner's process is gone; a later tick notices without
// any commit (a death writes nothing).
func TestHistoryTellsRunningFromRunnerDied(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	id := f.ids["low"]
	if _, err := f.s.Consume(ctx, id, id, rival); err != nil {
		t.Fatal(err)
	}
	runner := model.Actor{Surface: model.SurfaceRunner, Name: "dev@laptop", Person: "dev"}
	if err := f.s.RecordExecution(ctx, id, model.ExecStarted, "pid 4242", runner); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	// A child process stands in for the runner: alive, then killed.
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	w := storage.Waiter{ApprovalID: id, Host: host, PID: child.Process.Pid, Surface: string(model.SurfaceRunner)}
	if err := f.s.Heartbeat(ctx, w); err != nil {
		t.Fatal(err)
	}
	m := console(t, f, operator, 160, 30)
	press(m, "tab")
	screenHas(t, m, "started, running", fmt.Sprintf("runner pid %d on %s", child.Process.Pid, host))

	child.Process.Kill()
	child.Wait()
	_, cmd := m.Update(tickMsg{at: t0.Add(2 * time.Second)})
	Settle(m, cmd)
	screenHas(t, m, "runner died", fmt.Sprintf("outcome unknown: runner pid %d on %s is gone (last heartbeat just now)", child.Process.Pid, host))

	// Its end recorded (a late runner), the history says what it was.
	if err := f.s.RecordExecution(ctx, id, model.ExecExecuted, "exit code 0", runner); err != nil {
		t.Fatal(err)
	}
	press(m, "tab", "tab")
	if v := m.View(); strings.Contains(v, "runner died") || strings.Contains(v, "running") {
		t.Fatalf("an ended run still reads as unknown:\n%s", v)
	}
}
