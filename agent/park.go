package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Parking (docs/parking.md). A hook or `run` that stops waiting (its own
// timeout, its agent's signal, its agent gone, `run --timeout`, Hermes'
// deadline) parks its proposal for a park window instead of withdrawing
// it: the proposal stays open, and the same call asked again (model.Match:
// requester, session, exact command bytes, cwd) finds it (FindParked),
// waits on it as its waiter, or, once it is approved, takes the approval
// (storage.Take, exactly once) and lets the call through after every
// runtime check. The proposal is submitted with its reservation (a parks
// row whose waiter has not stopped), so that a waiter killed -9 at any
// point leaves a proposal the retry finds.

// DefaultParkWindow is how long a proposal stays open after its waiter
// stopped waiting, when the park window is not set (0).
const DefaultParkWindow = config.DefaultParkWindow

// parkWindow is window as set (0: DefaultParkWindow); on is false when
// parking is off (a negative window): the old withdraw/abandon behaviour.
func parkWindow(window time.Duration) (time.Duration, bool) {
	switch {
	case window < 0:
		return 0, false
	case window == 0:
		return DefaultParkWindow, true
	}
	return window, true
}

// parkedWords is what the agent is told of a call whose proposal was
// parked as id: one ASCII line, the id first, nothing of the agent's own
// text echoed. paged says whether a configured paging route matches it.
func parkedWords(id string, paged bool, until time.Time) string {
	who := "an operator has been paged"
	if !paged {
		who = "no paging route matches it; it waits in the approve-tui console"
	}
	return fmt.Sprintf("not run: parked as %s; %s. Ask again later with the exact same command in the same directory: once approved, it runs, until %s UTC.",
		model.Sanitize(id, model.Line), who, until.UTC().Format("15:04"))
}

// takenWords is the deny of a call whose parked approval another asker
// took.
func takenWords(tk *storage.TakenError) string {
	at := ""
	if tk.At > 0 {
		at = " at " + model.FromEpoch(tk.At).UTC().Format("15:04:05") + " UTC"
	}
	return fmt.Sprintf("%s was taken by %s%s; not run", model.Sanitize(tk.ID, model.Line), model.Sanitize(tk.By, model.Line), at)
}

// asker is actor as the one who takes a parked approval for call callID
// (the id the call's own key derives, "" when it has none), from the agent
// process parent (agentProcess: its pid and start time): named so that
// "taken by" tells the askers apart, and so that the hook processes of one
// call started by one agent process (Claude Code runs matching hooks in
// parallel; the one call runs once) are one asker, while two agent
// processes resuming the same call (two `claude -p --resume`) are two.
func asker(actor model.Actor, callID, parent string) model.Actor {
	if callID == "" {
		callID = fmt.Sprintf("pid %d", os.Getpid())
	} else {
		callID = "call " + callID
	}
	if parent != "" {
		callID += ", agent " + parent
	}
	a := actor
	a.Name = actor.Name + " (" + callID + ")"
	return a
}

// agentProcess names this process's parent (the agent that started the
// hook): its pid and, on Linux, its start time (field 22 of
// /proc/PID/stat, in clock ticks since boot), so that a reused pid does
// not name the same agent. "" when there is no parent to name (pid 1).
func agentProcess() string {
	ppid := os.Getppid()
	if ppid <= 1 {
		return ""
	}
	name := fmt.Sprintf("pid %d", ppid)
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", ppid)); err == nil {
		// The command name (field 2) is in parentheses and may hold
		// spaces or parentheses: the fields after it follow the last ')'.
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 {
			f := strings.Fields(string(b[i+1:]))
			// f[0] is field 3 (state): field 22 is f[19].
			if len(f) > 19 {
				name += " started " + f[19]
			}
		}
	}
	return name
}

// takeParked takes approved proposal rec for call m when it has a parks
// row (reserved or parked): any allow of such a proposal goes through
// Take, its own waiter's included. rec is returned as taken; refusal is
// the deny's words when it was not taken (another asker took it, its
// window ended, the call differs), "" when it may go on to the runtime
// checks. A proposal with no parks row goes on as it is. blocked: the
// proposal is not this call's any more (rewritten since it was
// submitted): the caller records it blocked_after_consume, as the runtime
// checks would.
func takeParked(ctx context.Context, s *storage.Store, rec *storage.Record, m model.Match, actor model.Actor, callID, parent string) (_ *storage.Record, refusal string, blocked bool) {
	if rec.Park == nil {
		return rec, "", false
	}
	if m == (model.Match{}) {
		return rec, rec.ApprovalID + " is parked, and the call asking for it is not known; not run", false
	}
	me := asker(actor, callID, parent)
	took, err := s.Take(ctx, rec.ApprovalID, m, me)
	var tk *storage.TakenError
	var rf *storage.RefusedError
	switch {
	case err == nil:
		return took, "", false
	case errors.As(err, &tk) && sameCallTake(ctx, s, rec.ApprovalID, tk, me, callID):
		// Taken a moment ago by another hook process on this same call,
		// started by the same agent process, and nothing ran: one call, one run (the checks that follow still
		// apply).
		return rec, "", false
	case errors.As(err, &tk):
		return rec, takenWords(tk), false
	case errors.As(err, &rf) && rf.Code == storage.RefusedParkOver:
		return rec, rec.ApprovalID + " was approved, but its park window is over; not run", false
	case errors.As(err, &rf) && (rf.Code == storage.RefusedNoMatch || rf.Code == storage.RefusedTampered):
		return rec, "the proposal is not the call submitted any more: " + rf.Reason, true
	}
	return rec, fmt.Sprintf("%s was approved, but could not be taken (%v); not run", rec.ApprovalID, err), false
}

// SameCallTake is how long after a take another hook process on the same
// call (Claude Code runs matching hooks in parallel, at the same moment)
// is let through on it. Later, the same call id asked again is a re-issue
// of a call that was answered (a deferred call resumed twice, a replayed
// request): refused as taken.
const SameCallTake = 5 * time.Second

// sameCallTake says whether the take tk is this very call's (the same
// asker: the same call id, from the same agent process, callID known; tk
// is as the verified audit log records it), made less than SameCallTake ago, of a proposal
// whose execution is still not recorded: a parallel hook process of the
// call that took it, not a later re-issue. Read again from the store;
// anything it cannot read is a refusal.
func sameCallTake(ctx context.Context, s *storage.Store, id string, tk *storage.TakenError, me model.Actor, callID string) bool {
	if callID == "" || tk.By != me.String() {
		return false
	}
	if age := model.Epoch(s.Now()) - tk.At; age < 0 || age >= SameCallTake.Seconds() {
		return false
	}
	rec, err := s.Get(ctx, id)
	return err == nil && rec.ExecutionStatus == model.ExecNotStarted
}

// hookRequester says whether name is the requester of a hook protocol
// (claude-code, codex, gemini, hermes): the match of a call includes its
// requester, and `run --requester` is free, so a run naming one would
// otherwise share its matches with that agent's hook.
func hookRequester(name string) bool {
	for _, p := range []*protocol{claudeProtocol, codexProtocol, geminiProtocol} {
		if name == p.requester {
			return true
		}
	}
	return name == hermesRequester
}

// stopWhy says why a waiter stopped, for the park row and the console:
// "hook timeout after 5m0s", "its hook got SIGTERM (its agent's hook
// timeout?)", "its agent (pid 12) ended".
func stopWhy(cause error, timeoutWords string, timeout time.Duration) string {
	var gone errParentGone
	switch {
	case errors.Is(cause, errHookTimeout) && timeoutWords != "":
		return timeoutWords
	case errors.Is(cause, errHookTimeout), errors.Is(cause, errTimedOut):
		return "its own timeout after " + timeout.String()
	case errors.As(cause, &gone):
		return gone.Error()
	}
	return "it got " + signalWords(cause) + " (its agent's hook timeout?)"
}
