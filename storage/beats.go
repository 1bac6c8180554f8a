package storage

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Heartbeats under load. A process may wait on many proposals (the demo
// agent, a hook server, an SSH server's sessions): its waiters do not each
// write their own heartbeat. One writer per file per process beats for all
// of them in one short transaction per interval, so the write lock is taken
// once per interval per process, not once per waiter, and a decision in
// this process is never behind more than one heartbeat batch (they share
// the writer mutex). Readers are never blocked by heartbeats (WAL).

// waiterKey is a waiter row's primary key.
type waiterKey struct {
	id, host string
	pid      int
}

type beatEntry struct {
	w     Waiter
	view  *Store // its clock and lock timeout
	every time.Duration
	onErr func(error)
}

type beater struct {
	mu      sync.Mutex
	entries map[waiterKey]*beatEntry
	wake    chan struct{}
	running bool
	done    chan struct{}
}

// KeepWaiting marks w as a live waiter until stop is called: it writes the
// heartbeat before it returns, then the file's one heartbeat writer beats
// for it with every other waiter of the process, every `every`
// (HeartbeatInterval when not positive; the shortest of all registered
// waiters' intervals wins). A failed write goes to onErr (when not nil,
// possibly from another goroutine) and the beats go on. stop removes the
// waiter's row (best effort, bounded by ctx) and may be called once.
func (st *Store) KeepWaiting(ctx context.Context, w Waiter, every time.Duration, onErr func(error)) (stop func(ctx context.Context) error, err error) {
	s := st.bind()
	if r := s.roReason(); r != "" {
		return nil, &ReadOnlyError{Reason: r}
	}
	if every <= 0 {
		every = HeartbeatInterval
	}
	if w.StartedAt == 0 {
		w.StartedAt = model.Epoch(st.now())
	}
	if err := st.Heartbeat(ctx, w); err != nil && onErr != nil {
		onErr(err)
	}
	b := &s.beats
	b.add(s.dbfile, []*beatEntry{{w: w, view: st, every: every, onErr: onErr}})
	var once sync.Once
	return func(ctx context.Context) error {
		var err error
		once.Do(func() {
			// The entry is with the file its Store reads now (it moves
			// when the Store moves to the file now at the path), or
			// still with the one it was registered with.
			k := w.key()
			b.remove(k)
			st.bind().beats.remove(k)
			st.mu.Lock()
			for i, e := range st.moving {
				if e.w.key() == k {
					st.moving = append(st.moving[:i], st.moving[i+1:]...)
					break
				}
			}
			st.mu.Unlock()
			err = st.RemoveWaiter(ctx, w)
		})
		return err
	}, nil
}

func (w Waiter) key() waiterKey { return waiterKey{w.ApprovalID, w.Host, w.PID} }

// add registers entries with f's writer, starting it if it is not running.
func (b *beater) add(f *dbfile, es []*beatEntry) {
	if len(es) == 0 {
		return
	}
	b.mu.Lock()
	if b.entries == nil {
		b.entries = map[waiterKey]*beatEntry{}
		b.wake = make(chan struct{}, 1)
	}
	for _, e := range es {
		b.entries[e.w.key()] = e
	}
	if !b.running {
		b.running = true
		b.done = make(chan struct{})
		go b.loop(f)
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}: // the interval may have shortened
	default:
	}
}

func (b *beater) remove(k waiterKey) {
	b.mu.Lock()
	delete(b.entries, k)
	b.mu.Unlock()
}

// take removes and returns the entries of view st: it is moving to the
// file now at its path, and its waiters go on beating there.
func (b *beater) take(st *Store) []*beatEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*beatEntry
	for k, e := range b.entries {
		if e.view == st {
			out = append(out, e)
			delete(b.entries, k)
		}
	}
	return out
}

// loop writes every registered waiter's heartbeat, in one transaction per
// round, until none is left.
func (b *beater) loop(f *dbfile) {
	defer close(b.done)
	last := time.Now()
	for {
		b.mu.Lock()
		if len(b.entries) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		every := time.Duration(0)
		for _, e := range b.entries {
			if every == 0 || e.every < every {
				every = e.every
			}
		}
		b.mu.Unlock()
		wait := time.Until(last.Add(every))
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-b.wake:
				t.Stop()
				continue
			}
		}
		last = time.Now()
		b.round(f)
	}
}

// round writes one batch.
func (b *beater) round(f *dbfile) {
	b.mu.Lock()
	batch := make([]*beatEntry, 0, len(b.entries))
	for _, e := range b.entries {
		batch = append(batch, e)
	}
	b.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	err := (bound{Store: batch[0].view, dbfile: f}).writeHeartbeats(context.Background(), batch)
	if err == nil {
		return
	}
	for _, e := range batch {
		if e.onErr != nil {
			e.onErr(err)
		}
	}
	if errors.Is(err, ErrMoved) {
		// The file was replaced or deleted: each Store moves to the file
		// now at its path (taking its waiters along) once nothing holds
		// this one. Not from this goroutine: letting go of the file stops
		// its writer, which is this loop.
		views := map[*Store]bool{}
		for _, e := range batch {
			views[e.view] = true
		}
		for v := range views {
			go v.reopen(context.Background())
		}
	}
}

// writeHeartbeats writes a batch of heartbeats, each at its own Store's
// clock, in one transaction of the writer: the one way heartbeats are
// written.
func (s bound) writeHeartbeats(ctx context.Context, batch []*beatEntry) error {
	if s.ws == nil {
		return &ReadOnlyError{Reason: s.roReason()}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.inWriteTxLocked(ctx, "heartbeat", func(ctx context.Context) error {
		for _, e := range batch {
			now := model.Epoch(e.view.now())
			if _, err := s.ws.heartbeat.ExecContext(ctx, e.w.ApprovalID, e.w.Host, e.w.PID, e.w.StartedAt, now, e.w.Surface); err != nil {
				return err
			}
		}
		return nil
	})
}

// stop ends the writer (the file is closing).
func (b *beater) stop() {
	b.mu.Lock()
	b.entries = nil
	running, done := b.running, b.done
	b.mu.Unlock()
	if running {
		select {
		case b.wake <- struct{}{}:
		default:
		}
		<-done
	}
}
