package storage

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
)

// The store has two backends: a SQLite file (one host) and a PostgreSQL
// database (a fleet of hosts). The decision logic — validation,
// classification, refusal rules, the compare-and-set transitions, the audit
// chain, the rank index — is written once, against database/sql, in the
// files of this package. What differs is the engine: its SQL dialect, its
// schema, how a write transaction begins and serialises, what its errors
// mean, and how a commit by another process is noticed (sqlite.go;
// postgres.go and the postgres_*.go files beside it). Each engine's DDL is
// in migrations/ENGINE/ (migrations.go).
type engine interface {
	// kind is "sqlite" or "postgres".
	kind() string
	// rebind turns a statement written with ? placeholders into the
	// engine's own.
	rebind(q string) string
	// beginWrite starts a write transaction; beginSnapshot a read-only
	// transaction that sees one consistent snapshot.
	beginWrite() string
	beginSnapshot() string
	// lockRow is appended to the read of the row a transition decides on:
	// SQLite's write lock already covers it; PostgreSQL locks the row.
	lockRow() string
	// lockHead is appended to the read of the audit chain's head: the lock
	// that keeps the chain linear across concurrent writers.
	lockHead() string
	// indexedBy names an index for the query planner ("" where the engine
	// chooses well by itself).
	indexedBy(index string) string
	// byRowid makes the planner read a table in rowid order (a range of
	// rowids) rather than through an index on a column the query also
	// filters on ("" where the engine chooses well by itself).
	byRowid() string
	// greatest is the larger of two expressions.
	greatest(a, b string) string
	// tableColumns lists the columns of a table (empty when it is missing).
	tableColumns(ctx context.Context, q querier, table string) (map[string]bool, error)
	// schema is the DDL of the Hermes table, its indexes, the execution_*
	// columns of older tables, approve-tui's migrations, and the lockouts
	// table of Hermes' tier-2 revision.
	schema() *schemaDDL
	// classify explains an engine error (nil when it does not recognise it).
	classify(op string, err error) error
	// noTable reports an error saying a table does not exist.
	// noColumn reports whether err says a column does not exist (a file
	// written before the column was added, opened without migrating it).
	noColumn(err error) bool
	noTable(err error) bool
	// lockTimeout reports an error of waiting for another writer too long.
	lockTimeout(err error) bool
	// retryable reports an error after which the whole transaction may be
	// run again (a deadlock or serialisation failure that rolled it back).
	retryable(err error) bool

	// What the engines do differently around the SQL: the rest of the
	// package asks these, never which engine it is.

	// unregister forgets f in the process's registry of open stores
	// (registry.mu held), at its last release.
	unregister(f *dbfile)
	// cachesStatements: the writer connection keeps its statements
	// prepared by text (stmtCache).
	cachesStatements() bool
	// unmigratedView is the error of opening tables that are not up to
	// date where they may not be migrated (nil: they are viewed as they
	// are, and a later writable open migrates them).
	unmigratedView(f *dbfile, st schemaState) error
	// refit brings older tables of a writable store to their present form
	// after migrating (wmu held). Best effort: tables not refitted work as
	// they are.
	refit(ctx context.Context, f *dbfile, opt Options)
	// useSettings puts the view's lock timeout (and, where the engine has
	// one, its synchronous mode) on the writer connection (wmu held).
	useSettings(ctx context.Context, f *dbfile, opt Options) error
	// onDisk: the store is a file on this host, which can be moved or
	// replaced under an open handle (checkMoved).
	onDisk() bool
	// quickCheck looks for damage in the checked tables (nil: intact, or
	// the engine's server owns its files' integrity).
	quickCheck(ctx context.Context, s bound) ([]string, error)
	// readsOnIdleWriter: a process with no reader connection open yet may
	// read once on its idle writer connection instead of opening one.
	readsOnIdleWriter() bool
	// commitMark is a number that moves when another connection commits a
	// change to the open rows (read on the writer connection).
	commitMark(ctx context.Context, w *conn) (int64, error)
	// urgentInOneQuery: the most urgent page is read in one query over the
	// rank index (listPendingOneQuery), not rank by rank.
	urgentInOneQuery() bool
	// decidingReadTogether: a decision reads its row, its submit record
	// and whether a policy or a counting vote exists in one statement
	// (openRow), falling back to reading apart when that statement cannot
	// read a table; false: it always reads apart (an engine whose
	// transaction cannot go on after a failed statement).
	decidingReadTogether() bool
	// schemaMark is a cheap number that moves when the schema changes
	// (false: the engine has none, and the columns are read each time).
	schemaMark(ctx context.Context, w *conn) (int64, bool)
	// committed runs after a commit of this process's writer.
	committed(f *dbfile)
	// writerFailed notes a writer error (wmu held): a lost connection is
	// made again before the next write.
	writerFailed(f *dbfile, err error)
	// commitFailed is the error of a failed COMMIT.
	commitFailed(f *dbfile, op string, err error) error
	// listen starts the engine's own notice of other processes' commits
	// for f's hub (h.mu held) and reports true, or reports false and
	// leaves it to the hub's own loop (sqlite_watch.go).
	listen(f *dbfile, h *hub) bool
	// counterQuery reads one of the writer connection's counters ("": the
	// engine has none).
	counterQuery(c writerCounter) string
	// textIsStrict: a text column refuses bytes that are not UTF-8, and the
	// NUL byte.
	textIsStrict() bool
}

// writerCounter names a counter of the writer connection.
type writerCounter int

const (
	// counterCommits moves when another connection commits.
	counterCommits writerCounter = iota
	// counterRowsWritten is the rows this connection has written.
	counterRowsWritten
)

// schemaDDL is one engine's schema.
type schemaDDL struct {
	hermesTable      string
	hermesIndexes    []string
	executionColumns []struct{ name, ddl string }
	// preMigrate runs first in the migration transaction (PostgreSQL:
	// takes a lock so that two processes never migrate at once).
	preMigrate []string
	// migrations[v-1] are the statements of approve-tui migration v.
	migrations      [][]string
	migrationsTable string
	lockoutsTable   string
	// tier2Columns add the columns of Hermes' tier-2 revision: only a copy
	// of a tier-2 store does (on a Hermes file they are Hermes' to add).
	tier2Columns []string
}

// conn is one connection that speaks the engine's dialect: statements are
// written with ? placeholders and rebound on the way.
type conn struct {
	*sql.Conn
	e     engine
	stmts *stmtCache // nil: every statement prepared afresh (QueryRowPrepared)
}

func (c *conn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return c.Conn.ExecContext(ctx, c.e.rebind(q), args...)
}

func (c *conn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.Conn.QueryContext(ctx, c.e.rebind(q), args...)
}

func (c *conn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return c.Conn.QueryRowContext(ctx, c.e.rebind(q), args...)
}

// QueryRowPrepared is QueryRowContext through the connection's statement
// cache (stmtCache).
func (c *conn) QueryRowPrepared(ctx context.Context, q string, args ...any) rowScanner {
	return c.stmts.queryRow(ctx, c.PrepareContext, c.QueryRowContext, q, args)
}

// QueryPrepared is QueryContext through the connection's statement cache
// (stmtCache).
func (c *conn) QueryPrepared(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.stmts.query(ctx, c.PrepareContext, c.QueryContext, q, args)
}

func (c *conn) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return c.Conn.PrepareContext(ctx, c.e.rebind(q))
}

// pool is a pool of reader connections in the engine's dialect.
type pool struct {
	*sql.DB
	e     engine
	stmts *stmtCache // nil: every statement prepared afresh (QueryPrepared)
}

// stmtCache holds statements prepared once per query text, for the few
// statements a console runs after every commit, whose preparing was a
// good part of their cost (the most urgent page: 5.4 -> 4.1 ms from
// commit to frame at 10,000 pending, in one process). SQLite only: it
// prepares a statement again by itself when the schema changed, where a
// PostgreSQL server can refuse a cached plan after a column was added.
// The decision path's statements are the writer's own (writerStmts,
// prepared at their first use); this cache is for reads whose text the file decides (its
// revision, whether Hermes' partial index can be named). Only fixed query
// texts belong here: the cache is emptied only by Close.
type stmtCache struct{ m sync.Map }

func (c *stmtCache) get(ctx context.Context, q string, prepare func(context.Context, string) (*sql.Stmt, error)) (*sql.Stmt, error) {
	if st, ok := c.m.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.m.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// close closes every statement the cache holds (nil: none). A statement
// left open on a SQLite connection keeps that connection from being the
// one that checkpoints and deletes the WAL at the last close.
func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.m.Range(func(k, v any) bool {
		v.(*sql.Stmt).Close()
		c.m.Delete(k)
		return true
	})
}

// queryRow runs q through the cache's statement for it (prepared the first
// time), or, without a cache (nil), with direct.
func (c *stmtCache) queryRow(ctx context.Context, prepare func(context.Context, string) (*sql.Stmt, error),
	direct func(context.Context, string, ...any) *sql.Row, q string, args []any) rowScanner {
	if c == nil {
		return direct(ctx, q, args...)
	}
	st, err := c.get(ctx, q, prepare)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// query is queryRow for rows.
func (c *stmtCache) query(ctx context.Context, prepare func(context.Context, string) (*sql.Stmt, error),
	direct func(context.Context, string, ...any) (*sql.Rows, error), q string, args []any) (*sql.Rows, error) {
	if c == nil {
		return direct(ctx, q, args...)
	}
	st, err := c.get(ctx, q, prepare)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// errRow is a row that failed before a *sql.Row came (a rowScanner).
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// PrepareContext prepares q in the engine's dialect.
func (p *pool) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return p.DB.PrepareContext(ctx, p.e.rebind(q))
}

// QueryPrepared is QueryContext through the pool's statement cache.
func (p *pool) QueryPrepared(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return p.stmts.query(ctx, p.PrepareContext, p.QueryContext, q, args)
}

// QueryRowPrepared is QueryRowContext through the pool's statement cache.
func (p *pool) QueryRowPrepared(ctx context.Context, q string, args ...any) rowScanner {
	return p.stmts.queryRow(ctx, p.PrepareContext, p.QueryRowContext, q, args)
}

func (p *pool) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return p.DB.ExecContext(ctx, p.e.rebind(q), args...)
}

func (p *pool) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return p.DB.QueryContext(ctx, p.e.rebind(q), args...)
}

func (p *pool) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return p.DB.QueryRowContext(ctx, p.e.rebind(q), args...)
}

// Conn pins one connection of the pool.
func (p *pool) Conn(ctx context.Context) (*conn, error) {
	c, err := p.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, e: p.e}, nil
}

// numbered rewrites ? placeholders as $1, $2, ... (PostgreSQL), leaving
// question marks inside quoted strings and identifiers alone. Statements are
// few and fixed, so each is rewritten once.
type numbered struct {
	mu    sync.RWMutex
	cache map[string]string
}

// maxRebindCache bounds the cache: statements built with varying text
// (which this package does not make) would otherwise grow it without end.
const maxRebindCache = 4096

func (n *numbered) rebind(q string) string {
	n.mu.RLock()
	out, ok := n.cache[q]
	n.mu.RUnlock()
	if ok {
		return out
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	arg := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			arg++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(arg))
			continue
		}
		b.WriteByte(c)
	}
	out = b.String()
	n.mu.Lock()
	if n.cache == nil {
		n.cache = map[string]string{}
	}
	if len(n.cache) < maxRebindCache {
		n.cache[q] = out
	}
	n.mu.Unlock()
	return out
}

// isNoTable reports whether err is either engine's "no such table" (for a
// reader that cannot tell which engine answered).
func isNoTable(err error) bool {
	return sqliteDialect.noTable(err) || postgresDialect.noTable(err)
}
