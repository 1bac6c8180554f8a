package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"

	sqlite "modernc.org/sqlite"
)

// sqliteEngine is the SQLite backend: one file, one writer at a time
// (BEGIN IMMEDIATE takes the file's write lock, so a transaction's reads and
// its compare-and-set see one state), commits noticed with PRAGMA
// data_version and file notification (watch.go), moved and replaced files
// noticed by their identity (file.go).
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

// The Hermes table, exactly as SPEC §2 gives it. Columns and indexes are
// created with IF NOT EXISTS; the three execution_* columns are added to
// older files before the index that names one of them.
const hermesTable = `CREATE TABLE IF NOT EXISTS gateway_approvals (
    approval_id TEXT PRIMARY KEY, created_at REAL NOT NULL, expires_at REAL,
    status TEXT NOT NULL DEFAULT 'pending', consumed_at REAL, consumed_by TEXT,
    execution_status TEXT NOT NULL DEFAULT 'not_started', execution_reason TEXT,
    execution_recorded_at REAL, payload_json TEXT NOT NULL)`

var hermesIndexes = []string{
	`CREATE INDEX IF NOT EXISTS idx_gateway_approvals_status ON gateway_approvals(status)`,
	`CREATE INDEX IF NOT EXISTS idx_gateway_approvals_pending_expires
    ON gateway_approvals(expires_at) WHERE status = 'pending'`,
	`CREATE INDEX IF NOT EXISTS idx_gateway_approvals_blocked_after_consume
    ON gateway_approvals(execution_status) WHERE execution_status = 'blocked_after_consume'`,
}

var executionColumns = []struct{ name, ddl string }{
	{"execution_status", `ALTER TABLE gateway_approvals ADD COLUMN execution_status TEXT NOT NULL DEFAULT 'not_started'`},
	{"execution_reason", `ALTER TABLE gateway_approvals ADD COLUMN execution_reason TEXT`},
	{"execution_recorded_at", `ALTER TABLE gateway_approvals ADD COLUMN execution_recorded_at REAL`},
}

// approve-tui's own tables carry the approve_tui_ prefix and are versioned by
// approve_tui_migrations, never by Hermes' SCHEMA_VERSION.
//
// Each migration runs once, in order, in the same transaction as the row
// that records it.
var migrations = []string{
	// 1: audit log (append-only, hash-chained), meta (audit head and other
	// keys), waiter heartbeats, and the pending-rank index.
	`CREATE TABLE IF NOT EXISTS approve_tui_audit (` + auditTable + `);
	` + auditByID + `;
	CREATE TABLE IF NOT EXISTS approve_tui_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
	CREATE TABLE IF NOT EXISTS approve_tui_waiters (
		approval_id TEXT NOT NULL,
		host TEXT NOT NULL,
		pid INTEGER NOT NULL,
		started_at REAL NOT NULL,
		heartbeat_at REAL NOT NULL,
		surface TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (approval_id, host, pid));
	CREATE TABLE IF NOT EXISTS approve_tui_rank (
		approval_id TEXT PRIMARY KEY,
		rank INTEGER NOT NULL,
		expires_at REAL) WITHOUT ROWID;
	CREATE INDEX IF NOT EXISTS approve_tui_rank_order ON approve_tui_rank(rank, expires_at);`,
	// 2: presence: which console (local or SSH) is open, who it is, which
	// proposal it shows and whether its approve prompt is open.
	`CREATE TABLE IF NOT EXISTS approve_tui_presence (
		console TEXT PRIMARY KEY,
		actor TEXT NOT NULL,
		name TEXT NOT NULL,
		surface TEXT NOT NULL DEFAULT '',
		viewing TEXT NOT NULL DEFAULT '',
		prompt TEXT NOT NULL DEFAULT '',
		scroll INTEGER NOT NULL DEFAULT 0,
		started_at REAL NOT NULL,
		heartbeat_at REAL NOT NULL);`,
	// 3: paging: one row per delivery (a proposal's page, escalation step,
	// reminder or resolution to one channel), claimed before it is sent;
	// and the notifiers running, with their last trouble.
	`CREATE TABLE IF NOT EXISTS approve_tui_deliveries (` + deliveriesColumns("REAL") + `);
	CREATE INDEX IF NOT EXISTS approve_tui_deliveries_due ON approve_tui_deliveries(state, next_at);
	CREATE TABLE IF NOT EXISTS approve_tui_notifiers (` + notifiersColumns("REAL") + `);`,
	// 4: the approval policy, one row per version, and the votes cast
	// under it (quorum.go).
	`CREATE TABLE IF NOT EXISTS approve_tui_policy (` + policyColumns("INTEGER", "REAL") + `);
	CREATE TABLE IF NOT EXISTS approve_tui_votes (` + votesColumns("REAL") + `);
	` + votesIndexes[0] + `;
	` + votesIndexes[1] + `;`,
	// 5: the answers given to requesters, one per request id (answer.go).
	`CREATE TABLE IF NOT EXISTS approve_tui_answers (` + answersColumns("REAL") + `);`,
	// 6: the signatures over decisions (signature.go).
	`CREATE TABLE IF NOT EXISTS approve_tui_signatures (` + signaturesColumns("INTEGER PRIMARY KEY", "REAL") + `);
	` + signaturesIndex + `;`,
}

// auditTable is the audit log's column definitions on SQLite. seq is the
// rowid, and every append names it (the chain's head plus one), so the
// table needs no AUTOINCREMENT: that would write SQLite's sqlite_sequence
// table, a page more in the WAL, at every decision, to keep a seq from being
// used again, which the head already does (refitAudit).
const auditTable = `
		seq INTEGER PRIMARY KEY,
		at REAL NOT NULL,` + auditTextColumns

// auditTextColumns are the audit log's columns after seq and at, typed
// alike on SQLite and PostgreSQL.
const auditTextColumns = `
		approval_id TEXT NOT NULL,
		event TEXT NOT NULL,
		outcome TEXT NOT NULL,
		reason TEXT NOT NULL DEFAULT '',
		actor TEXT NOT NULL,
		surface TEXT NOT NULL,
		detail TEXT NOT NULL DEFAULT '',
		prev_hash TEXT NOT NULL,
		hash TEXT NOT NULL`

// auditByID is the audit log's index by proposal, on either backend.
const auditByID = `CREATE INDEX IF NOT EXISTS approve_tui_audit_by_id ON approve_tui_audit(approval_id, seq)`

// auditRefit rebuilds an audit log made with AUTOINCREMENT (by
// approve-tui before 2026-12) without it, keeping every row as it is.
var auditRefit = []string{
	`CREATE TABLE approve_tui_audit_refit (` + auditTable + `)`,
	`INSERT INTO approve_tui_audit_refit (` + auditColumns + `) SELECT ` + auditColumns + ` FROM approve_tui_audit ORDER BY seq`,
	`DROP TABLE approve_tui_audit`,
	`ALTER TABLE approve_tui_audit_refit RENAME TO approve_tui_audit`,
	auditByID,
}

// auditAutoincrement counts audit tables made with AUTOINCREMENT (0 or 1).
const auditAutoincrement = `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'approve_tui_audit'
	AND sql LIKE '%AUTOINCREMENT%'`

const migrationsTable = `CREATE TABLE IF NOT EXISTS approve_tui_migrations (
	version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)`

var sqliteSchema = schemaDDL{
	hermesTable:      hermesTable,
	hermesIndexes:    hermesIndexes,
	executionColumns: executionColumns,
	migrations:       splitMigrations(migrations),
	migrationsTable:  migrationsTable,
	lockoutsTable:    lockoutsTable,
	tier2Columns: []string{
		`ALTER TABLE gateway_approvals ADD COLUMN terminal_reason TEXT`,
		`ALTER TABLE gateway_approvals ADD COLUMN approval_event_id TEXT`,
		`ALTER TABLE gateway_approvals ADD COLUMN approval_event_ts_ms INTEGER`,
		`ALTER TABLE gateway_approvals ADD COLUMN invalid_attempts INTEGER NOT NULL DEFAULT 0`,
		lockoutsTable,
	},
}

// splitMigrations splits each migration's script at its semicolons.
func splitMigrations(ms []string) [][]string {
	out := make([][]string, len(ms))
	for i, m := range ms {
		for _, stmt := range strings.Split(m, ";") {
			if strings.TrimSpace(stmt) != "" {
				out[i] = append(out[i], stmt)
			}
		}
	}
	return out
}

const lockoutsTable = `CREATE TABLE IF NOT EXISTS gateway_approval_lockouts (
    verb TEXT NOT NULL, target TEXT NOT NULL, expires_at REAL NOT NULL,
    reason TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (verb, target))`
