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
	"syscall"
)

// A SQLite database file's handles (dbfile): opening the file at a path
// once per process, the identity every commit checks it still has
// (checkMoved), and letting go of a file that was replaced.

// idOf is the identity of the file fi describes.
func idOf(fi os.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}

// statID is the identity of the file at path, as os.Stat and idOf would
// say it (errors too), without the FileInfo: checkMoved runs it at every
// commit.
func statID(path string) (fileID, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Stat(path, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fileID{}, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
	}
}

// companion is a WAL or shared-memory file beside the database, with the
// identity it had when the database was opened.
type companion struct {
	path string
	id   fileID
}

// acquire returns the handles of the file at path, opening them if this
// process has none yet, and brings the schema up to date where opt allows.
func acquire(ctx context.Context, path string, opt Options) (*dbfile, error) {
	registry.mu.Lock()
	defer registry.mu.Unlock()

	fi, statErr := os.Stat(path)
	isNew := false
	switch {
	case statErr == nil && fi.IsDir():
		return nil, fmt.Errorf("database path %s is a directory, not a file", path)
	case statErr == nil && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("database path %s is not a regular file (%s): a SQLite database is a plain file", path, fi.Mode().Type())
	case errors.Is(statErr, fs.ErrNotExist):
		if !opt.Create || opt.ReadOnly {
			return nil, fmt.Errorf("%w: %s (create it with `approve-tui init`, or pass --db)", ErrMissing, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create directory for %s: %w", path, err)
		}
		isNew = true
	case statErr != nil:
		return nil, fmt.Errorf("database %s: %w", path, statErr)
	}

	// Handles this process still holds on a file that was at this path
	// (replaced or deleted since): a second set beside them would share the
	// -wal and -shm files at the path, and with them SQLite's locks.
	for _, o := range registry.files {
		if o.file == path && (isNew || o.id != idOf(fi) || o.checkMoved() != "") {
			return nil, o.stillHeld()
		}
	}
	if !isNew {
		if f := registry.files[idOf(fi)]; f != nil {
			if err := f.ensureSchema(ctx, opt); err != nil {
				return nil, err
			}
			f.refs++
			return f, nil
		}
	}
	f := &dbfile{file: path, eng: sqliteDialect}
	if !isNew {
		f.fileRO = writeProblem(path)
	}
	if err := f.open(ctx, opt, isNew); err != nil {
		f.close()
		if isNew {
			// Leave no half-made file behind. Nothing else has it open:
			// it did not exist a moment ago.
			for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
				os.Remove(p)
			}
		}
		return nil, err
	}
	if old := registry.files[f.id]; old != nil {
		// Another path (a link) led to a file this process already has.
		f.close()
		if err := old.ensureSchema(ctx, opt); err != nil {
			return nil, err
		}
		old.refs++
		return old, nil
	}
	f.recordCompanions()
	f.refs = 1
	registry.files[f.id] = f
	return f, nil
}

// writeProblem says why an existing file cannot be written ("" if it can).
// It asks the kernel (access(2)) rather than opening the file: opening and
// closing a descriptor of the database would drop SQLite's locks on it.
func writeProblem(path string) string {
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return "the database file is not writable by this user (" + (&fs.PathError{Op: "access", Path: path, Err: err}).Error() + ")"
	}
	if err := syscall.Access(filepath.Dir(path), 2|1 /* W_OK|X_OK */); err != nil {
		return "the directory " + filepath.Dir(path) + " is not writable (SQLite needs it for its journal)"
	}
	return ""
}

// readerCache keeps each reader connection's page cache small: 256 pages
// (1 MiB; SQLite's default is 2 MiB). In WAL mode SQLite empties a
// connection's whole page cache at its first read after any other
// connection's commit, so a cache never outlives the next commit, and
// emptying a big one is what costs: with 16 MiB of pages cached (a console
// after reading its 5,000 most urgent rows), the first read after another
// process's commit took 3-5 ms freeing them (modernc's allocator hands
// memory beyond a few MiB back to the kernel, and reading again faults it
// back in), against 0.2 ms with 256 pages. Reads within one snapshot that
// touch more pages than that read them again from the kernel's cache.
const readerCache = "&_pragma=cache_size(256)"

func (f *dbfile) dsn(mode string, busy int64) string {
	u := url.URL{Path: f.file}
	return "file:" + u.EscapedPath() + fmt.Sprintf("?_busy_timeout=%d&mode=%s", busy, mode)
}

func (f *dbfile) open(ctx context.Context, opt Options, isNew bool) error {
	mode := "rwc"
	if f.fileRO != "" {
		mode = "ro"
	}
	busy := opt.BusyTimeout.Milliseconds()
	var err error
	if f.wdb, err = sql.Open("sqlite", f.dsn(mode, busy)); err != nil {
		return err
	}
	if err := f.openWriter(ctx); err != nil {
		return f.explainOpen(err)
	}
	f.busyMS = busy
	// Readers never write; mode=ro makes the driver refuse if one tried.
	rdb, err := sql.Open("sqlite", f.dsn("ro", busy)+readerCache)
	if err != nil {
		return err
	}
	f.rdb = &pool{DB: rdb, e: f.eng, stmts: &stmtCache{}}
	f.rdb.SetMaxOpenConns(4)
	f.rdb.SetMaxIdleConns(4)
	f.rdb.SetConnMaxLifetime(0)
	f.rdb.SetConnMaxIdleTime(0)

	// Fail early, and clearly, on a file that is not SQLite.
	var n int
	if err := f.w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		return f.explainOpen(err)
	}
	// SQLite has the file open now (and made it, if it was new): this is
	// the identity every later write checks against.
	fi, err := os.Stat(f.file)
	if err != nil {
		return fmt.Errorf("database %s: %w", f.file, err)
	}
	f.id = idOf(fi)
	if isNew {
		f.journal = f.setNewJournalMode(ctx)
	} else if err := f.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&f.journal); err != nil {
		return classifyOn(sqliteDialect, "open", err)
	}
	f.journal = strings.ToLower(f.journal)
	return f.ensureSchemaLocked(ctx, opt)
}

// explainOpen says why SQLite could not open or read the file, in words an
// operator can act on.
func (f *dbfile) explainOpen(err error) error {
	dir := filepath.Dir(f.file)
	code := errCode(err)
	raw := err
	err = classifyOn(sqliteDialect, "open", err)
	if code == codeCantOpen || code == codeReadOnly {
		if syscall.Access(dir, 2|1) != nil {
			// One class of error: the driver's error underneath, not the
			// read-only one classify made of it, which would say another
			// thing about the same failure.
			return &UnavailableError{Op: "open", Err: raw, Reason: fmt.Sprintf(
				"cannot open %s: its directory %s is not writable, and SQLite must create %s-shm (and %s-wal) beside a database in WAL mode even to read it; make the directory writable, or copy the file with its -wal to a writable directory",
				f.file, dir, filepath.Base(f.file), filepath.Base(f.file))}
		}
	}
	return err
}

// refitAuditLocked rebuilds an audit log made with AUTOINCREMENT without it
// (migrations/sqlite/0001.sql says why), in one transaction, rows, hashes and chain
// unchanged. It waits only briefly for the write lock, and a file it could
// not refit now (busy, full disk) works as it is: the next writable open
// tries again. Older approve-tui builds read and append to the refitted
// table as before (they name every seq too).
func (f *dbfile) refitAuditLocked(ctx context.Context, opt Options) error {
	var n int
	if err := f.w.QueryRowContext(ctx, auditAutoincrement).Scan(&n); err != nil || n == 0 {
		return err
	}
	brief := forUpkeep(opt)
	b := bound{Store: &Store{opt: brief, now: opt.Now}, dbfile: f}
	return b.txLocked(ctx, "refit", brief, func(ctx context.Context) error {
		if err := f.w.QueryRowContext(ctx, auditAutoincrement).Scan(&n); err != nil || n == 0 {
			return err // refitted meanwhile by another process
		}
		for _, q := range auditRefit {
			if _, err := f.w.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// setNewJournalMode puts a new file in WAL, falling back to DELETE where the
// filesystem cannot host WAL (network and some container filesystems answer
// "locking protocol", "not authorized" or "disk I/O error").
func (f *dbfile) setNewJournalMode(ctx context.Context) string {
	var mode string
	err := f.w.QueryRowContext(ctx, `PRAGMA journal_mode=WAL`).Scan(&mode)
	if err == nil && strings.EqualFold(mode, "wal") {
		return "wal"
	}
	_ = f.w.QueryRowContext(ctx, `PRAGMA journal_mode=DELETE`).Scan(&mode)
	if mode == "" {
		mode = "delete"
	}
	return mode
}

// recordCompanions notes the identities of the WAL and shared-memory files
// that SQLite has open now.
func (f *dbfile) recordCompanions() {
	if f.journal != "wal" {
		return
	}
	for _, p := range []string{f.file + "-wal", f.file + "-shm"} {
		if fi, err := os.Stat(p); err == nil {
			f.companions = append(f.companions, companion{path: p, id: idOf(fi)})
		}
	}
}

// checkMoved says why the open file is no longer the file at its path ("" if
// it still is): the database was deleted or replaced, or its WAL or
// shared-memory file was. A few stat calls; no file is opened. Once moved,
// the file stays moved.
func (f *dbfile) checkMoved() string {
	if !f.eng.onDisk() {
		return "" // a database on a server has no file here to move
	}
	if r := f.goneReason(); r != "" {
		return r
	}
	r := ""
	id, err := statID(f.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r = "the database file " + f.file + " was deleted after it was opened"
	case err != nil:
		r = "the database file " + f.file + " cannot be checked: " + err.Error()
	case id != f.id:
		r = "the database file " + f.file + " was replaced after it was opened (moved away, or another file put in its place)"
	}
	for _, c := range f.companions {
		if r != "" {
			break
		}
		id, err := statID(c.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r = "the database's " + filepath.Base(c.path) + " file was deleted while the database was open (commits in it would be invisible to every other process)"
		case err != nil:
			r = "the database's " + filepath.Base(c.path) + " file cannot be checked: " + err.Error()
		case id != c.id:
			r = "the database's " + filepath.Base(c.path) + " file was replaced while the database was open"
		}
	}
	if r != "" {
		f.gone.CompareAndSwap(nil, &r)
		f.hub.notify()
	}
	return f.goneReason()
}

// released reports an error while another Store of this process still
// holds these (gone) handles.
func (f *dbfile) released() error {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if f.refs > 0 {
		return f.stillHeld()
	}
	return nil
}

// stillHeld is the error for a file at the path that cannot be opened while
// these (gone) handles are open.
func (f *dbfile) stillHeld() error {
	return &UnavailableError{Op: "open", Err: ErrMoved, Reason: fmt.Sprintf(
		"another session of this process still has the database file that was at %s open; the file now at the path is opened once every session has let go of it",
		f.file)}
}

// oldWALReleased reports an error while the WAL these (gone) handles had
// open is still at its path with pages in it: a file opened at the path now
// would read them as its own. (An emptied WAL is harmless.)
func (f *dbfile) oldWALReleased() error {
	for _, c := range f.companions {
		if !strings.HasSuffix(c.path, "-wal") {
			continue
		}
		if fi, err := os.Stat(c.path); err == nil && idOf(fi) == c.id && fi.Size() > 0 {
			return &UnavailableError{Op: "open", Err: ErrMoved, Reason: fmt.Sprintf(
				"%s still belongs to the database file that was at %s (another program, or another session, still has it open); the file now at the path is opened once it is released",
				filepath.Base(c.path), f.file)}
		}
	}
	return nil
}

// drainWAL checkpoints the (gone) file's WAL into the file it belongs to and
// truncates it, best effort: it fails while another connection reads an
// older snapshot.
func (f *dbfile) drainWAL(ctx context.Context) {
	if f.journal != "wal" || f.fileRO != "" {
		return
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, _ = f.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
}
