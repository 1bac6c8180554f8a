package agent

import (
	"context"
	"database/sql"

	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// A deferred call resumed twice within SameCallTake (5 s): two
// `claude -p --resume SESSION` started together (a script retrying, or the
// agent's own model from a shell call), each re-issuing the deferred call
// with its tool_use_id. The second resume's take is refused as taken by
// "this very call", and sameCallTake lets it through because the same
// asker took it less than 5 s ago and the first run is not reported yet
// (it is still running, or Claude Code reports it only when it ends). The
// exemption is meant for Claude Code's parallel hook processes of ONE
// call, but the asker's name (requester + call id) cannot tell them from
// two resumes by two Claude Code processes: one approval, two runs.
func TestAttackDeferResumedTwiceAtOnceRunsTwice(t *testing.T) {
	s, o := emptyStore(t)
	opts := hookOpts(s)
	opts.Defer = true
	const cmd = "rm -rf /srv/app/dist"
	call := withTranscript(t, bashCallIn("sess-d2", "/srv/app", "default", cmd, "toolu_D2"),
		writeTranscript(t, transcriptLine("msg_D2", "tool_use", "toolu_D2")))
	id := HookID("sess-d2", "toolu_D2")
	if d, _ := checkJSON(t, recvHook(t, hookAsync(call, opts))); d != "defer" {
		t.Fatalf("first ask: %s", d)
	}
	approve(t, o, id)
	// The two resumes, from two Claude Code processes; the first one's
	// command is still running (no PostToolUse yet) when the second asks.
	allowed := 0
	// In one test process both hooks have one parent: each resume names
	// its own agent process, as two `claude` processes' hooks would.
	first, second := opts, opts
	first.Agent, second.Agent = "pid 4101 started 900", "pid 4102 started 950"
	for i, ch := range []<-chan HookAnswer{hookAsync(call, first), hookAsync(call, second)} {
		d, reason := checkJSON(t, recvHook(t, ch))
		if d == "allow" {
			allowed++
		} else if !strings.Contains(reason, id) {
			t.Fatalf("resume %d: %s %q", i, d, reason)
		}
	}
	if got := get(t, o, id); got.ExecutionStatus != model.ExecNotStarted {
		t.Fatalf("execution %s", got.ExecutionStatus)
	}
	if allowed != 1 {
		t.Fatalf("%s: one approval, a deferred call resumed twice within %s: %d allows (the command runs %d times)", id, SameCallTake, allowed, allowed)
	}
}

// The same with parking off (park.window 0s, --park-window 0s): the hook
// waits, the operator approves, the hook allows; no parks row, so no take
// is recorded. Until the agent's PostToolUse records the run, the same
// session and tool_use_id asked again (a replayed PreToolUse from any
// process of the user, answered to whatever sent it; or an agent that
// re-issues a call) rejoins the proposal (Duplicate) and decided() allows
// it again: it only refuses once the execution is recorded. Not bound to
// 5 s: it holds for as long as the command runs (a build, a long rm).
func TestAttackParkingOffSameCallAllowedAgainBeforeItsReport(t *testing.T) {
	s, o := emptyStore(t)
	opts := hookOpts(s)
	opts.ParkWindow = -1
	const cmd = "rm -rf /srv/app/dist"
	call := bashCallIn("sess-off", "/srv/app", "default", cmd, "toolu_OFF")
	id := HookID("sess-off", "toolu_OFF")
	ch := hookAsync(call, opts)
	awaitWaiting(t, o)
	approve(t, o, id)
	if d, reason := checkJSON(t, recvHook(t, ch)); d != "allow" {
		t.Fatalf("first: %s %q", d, reason)
	}
	later := opts
	later.Timeout = 500 * time.Millisecond
	later.Open = openLater(s, time.Minute) // a minute on: well past any parallel hook process
	if d, reason := checkJSON(t, recvHook(t, hookAsync(call, later))); d == "allow" {
		t.Fatalf("%s, approved once and let through, is let through again a minute later (its run not reported yet): %s %q", id, d, reason)
	}
}

// openLater opens s's file with a clock d ahead.
func openLater(s *storage.Store, d time.Duration) func(ctx context.Context) (*storage.Store, error) {
	return func(ctx context.Context) (*storage.Store, error) {
		return storage.Open(ctx, s.Path(), storage.Options{BusyTimeout: 2 * time.Second, Now: func() time.Time { return time.Now().Add(d) }})
	}
}

// The same-call exemption believes the parks row's taken_by and taken_at
// as written (Take answers TakenError from the row before it reads the
// audit log; FindParked does too), and it is an ALLOW path. The agent
// writes taken_by = the name its own call's asker has ("dev@laptop (call
// cc-…)", derived from the session and tool_use_id it knows) and
// taken_at = now on a deferred, approved, untaken proposal: each resume is
// let through, and no take is ever recorded. Refreshing taken_at, it does
// so minutes apart, as often as it likes until the first run is reported.
func TestAttackForgedTakenByLetsTheResumeThroughUntaken(t *testing.T) {
	s, o := emptyStore(t)
	opts := hookOpts(s)
	opts.Defer = true
	opts.Timeout = 500 * time.Millisecond
	const cmd = "rm -rf /srv/app/dist"
	call := withTranscript(t, bashCallIn("sess-ft", "/srv/app", "default", cmd, "toolu_FT"),
		writeTranscript(t, transcriptLine("msg_FT", "tool_use", "toolu_FT")))
	id := HookID("sess-ft", "toolu_FT")
	if d, _ := checkJSON(t, recvHook(t, hookAsync(call, opts))); d != "defer" {
		t.Fatalf("first ask: %s", d)
	}
	approve(t, o, id)
	db, err := sql.Open("sqlite", "file:"+s.Path()+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	me := asker(hookActor, id, agentProcess()).String()
	allowed := 0
	for i, ahead := range []time.Duration{0, 2 * time.Minute, 4 * time.Minute} {
		// The agent's write, just before each resume.
		if _, err := db.Exec(`UPDATE approve_tui_parks SET taken_by = ?, taken_at = ? WHERE approval_id = ?`,
			me, model.Epoch(time.Now().Add(ahead)), id); err != nil {
			t.Fatal(err)
		}
		o2 := opts
		o2.Open = openLater(s, ahead)
		if d, reason := checkJSON(t, recvHook(t, hookAsync(call, o2))); d == "allow" {
			allowed++
		} else {
			t.Logf("resume %d: %s %q", i, d, reason)
		}
	}
	var takes int
	if err := db.QueryRow(`SELECT count(*) FROM approve_tui_audit WHERE approval_id = ? AND event = 'take' AND outcome = 'ok'`, id).Scan(&takes); err != nil {
		t.Fatal(err)
	}
	if allowed > 1 || (allowed == 1 && takes != 1) {
		t.Fatalf("%s: %d resumes let through on one approval, %d take(s) in the audit log: the parks row's forged taken_by is believed as the same call's take",
			id, allowed, takes)
	}
}
