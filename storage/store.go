// Package storage is approve-tui's durable approval store: the Hermes
// gateway_approvals table in a real SQLite file, plus approve-tui's own
// tables (hash-chained audit log, waiter heartbeats, pending-rank index).
//
// Every transition — submit, approve, deny, expire, execution outcome — runs
// through one code path (transition): BEGIN IMMEDIATE on the one dedicated
// writer connection, a compare-and-set UPDATE ... WHERE status='pending' AND
// not expired ... RETURNING, and the audit insert, in one transaction.
// Refused attempts are audited through the same path.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/model"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// DefaultBusyTimeout is how long a write waits for another process's lock
// before the store reports itself unavailable.
const DefaultBusyTimeout = 10 * time.Second

// Options configure Open.
type Options struct {
	// Create makes a new file (and its directory) when the path is missing.
	// Without it a missing file is an error.
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
}

// Store is an open approval database.
type Store struct {
	path    string
	opt     Options
	now     func() time.Time
	journal string

	// readOnly is why nothing may be written ("" when the store is writable).
	readOnly string
	// legacy: the table lacks the execution_* columns (an old file opened
	// read-only, which cannot be migrated).
	legacy bool

	wdb *sql.DB    // the writer's pool, one connection
	wmu sync.Mutex // serialises use of w
	w   *sql.Conn  // the one dedicated writer connection
	ws  *writerStmts

	rdb *sql.DB // readers

	rank    rankState
	decoded decodeCache
}

// ErrMissing is returned by Open for a path that does not exist when
// Options.Create is false.
var ErrMissing = errors.New("database file not found")

// Open opens (or, with Create, creates) the approval database at path. An
// existing file keeps its journal mode; a new file gets WAL, or DELETE where
// the filesystem cannot host WAL. Missing Hermes columns and approve-tui's
// own tables are added. A file that cannot be written opens read-only and
// says why in ReadOnlyReason.
func Open(ctx context.Context, path string, opt Options) (*Store, error) {
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = DefaultBusyTimeout
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	switch strings.ToUpper(opt.Synchronous) {
	case "", "NORMAL", "FULL", "EXTRA", "OFF":
	default:
		return nil, fmt.Errorf("unknown synchronous mode %q (want NORMAL or FULL)", opt.Synchronous)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("database path %q: %w", path, err)
	}
	s := &Store{path: abs, opt: opt, now: opt.Now}

	fi, statErr := os.Stat(abs)
	isNew := false
	switch {
	case statErr == nil && fi.IsDir():
		return nil, fmt.Errorf("database path %s is a directory, not a file", abs)
	case errors.Is(statErr, fs.ErrNotExist):
		if !opt.Create || opt.ReadOnly {
			return nil, fmt.Errorf("%w: %s (create it with `approve-tui init`, or pass --db)", ErrMissing, abs)
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, fmt.Errorf("create directory for %s: %w", abs, err)
		}
		isNew = true
	case statErr != nil:
		return nil, fmt.Errorf("database %s: %w", abs, statErr)
	}

	if opt.ReadOnly {
		s.readOnly = "opened read-only"
	} else if !isNew {
		s.readOnly = writeProblem(abs)
	}

	if err := s.openConns(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.prepare(ctx, isNew); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// writeProblem says why an existing file cannot be written ("" if it can).
func writeProblem(path string) string {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		f.Close()
		if dirErr := syscall.Access(filepath.Dir(path), 2 /* W_OK */); dirErr != nil {
			return "the directory " + filepath.Dir(path) + " is not writable (SQLite needs it for its journal)"
		}
		return ""
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return "the database file is not writable by this user (" + err.Error() + ")"
	}
	return ""
}

func (s *Store) dsn(mode string) string {
	u := url.URL{Path: s.path}
	q := fmt.Sprintf("?mode=%s&_busy_timeout=%d", mode, s.opt.BusyTimeout.Milliseconds())
	return "file:" + u.EscapedPath() + q
}

func (s *Store) openConns(ctx context.Context) error {
	mode := "rwc"
	if s.readOnly != "" {
		mode = "ro"
	}
	var err error
	s.wdb, err = sql.Open("sqlite", s.dsn(mode))
	if err != nil {
		return err
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	s.w, err = s.wdb.Conn(ctx)
	if err != nil {
		return classify("open", err)
	}
	// Readers never write; mode=ro makes the driver refuse if one tried.
	rmode := "ro"
	s.rdb, err = sql.Open("sqlite", s.dsn(rmode))
	if err != nil {
		return err
	}
	s.rdb.SetMaxOpenConns(4)
	s.rdb.SetMaxIdleConns(4)
	return nil
}

// prepare sets the journal mode of a new file, migrates the schema and
// prepares the writer's statements.
func (s *Store) prepare(ctx context.Context, isNew bool) error {
	if err := s.checkDatabase(ctx); err != nil {
		return err
	}
	if isNew {
		s.journal = s.setNewJournalMode(ctx)
	} else if err := s.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&s.journal); err != nil {
		return classify("open", err)
	}
	s.journal = strings.ToLower(s.journal)
	if s.opt.Synchronous != "" && s.readOnly == "" {
		if _, err := s.w.ExecContext(ctx, "PRAGMA synchronous="+strings.ToUpper(s.opt.Synchronous)); err != nil {
			return classify("open", err)
		}
	}

	st, err := readSchema(ctx, s.w)
	if err != nil {
		return classify("open", err)
	}
	if st.ownVersion > SchemaVersion {
		// Never write to a file whose approve-tui tables we do not understand.
		if s.readOnly == "" {
			s.readOnly = errSchemaTooNew(st.ownVersion).Error()
		}
		return nil
	}
	if st.needsMigration() {
		if s.readOnly != "" {
			if !st.hasHermes {
				return &UnavailableError{Op: "open", Reason: "the file has no gateway_approvals table and cannot be written (" + s.readOnly + ")"}
			}
			// Viewing an unmigrated file works: readers cope with missing
			// execution_* columns and approve-tui tables.
			s.legacy = len(st.missingExec) > 0
		} else if err := s.inWriteTx(ctx, "migrate", func(ctx context.Context) error {
			return migrate(ctx, s.w, model.Epoch(s.now()))
		}); err != nil {
			return err
		}
	}
	if s.readOnly == "" {
		if s.ws, err = prepareWriter(ctx, s.w); err != nil {
			return classify("open", err)
		}
	}
	return nil
}

// checkDatabase fails early, and clearly, on a file that is not SQLite.
func (s *Store) checkDatabase(ctx context.Context) error {
	var n int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		return classify("open", err)
	}
	return nil
}

// setNewJournalMode puts a new file in WAL, falling back to DELETE where the
// filesystem cannot host WAL (network and some container filesystems answer
// "locking protocol", "not authorized" or "disk I/O error").
func (s *Store) setNewJournalMode(ctx context.Context) string {
	var mode string
	err := s.w.QueryRowContext(ctx, `PRAGMA journal_mode=WAL`).Scan(&mode)
	if err == nil && strings.EqualFold(mode, "wal") {
		return "wal"
	}
	_ = s.w.QueryRowContext(ctx, `PRAGMA journal_mode=DELETE`).Scan(&mode)
	if mode == "" {
		mode = "delete"
	}
	return mode
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// JournalMode is the file's journal mode as SQLite reports it.
func (s *Store) JournalMode() string { return s.journal }

// ReadOnlyReason says why the store cannot be written, or "" when it can.
func (s *Store) ReadOnlyReason() string { return s.readOnly }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// Close releases the connections.
func (s *Store) Close() error {
	var errs []error
	if s.ws != nil {
		s.ws.close()
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	return errors.Join(errs...)
}

// inWriteTx runs fn inside BEGIN IMMEDIATE ... COMMIT on the writer
// connection, holding the writer mutex. fn's error rolls back.
func (s *Store) inWriteTx(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	if s.readOnly != "" {
		return &ReadOnlyError{Reason: s.readOnly}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.inWriteTxLocked(ctx, op, fn)
}

func (s *Store) inWriteTxLocked(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	if _, err := s.w.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return classify(op, err)
	}
	if err := fn(ctx); err != nil {
		s.rollback()
		return classify(op, err)
	}
	if _, err := s.w.ExecContext(ctx, `COMMIT`); err != nil {
		s.rollback()
		return classify(op, err)
	}
	return nil
}

// rollback ends a failed transaction. It must not use the caller's context:
// a cancelled context must still release the write lock.
func (s *Store) rollback() {
	_, _ = s.w.ExecContext(context.Background(), `ROLLBACK`)
}
