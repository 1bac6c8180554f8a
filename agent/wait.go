package agent

import (
	"context"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// WaitOptions configure WaitDecision.
type WaitOptions struct {
	// Surface names the waiter in its heartbeat row (runner, hook, cli...).
	Surface model.Surface
	// Every is the heartbeat interval (storage.HeartbeatInterval when not
	// positive).
	Every time.Duration
	// OnError receives heartbeat failures (see KeepAlive); nil ignores them.
	OnError func(error)
	// OnProgress, when set, is told where the proposal stands against the
	// policy in force each time that changes while it waits (a vote cast,
	// voided, the policy changed): "1 of 2 approvals". Never told when no
	// rule applies. It is a report, never a gate.
	OnProgress func(*storage.Quorum)
	// Waiting, when set, is called once, as soon as this process is the
	// proposal's registered waiter (its first heartbeat written) and the
	// proposal still open: what it prints about the proposal (its id, how
	// to approve it) is read by an operator whose console then sees a live
	// waiter. Never called when the proposal was decided before.
	Waiting func()
}

// QuorumWords is how the agent side says where a proposal stands: "1 of 2
// approvals (alice@laptop via ssh); still needed: one more approver from
// dba". Actor names are sanitised.
func QuorumWords(q *storage.Quorum) string {
	s := q.Progress()
	if len(q.Votes) > 0 {
		names := make([]string, len(q.Votes))
		for i, v := range q.Votes {
			names[i] = model.Sanitize(v.Actor, model.Line)
		}
		s += " (" + strings.Join(names, ", ") + ")"
	}
	if n := q.Needed(); n != "" {
		s += "; still needed: " + n
	}
	return s
}

// expiryGrace is how long after a proposal's expiry the waiter wakes to
// read it as expired.
const expiryGrace = 10 * time.Millisecond

// finalReadTimeout bounds the last read after the wait's context ended.
const finalReadTimeout = 5 * time.Second

// WaitDecision blocks until proposal id leaves pending, and returns it as
// read from the store after the decision (approved, denied or expired). It
// is the one wait of every agent-side process: while the proposal is
// pending it heartbeats as a live waiter (KeepAlive), it looks again after
// commits of any process (a lazy storage.Watcher: within
// storage.LazyPoll) and at the proposal's expiry, which is a matter of
// time, not of a write. The heartbeat row is removed
// before it returns.
//
// When ctx ends first, it returns ctx's cause together with the proposal
// as read once more at that moment (nil if that read failed): a decision
// that raced the end shows there, and the caller chooses what it means.
// Any other error (the proposal does not exist, the store failed) is
// returned with a nil record.
func WaitDecision(ctx context.Context, s *storage.Store, id string, o WaitOptions) (*storage.Record, error) {
	ended := func() (*storage.Record, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalReadTimeout)
		defer cancel()
		rec, err := s.Get(rctx, id)
		if err != nil {
			rec = nil
		}
		return rec, context.Cause(ctx)
	}
	w, err := s.WatchLazy(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ended()
		}
		return nil, err
	}
	defer w.Close()
	var stop func()
	lastProgress := ""
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for {
		rec, err := s.Get(ctx, id)
		if ctx.Err() != nil {
			if stop != nil {
				stop()
				stop = nil
			}
			return ended()
		}
		if err != nil {
			return nil, err
		}
		if !rec.EffectiveStatus.Open() {
			return rec, nil
		}
		if stop == nil {
			stop = KeepAlive(ctx, s, LocalWaiter(id, o.Surface), o.Every, o.OnError)
			if o.Waiting != nil {
				o.Waiting()
			}
		}
		if o.OnProgress != nil {
			// A report only: a failure to read it changes nothing.
			if q, qerr := s.Quorum(ctx, rec); qerr == nil && q != nil {
				if words := QuorumWords(q); words != lastProgress {
					lastProgress = words
					o.OnProgress(q)
				}
			}
		}
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if rec.ExpiresAt != nil {
			wctx, cancel = context.WithDeadline(ctx, model.FromEpoch(*rec.ExpiresAt).Add(expiryGrace))
		}
		err = w.Wait(wctx)
		timedOut := wctx.Err() != nil // before cancel, which sets it
		cancel()
		if err != nil && ctx.Err() == nil && !timedOut {
			return nil, err
		}
	}
}
