package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watcher notices commits by any connection of any process. It keeps one
// reader connection pinned and compares PRAGMA data_version (a few
// microseconds, no I/O when nothing changed); file notifications on the
// database, its WAL and its journal wake it at once, and a slow poll covers
// filesystems where notification does not work.
type Watcher struct {
	conn    *sql.Conn
	fsw     *fsnotify.Watcher
	wake    chan struct{}
	last    int64
	poll    time.Duration
	stopped chan struct{}
}

// PollWithNotify and PollWithoutNotify are the fallback poll intervals.
const (
	PollWithNotify    = time.Second
	PollWithoutNotify = 100 * time.Millisecond
)

// Watch starts a watcher. Close it when done.
func (s *Store) Watch(ctx context.Context) (*Watcher, error) {
	conn, err := s.rdb.Conn(ctx)
	if err != nil {
		return nil, classify("watch", err)
	}
	w := &Watcher{conn: conn, wake: make(chan struct{}, 1), poll: PollWithoutNotify, stopped: make(chan struct{})}
	if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&w.last); err != nil {
		conn.Close()
		return nil, classify("watch", err)
	}
	if fsw, err := fsnotify.NewWatcher(); err == nil {
		if err := fsw.Add(filepath.Dir(s.path)); err == nil {
			w.fsw = fsw
			w.poll = PollWithNotify
			go w.forward(filepath.Base(s.path))
		} else {
			fsw.Close()
		}
	}
	return w, nil
}

// forward turns file events on the database's files into wake-ups.
func (w *Watcher) forward(base string) {
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			name := filepath.Base(ev.Name)
			if name == base || name == base+"-wal" || name == base+"-journal" {
				select {
				case w.wake <- struct{}{}:
				default:
				}
			}
		case _, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
		case <-w.stopped:
			return
		}
	}
}

// Changed reports whether any commit happened since the last call.
func (w *Watcher) Changed(ctx context.Context) (bool, error) {
	var v int64
	if err := w.conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return false, classify("watch", err)
	}
	if v != w.last {
		w.last = v
		return true, nil
	}
	return false, nil
}

// settleChecks are the re-checks after a file event: the event for the WAL
// write arrives before the writer's commit is visible (inotify fires on the
// write, the commit lands a fraction of a millisecond later), so one check
// would usually miss it and fall back to the slow poll.
var settleChecks = []time.Duration{
	500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond,
	8 * time.Millisecond, 16 * time.Millisecond, 32 * time.Millisecond, 64 * time.Millisecond,
}

// Wait blocks until a commit is seen (or ctx ends).
func (w *Watcher) Wait(ctx context.Context) error {
	t := time.NewTimer(w.poll)
	defer t.Stop()
	settle := -1 // index into settleChecks while re-checking after an event
	for {
		changed, err := w.Changed(ctx)
		if err != nil || changed {
			return err
		}
		next := w.poll
		if settle >= 0 && settle < len(settleChecks) {
			next = settleChecks[settle]
			settle++
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.wake:
			settle = 0
		case <-t.C:
		}
	}
}

// Notifying reports whether file notification is active.
func (w *Watcher) Notifying() bool { return w.fsw != nil }

// Close stops the watcher.
func (w *Watcher) Close() error {
	close(w.stopped)
	if w.fsw != nil {
		w.fsw.Close()
	}
	return w.conn.Close()
}
