package storage

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
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

type hub struct {
	mu      sync.Mutex
	started bool
	err     error
	ver     uint64        // bumped on every change seen
	ch      chan struct{} // closed (and replaced) on every bump
	last    int64         // data_version last seen
	conn    *conn
	dv      *sql.Stmt // PRAGMA data_version on conn, prepared once
	// dvMu serialises the uses of dv: one prepared statement is one
	// cursor, and the hub's loop and a Watcher's Changed both read it (a
	// second query would reset the first one's row before its Scan).
	dvMu    sync.Mutex
	push    bool              // the server pushes notifications (PostgreSQL): join has nothing to configure
	fsw     *fsnotify.Watcher // owned by loop
	watched map[string]bool   // the paths fsw watches (owned by loop)
	// unannounced: the poll found a commit no event had announced
	// (owned by loop).
	unannounced bool
	events      atomic.Int64 // file notification events received (tests)
	notifying   bool
	fast        int                // watchers that want every commit at once
	lazy        int                // watchers content with LazyPoll
	reconf      chan chan struct{} // the counts changed: configure, then close the channel sent
	quit        chan struct{}
	done        chan struct{}
}

// start runs f's hub unless it runs already.
func (f *dbfile) startHub() error {
	h := &f.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return h.err
	}
	h.started = true
	h.ch = make(chan struct{})
	h.reconf = make(chan chan struct{})
	h.quit = make(chan struct{})
	h.done = make(chan struct{})
	if f.eng.listen(f, h) {
		return nil
	}
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
		h.err = f.classify("watch", err)
		close(h.done)
		return h.err
	}
	h.conn = conn
	go h.loop(f)
	return nil
}

// join counts a Watcher in (n = 1) or out (-1), and returns once the loop
// has started or stopped file notification and set its poll to match.
func (h *hub) join(lazy bool, n int) {
	h.mu.Lock()
	if lazy {
		h.lazy += n
	} else {
		h.fast += n
	}
	push := h.push
	h.mu.Unlock()
	if push {
		return
	}
	ack := make(chan struct{})
	select {
	case h.reconf <- ack:
		<-ack
	case <-h.done:
	}
}

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

func (h *hub) bumpLocked() {
	h.ver++
	close(h.ch)
	h.ch = make(chan struct{})
}

// notify wakes every Watcher (the file was found moved).
func (h *hub) notify() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started && h.err == nil {
		h.bumpLocked()
	}
}

func (h *hub) state() (uint64, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ver, h.ch
}

func (h *hub) stop() {
	h.mu.Lock()
	started, err := h.started, h.err
	h.mu.Unlock()
	if !started || err != nil {
		return
	}
	close(h.quit)
	<-h.done
	if h.dv != nil {
		h.dv.Close()
	}
	if h.conn != nil {
		h.conn.Close()
	}
}

// Watcher notices commits by any connection of any process to the Store's
// file, and the file being replaced or deleted under the Store.
type Watcher struct {
	s        *Store
	f        *dbfile
	lazy     bool
	closed   sync.Once
	seen     uint64
	goneSaid bool
	// wver is the writer connection's data_version at the last
	// OthersCommitted (wknown: there was one, on this file).
	wver   int64
	wknown bool
}

// Watch starts a watcher that sees every commit within milliseconds (file
// notification): the console's. Close it when done.
func (s *Store) Watch(ctx context.Context) (*Watcher, error) { return s.watch(false) }

// WatchLazy starts a watcher that may see a commit up to LazyPoll late: an
// agent waiting for its decision. Close it when done.
func (s *Store) WatchLazy(ctx context.Context) (*Watcher, error) { return s.watch(true) }

func (s *Store) watch(lazy bool) (*Watcher, error) {
	f := s.bind().dbfile
	w := &Watcher{s: s, f: f, lazy: lazy}
	// The writer's data_version before the hub's first look: a commit of
	// another process in between moves it (OthersCommitted says so) and is
	// not missed.
	w.wver, w.wknown = f.writerVersion(context.Background())
	if err := f.startHub(); err != nil {
		return nil, err
	}
	f.hub.join(lazy, 1)
	w.seen, _ = f.hub.state()
	return w, nil
}

// writerVersion is the writer connection's PRAGMA data_version (false: none
// to read, a server's database or an error). It waits for a write in
// progress.
func (f *dbfile) writerVersion(ctx context.Context) (int64, bool) {
	return f.writerInt(ctx, counterCommits)
}

// writerInt is a number the writer connection says (false: no writer
// connection, a server's database, or an error). It waits for a write in
// progress.
func (f *dbfile) writerInt(ctx context.Context, c writerCounter) (int64, bool) {
	q := f.eng.counterQuery(c)
	if q == "" || f.w == nil {
		return 0, false
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	var v int64
	if err := f.w.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return 0, false
	}
	return v, true
}

// WrittenRows is how many rows this process has written to the Store's file
// so far: SQLite's total_changes() on the one writer connection that every
// Store of the process on that file writes through (false: a server's
// database, or it cannot tell). A caller that reads it just before and just
// after a write of its own, and finds them one row apart, knows that
// nothing else of this process wrote meanwhile (see Watcher.Committers).
func (s *Store) WrittenRows(ctx context.Context) (int64, bool) {
	return s.bind().writerInt(ctx, counterRowsWritten)
}

// Changed reports whether any commit happened since the last call (or
// since Wait last returned).
func (w *Watcher) Changed(ctx context.Context) (bool, error) {
	if r := w.f.checkMoved(); r != "" {
		return false, &UnavailableError{Op: "watch", Err: ErrMoved, Reason: r}
	}
	w.f.hub.check(ctx)
	ver, _ := w.f.hub.state()
	if ver != w.seen {
		w.seen = ver
		return true, nil
	}
	return false, nil
}

// Wait blocks until a commit is seen (or ctx ends). When the Store's file
// is replaced or deleted, Wait returns an *UnavailableError wrapping
// ErrMoved, once; when the Store has moved to the file now at the path, the
// next Wait says so the same way and then watches the new file.
func (w *Watcher) Wait(ctx context.Context) error {
	for {
		if r := w.f.goneReason(); r != "" {
			f := w.f
			// Move to the file now at the path, when there is one, and say
			// so; with none there, say so once and look again in a while.
			if nf, err := w.s.reopen(ctx); err == nil && nf != f {
				if err := w.follow(nf); err != nil {
					return err
				}
				return &UnavailableError{Op: "watch", Err: ErrMoved, Reason: r + "; now reading the file at the path"}
			}
			if !w.goneSaid {
				w.goneSaid = true
				return &UnavailableError{Op: "watch", Err: ErrMoved, Reason: r}
			}
			t := time.NewTimer(PollWithNotify)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			continue
		}
		f := w.s.bind().dbfile
		if f != w.f {
			// Another call moved the Store: watch the new file.
			return w.follow(f)
		}
		ver, ch := f.hub.state()
		if ver != w.seen {
			w.seen = ver
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// follow makes the Watcher watch f from now on.
func (w *Watcher) follow(f *dbfile) error {
	if err := f.startHub(); err != nil {
		return err
	}
	w.f.hub.join(w.lazy, -1)
	f.hub.join(w.lazy, 1)
	w.f, w.goneSaid, w.wknown = f, false, false
	w.seen, _ = f.hub.state()
	return nil
}

// Committers says who may have committed to the file since the watch
// started or the last call.
type Committers struct {
	// Others: another process may have (true whenever it cannot tell: on a
	// server's database, after the watcher moved to another file). A
	// process commits through its one writer connection, whose PRAGMA
	// data_version moves only for commits by other connections.
	Others bool
	// Written is WrittenRows when asked (WrittenKnown: it could tell): the
	// rows written by this process since an earlier reading are its
	// difference with that reading.
	Written      int64
	WrittenKnown bool
}

// Committers says who may have committed since the watch started or the
// last call: a console woken only by its own presence refresh need not read
// its list again. It waits for a write of this process in progress to end:
// call it off the UI's goroutine, and not concurrently with itself.
func (w *Watcher) Committers(ctx context.Context) Committers {
	v, ok := w.f.writerVersion(ctx)
	c := Committers{Others: !ok || !w.wknown || v != w.wver}
	w.wver, w.wknown = v, ok
	c.Written, c.WrittenKnown = w.f.writerInt(ctx, counterRowsWritten)
	return c
}

// Notifying reports whether file notification is active.
func (w *Watcher) Notifying() bool {
	w.f.hub.mu.Lock()
	defer w.f.hub.mu.Unlock()
	return w.f.hub.notifying
}

// Close stops the watcher. The file's hub runs on until the file's last
// Store closes.
func (w *Watcher) Close() error {
	w.closed.Do(func() { w.f.hub.join(w.lazy, -1) })
	return nil
}
