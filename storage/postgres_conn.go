package storage

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Opening a PostgreSQL store: the URL's settings, the one writer connection
// and the reader pool a process shares per URL.

// pgState is what a dbfile on PostgreSQL has beyond the SQLite ones.
type pgState struct {
	key    string // registry key: the URL as given
	cfg    *pgx.ConnConfig
	schema string // current_schema() of the connections: the channel payload
	// madeSchema is the schema opening created (findSchema), or "";
	// madeSchemaSQL, its name as a statement writes it (quote_ident).
	madeSchema, madeSchemaSQL string

	// brokenWriter: the writer connection was lost; the next write makes
	// a new one first (under wmu).
	brokenWriter bool
	// writerPID is the server process of the writer connection: its
	// commits wake this process's watchers directly, so their
	// notifications are not needed again.
	writerPID atomic.Uint32
}

// pgRegistry holds the open PostgreSQL stores of the process by URL: a
// console and its watchers, or an SSH server's sessions, share one writer
// connection, one reader pool and one listener.
var pgRegistry = map[string]*dbfile{}

// pgConfig parses a URL and sets what the store needs that the URL leaves
// unset: a connect timeout, statement and lock timeouts, an
// idle-in-transaction timeout (so a client that died mid-transaction frees
// its locks), and an application name (pg_stat_activity shows approve-tui).
func pgConfig(db string, opt Options) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(db)
	if err != nil {
		return nil, fmt.Errorf("database URL %s: %w", RedactURL(db), err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	rp := cfg.RuntimeParams
	if rp["statement_timeout"] == "" {
		rp["statement_timeout"] = fmt.Sprint(DefaultStatementTimeout.Milliseconds())
	}
	if rp["lock_timeout"] == "" {
		rp["lock_timeout"] = fmt.Sprint(opt.BusyTimeout.Milliseconds())
	}
	if rp["idle_in_transaction_session_timeout"] == "" {
		rp["idle_in_transaction_session_timeout"] = "60000"
	}
	if rp["application_name"] == "" {
		rp["application_name"] = "approve-tui"
	}
	return cfg, nil
}

// acquirePostgres returns the handles of the database at db, opening them if
// this process has none yet.
func acquirePostgres(ctx context.Context, db string, opt Options) (*dbfile, error) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if f := pgRegistry[db]; f != nil {
		if err := f.ensureSchema(ctx, opt); err != nil {
			return nil, err
		}
		f.refs++
		return f, nil
	}
	cfg, err := pgConfig(db, opt)
	if err != nil {
		return nil, err
	}
	f := &dbfile{file: RedactURL(db), eng: postgresDialect, journal: "postgres", pg: &pgState{key: db, cfg: cfg}}
	if err := f.openPostgres(ctx, opt); err != nil {
		f.close()
		return nil, err
	}
	f.refs = 1
	pgRegistry[db] = f
	return f, nil
}

func (f *dbfile) openPostgres(ctx context.Context, opt Options) error {
	f.wdb = stdlib.OpenDB(*f.pg.cfg.Copy())
	if err := f.openWriter(ctx); err != nil {
		return classifyOn(postgresDialect, "open", err)
	}
	f.busyMS = opt.BusyTimeout.Milliseconds()
	if err := f.noteWriterPID(ctx); err != nil {
		return classifyOn(postgresDialect, "open", err)
	}

	rcfg := f.pg.cfg.Copy()
	// Readers never write: the server refuses if one tried.
	rcfg.RuntimeParams["default_transaction_read_only"] = "on"
	rdb := stdlib.OpenDB(*rcfg)
	n := opt.Readers
	if n <= 0 {
		n = 4
	}
	rdb.SetMaxOpenConns(n)
	rdb.SetMaxIdleConns(n)
	rdb.SetConnMaxIdleTime(5 * time.Minute)
	f.rdb = &pool{DB: rdb, e: f.eng}

	var ro string
	if err := f.w.QueryRowContext(ctx, `SELECT current_setting('transaction_read_only')`).Scan(&ro); err != nil {
		return classifyOn(postgresDialect, "open", err)
	}
	if ro == "on" {
		f.fileRO = pgServerReadOnly
	}
	if err := f.findSchema(ctx, opt); err != nil {
		return err
	}
	if err := f.ensureSchemaLocked(ctx, opt); err != nil {
		return err
	}
	if f.fileRO == "" {
		var may bool
		if err := f.w.QueryRowContext(ctx, `SELECT has_table_privilege('gateway_approvals', 'UPDATE')
			AND has_table_privilege('approve_tui_audit', 'INSERT')`).Scan(&may); err == nil && !may {
			f.fileRO = "the PostgreSQL user may not write the approval tables"
			if f.ws != nil {
				f.ws.close()
				f.ws = nil
			}
		}
	}
	return nil
}

// unregister forgets f in the registry (registry.mu held).
func (*pgEngine) unregister(f *dbfile) {
	if pgRegistry[f.pg.key] == f {
		delete(pgRegistry, f.pg.key)
	}
}
