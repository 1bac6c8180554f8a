package agent

import (
	"context"

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
	for i, ch := range []<-chan HookAnswer{hookAsync(call, opts), hookAsync(call, opts)} {
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
