package storage

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// hub is one database's change detection in this process, shared by every
// Store and Watcher on it: the server's notifications (PostgreSQL:
// postgres_listen.go), or its own loop (SQLite: sqlite_watch.go).
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
	if err := h.startLoop(f); err != nil {
		h.err = f.classify("watch", err)
		close(h.done)
		return h.err
	}
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
