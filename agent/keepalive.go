// Package agent is the agent side of approve-tui: code shared by every
// process that waits on a proposal — `approve-tui wait`, the `run` wrapper,
// the Claude Code hook and the demo's simulated agent (SPEC §6).
//
// A process waiting on a proposal heartbeats as its waiter, so that the
// console can tell the operator whether approving will make anything run
// (SPEC §2, §5). KeepAlive does that for one proposal.
package agent

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// removeTimeout bounds the best-effort removal of a waiter row once
// KeepAlive ends: a row left behind only reads as a gone waiter once its
// heartbeat is stale.
const removeTimeout = 5 * time.Second

// LocalWaiter is the waiter row of this process on proposal id: this host
// (as os.Hostname reports it, which is what storage.JudgeWaiters compares
// against) and this pid.
func LocalWaiter(id string, surface model.Surface) storage.Waiter {
	host := model.HostName()
	return storage.Waiter{ApprovalID: id, Host: host, PID: os.Getpid(), Surface: string(surface)}
}

// KeepAlive marks w as a live waiter: it writes a heartbeat before it
// returns, then one every `every` (storage.HeartbeatInterval when every is
// not positive), until ctx ends or stop is called; then it removes the
// waiter row, best effort. stop waits for that removal and may be called any
// number of times, from any goroutine.
//
// Failures never stop the heartbeats: each failed write is passed to onErr
// (when not nil; it may be called from another goroutine). A missed beat
// only makes the waiter look gone for a while. On a read-only store nothing
// can be written: onErr receives a *storage.ReadOnlyError and stop does
// nothing.
func KeepAlive(ctx context.Context, s *storage.Store, w storage.Waiter, every time.Duration, onErr func(error)) (stop func()) {
	report := func(err error) {
		if onErr != nil {
			onErr(err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	onBeatErr := func(err error) {
		// An error caused by stopping is no failure.
		if ctx.Err() == nil {
			report(fmt.Errorf("heartbeat on %s: %w", w.ApprovalID, err))
		}
	}
	stopBeats, err := s.KeepWaiting(ctx, w, every, onBeatErr)
	if err != nil {
		cancel()
		report(fmt.Errorf("heartbeat on %s: %w", w.ApprovalID, err))
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		rctx, rcancel := context.WithTimeout(context.Background(), removeTimeout)
		defer rcancel()
		if err := stopBeats(rctx); err != nil {
			report(fmt.Errorf("remove waiter on %s: %w", w.ApprovalID, err))
		}
	}()
	var once sync.Once
	return func() {
		once.Do(cancel)
		<-done
	}
}
