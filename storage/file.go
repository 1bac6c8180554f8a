package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/approve-tui/approve-tui/model"
)

// fileID is a file's identity: its device and inode. While SQLite holds the
// file open, no other file can have the same identity.
type fileID struct{ dev, ino uint64 }

// dbfile is the one set of handles a process has on one database (a
// SQLite file: sqlite_file.go; a PostgreSQL database: postgres_conn.go),
// shared by every Store on it and reference-counted by the registry.
type dbfile struct {
	id   fileID
	file string // the path it was opened at
	refs int    // guarded by registry.mu

	// Set while opening (under registry.mu) and read-only afterwards,
	// except that a later writable Open may bring the schema up to date.
	fileRO  string // why the file cannot be written ("" when it can)
	journal string
	legacy  atomic.Bool // the table lacks the execution_* columns (old file viewed without migrating)
	tier2   atomic.Bool // the table has Hermes' tier-2 columns (terminal_reason, approval_event_*, invalid_attempts)
	votes   atomic.Bool // approve-tui's policy and votes tables exist (schema 4 and later)
	made    atomic.Bool // opening created the gateway_approvals table

	eng engine   // the backend: SQLite here, or PostgreSQL (postgres.go)
	pg  *pgState // PostgreSQL only

	wdb *sql.DB    // the writer's pool, one connection
	wmu sync.Mutex // serialises use of w and the settings below
	w   *conn      // the one dedicated writer connection
	ws  *writerStmts
	// busyMS and sync are what is set on w now (under wmu).
	busyMS int64
	sync   string
	// schemaSeen: SQLite's schema_version when noticeTier2Locked last read
	// the table's columns (under wmu).
	schemaSeen int64

	rdb *pool // readers

	// companions are the WAL and shared-memory files as they were when
	// opened: if either is deleted or replaced, commits would go where no
	// other process reads them.
	companions []companion
	gone       atomic.Pointer[string]

	rank    rankState
	fill    rankFill
	decoded decodeCache
	submits submitCache // tamper.go
	hub     hub
	health  health
	beats   beater
}

// registry maps file identities to their handles.
var registry = struct {
	mu    sync.Mutex
	files map[fileID]*dbfile
}{files: map[fileID]*dbfile{}}

// release drops one reference; the last one closes the handles.
func release(f *dbfile) error {
	registry.mu.Lock()
	f.refs--
	last := f.refs <= 0
	if last {
		f.eng.unregister(f)
	}
	registry.mu.Unlock()
	if !last {
		return nil
	}
	return f.close()
}

// ensureSchema brings the schema up to date for a Store opened with opt
// on handles that exist already.
func (f *dbfile) ensureSchema(ctx context.Context, opt Options) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	return f.ensureSchemaLocked(ctx, opt)
}

// ensureSchemaLocked: the writer mutex (or exclusive use while opening) is held.
func (f *dbfile) ensureSchemaLocked(ctx context.Context, opt Options) error {
	if f.ws != nil {
		return nil // current, and the writer's statements are ready
	}
	st, err := readSchema(ctx, f.eng, f.w)
	if err != nil {
		return f.classify("open", err)
	}
	f.tier2.Store(st.tier2)
	f.votes.Store(st.ownVersion >= votesSchema)
	if st.ownVersion > SchemaVersion {
		// Never write to a file whose approve-tui tables we do not understand.
		if f.fileRO == "" {
			f.fileRO = errSchemaTooNew(st.ownVersion).Error()
		}
		return nil
	}
	if !st.hasHermes && !opt.Create {
		return &UnavailableError{Op: "open", Reason: fmt.Sprintf(
			"%s has no gateway_approvals table: it is not an approval store (nothing was written to it; `approve-tui init --db %s` makes it one)",
			f.file, f.file)}
	}
	writable := f.fileRO == "" && !opt.ReadOnly
	if st.needsMigration() {
		if !writable {
			if !st.hasHermes {
				return &UnavailableError{Op: "open", Reason: "the file has no gateway_approvals table and cannot be written (" + f.fileRO + ")"}
			}
			if err := f.eng.unmigratedView(f, st); err != nil {
				return err
			}
			// Viewing an unmigrated file works: readers cope with missing
			// execution_* columns and approve-tui tables. A later writable
			// Open migrates it.
			f.legacy.Store(len(st.missingExec) > 0)
			return nil
		}
		b := bound{Store: &Store{opt: opt, now: opt.Now}, dbfile: f}
		if err := b.inWriteTxLocked(ctx, "migrate", func(ctx context.Context) error {
			return migrate(ctx, f.eng, f.w, model.Epoch(opt.Now()))
		}); err != nil {
			return err
		}
		f.made.Store(!st.hasHermes)
		f.legacy.Store(false)
		f.votes.Store(true)
	}
	if writable {
		f.eng.refit(ctx, f, opt)
	}
	if f.fileRO == "" {
		ws, err := prepareWriter(ctx, f.eng, f.w, selectColumns(false, st.tier2), st.tier2)
		if err != nil {
			return f.classify("open", err)
		}
		f.ws = ws
	}
	return nil
}

// useSettings puts the view's settings on the writer connection (the
// writer mutex is held).
func (f *dbfile) useSettings(ctx context.Context, opt Options) error {
	return f.eng.useSettings(ctx, f, opt)
}

// goneReason is why these handles no longer belong to the file at the path.
func (f *dbfile) goneReason() string {
	if r := f.gone.Load(); r != nil {
		return *r
	}
	return ""
}

// ErrMoved is wrapped by the UnavailableError of a write refused because the
// file was replaced or deleted under the store.
var ErrMoved = errors.New("database file moved")

func movedError(op, reason string) error {
	return &UnavailableError{Op: op, Err: ErrMoved, Reason: reason + "; nothing was written"}
}

func (f *dbfile) close() error {
	f.stopRankFill()
	f.beats.stop()
	f.hub.stop()
	// Readers first: the last connection to close checkpoints the WAL and
	// deletes it, which only the read-write writer connection can do.
	var errs []error
	if f.rdb != nil {
		f.rdb.stmts.close()
		errs = append(errs, f.rdb.Close())
	}
	if f.ws != nil {
		f.ws.close()
	}
	if f.w != nil {
		f.w.stmts.close()
		errs = append(errs, f.w.Close())
	}
	if f.wdb != nil {
		errs = append(errs, f.wdb.Close())
	}
	return errors.Join(errs...)
}

// openWriter pins the one writer connection of the writer's pool (wdb),
// which never holds more than that one, never closed for age or idleness.
func (f *dbfile) openWriter(ctx context.Context) error {
	f.wdb.SetMaxOpenConns(1)
	f.wdb.SetMaxIdleConns(1)
	f.wdb.SetConnMaxLifetime(0)
	f.wdb.SetConnMaxIdleTime(0)
	w, err := f.wdb.Conn(ctx)
	if err != nil {
		return err
	}
	f.w = &conn{Conn: w, e: f.eng}
	if f.eng.cachesStatements() {
		f.w.stmts = &stmtCache{} // see stmtCache
	}
	return nil
}
