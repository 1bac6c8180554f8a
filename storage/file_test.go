package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Two Stores on one file in one process share one set of handles, and an
// external writer that commits and closes (Hermes' Python store opens a
// connection per operation) does not make SQLite believe it is the last
// user: the WAL stays, and every later commit of this process is visible to
// a third process.
func TestTwoStoresInOneProcessKeepTheirLocks(t *testing.T) {
	sqliteOnly(t, "POSIX locks of one file in one process")
	path := tempDB(t)
	a := openAt(t, path, nil)
	b := openAt(t, path, nil)
	if a.bind().dbfile != b.bind().dbfile {
		t.Fatal("two Stores on one file have two sets of handles")
	}
	// A third Store through another spelling of the path shares them too.
	c := openAt(t, strings.Replace(path, "/state.db", "/./state.db", 1), nil)
	if c.bind().dbfile != a.bind().dbfile {
		t.Fatal("another spelling of the path got its own handles")
	}
	w, err := b.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	now := time.Now()
	mustSubmit(t, a, proposal("before00001", "rm -rf /srv/a", model.RiskHigh, now, time.Hour))
	py := newPyStore(t, path)
	ids := py.submitN(3, "rm -rf /srv/py") // each a connection that commits and closes
	if !fileExists(path + "-wal") {
		t.Fatal("the WAL was deleted under open Stores: their locks were dropped")
	}
	// Later commits of this process reach the file other processes read.
	mustSubmit(t, b, proposal("after000001", "rm -rf /srv/b", model.RiskHigh, now, time.Hour))
	if _, err := a.Deny(ctx, ids[0], alice, "no"); err != nil {
		t.Fatal(err)
	}
	py.submitN(1, "rm -rf /srv/py2")
	if v := py.get("after000001"); v.str(t, "command") != "rm -rf /srv/b" {
		t.Fatalf("python reads %q", v.str(t, "command"))
	}
	if v := py.get(ids[0]); v.str(t, "status") != "denied" {
		t.Fatalf("python sees %s as %q, want denied", ids[0], v.str(t, "status"))
	}
	// The watcher still works.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := w.Wait(wctx); err != nil {
		t.Fatalf("watcher after external commits: %v", err)
	}
	// Closing one Store leaves the others working.
	a.Close()
	mustSubmit(t, b, proposal("after000002", "rm -rf /srv/c", model.RiskHigh, now, time.Hour))
	if v := py.get("after000002"); v.str(t, "command") != "rm -rf /srv/c" {
		t.Fatal("commit after closing one Store is not visible")
	}
}

// copyDB makes a consistent copy of the database at path (through SQLite).
func copyDB(t *testing.T, path, to string) {
	t.Helper()
	db := rawDB(t, path)
	mustExec(t, db, `VACUUM INTO ?`, to)
	db.Close()
}

// restoreCopyWith moves a copy of the database, holding p besides, over the
// path: a backup taken (and, to tell the files apart, changed) elsewhere.
// The old file's WAL is checkpointed first, as the sqlite3 shell's
// .backup/.restore would leave it: a WAL full of the old file's pages beside
// the restored one is SQLite's own hazard.
func restoreCopyWith(t *testing.T, path string, p *model.Proposal) {
	t.Helper()
	ck := rawDB(t, path)
	mustExec(t, ck, `PRAGMA wal_checkpoint(TRUNCATE)`)
	ck.Close()
	copyDB(t, path, path+".bak")
	bak := rawDB(t, path+".bak")
	mustExec(t, bak, `INSERT INTO gateway_approvals (approval_id, created_at, status, payload_json) VALUES (?, ?, 'pending', ?)`,
		p.ApprovalID, p.CreatedAt, string(model.EncodePayload(p)))
	bak.Close()
	if err := os.Rename(path+".bak", path); err != nil {
		t.Fatal(err)
	}
}

// A backup restored over the path while a Store has it open: the next
// write is refused (not written into the old file), nothing is recorded in
// either file, and the Store moves to the file now at the path.
func TestReplacedFileIsNoticedBeforeWriting(t *testing.T) {
	sqliteOnly(t, "a database file replaced under the store")
	path := tempDB(t)
	c := newClock()
	s := openAt(t, path, c)
	mustSubmit(t, s, proposal("restored001", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
	w, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	restoreCopyWith(t, path, proposal("onlyinnew01", "rm -rf /new", model.RiskHigh, c.Now(), time.Hour))

	_, err = s.Consume(ctx, "restored001", "restored001", alice)
	var un *UnavailableError
	if !errors.As(err, &un) || !errors.Is(err, ErrMoved) || !strings.Contains(err.Error(), "replaced") ||
		!strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("approve after the file was replaced: %v", err)
	}
	db := rawDB(t, path)
	var status string
	if err := db.QueryRow(`SELECT status FROM gateway_approvals WHERE approval_id = 'restored001'`).Scan(&status); err != nil || status != "pending" {
		t.Fatalf("the file at the path: %q %v", status, err)
	}
	if n := countAudit(t, db, `event = 'approve'`); n != 0 {
		t.Fatalf("%d approve events in the file at the path", n)
	}
	// The watcher says so.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := w.Wait(wctx); !errors.Is(err, ErrMoved) {
		t.Fatalf("watcher after the file was replaced: %v", err)
	}
	// The Store now reads the file at the path, and a decision made now
	// lands in that file.
	if _, err := s.Get(ctx, "onlyinnew01"); err != nil {
		t.Fatalf("the Store still reads the old file: %v", err)
	}
	if _, err := s.Consume(ctx, "restored001", "restored001", alice); err != nil {
		t.Fatalf("approve after looking again: %v", err)
	}
	if err := db.QueryRow(`SELECT status FROM gateway_approvals WHERE approval_id = 'restored001'`).Scan(&status); err != nil || status != "consumed" {
		t.Fatalf("the file at the path after the approval: %q %v", status, err)
	}
	verifyAuditOK(t, s)
	// The watcher follows to the new file.
	done := make(chan error, 1)
	go func() { done <- w.Wait(wctx) }()
	time.Sleep(50 * time.Millisecond)
	mustExec(t, db, `UPDATE gateway_approvals SET consumed_by = consumed_by WHERE approval_id = 'restored001'`)
	if err := <-done; err != nil {
		t.Fatalf("watcher on the new file: %v", err)
	}
}

// Two Stores of one process on a file that is replaced: neither opens the
// new file while the other still holds the old one (two sets of handles on
// one -shm file would drop each other's locks), nor does a new Open; once
// both have noticed and let go, they share the new file's handles.
func TestReplacedFileUnderTwoStores(t *testing.T) {
	sqliteOnly(t, "a database file replaced under the store")
	path := tempDB(t)
	c := newClock()
	a := openAt(t, path, c)
	b := openAt(t, path, c)
	mustSubmit(t, a, proposal("twostores01", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
	restoreCopyWith(t, path, proposal("twostores02", "rm -rf /new", model.RiskHigh, c.Now(), time.Hour))

	_, err := a.Deny(ctx, "twostores01", alice, "")
	if !errors.Is(err, ErrMoved) || !strings.Contains(err.Error(), "another session of this process") {
		t.Fatalf("first write after the restore: %v", err)
	}
	if _, err := Open(ctx, path, Options{}); !errors.Is(err, ErrMoved) {
		t.Fatalf("a new Open while the old file is held: %v", err)
	}
	if _, err := b.Deny(ctx, "twostores01", alice, ""); !errors.Is(err, ErrMoved) ||
		!strings.Contains(err.Error(), "now reads the file at the path") {
		t.Fatalf("the second Store's write: %v", err)
	}
	if _, err := a.Deny(ctx, "twostores01", alice, ""); !errors.Is(err, ErrMoved) ||
		!strings.Contains(err.Error(), "now reads the file at the path") {
		t.Fatalf("the first Store's next write: %v", err)
	}
	if a.bind().dbfile != b.bind().dbfile {
		t.Fatal("the two Stores have two sets of handles on the new file")
	}
	if _, err := a.Deny(ctx, "twostores02", alice, ""); err != nil {
		t.Fatalf("deny on the new file: %v", err)
	}
	verifyAuditOK(t, b)
}

// A deleted database (or its WAL) refuses writes with the reason; a
// watcher says so; nothing pretends to have been done.
func TestDeletedFileOrWALIsNoticed(t *testing.T) {
	sqliteOnly(t, "a database file or its WAL deleted under the store")
	for _, victim := range []string{"", "-wal"} {
		t.Run("rm state.db"+victim, func(t *testing.T) {
			path := tempDB(t)
			c := newClock()
			s := openAt(t, path, c)
			mustSubmit(t, s, proposal("deleted0001", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
			w, err := s.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path + victim); err != nil {
				t.Fatal(err)
			}
			_, err = s.Deny(ctx, "deleted0001", alice, "")
			if !errors.Is(err, ErrMoved) || !strings.Contains(err.Error(), "deleted") {
				t.Fatalf("deny after rm: %v", err)
			}
			err = s.Submit(ctx, proposal("deleted0002", "ls", model.RiskLow, c.Now(), time.Hour), agent)
			if victim == "" && !errors.Is(err, ErrMoved) {
				t.Fatalf("submit after rm: %v", err)
			}
			if victim == "-wal" {
				// The refused deny let go of the old handles: their last
				// close put the deleted WAL's commits back into the file,
				// which the Store now has open again.
				if err != nil {
					t.Fatalf("submit after the store reopened: %v", err)
				}
				if r, err := s.Get(ctx, "deleted0001"); err != nil || r.Status != model.StatusPending {
					t.Fatalf("the row committed before the WAL was deleted: %+v %v", r, err)
				}
				return
			}
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := w.Wait(wctx); !errors.Is(err, ErrMoved) {
				t.Fatalf("watcher after rm: %v", err)
			}
		})
	}
}

// corruptPage overwrites one page of the (closed, checkpointed) database
// with garbage.
func corruptPage(t *testing.T, path string, page int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	garbage := []byte(strings.Repeat("\xff\x13garbage", 64))
	if _, err := f.WriteAt(garbage, (page-1)*4096+8); err != nil {
		t.Fatal(err)
	}
}

// A corrupt index that the approve path itself never reads: the integrity
// check refuses the approval (audited), deny still works.
func TestDamagedFileRefusesApproval(t *testing.T) {
	sqliteOnly(t, "a damaged database file (quick_check)")
	path := tempDB(t)
	c := newClock()
	s := openAt(t, path, c)
	for _, id := range []string{"damaged0001", "damaged0002", "damaged0003"} {
		mustSubmit(t, s, proposal(id, "rm -rf /srv/"+id, model.RiskHigh, c.Now(), time.Hour))
	}
	if _, err := s.Consume(ctx, "damaged0003", "damaged0003", alice); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordExecution(ctx, "damaged0003", model.ExecBlockedAfterConsume, "test", agent); err != nil {
		t.Fatal(err)
	}
	var root int64
	if err := s.bind().rdb.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'idx_gateway_approvals_blocked_after_consume'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	s.Close() // checkpoints: the file alone holds everything
	if fileExists(path + "-wal") {
		t.Fatal("WAL left after the last close")
	}
	corruptPage(t, path, root)

	s = openAt(t, path, c)
	_, err := s.Consume(ctx, "damaged0001", "damaged0001", alice)
	var dm *DamagedError
	if !errors.As(err, &dm) || !strings.Contains(err.Error(), "idx_gateway_approvals_blocked_after_consume") &&
		!strings.Contains(err.Error(), "gateway_approvals") {
		t.Fatalf("approve on a damaged file: %v", err)
	}
	if s.Damaged() == "" {
		t.Fatal("Damaged() says nothing")
	}
	if r, err := s.Get(ctx, "damaged0001"); err != nil || r.Status != model.StatusPending {
		t.Fatalf("the row after the refusal: %+v %v", r, err)
	}
	db := rawDB(t, path)
	if n := countAudit(t, db, `event = 'approve' AND outcome = 'refused' AND reason = 'damaged'`); n != 1 {
		t.Fatalf("%d audited damaged refusals, want 1", n)
	}
	if _, err := s.Deny(ctx, "damaged0002", alice, "file damaged"); err != nil {
		t.Fatalf("deny on a damaged file: %v", err)
	}
}

// Reading commands never write to a SQLite file that is not an approval
// store; init (Create) makes it one.
func TestForeignFileIsNotWrittenWithoutCreate(t *testing.T) {
	sqliteOnly(t, "a SQLite file of another program")
	path := tempDB(t)
	db := rawDB(t, path)
	mustExec(t, db, `CREATE TABLE notes (body TEXT)`)
	mustExec(t, db, `PRAGMA journal_mode=DELETE`)
	db.Close()
	before, _ := os.ReadFile(path)
	_, err := Open(ctx, path, Options{})
	if err == nil || !strings.Contains(err.Error(), "no gateway_approvals table") {
		t.Fatalf("open of a foreign file: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("the foreign file was written")
	}
	s, err := Open(ctx, path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openAt(t, path, nil)
	if _, err := s.List(ctx, ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Paths that are not regular files are refused before SQLite makes
// journals beside them.
func TestNonRegularFileIsRefused(t *testing.T) {
	sqliteOnly(t, "a path that is not a regular file")
	_, err := Open(ctx, os.DevNull, Options{Create: true})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("open /dev/null: %v", err)
	}
	if fileExists(os.DevNull + "-journal") {
		t.Fatal("left /dev/null-journal")
	}
}

// What the audit log records but the table lacks (a lost WAL, an older
// copy restored) is reported by verify.
func TestVerifyReportsDecisionsMissingFromTheTable(t *testing.T) {
	s, c := newStore(t)
	for _, id := range []string{"gap00000001", "gap00000002", "gap00000003"} {
		mustSubmit(t, s, proposal(id, "rm -rf /srv/"+id, model.RiskHigh, c.Now(), time.Hour))
	}
	if _, err := s.Consume(ctx, "gap00000001", "gap00000001", alice); err != nil {
		t.Fatal(err)
	}
	verifyAuditOK(t, s)
	db := rawDB(t, s.Path())
	// As if the commits had been lost: the decision and one row vanish.
	mustExec(t, db, `UPDATE gateway_approvals SET status = 'pending', consumed_at = NULL, consumed_by = NULL WHERE approval_id = 'gap00000001'`)
	mustExec(t, db, `DELETE FROM gateway_approvals WHERE approval_id = 'gap00000002'`)
	res, err := s.VerifyAudit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || len(res.Gaps) != 2 || !strings.Contains(res.Gaps[0], "gap00000001 was consumed") ||
		!strings.Contains(res.Gaps[1], "gap00000002 (event 2) is missing") {
		t.Fatalf("verify: %+v", res)
	}
}

// A WAL database in a directory this user cannot write: SQLite cannot make
// the -shm it needs even to read, and the message says so.
func TestWALFileInUnwritableDirectorySaysWhy(t *testing.T) {
	sqliteOnly(t, "the WAL beside the file")
	path := tempDB(t)
	c := newClock()
	s := openAt(t, path, c)
	mustSubmit(t, s, proposal("rodir000001", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
	s.Close()
	undo := makeUnwritable(t, filepath.Dir(path))
	defer undo()
	_, err := Open(ctx, path, Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "is not writable") || !strings.Contains(err.Error(), "state.db-shm") {
		t.Fatalf("open: %v", err)
	}
}

// A process's waiters go on heartbeating after the file was replaced: on
// the file now at the path, once the store moved there.
func TestWaitersFollowAReplacedFile(t *testing.T) {
	sqliteOnly(t, "a database file replaced under the store")
	path := tempDB(t)
	c := newClock()
	s := openAt(t, path, c)
	mustSubmit(t, s, proposal("beatmove01", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
	host, _ := os.Hostname()
	w := Waiter{ApprovalID: "beatmove01", Host: host, PID: os.Getpid(), Surface: "runner"}
	var errs atomic.Int32
	stop, err := s.KeepWaiting(ctx, w, 20*time.Millisecond, func(error) { errs.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	restoreCopyWith(t, path, proposal("beatmove02", "rm -rf /new", model.RiskHigh, c.Now(), time.Hour))
	// The row the copy carries is from before the move; wait for a fresh
	// heartbeat written into the file now at the path.
	before := c.Now()
	c.Advance(time.Minute)
	deadline := time.Now().Add(5 * time.Second)
	for {
		db := rawDB(t, path)
		var at float64
		err := db.QueryRow(`SELECT heartbeat_at FROM approve_tui_waiters WHERE approval_id = 'beatmove01'`).Scan(&at)
		db.Close()
		if err == nil && at > model.Epoch(before) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no heartbeat in the file now at the path (last %v, %v); %d write errors", at, err, errs.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if errs.Load() == 0 {
		t.Fatal("the refused heartbeat on the moved file was not reported")
	}
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM approve_tui_waiters WHERE approval_id = 'beatmove01'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("stop left %d rows (%v)", n, err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := db.QueryRow(`SELECT count(*) FROM approve_tui_waiters WHERE approval_id = 'beatmove01'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("beats went on after stop: %d rows (%v)", n, err)
	}
}
