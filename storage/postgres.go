package storage

import (
	"context"
	"fmt"
	"time"
)

// The PostgreSQL backend: one database for the agents of many hosts. The
// tables are the SQLite ones, typed for PostgreSQL (REAL times become double
// precision; gateway_approvals gains a rowid identity column, which SQLite
// has built in). What differs:
//
//   - A write transaction is a plain BEGIN (read committed). The row a
//     transition decides on is read FOR UPDATE, and the compare-and-set
//     UPDATE ... WHERE status ... RETURNING re-checks it, so two writers never
//     both take a proposal out of pending. The audit chain's head row
//     (approve_tui_meta 'audit_head', created with the tables) is read FOR
//     UPDATE before each append: appends are serialised on that one row,
//     never on the whole table, and the chain stays linear.
//   - A transaction that loses a deadlock is re-run (maxTxAttempts).
//   - Commits are noticed with LISTEN/NOTIFY: a statement trigger on the
//     approval, waiter, presence and audit tables notifies channel
//     approve_tui with the schema's name. A dropped listening connection is
//     re-made, and a slow poll wakes watchers anyway.
//   - The writer connection is re-made after the server drops it; a
//     transaction in flight is rolled back by the server, so nothing is half
//     written, and a COMMIT whose answer was lost is reported as such.
//
// The parts, one file each: postgres_url.go (which --db values are URLs,
// and how one is shown), postgres_errors.go (what the server's errors mean),
// postgres_conn.go (opening: the URL's settings, the writer connection, the
// reader pool, one set per URL in a process), postgres_searchpath.go (the
// schema the store lives in), postgres_reconnect.go (the writer connection
// re-made after a loss), postgres_listen.go (LISTEN/NOTIFY) and
// migrations/postgres/ (the DDL).

// pgChannel is the channel the tables' trigger notifies.
const pgChannel = "approve_tui"

// PollPostgres is how often watchers are woken without a notification (the
// safety net under LISTEN/NOTIFY), and PollPostgresDown how often while the
// listening connection is being re-made.
const (
	PollPostgres     = 5 * time.Second
	PollPostgresDown = time.Second
)

// DefaultStatementTimeout bounds every statement on PostgreSQL unless the URL
// sets statement_timeout.
const DefaultStatementTimeout = 30 * time.Second

type pgEngine struct{ numbered }

var postgresDialect engine = &pgEngine{}

func (*pgEngine) kind() string                { return "postgres" }
func (*pgEngine) beginWrite() string          { return `BEGIN` }
func (*pgEngine) beginSnapshot() string       { return `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY` }
func (*pgEngine) lockRow() string             { return ` FOR UPDATE` }
func (*pgEngine) lockHead() string            { return ` FOR UPDATE` }
func (*pgEngine) indexedBy(string) string     { return "" }
func (*pgEngine) byRowid() string             { return "" }
func (*pgEngine) schema() *schemaDDL          { return &pgSchema }
func (*pgEngine) greatest(a, b string) string { return "GREATEST(" + a + ", " + b + ")" }

func (*pgEngine) tableColumns(ctx context.Context, q querier, table string) (map[string]bool, error) {
	// pg_attribute, not information_schema (a view that costs milliseconds):
	// the table as the search path finds it.
	return scanNames(q.QueryContext(ctx, `SELECT attname::text FROM pg_attribute
		WHERE attrelid = to_regclass(?) AND attnum > 0 AND NOT attisdropped`, table))
}

func (*pgEngine) cachesStatements() bool  { return false } // see stmtCache
func (*pgEngine) onDisk() bool            { return false }
func (*pgEngine) readsOnIdleWriter() bool { return false }
func (*pgEngine) urgentInOneQuery() bool  { return true }

// decidingReadTogether: PostgreSQL aborts a transaction at its first
// error, so openRow could not read apart after a failed combined read.
func (*pgEngine) decidingReadTogether() bool { return false }

// textIsStrict: PostgreSQL's text holds UTF-8 without NUL bytes only.
func (*pgEngine) textIsStrict() bool { return true }

// unmigratedView: the tables of a server's database are not read before
// they are migrated.
func (*pgEngine) unmigratedView(f *dbfile, st schemaState) error {
	return &UnavailableError{Op: "open", Reason: "the approval tables in schema " + f.pg.schema +
		" are not up to date for this approve-tui (schema " + fmt.Sprint(st.ownVersion) + " of " + fmt.Sprint(SchemaVersion) +
		"), and this session may not write: open it once with write access to migrate them"}
}

// refit: PostgreSQL's tables were never made in an older form.
func (*pgEngine) refit(context.Context, *dbfile, Options) {}

// quickCheck: the server owns its files' integrity (WAL, page checksums
// where enabled); a damaged table surfaces as errors on read.
func (*pgEngine) quickCheck(context.Context, bound) ([]string, error) { return nil, nil }

// commitMark: PostgreSQL has no counter of commits; it is a fingerprint of
// the open rows (their count, and the sum and largest of their rowids),
// which moves when a row enters or leaves the open set, whoever wrote it.
func (*pgEngine) commitMark(ctx context.Context, w *conn) (int64, error) {
	var n, sum, mx int64
	err := w.QueryRowContext(ctx, `SELECT count(*), CAST(coalesce(sum(rowid), 0) AS BIGINT), coalesce(max(rowid), 0)
			FROM gateway_approvals WHERE status IN ('pending', 'pending_confirm')`).Scan(&n, &sum, &mx)
	return n*1_000_003 ^ sum*31 ^ mx<<20, err
}

// schemaMark: none; the columns are read at each look.
func (*pgEngine) schemaMark(context.Context, *conn) (int64, bool) { return 0, false }

// committed: this process's watchers see its own commit now, not when the
// server's notification of it comes back.
func (*pgEngine) committed(f *dbfile) { f.hub.notify() }

// counterQuery: the writer connection has no counters to read.
func (*pgEngine) counterQuery(writerCounter) string { return "" }
