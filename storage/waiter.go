package storage

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// A waiter is an agent-side process (approve-tui run, the Claude Code hook,
// the demo agent) blocked on one proposal. It heartbeats so that the console
// can tell the operator whether approving will make anything run.

// HeartbeatInterval is how often a waiter writes its heartbeat.
const HeartbeatInterval = 2 * time.Second

// WaiterStaleAfter is the age past which a heartbeat means the waiter is gone.
const WaiterStaleAfter = 3 * HeartbeatInterval

// Waiter is one heartbeat row.
type Waiter struct {
	ApprovalID  string  `json:"approval_id"`
	Host        string  `json:"host"`
	PID         int     `json:"pid"`
	StartedAt   float64 `json:"started_at"`
	HeartbeatAt float64 `json:"heartbeat_at"`
	Surface     string  `json:"surface,omitempty"`
}

// Liveness is what the console says about a proposal's waiters.
type Liveness string

// Liveness values.
const (
	WaiterNone Liveness = "none" // nobody ever waited (or the row was cleaned up)
	WaiterLive Liveness = "live" // a process is waiting now
	WaiterDead Liveness = "dead" // a process waited, but its heartbeat is stale or it is gone
)

// WaiterStatus summarises the waiters of one proposal.
type WaiterStatus struct {
	State Liveness `json:"state"`
	// Waiter is the freshest waiter (nil for none).
	Waiter *Waiter `json:"waiter,omitempty"`
}

// Heartbeat records that w is waiting now (the first call sets StartedAt).
func (st *Store) Heartbeat(ctx context.Context, w Waiter) error {
	s := st.bind()
	if s.roReason() != "" {
		return &ReadOnlyError{Reason: s.roReason()}
	}
	if w.StartedAt == 0 {
		w.StartedAt = model.Epoch(s.now())
	}
	return s.writeHeartbeats(ctx, []*beatEntry{{w: w, view: st}})
}

// RemoveWaiter deletes a waiter's row when it stops waiting.
func (st *Store) RemoveWaiter(ctx context.Context, w Waiter) error {
	s := st.bind()
	if s.roReason() != "" {
		return &ReadOnlyError{Reason: s.roReason()}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if r := s.checkMoved(); r != "" {
		return movedError("heartbeat", r)
	}
	_, err := s.ws.waiterDel.ExecContext(ctx, w.ApprovalID, w.Host, w.PID)
	return s.classify("heartbeat", err)
}

// Waiters lists the heartbeat rows of one proposal, freshest first.
func (st *Store) Waiters(ctx context.Context, id string) ([]Waiter, error) {
	s := st.bind()
	rows, err := s.rdb.QueryContext(ctx, `SELECT approval_id, host, pid, started_at, heartbeat_at, surface
		FROM approve_tui_waiters WHERE approval_id = ? ORDER BY heartbeat_at DESC`, id)
	if err != nil {
		if isNoTable(err) {
			return nil, nil
		}
		return nil, s.classify("waiters", err)
	}
	defer rows.Close()
	var out []Waiter
	for rows.Next() {
		var w Waiter
		if err := rows.Scan(&w.ApprovalID, &w.Host, &w.PID, &w.StartedAt, &w.HeartbeatAt, &w.Surface); err != nil {
			return nil, s.classify("waiters", err)
		}
		out = append(out, w)
	}
	return out, s.classify("waiters", rows.Err())
}

// WaiterState reads the waiters of id and judges them at the store's clock.
func (s *Store) WaiterState(ctx context.Context, id string) (WaiterStatus, error) {
	ws, err := s.Waiters(ctx, id)
	if err != nil {
		return WaiterStatus{State: WaiterNone}, err
	}
	return JudgeWaiters(ws, s.now()), nil
}

// JudgeWaiters says whether any waiter is live at now: its heartbeat is
// fresh and, when it runs on this host, its process still exists.
func JudgeWaiters(ws []Waiter, now time.Time) WaiterStatus {
	if len(ws) == 0 {
		return WaiterStatus{State: WaiterNone}
	}
	host := model.HostName()
	nowE := model.Epoch(now)
	for i := range ws {
		w := ws[i]
		fresh := nowE-w.HeartbeatAt <= WaiterStaleAfter.Seconds()
		if fresh && w.Host == host && !processExists(w.PID) {
			fresh = false
		}
		if fresh {
			return WaiterStatus{State: WaiterLive, Waiter: &w}
		}
	}
	w := ws[0]
	return WaiterStatus{State: WaiterDead, Waiter: &w}
}

// RunState is what is known of an approved proposal's command while its
// execution_status is started: the runner recorded that the command began
// and has not recorded its end. A runner keeps heartbeating its waiter row
// while the command runs, so that row tells a run in progress from a runner
// that died with it (its outcome is then unknown: nothing pretends it ran
// or failed).
type RunState string

// RunState values.
const (
	RunNone    RunState = ""            // execution_status is not started: nothing is in progress
	RunRunning RunState = "running"     // the runner is heartbeating: the command runs now
	RunDied    RunState = "runner_died" // the runner stopped heartbeating or its process is gone
	RunUnknown RunState = "unknown"     // no runner ever heartbeated for it: nothing tells
)

// JudgeRun says what is known of rec's run from the state of its waiters
// (JudgeWaiters).
func JudgeRun(rec *Record, ws WaiterStatus) RunState {
	if rec.Status != model.StatusConsumed || rec.ExecutionStatus != model.ExecStarted {
		return RunNone
	}
	switch ws.State {
	case WaiterLive:
		return RunRunning
	case WaiterDead:
		return RunDied
	}
	return RunUnknown
}

// Words says a run state in a few words, the same on every surface.
func (r RunState) Words() string {
	switch r {
	case RunRunning:
		return "running"
	case RunDied:
		return "runner died, outcome unknown"
	case RunUnknown:
		return "outcome unknown: no runner heartbeat"
	}
	return ""
}

func processExists(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
