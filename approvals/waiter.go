package approvals

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// WaiterWords says who waits on a proposal (ws; nil: not read yet), in
// form f. Only a pending proposal's waiter tells whether approving runs
// anything. Text: one line, "live: pid 12 on host (hook) waiting since 3s
// ago", "gone: pid 12 on host stopped heartbeating 2m10s ago; approving
// may run nothing", "none". Console: a mark the console styles by state
// ("● live", "✗ dead", "○ none", "checking…" while not read) and the words
// that follow it.
func WaiterWords(rec *storage.Record, ws *storage.WaiterStatus, now time.Time, f Form) (mark, words string) {
	parked := parkedNow(rec, ws, now)
	if f == Console {
		mark, words = consoleWaiter(ws, now)
		if parked {
			words = strings.Replace(words, ": approving will not run anything", ": "+parkedRuns, 1)
		}
		return mark, words
	}
	pending := rec.EffectiveStatus.Open()
	maySay := "; approving may run nothing"
	if parked {
		maySay = "; " + parkedRuns
	}
	if ws == nil {
		ws = &storage.WaiterStatus{State: storage.WaiterNone}
	}
	switch ws.State {
	case storage.WaiterLive:
		w := ws.Waiter
		return "", fmt.Sprintf("live: pid %d on %s (%s) waiting since %s", w.PID, line(w.Host), orDash(line(w.Surface)), rel(w.StartedAt, now, Text))
	case storage.WaiterDead:
		w := ws.Waiter
		s := fmt.Sprintf("gone: pid %d on %s stopped heartbeating %s", w.PID, line(w.Host), rel(w.HeartbeatAt, now, Text))
		if pending {
			s += maySay
		}
		return "", s
	}
	if !pending {
		return "", "none"
	}
	return "", "none: no process is waiting on this id" + maySay
}

// parkedRuns is what approving a parked proposal runs, where the waiter
// words would say it runs nothing.
const parkedRuns = "approving runs nothing now: the call goes through when it is asked again (parked)"

// parkedNow reports whether rec is parked at now (or reserved with its
// waiter gone): an approval reaches the call when it is asked again.
func parkedNow(rec *storage.Record, ws *storage.WaiterStatus, now time.Time) bool {
	st := ParkStateOf(rec, ws, now)
	return st == ParkParked || st == ParkReserved
}

// consoleWaiter is WaiterWords in the console's form.
func consoleWaiter(ws *storage.WaiterStatus, now time.Time) (mark, words string) {
	if ws == nil {
		return "checking…", ""
	}
	w := ws.Waiter
	switch ws.State {
	case storage.WaiterLive:
		return "● live", fmt.Sprintf(" — %s pid %d waiting since %s, heartbeat %s",
			line(w.Host), w.PID, rel(w.StartedAt, now, Console), rel(w.HeartbeatAt, now, Console))
	case storage.WaiterDead:
		return "✗ dead", fmt.Sprintf(" — %s pid %d stopped heartbeating %s: approving will not run anything",
			line(w.Host), w.PID, rel(w.HeartbeatAt, now, Console))
	}
	return "○ none", " — no live waiter: approving will not run anything"
}

// RunWords says what is known of a started command's run ("" when its
// execution is not started), from its runner's heartbeat, as show says it
// (RunStateWords in the Text form).
func RunWords(rec *storage.Record, ws storage.WaiterStatus, now time.Time) string {
	_, words := RunStateWords(storage.JudgeRun(rec, ws), ws.Waiter, now, Text)
	return words
}

// RunStateWords says a judged run (storage.JudgeRun) whose runner is w,
// in form f: never that it ran or failed when nobody recorded that. Text:
// no outcome and one line, "running (runner pid 12 on host, heartbeat 3s
// ago)", "runner died, outcome unknown (runner pid 12 on host is gone,
// last heartbeat 2m10s ago)", or the state's words. Console: the history's
// outcome column ("started, running", "runner died", "outcome unknown")
// and the words that go with it ("runner pid 12 on host, heartbeat 3s
// ago").
func RunStateWords(run storage.RunState, w *storage.Waiter, now time.Time, f Form) (outcome, words string) {
	if f == Console {
		switch run {
		case storage.RunRunning:
			return "started, running", fmt.Sprintf("runner pid %d on %s, heartbeat %s", w.PID, line(w.Host), rel(w.HeartbeatAt, now, f))
		case storage.RunDied:
			return "runner died", fmt.Sprintf("outcome unknown: runner pid %d on %s is gone (last heartbeat %s)", w.PID, line(w.Host), rel(w.HeartbeatAt, now, f))
		}
		return "outcome unknown", run.Words()
	}
	switch run {
	case storage.RunRunning:
		return "", fmt.Sprintf("running (runner pid %d on %s, heartbeat %s)", w.PID, line(w.Host), rel(w.HeartbeatAt, now, f))
	case storage.RunDied:
		return "", fmt.Sprintf("%s (runner pid %d on %s is gone, last heartbeat %s)", run.Words(), w.PID, line(w.Host), rel(w.HeartbeatAt, now, f))
	}
	return "", run.Words()
}

// ExecutionWords is a proposal's execution as show says it: its status,
// the reason and when it was recorded, then what is known of a run in
// progress (RunWords; ws nil: not read).
func ExecutionWords(rec *storage.Record, ws *storage.WaiterStatus, now time.Time) string {
	p := &rec.Proposal
	exec := ExecWords(p.ExecutionStatus)
	if p.ExecutionStatus == model.ExecRanWithoutApproval {
		exec = RanWithoutApprovalWords(rec)
	} else if p.ExecutionReason != "" {
		exec += ": " + line(p.ExecutionReason)
	}
	if p.ExecutionRecordedAt != nil {
		exec += " " + when(*p.ExecutionRecordedAt, now)
	}
	if ws != nil {
		if run := RunWords(rec, *ws, now); run != "" {
			exec += "; " + run
		}
	}
	return exec
}

// WaiterJSON is who waits on a proposal as --json gives it.
func WaiterJSON(ws storage.WaiterStatus) *model.JSONObject {
	o := model.NewJSONObject().Str("state", string(ws.State))
	if w := ws.Waiter; w != nil {
		o.Str("host", w.Host).Int("pid", int64(w.PID)).Str("surface", w.Surface).
			Num("started_at", w.StartedAt).Num("heartbeat_at", w.HeartbeatAt)
	}
	return o
}

// WaitersGone says which of the open proposals in recs had a waiter that
// is gone (it heartbeated, then stopped: killed, or its agent stopped
// waiting for it). A failed read marks nothing.
func WaitersGone(ctx context.Context, s *storage.Store, recs []*storage.Record) map[string]bool {
	gone := map[string]bool{}
	for _, r := range recs {
		if !r.EffectiveStatus.Open() {
			continue
		}
		if ws, err := s.WaiterState(ctx, r.ApprovalID); err == nil && ws.State == storage.WaiterDead {
			gone[r.ApprovalID] = true
		}
	}
	return gone
}

// StatusWords is a proposal's effective status as list's STATUS says it:
// for an open one whose waiter is gone, that it is (approving it may run
// nothing).
func StatusWords(r *storage.Record, waiterGone bool) string {
	return StatusParkWords(r, waiterGone, ParkNone)
}

// StatusParkWords is StatusWords for a proposal whose park stands at park
// (ParkStateOf): "pending (parked)" while an approval reaches the call
// asked again, "pending (park over)" once its window ended, "consumed
// (parked)" for an approval not taken yet; a taken or closed park adds
// nothing (show says it).
func StatusParkWords(r *storage.Record, waiterGone bool, park ParkState) string {
	st := line(string(r.EffectiveStatus))
	switch park {
	case ParkParked, ParkReserved:
		return st + " (parked)"
	case ParkWindowOver:
		return st + " (park over)"
	}
	if waiterGone {
		st += " (waiter gone)"
	}
	return st
}
