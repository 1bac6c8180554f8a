package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	sqlite "modernc.org/sqlite"
)

// sqliteEngine is the SQLite backend: one file, one writer at a time
// (BEGIN IMMEDIATE takes the file's write lock, so a transaction's reads and
// its compare-and-set see one state), commits noticed with PRAGMA
// data_version and file notification (sqlite_watch.go), moved and replaced files
// noticed by their identity (sqlite_file.go).
type sqliteEngine struct{}

var sqliteDialect engine = sqliteEngine{}

func (sqliteEngine) kind() string                  { return "sqlite" }
func (sqliteEngine) rebind(q string) string        { return q }
func (sqliteEngine) beginWrite() string            { return `BEGIN IMMEDIATE` }
func (sqliteEngine) beginSnapshot() string         { return `BEGIN` }
func (sqliteEngine) lockRow() string               { return "" }
func (sqliteEngine) lockHead() string              { return "" }
func (sqliteEngine) indexedBy(index string) string { return ` INDEXED BY ` + index }
func (sqliteEngine) byRowid() string               { return ` NOT INDEXED` }
func (sqliteEngine) schema() *schemaDDL            { return &sqliteSchema }
func (sqliteEngine) greatest(a, b string) string   { return "MAX(" + a + ", " + b + ")" }

func (sqliteEngine) tableColumns(ctx context.Context, q querier, table string) (map[string]bool, error) {
	return scanNames(q.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table))
}

func (sqliteEngine) noTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table")
}

func (sqliteEngine) noColumn(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such column")
}

func (sqliteEngine) lockTimeout(err error) bool {
	return errCode(err) == codeBusy || errCode(err) == codeLocked
}

func (sqliteEngine) retryable(error) bool { return false }

func (sqliteEngine) classify(op string, err error) error {
	if c := sqliteTyped(op, err); c != nil {
		return c
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &UnavailableError{Op: op, Err: err, Reason: "the SQLite database did not answer before the deadline (" + err.Error() + ")"}
	case errors.Is(err, sql.ErrConnDone), errors.Is(err, driver.ErrBadConn), strings.Contains(err.Error(), "database is closed"):
		return &UnavailableError{Op: op, Err: err, Reason: "the connection to the SQLite database was closed (" + err.Error() + ")"}
	}
	return nil
}

// sqliteTyped explains the errors only SQLite gives: its result codes (nil
// for anything else).
func sqliteTyped(op string, err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code() & 0xff {
	case codeBusy, codeLocked:
		return &UnavailableError{Op: op, Reason: "database is locked by another process past the timeout; try again, or find the process holding it", Err: err}
	case codeReadOnly:
		return &ReadOnlyError{Reason: "the database file cannot be written (" + strings.TrimSpace(se.Error()) + ")"}
	case codeFull:
		return &UnavailableError{Op: op, Reason: "disk full: free space, then retry", Err: err}
	case codeIOErr:
		return &UnavailableError{Op: op, Reason: "disk I/O error: " + se.Error(), Err: err}
	case codeCorrupt, codeNotADB:
		return &UnavailableError{Op: op, Reason: "the file is not a usable SQLite database: " + se.Error(), Err: err}
	case codeCantOpen:
		return &UnavailableError{Op: op, Reason: "cannot open the database file: " + se.Error(), Err: err}
	case codeNoMem:
		return &UnavailableError{Op: op, Reason: "out of memory", Err: err}
	}
	return nil
}

// errCode is the primary SQLite result code in err (0 if none).
func errCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// sqlite result codes used to classify driver errors.
const (
	codeBusy     = 5
	codeLocked   = 6
	codeNoMem    = 7
	codeReadOnly = 8
	codeIOErr    = 10
	codeCorrupt  = 11
	codeFull     = 13
	codeCantOpen = 14
	codeNotADB   = 26
)

// auditAutoincrement counts audit tables made with AUTOINCREMENT (0 or 1).
const auditAutoincrement = `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'approve_tui_audit'
	AND sql LIKE '%AUTOINCREMENT%'`

func (sqliteEngine) unregister(f *dbfile) {
	if registry.files[f.id] == f {
		delete(registry.files, f.id)
	}
}

func (sqliteEngine) cachesStatements() bool { return true }
func (sqliteEngine) onDisk() bool           { return true }

// readsOnIdleWriter: a second connection would open the file and parse its
// schema again (readPolicyOnce).
func (sqliteEngine) readsOnIdleWriter() bool { return true }

// urgentInOneQuery: SQLite reads the most urgent page rank by rank
// (listPendingIndexed says why).
func (sqliteEngine) urgentInOneQuery() bool { return false }

// decidingReadTogether: a statement that fails to prepare leaves SQLite's
// transaction as it was, so openRow may read apart after it.
func (sqliteEngine) decidingReadTogether() bool { return true }

func (sqliteEngine) textIsStrict() bool { return false }

// unmigratedView: readers cope with missing execution_* columns and
// approve-tui tables.
func (sqliteEngine) unmigratedView(*dbfile, schemaState) error { return nil }

// refit rebuilds an audit log made with AUTOINCREMENT (refitAuditLocked).
func (sqliteEngine) refit(ctx context.Context, f *dbfile, opt Options) {
	_ = f.refitAuditLocked(ctx, opt) // a file not refitted now works as it is
}

// commitMark is the writer's PRAGMA data_version.
func (sqliteEngine) commitMark(ctx context.Context, w *conn) (int64, error) {
	var v int64
	err := w.QueryRowPrepared(ctx, `PRAGMA data_version`).Scan(&v)
	return v, err
}

// schemaMark is the file's schema_version (a read of its header).
func (sqliteEngine) schemaMark(ctx context.Context, w *conn) (int64, bool) {
	var v int64
	return v, w.QueryRowPrepared(ctx, `PRAGMA schema_version`).Scan(&v) == nil
}

// committed: other watchers of the file notice the commit by its
// data_version, this process's as well (sqlite_watch.go).
func (sqliteEngine) committed(*dbfile) {}

func (sqliteEngine) writerFailed(*dbfile, error) {}

func (sqliteEngine) commitFailed(_ *dbfile, _ string, err error) error { return err }

// listen: the hub's own loop polls data_version and watches the file.
func (sqliteEngine) listen(*dbfile, *hub) bool { return false }

func (sqliteEngine) counterQuery(c writerCounter) string {
	switch c {
	case counterCommits:
		return `PRAGMA data_version`
	case counterRowsWritten:
		return `SELECT total_changes()`
	}
	return ""
}

// useSettings puts the view's lock timeout and synchronous mode on the
// writer connection (the writer mutex is held).
func (sqliteEngine) useSettings(ctx context.Context, f *dbfile, opt Options) error {
	if ms := opt.BusyTimeout.Milliseconds(); ms != f.busyMS {
		if _, err := f.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout=%d`, ms)); err != nil {
			return err
		}
		f.busyMS = ms
	}
	want := opt.Synchronous
	if want == "" && f.sync != "" {
		// SQLite's default, FULL, after a view (or the rank fill) that
		// set another on this shared connection.
		want = "FULL"
	}
	if want != "" && want != f.sync {
		if _, err := f.w.ExecContext(ctx, `PRAGMA synchronous=`+want); err != nil {
			return err
		}
		f.sync = want
	}
	return nil
}

// quickCheck runs PRAGMA quick_check(table) for each checked table in one
// read transaction, and returns the problems found (nil: intact).
func (sqliteEngine) quickCheck(ctx context.Context, s bound) ([]string, error) {
	conn, err := s.rdb.Conn(ctx)
	if err != nil {
		return nil, s.classify("check", err)
	}
	defer conn.Close()
	var problems []string
	for _, t := range checkedTables {
		rows, err := conn.QueryContext(ctx, `SELECT * FROM pragma_quick_check(?)`, t)
		if err != nil {
			if strings.Contains(err.Error(), "no such table") {
				continue
			}
			if isDamage(err) {
				problems = append(problems, t+": "+err.Error())
				continue
			}
			return nil, s.classify("check", err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				return nil, s.classify("check", err)
			}
			if line != "ok" && len(problems) < maxReportedProblems {
				problems = append(problems, t+": "+line)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			if isDamage(err) {
				problems = append(problems, t+": "+err.Error())
				continue
			}
			return nil, s.classify("check", err)
		}
	}
	return problems, nil
}
