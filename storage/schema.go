package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// SchemaVersion is the newest approve-tui migration this build knows.
const SchemaVersion = 7

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

func readSchema(ctx context.Context, e engine, q querier) (schemaState, error) {
	var st schemaState
	cols, err := e.tableColumns(ctx, q, "gateway_approvals")
	if err != nil {
		return st, err
	}
	st.hasHermes = len(cols) > 0
	st.tier2 = st.hasHermes
	for _, c := range tier2Columns {
		st.tier2 = st.tier2 && cols[c]
	}
	if st.hasHermes {
		for _, c := range e.schema().executionColumns {
			if !cols[c.name] {
				st.missingExec = append(st.missingExec, c.name)
			}
		}
	}
	mig, err := e.tableColumns(ctx, q, "approve_tui_migrations")
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

// scanNames collects the one text column of rows.
func scanNames(rows *sql.Rows, err error) (map[string]bool, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names[name] = true
	}
	return names, rows.Err()
}

// needsMigration reports whether migrate would change anything.
func (st schemaState) needsMigration() bool {
	return !st.hasHermes || len(st.missingExec) > 0 || st.ownVersion < SchemaVersion
}

// migrate brings the file up to date inside the caller's write transaction:
// the Hermes table (created if absent, execution_* columns added before the
// indexes that name them), then approve-tui's own migrations.
func migrate(ctx context.Context, e engine, x execer, now float64) error {
	ddl := e.schema()
	for _, q := range ddl.preMigrate {
		if _, err := x.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	st, err := readSchema(ctx, e, x)
	if err != nil {
		return err
	}
	if st.ownVersion > SchemaVersion {
		return errSchemaTooNew(st.ownVersion)
	}
	if _, err := x.ExecContext(ctx, ddl.hermesTable); err != nil {
		return fmt.Errorf("create gateway_approvals: %w", err)
	}
	for _, c := range ddl.executionColumns {
		for _, m := range st.missingExec {
			if m == c.name {
				if _, err := x.ExecContext(ctx, c.ddl); err != nil {
					return fmt.Errorf("add column %s: %w", c.name, err)
				}
			}
		}
	}
	for _, q := range ddl.hermesIndexes {
		if _, err := x.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create index: %w", err)
		}
	}
	if _, err := x.ExecContext(ctx, ddl.migrationsTable); err != nil {
		return err
	}
	for v := st.ownVersion + 1; v <= SchemaVersion; v++ {
		for _, stmt := range ddl.migrations[v-1] {
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
