// Package storage is approve-tui's durable approval store: the Hermes
// gateway_approvals table in a real SQLite file, plus approve-tui's own
// tables (hash-chained audit log, waiter heartbeats, pending-rank index).
//
// Every transition — submit, approve, deny, expire, execution outcome — runs
// through one code path (transition): BEGIN IMMEDIATE on the one dedicated
// writer connection, a compare-and-set UPDATE ... WHERE status='pending' AND
// not expired ... RETURNING, and the audit insert, in one transaction.
// Refused attempts are audited through the same path.
//
// A process has one set of SQLite handles per database file (see sqlite_file.go),
// however many Stores it opens on it: SQLite's locks on Unix are POSIX
// advisory locks, which a process loses when it closes any descriptor of the
// file, so nothing here ever opens the file outside SQLite, and no second
// set of connections is ever made to the same file.
package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/trust"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// DefaultBusyTimeout is how long a write waits for another process's lock
// before the store reports itself unavailable.
const DefaultBusyTimeout = 10 * time.Second

// Options configure Open.
type Options struct {
	// Create makes a new file (and its directory) when the path is missing,
	// and the gateway_approvals table in an existing file that lacks it.
	// Without it a missing file is an error, and so is a SQLite file with no
	// gateway_approvals table (nothing is written to it).
	Create bool
	// ReadOnly opens the file for viewing only: every write is refused.
	ReadOnly bool
	// BusyTimeout bounds the wait for another process's lock
	// (DefaultBusyTimeout when zero).
	BusyTimeout time.Duration
	// Synchronous sets PRAGMA synchronous on the writer ("NORMAL", "FULL");
	// empty leaves SQLite's default (FULL).
	Synchronous string
	// Now is the clock (time.Now when nil). Tests pin it.
	Now func() time.Time
	// Readers is the size of the reader pool on PostgreSQL (4 when zero):
	// a server with many sessions wants more.
	Readers int
	// Risk is what this process judges commands with besides each
	// command's own cwd: the configured sensitive paths and programs, and
	// its own files (config.RiskContext; Cwd is ignored). The effective
	// risk a decision enforces, the urgency order and the effects a policy
	// rule matches come from that judgement. Fixed for the Store's life.
	Risk risk.Context
	// Trust is the trust configuration (nil: off). Where it requires
	// signatures, every approve, vote and policy set must carry its actor's
	// Signature, verified against it inside the deciding transaction (a
	// deny that carries one too; an unsigned deny is allowed), the policy
	// in force is the newest a policy signer signed, and its Store names
	// this store in every statement.
	Trust *trust.Settings
}

// Store is one user's view of an approval database: its own clock, lock
// timeout and read-only choice, over the handles that every Store of the
// process shares for that file. When the file at the path is replaced or
// deleted under it, the Store notices, refuses to write into the old file,
// and moves to the file now at the path.
type Store struct {
	path   string
	dsn    string // what Open was given (a PostgreSQL URL keeps its password here)
	opt    Options
	now    func() time.Time
	viewRO string // why this view may not write ("" when it may)
	judge  *judging

	mu     sync.Mutex
	f      *dbfile // the handles of the file at the path
	held   bool    // this Store holds a reference on f
	closed bool
	// moving: this view's heartbeat entries between letting go of a
	// moved file and opening the file now at the path.
	moving []*beatEntry
}

// ErrMissing is returned by Open for a path that does not exist when
// Options.Create is false.
var ErrMissing = errors.New("database file not found")

// Open opens (or, with Create, creates) the approval database at path. An
// existing file keeps its journal mode; a new file gets WAL, or DELETE where
// the filesystem cannot host WAL. Missing Hermes columns and approve-tui's
// own tables are added. A file that cannot be written opens read-only and
// says why in ReadOnlyReason.
//
// Any number of Stores may be open on one file in one process: they share
// one set of SQLite handles, released when the last of them is closed.
func Open(ctx context.Context, path string, opt Options) (*Store, error) {
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = DefaultBusyTimeout
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	opt.Synchronous = strings.ToUpper(opt.Synchronous)
	switch opt.Synchronous {
	case "", "NORMAL", "FULL", "EXTRA", "OFF":
	default:
		return nil, fmt.Errorf("unknown synchronous mode %q (want NORMAL or FULL)", opt.Synchronous)
	}
	if IsPostgresURL(path) {
		s := &Store{path: RedactURL(path), dsn: path, opt: opt, now: opt.Now, judge: newJudging(opt.Risk)}
		if opt.ReadOnly {
			s.viewRO = "opened read-only"
		}
		f, err := acquirePostgres(ctx, path, opt)
		if err != nil {
			return nil, err
		}
		s.f, s.held = f, true
		return s, nil
	}
	path = strings.TrimPrefix(strings.TrimPrefix(path, "sqlite://"), "sqlite:")
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("database path %q: %w", path, err)
	}
	s := &Store{path: abs, dsn: abs, opt: opt, now: opt.Now, judge: newJudging(opt.Risk)}
	if opt.ReadOnly {
		s.viewRO = "opened read-only"
	}
	f, err := acquire(ctx, abs, opt)
	if err != nil {
		return nil, err
	}
	s.f, s.held = f, true
	return s, nil
}

// bound is a Store's view of one set of handles for the length of one call:
// a call that starts on a file keeps using it, even if the Store moves to
// another file meanwhile.
type bound struct {
	*Store
	*dbfile
}

// bind returns the handles of the file the Store has open. A Store whose
// file was replaced or deleted stays on it until something tells the user:
// a write refused for that reason (run), or a Watcher's wake-up (Wait).
// Only then does it move to the file now at the path (reopen), so that no
// decision silently lands in a file other than the one the user was shown.
func (s *Store) bind() bound {
	s.mu.Lock()
	f := s.f
	s.mu.Unlock()
	return bound{Store: s, dbfile: f}
}

// reopen moves the Store to the file now at its path, when the file it has
// is no longer there. It lets go of the old file's handles first: the last
// connection to close checkpoints the old WAL into the old file (moved away,
// or deleted) and removes it, and only then may the file now at the path be
// opened. A WAL left beside a different database file would be read as that
// file's: its pages would overwrite the new file's; and two sets of handles
// in one process on one -shm file would drop each other's locks on it. So
// while another Store of this process still holds the old handles, or
// another program keeps the old file's
// WAL at the path with pages in it, reopen refuses and says so; a later
// call tries again. Calls in flight on the old handles fail with a store error.
func (s *Store) reopen(ctx context.Context) (*dbfile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.f, errors.New("store closed")
	}
	if s.f.goneReason() == "" {
		return s.f, nil
	}
	if s.held {
		// This view's waiters go on beating, on the file it reads next.
		s.moving = append(s.moving, s.f.beats.take(s)...)
		// SQLite does not checkpoint a moved file when it closes it, and
		// leaves its WAL at the path, where the next file there would
		// read it: move the WAL's pages into the old file now, and empty it.
		s.f.drainWAL(ctx)
		s.held = false
		release(s.f)
	}
	if err := s.f.released(); err != nil {
		return s.f, err
	}
	if err := s.f.oldWALReleased(); err != nil {
		return s.f, err
	}
	o := s.opt
	o.Create = false
	nf, err := acquire(ctx, s.path, o)
	if err != nil {
		return s.f, err
	}
	s.f, s.held = nf, true
	nf.beats.add(nf, s.moving)
	s.moving = nil
	return nf, nil
}

// roReason is why nothing may be written through this view of this file ("" when it can).
func (b bound) roReason() string {
	if b.viewRO != "" {
		return b.viewRO
	}
	return b.fileRO
}

// Path is the absolute path of the database file, or the URL of a
// PostgreSQL database with its password left out.
func (s *Store) Path() string { return s.path }

// DSN is what opens this database again: the file's path, or the
// PostgreSQL URL as given, password included. Never show it; Path is for
// showing.
func (s *Store) DSN() string { return s.dsn }

// Backend is "sqlite" or "postgres".
func (s *Store) Backend() string { return s.bind().eng.kind() }

// CreatedTable reports whether opening made the gateway_approvals table
// (a new file or database, or one that had none).
func (s *Store) CreatedTable() bool { return s.bind().made.Load() }

// JournalMode is the file's journal mode as SQLite reports it.
func (s *Store) JournalMode() string { return s.bind().journal }

// ReadOnlyReason says why the store cannot be written, or "" when it can.
func (s *Store) ReadOnlyReason() string { return s.bind().roReason() }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// Close releases this Store's hold on the file's handles; the last Store of
// a file closes them.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if !s.held {
		return nil
	}
	s.held = false
	return release(s.f)
}

// inWriteTx runs fn inside BEGIN IMMEDIATE ... COMMIT on the writer
// connection, holding the writer mutex. fn's error rolls back.
func (s bound) inWriteTx(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	if r := s.roReason(); r != "" {
		return &ReadOnlyError{Reason: r}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.inWriteTxLocked(ctx, op, fn)
}

// inWriteTxLocked is inWriteTx for a caller that holds the writer mutex.
// Right before COMMIT it checks that the file it writes is still the file at
// the path (and its WAL still the WAL beside it): a commit into a replaced or
// deleted file would be reported as done and then lost.
func (s bound) inWriteTxLocked(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	return s.txLocked(ctx, op, s.opt, fn)
}

// txLocked is inWriteTxLocked with the lock timeout and synchronous mode of opt.
func (s bound) txLocked(ctx context.Context, op string, opt Options, fn func(ctx context.Context) error) error {
	if r := s.goneReason(); r != "" {
		return movedError(op, r)
	}
	for attempt := 1; ; attempt++ {
		err := s.txOnce(ctx, op, opt, fn)
		if err == nil || attempt >= maxTxAttempts || !s.eng.retryable(err) {
			return s.txFailed(op, err)
		}
	}
}

// testHookBeforeCommit, when set (by tests only), runs after a transaction's
// statements and before its COMMIT.
var testHookBeforeCommit func(op string)

// maxTxAttempts bounds the re-runs of a transaction that the engine rolled
// back to break a deadlock between concurrent writers (PostgreSQL).
const maxTxAttempts = 5

// txOnce is one attempt of txLocked; its error is the engine's own.
func (s bound) txOnce(ctx context.Context, op string, opt Options, fn func(ctx context.Context) error) error {
	if err := s.useSettings(ctx, opt); err != nil {
		return err
	}
	if err := s.txEnd(ctx, func(ws *writerStmts) *wstmt { return ws.begin }, s.eng.beginWrite()); err != nil {
		return err
	}
	if err := fn(ctx); err != nil {
		s.rollback()
		return err
	}
	if r := s.checkMoved(); r != "" {
		s.rollback()
		return movedError(op, r)
	}
	if testHookBeforeCommit != nil {
		testHookBeforeCommit(op)
	}
	if err := s.txEnd(ctx, func(ws *writerStmts) *wstmt { return ws.commit }, `COMMIT`); err != nil {
		s.rollback()
		return s.commitFailed(op, err)
	}
	s.eng.committed(s.dbfile)
	return nil
}

// txEnd runs q, a write transaction's BEGIN or COMMIT, as the writer's
// prepared statement (of ws) once the writer has its statements: run as
// text, it would be prepared and finalized again at every transaction.
// Before (the schema's own transactions), it runs as text.
func (s bound) txEnd(ctx context.Context, of func(*writerStmts) *wstmt, q string) error {
	var err error
	if s.ws != nil {
		_, err = of(s.ws).ExecContext(ctx)
	} else {
		_, err = s.w.ExecContext(ctx, q)
	}
	return err
}

// txFailed classifies a transaction's error, noting a lost connection.
func (s bound) txFailed(op string, err error) error {
	if err == nil {
		return nil
	}
	s.eng.writerFailed(s.dbfile, err)
	return s.classify(op, err)
}

// commitFailed is a failed COMMIT's error: on PostgreSQL a lost connection
// leaves its outcome unknown, and says so.
func (s bound) commitFailed(op string, err error) error {
	return s.eng.commitFailed(s.dbfile, op, err)
}

// rollback ends a failed transaction. It must not use the caller's context:
// a cancelled context must still release the write lock.
func (s bound) rollback() {
	_, _ = s.w.ExecContext(context.Background(), `ROLLBACK`)
}
