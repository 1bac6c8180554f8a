package storage

import (
	"context"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Change detection. Each file has one hub per process, however many Stores
// and Watchers use it: one reader connection pinned to compare PRAGMA
// data_version (a few microseconds, no I/O when nothing changed), file
// notification on the database file and its WAL and shared-memory files
// that wakes it when one of them is written, and a slow poll for
// filesystems where notification does not work (every second, backing off
// to maxPollWithNotify while notification has announced every commit the
// poll found). Every wake-up that is not a plain write and every poll also
// checks that the open file is still the file at the path.
//
// The files are watched themselves, not their directory: a directory watch
// wakes the process for every write to every file in it (an agent's log
// next to the database, written a hundred times a second, cost the console
// 2 % of a core), and watching the files misses nothing that matters. A
// commit writes the WAL (the database file in rollback-journal mode); a
// file deleted, or replaced by a rename over its name, loses a link, which
// inotify reports on the file itself (IN_ATTRIB: a Chmod event), as it
// reports a file moved away (Rename). A WAL or shared-memory file that did
// not exist when the watch started is watched once a poll finds it.
//
// File notification is for the console, which shows every commit within
// milliseconds. A process with only lazy watchers (an agent waiting for its
// decision) does not use it: it polls every LazyPoll. Woken by every commit
// of every process, a hundred waiting agents would each wake fifty times a
// second for the others' heartbeats, and together saturate the machine;
// polling costs each a few checks a second and still notices a decision well
// within a second.

// startLoop starts the hub's own loop (h.mu held): its reader connection,
// with PRAGMA data_version prepared and read once.
func (h *hub) startLoop(f *dbfile) error {
	conn, err := f.rdb.Conn(context.Background())
	if err == nil {
		if h.dv, err = conn.PrepareContext(context.Background(), `PRAGMA data_version`); err == nil {
			err = h.dv.QueryRowContext(context.Background()).Scan(&h.last)
		}
		if err != nil {
			if h.dv != nil {
				h.dv.Close()
			}
			conn.Close()
		}
	}
	if err != nil {
		return err
	}
	h.conn = conn
	go h.loop(f)
	return nil
}

// PollWithNotify and PollWithoutNotify are the fallback poll intervals.
const (
	PollWithNotify    = time.Second
	PollWithoutNotify = 100 * time.Millisecond
)

// maxPollWithNotify: while file notification announces every commit the
// poll finds (none is found unannounced), the poll interval doubles from
// PollWithNotify up to this; the first commit the poll finds that no event
// announced (a filesystem where notification does not see every writer)
// brings it back to PollWithNotify for good. An idle console then wakes
// for the poll every few seconds rather than every second.
const maxPollWithNotify = 8 * time.Second

// LazyPoll is how often a process whose watchers are all lazy looks for
// commits.
const LazyPoll = 250 * time.Millisecond

// settleChecks are the re-checks after a write event, until the change is
// seen: the event for the WAL write arrives before the writer's commit is
// visible (inotify fires on the write, the commit lands a fraction of a
// millisecond later, or after the fsync), so one check would usually miss
// it and fall back to the slow poll. A commit at synchronous=FULL becomes
// visible only once its fsync is done, a few milliseconds on a virtual
// disk, and nothing signals that moment: the checks come every millisecond
// for the first 20 (a doubling schedule, 0.5, 1.5, 3.5, 7.5, 15.5 ms, made
// a commit visible at 8 ms wait until 15.5), then further apart. Each check
// is a few microseconds, and they run only after a write event.
var settleChecks = func() []time.Duration {
	d := []time.Duration{500 * time.Microsecond}
	for range 20 {
		d = append(d, time.Millisecond)
	}
	return append(d, 2*time.Millisecond, 4*time.Millisecond, 8*time.Millisecond,
		16*time.Millisecond, 32*time.Millisecond, 64*time.Millisecond)
}()

// configure starts file notification when a fast watcher wants it and
// stops it when none does, and returns the poll interval.
func (h *hub) configure(f *dbfile) time.Duration {
	h.mu.Lock()
	fast, lazy := h.fast, h.lazy
	h.mu.Unlock()
	if fast > 0 && h.fsw == nil {
		if fsw, err := fsnotify.NewWatcher(); err == nil {
			// Without a watch on the database file itself there is no
			// notification: poll instead.
			if err := fsw.Add(f.file); err == nil {
				h.fsw, h.watched = fsw, map[string]bool{f.file: true}
				h.watchCompanions(f)
			} else {
				fsw.Close()
			}
		}
	}
	if fast == 0 && h.fsw != nil {
		h.fsw.Close()
		h.fsw, h.watched = nil, nil
	}
	h.mu.Lock()
	h.notifying = h.fsw != nil
	h.mu.Unlock()
	poll := PollWithNotify // nobody watching: only the moved-file check
	switch {
	case h.fsw != nil:
	case fast > 0:
		poll = PollWithoutNotify
	}
	if lazy > 0 && LazyPoll < poll {
		poll = LazyPoll
	}
	return poll
}

// nextPoll is the poll interval after a poll that found a change (changed)
// or not, when the last event was announced before it (announced).
func (h *hub) nextPoll(poll, base time.Duration, changed, announced bool) time.Duration {
	if h.fsw == nil || base != PollWithNotify {
		return base
	}
	if changed && !announced {
		h.unannounced = true
	}
	if h.unannounced {
		return base
	}
	return min(2*poll, maxPollWithNotify)
}

// loop is the hub's one goroutine.
func (h *hub) loop(f *dbfile) {
	defer close(h.done)
	defer func() {
		if h.fsw != nil {
			h.fsw.Close()
		}
	}()
	var events <-chan fsnotify.Event
	var errs <-chan error
	base := PollWithNotify // what the watchers need (configure)
	poll := base           // base, or more while notification is trusted (nextPoll)
	t := time.NewTimer(poll)
	defer t.Stop()
	settle := -1 // index into settleChecks while waiting for a write to land
	// evented: an event came that no change seen since has accounted for.
	evented := false
	for {
		moved, polled := false, false
		select {
		case <-h.quit:
			return
		case ack := <-h.reconf:
			base = h.configure(f)
			poll = base
			close(ack)
			events, errs = nil, nil
			if h.fsw != nil {
				events, errs = h.fsw.Events, h.fsw.Errors
			}
			if settle < 0 {
				if !t.Stop() {
					select {
					case <-t.C:
					default:
					}
				}
				t.Reset(poll)
			}
			continue
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			h.events.Add(1)
			// Only the watched files send events. Anything but a plain
			// write (a link lost, a move, a delete) may be the file
			// replaced: check.
			if ev.Op != fsnotify.Write {
				moved = true
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				delete(h.watched, ev.Name) // fsnotify dropped that watch
			}
			settle, evented = 0, true
		case _, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// Events may have been lost (the queue overflowed): look now.
			settle, evented = 0, true
		case <-t.C:
			moved, polled = true, settle < 0
		}
		if moved {
			f.checkMoved()
			h.watchCompanions(f)
		}
		changed := h.check(context.Background())
		if polled {
			poll = h.nextPoll(poll, base, changed, evented)
		}
		if changed {
			// The schedule runs on after a change: the change seen may be
			// another commit than the one the event announced, which then
			// lands a few milliseconds later (a stop here left it to the
			// slow poll, a second or more).
			evented = false
		}
		next := poll
		if settle >= 0 && settle < len(settleChecks) {
			next = settleChecks[settle]
			settle++
		} else {
			settle = -1
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// watchCompanions adds file notification on the database's WAL and
// shared-memory files that exist and are not watched yet (a file in
// rollback-journal mode has neither; a file switched to WAL later gets
// them). The journal of rollback mode is not watched: a commit in that mode
// writes the database file itself.
func (h *hub) watchCompanions(f *dbfile) {
	if h.fsw == nil {
		return
	}
	for _, p := range [...]string{f.file + "-wal", f.file + "-shm"} {
		if h.watched[p] {
			continue
		}
		if err := h.fsw.Add(p); err == nil {
			h.watched[p] = true
		}
	}
}

// check compares data_version and wakes every Watcher when it moved. It
// reports whether it did.
func (h *hub) check(ctx context.Context) bool {
	if h.conn == nil {
		return false // notified by the server instead
	}
	v, err := h.dataVersion(ctx)
	if err != nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if v == h.last {
		return false
	}
	h.last = v
	h.bumpLocked()
	return true
}

// dataVersion reads PRAGMA data_version on the hub's connection.
func (h *hub) dataVersion(ctx context.Context) (int64, error) {
	h.dvMu.Lock()
	defer h.dvMu.Unlock()
	var v int64
	err := h.dv.QueryRowContext(ctx).Scan(&v)
	return v, err
}
