package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/approve-tui/approve-tui/model"
)

// mustWatch starts a watcher on s, closed when the test ends.
func mustWatch(tb testing.TB, s *Store) *Watcher {
	tb.Helper()
	w, err := s.Watch(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close() })
	return w
}

func TestWatcherWakesOnOtherConnectionsCommits(t *testing.T) {
	s, c := newStore(t)
	w := mustWatch(t, s)
	if changed, _ := w.Changed(ctx); changed {
		t.Fatal("changed before any commit")
	}
	done := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		done <- w.Wait(wctx)
	}()
	time.Sleep(50 * time.Millisecond)
	// A commit from a plain connection, as another process would make.
	db := rawDB(t, s.Path())
	p := proposal("w1", "rm -rf /x", model.RiskHigh, c.Now(), time.Hour)
	insertRaw(t, db, p)
	if err := <-done; err != nil {
		t.Fatalf("wait: %v", err)
	}
	// The store's own writes are seen too (they use another connection).
	if _, err := s.Deny(ctx, "w1", alice, ""); err != nil {
		t.Fatal(err)
	}
	if changed, err := w.Changed(ctx); !changed {
		t.Fatalf("the store's own commit was not noticed (%v)", err)
	}
	// With nothing committed the watcher sleeps. One more wake-up right
	// after a commit is tolerated (seen once under load in CI: SQLite can
	// move data_version again after a commit, as its automatic checkpoint
	// does; a spurious wake costs a console one signature read), a second
	// is not: that would be a watcher that keeps waking.
	woke := 0
	for range 2 {
		wctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		err := w.Wait(wctx)
		cancel()
		if err == nil {
			woke++
		}
	}
	if woke > 1 {
		t.Fatalf("woke %d times in 300 ms with nothing committed", woke)
	}
}

func TestWaiterLiveness(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("wt1", "rm -rf /x", model.RiskHigh, c.Now(), time.Hour))
	if st, _ := s.WaiterState(ctx, "wt1"); st.State != WaiterNone {
		t.Fatalf("no waiter yet: %v", st.State)
	}
	host, _ := os.Hostname()
	me := Waiter{ApprovalID: "wt1", Host: host, PID: os.Getpid(), Surface: "runner"}
	if err := s.Heartbeat(ctx, me); err != nil {
		t.Fatal(err)
	}
	st, _ := s.WaiterState(ctx, "wt1")
	if st.State != WaiterLive || st.Waiter.PID != os.Getpid() {
		t.Fatalf("live waiter: %+v", st)
	}
	c.Advance(WaiterStaleAfter + time.Second)
	if st, _ := s.WaiterState(ctx, "wt1"); st.State != WaiterDead {
		t.Fatalf("stale heartbeat: %v", st.State)
	}
	if err := s.Heartbeat(ctx, me); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.WaiterState(ctx, "wt1"); st.State != WaiterLive {
		t.Fatal("fresh heartbeat not live")
	}
	// A fresh heartbeat from a process of this host that no longer exists is dead.
	gone := Waiter{ApprovalID: "wt1", Host: host, PID: 1 << 22, Surface: "runner"}
	if err := s.RemoveWaiter(ctx, me); err != nil {
		t.Fatal(err)
	}
	if err := s.Heartbeat(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.WaiterState(ctx, "wt1"); st.State != WaiterDead {
		t.Fatalf("gone process: %v", st.State)
	}
}

// A process whose watchers are all lazy (agents waiting for a decision)
// does not use file notification, so that other processes' heartbeats do
// not wake it fifty times a second; it still notices a commit within a
// poll. A fast watcher (the console) turns notification on, and closing it
// turns it off again.
func TestLazyWatcherPollsWithoutNotification(t *testing.T) {
	s, c := newStore(t)
	lazy, err := s.WatchLazy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.Close()
	if testBackend == "sqlite" && lazy.Notifying() {
		t.Fatal("a lazy watcher alone uses file notification")
	}
	db := rawDB(t, s.Path())
	insert := func(id string) time.Time {
		p := proposal(id, "rm -rf /x", model.RiskHigh, c.Now(), time.Hour)
		insertRaw(t, db, p)
		return time.Now()
	}
	done := make(chan time.Time, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := lazy.Wait(wctx); err != nil {
			t.Error(err)
		}
		done <- time.Now()
	}()
	time.Sleep(20 * time.Millisecond)
	at := insert("lz1")
	if took := (<-done).Sub(at); took > 4*LazyPoll {
		t.Fatalf("a lazy watcher took %v to notice a commit (poll %v)", took, LazyPoll)
	}
	if testBackend != "sqlite" {
		return // the server notifies every watcher: there is no file notification to turn on and off
	}

	fast, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !fast.Notifying() || !lazy.Notifying() {
		t.Fatal("a fast watcher did not turn file notification on")
	}
	fast.Close()
	fast.Close() // closing twice counts once
	if lazy.Notifying() {
		t.Fatal("file notification stayed on after the last fast watcher closed")
	}
	fast2, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer fast2.Close()
	if !fast2.Notifying() {
		t.Fatal("file notification did not come back")
	}
}

// The console's watcher watches the database's own files, not their
// directory: another file in the directory written a hundred times a
// second (an agent's log) sends it no event at all, and a commit still
// does.
func TestWatcherIgnoresOtherFilesInTheDirectory(t *testing.T) {
	sqliteOnly(t, "file notification")
	s, c := newStore(t)
	w := mustWatch(t, s)
	if !w.Notifying() {
		t.Skip("no file notification here")
	}
	h := &s.bind().dbfile.hub
	log, err := os.OpenFile(filepath.Join(filepath.Dir(s.Path()), "agent.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	before := h.events.Load()
	for i := 0; i < 100; i++ {
		fmt.Fprintf(log, "line %d\n", i)
		time.Sleep(time.Millisecond)
	}
	other, err := os.Create(filepath.Join(filepath.Dir(s.Path()), "other.db-wal"))
	if err != nil {
		t.Fatal(err)
	}
	other.WriteString("x")
	other.Close()
	time.Sleep(50 * time.Millisecond)
	if n := h.events.Load() - before; n != 0 {
		t.Fatalf("%d events for other files of the directory", n)
	}
	if changed, _ := w.Changed(ctx); changed {
		t.Fatal("changed with nothing committed")
	}
	db := rawDB(t, s.Path())
	p := proposal("noisy1", "rm -rf /x", model.RiskHigh, c.Now(), time.Hour)
	insertRaw(t, db, p)
	wokenByEvent(t, w, h, before)
}

// wokenByEvent waits for w to see a commit (5 s at most) and checks that a
// file event came since the hub had counted before (not the slow poll).
func wokenByEvent(t *testing.T, w *Watcher, h *hub, before int64) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := w.Wait(wctx); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if h.events.Load() == before {
		t.Fatal("the commit was noticed without a file event (by the poll)")
	}
}

// A file in rollback-journal mode has no WAL: a commit writes the database
// file itself, which is watched.
func TestWatcherOnRollbackJournalFile(t *testing.T) {
	sqliteOnly(t, "file notification")
	path := tempDB(t)
	db := rawDB(t, path)
	mustExec(t, db, `PRAGMA journal_mode=DELETE`)
	mustExec(t, db, sqliteSchema.hermesTable)
	c := newClock()
	s := openAt(t, path, c)
	if s.JournalMode() != "delete" {
		t.Fatalf("journal mode %q", s.JournalMode())
	}
	w := mustWatch(t, s)
	if !w.Notifying() {
		t.Skip("no file notification here")
	}
	h := &s.bind().dbfile.hub
	before := h.events.Load()
	p := proposal("rollback1", "rm -rf /x", model.RiskHigh, c.Now(), time.Hour)
	insertRaw(t, db, p)
	wokenByEvent(t, w, h, before)
}

// The WAL deleted, or the database replaced by a rename over its name,
// loses a link: the file's own watch reports it (no directory watch, no
// wait for the poll).
func TestWatcherIsToldOfDeletedAndReplacedFiles(t *testing.T) {
	sqliteOnly(t, "file notification")
	for _, how := range []string{"rm -wal", "rename over"} {
		t.Run(how, func(t *testing.T) {
			path := tempDB(t)
			c := newClock()
			s := openAt(t, path, c)
			mustSubmit(t, s, proposal("gone0001", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
			w := mustWatch(t, s)
			if !w.Notifying() {
				t.Skip("no file notification here")
			}
			h := &s.bind().dbfile.hub
			if how == "rename over" {
				copyDB(t, path, path+".new")
			}
			time.Sleep(20 * time.Millisecond)
			before := h.events.Load()
			start := time.Now()
			var err error
			if how == "rm -wal" {
				err = os.Remove(path + "-wal")
			} else {
				err = os.Rename(path+".new", path)
			}
			if err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := w.Wait(wctx); !errors.Is(err, ErrMoved) {
				t.Fatalf("watcher after %s: %v", how, err)
			}
			if h.events.Load() == before {
				t.Fatalf("noticed after %v without a file event (by the poll)", time.Since(start))
			}
		})
	}
}

// A console woken by its own commit (its presence refresh) can tell it from
// another process's (the writer connection's data_version moves only for
// commits of other connections), and from other writes of its own process
// (the writer's count of rows written).
func TestWatcherTellsOwnCommitsFromOthers(t *testing.T) {
	s, c := newStore(t)
	w := mustWatch(t, s)
	if testBackend != "sqlite" {
		if got := w.Committers(ctx); !got.Others || got.WrittenKnown {
			t.Fatalf("a server's watcher cannot tell, and must say so: %+v", got)
		}
		return
	}
	first := w.Committers(ctx)
	if first.Others || !first.WrittenKnown {
		t.Fatalf("nothing committed: %+v", first)
	}
	before, ok := s.WrittenRows(ctx)
	if !ok || before != first.Written {
		t.Fatalf("written rows %d %v, the watcher said %d", before, ok, first.Written)
	}
	if err := s.SetPresence(ctx, Presence{Console: "test:1", Actor: "alice", Name: "alice", Surface: "tui"}); err != nil {
		t.Fatal(err)
	}
	if after, _ := s.WrittenRows(ctx); after != before+1 {
		t.Fatalf("a presence refresh wrote %d rows, want 1", after-before)
	}
	own := w.Committers(ctx)
	if own.Others || own.Written != before+1 {
		t.Fatalf("after this process's presence refresh: %+v", own)
	}
	mustSubmit(t, s, proposal("own1", "rm -rf /x", model.RiskHigh, c.Now(), time.Hour))
	if got := w.Committers(ctx); got.Others || got.Written <= own.Written+1 {
		t.Fatalf("after a submit of this process: %+v (a submit writes more than one row)", got)
	}
	db := rawDB(t, s.Path())
	p := proposal("other1", "rm -rf /y", model.RiskHigh, c.Now(), time.Hour)
	insertRaw(t, db, p)
	if !w.Committers(ctx).Others {
		t.Fatal("another connection's commit not seen")
	}
	if w.Committers(ctx).Others {
		t.Fatal("seen twice")
	}
}

// The fallback poll backs off while file notification announces every
// commit the poll finds, and returns to every PollWithNotify for good once
// it finds one no event announced (notification that misses writers, as on
// a network filesystem).
func TestPollBacksOffWhileNotificationWorks(t *testing.T) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skip("no file notification here")
	}
	defer fsw.Close()
	h := &hub{fsw: fsw}
	poll := PollWithNotify
	for _, want := range []time.Duration{2 * time.Second, 4 * time.Second, maxPollWithNotify, maxPollWithNotify} {
		if poll = h.nextPoll(poll, PollWithNotify, false, false); poll != want {
			t.Fatalf("quiet poll: next in %v, want %v", poll, want)
		}
	}
	if poll = h.nextPoll(poll, PollWithNotify, true, true); poll != maxPollWithNotify {
		t.Fatalf("a commit an event announced: next poll in %v", poll)
	}
	if poll = h.nextPoll(poll, PollWithNotify, true, false); poll != PollWithNotify {
		t.Fatalf("a commit no event announced: next poll in %v", poll)
	}
	if poll = h.nextPoll(poll, PollWithNotify, false, false); poll != PollWithNotify {
		t.Fatalf("backed off again after notification missed a commit: %v", poll)
	}
	// Lazy watchers and no notification: their own interval, always.
	if p := (&hub{fsw: fsw}).nextPoll(LazyPoll, LazyPoll, false, false); p != LazyPoll {
		t.Fatalf("lazy: %v", p)
	}
	if p := (&hub{}).nextPoll(PollWithoutNotify, PollWithoutNotify, false, false); p != PollWithoutNotify {
		t.Fatalf("without notification: %v", p)
	}
}

// The hub's loop and every Watcher's Changed read data_version through one
// prepared statement at the same time: each read must get its row (was a
// bug: a read could reset another's row before its Scan, which then failed,
// and Changed missed a commit).
func TestDataVersionReadsConcurrently(t *testing.T) {
	sqliteOnly(t, "PRAGMA data_version")
	s, _ := newStore(t)
	mustWatch(t, s)
	h := &s.bind().hub
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 300; i++ {
				if _, err := h.dataVersion(ctx); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatalf("a concurrent read of data_version failed: %v", err)
		}
	}
}
