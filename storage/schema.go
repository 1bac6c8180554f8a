package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
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
	`CREATE TABLE IF NOT EXISTS approve_tui_audit (
		seq INTEGER PRIMARY KEY AUTOINCREMENT,
		at REAL NOT NULL,
		approval_id TEXT NOT NULL,
		event TEXT NOT NULL,
		outcome TEXT NOT NULL,
		reason TEXT NOT NULL DEFAULT '',
		actor TEXT NOT NULL,
		surface TEXT NOT NULL,
		detail TEXT NOT NULL DEFAULT '',
		prev_hash TEXT NOT NULL,
		hash TEXT NOT NULL);
	CREATE INDEX IF NOT EXISTS approve_tui_audit_by_id ON approve_tui_audit(approval_id, seq);
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
}

// SchemaVersion is the newest approve-tui migration this build knows.
const SchemaVersion = 2

const migrationsTable = `CREATE TABLE IF NOT EXISTS approve_tui_migrations (
	version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)`

// schemaState is what a read of the file found.
type schemaState struct {
	hasHermes     bool
	missingExec   []string
	ownVersion    int
	hasMigrations bool
	// tier2: the table has every column of Hermes' tier-2 revision.
	tier2 bool
}

// tier2Columns are the columns Hermes' tier-2 revision adds. approve-tui
// never adds them: a file has them when Hermes gave them to it.
var tier2Columns = []string{"terminal_reason", "approval_event_id", "approval_event_ts_ms", "invalid_attempts"}

func readSchema(ctx context.Context, q querier) (schemaState, error) {
	var st schemaState
	cols, err := tableColumns(ctx, q, "gateway_approvals")
	if err != nil {
		return st, err
	}
	st.hasHermes = len(cols) > 0
	st.tier2 = st.hasHermes
	for _, c := range tier2Columns {
		st.tier2 = st.tier2 && cols[c]
	}
	if st.hasHermes {
		for _, c := range executionColumns {
			if !cols[c.name] {
				st.missingExec = append(st.missingExec, c.name)
			}
		}
	}
	mig, err := tableColumns(ctx, q, "approve_tui_migrations")
	if err != nil {
		return st, err
	}
	if len(mig) > 0 {
		st.hasMigrations = true
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM approve_tui_migrations`).Scan(&st.ownVersion); err != nil {
			return st, err
		}
	}
	return st, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type execer interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func tableColumns(ctx context.Context, q querier, table string) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		cols[name] = true
	}
	return cols, rows.Err()
}

// needsMigration reports whether migrate would change anything.
func (st schemaState) needsMigration() bool {
	return !st.hasHermes || len(st.missingExec) > 0 || st.ownVersion < SchemaVersion
}

// migrate brings the file up to date inside the caller's write transaction:
// the Hermes table (created if absent, execution_* columns added before the
// indexes that name them), then approve-tui's own migrations.
func migrate(ctx context.Context, x execer, now float64) error {
	st, err := readSchema(ctx, x)
	if err != nil {
		return err
	}
	if st.ownVersion > SchemaVersion {
		return errSchemaTooNew(st.ownVersion)
	}
	if _, err := x.ExecContext(ctx, hermesTable); err != nil {
		return fmt.Errorf("create gateway_approvals: %w", err)
	}
	for _, c := range executionColumns {
		for _, m := range st.missingExec {
			if m == c.name {
				if _, err := x.ExecContext(ctx, c.ddl); err != nil {
					return fmt.Errorf("add column %s: %w", c.name, err)
				}
			}
		}
	}
	for _, ddl := range hermesIndexes {
		if _, err := x.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("create index: %w", err)
		}
	}
	if _, err := x.ExecContext(ctx, migrationsTable); err != nil {
		return err
	}
	for v := st.ownVersion + 1; v <= SchemaVersion; v++ {
		for _, stmt := range strings.Split(migrations[v-1], ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := x.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("approve-tui migration %d: %w", v, err)
			}
		}
		if _, err := x.ExecContext(ctx, `INSERT INTO approve_tui_migrations(version, applied_at) VALUES (?, ?)`, v, now); err != nil {
			return err
		}
	}
	return nil
}

func errSchemaTooNew(v int) error {
	return &UnavailableError{Op: "open", Reason: fmt.Sprintf(
		"the database was written by a newer approve-tui (schema %d; this build understands %d): upgrade approve-tui; nothing will be changed", v, SchemaVersion)}
}
