package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/approve-tui/approve-tui/model"
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

// IsPostgresURL reports whether a --db value names a PostgreSQL database.
func IsPostgresURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// RedactURL is a database URL with its password removed, for showing.
func RedactURL(db string) string {
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

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

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func (*pgEngine) noTable(err error) bool { return pgCode(err) == "42P01" }

// lockTimeout: lock_timeout ran out (55P03), the PostgreSQL form of SQLite's
// busy timeout.
func (*pgEngine) lockTimeout(err error) bool { return pgCode(err) == "55P03" }

func (*pgEngine) retryable(err error) bool {
	c := pgCode(err)
	return c == "40P01" || c == "40001"
}

// connLost reports an error that means the connection to the server is gone.
func connLost(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &ne) || errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		strings.Contains(err.Error(), "conn closed") || strings.HasPrefix(pgCode(err), "08") ||
		pgCode(err) == "57P01" || pgCode(err) == "57P02" || pgCode(err) == "57P03"
}

func (*pgEngine) classify(op string, err error) error {
	if c := pgTyped(op, err); c != nil {
		return c
	}
	if connLost(err) {
		return &UnavailableError{Op: op, Err: err, Reason: "the connection to the PostgreSQL server was lost (" + err.Error() + "); nothing was written"}
	}
	return nil
}

// pgTyped explains the errors only PostgreSQL gives: a failed connect and
// an error the server sent with its code (nil for anything else).
func pgTyped(op string, err error) error {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		switch pgCode(err) {
		case "28P01", "28000":
			return &UnavailableError{Op: op, Err: err, Reason: "the PostgreSQL server refused the login: " + pgMessage(err) +
				" (check the user and password in the URL, PGPASSWORD or ~/.pgpass, and the server's pg_hba.conf)"}
		case "3D000":
			return &UnavailableError{Op: op, Err: err, Reason: "the PostgreSQL database does not exist: " + pgMessage(err) + " (create it with createdb)"}
		}
		return &UnavailableError{Op: op, Err: err, Reason: "cannot reach the PostgreSQL server: " + connectDetails(ce)}
	}
	switch c := pgCode(err); {
	case c == "55P03":
		return &UnavailableError{Op: op, Err: err, Reason: "the proposal is locked by another session past the timeout (lock_timeout); try again, or find the session holding it (pg_stat_activity)"}
	case c == "57014":
		return &UnavailableError{Op: op, Err: err, Reason: "the statement ran past its timeout (statement_timeout) and was cancelled; nothing was written"}
	case c == "25006":
		return &ReadOnlyError{Reason: pgServerReadOnly}
	case c == "42501":
		return &ReadOnlyError{Reason: "the PostgreSQL user may not write these tables: " + pgMessage(err)}
	case c == "53100":
		return &UnavailableError{Op: op, Err: err, Reason: "the PostgreSQL server's disk is full: " + pgMessage(err)}
	case c == "53300":
		return &UnavailableError{Op: op, Err: err, Reason: "the PostgreSQL server has no free connection slot: " + pgMessage(err)}
	case c == "40P01", c == "40001":
		return &UnavailableError{Op: op, Err: err, Reason: "the transaction kept losing to concurrent writers (" + pgMessage(err) + "); nothing was written; try again"}
	case c != "":
		return &UnavailableError{Op: op, Err: err, Reason: "PostgreSQL: " + pgMessage(err)}
	}
	return nil
}

// connectDetails is a failed connection's reasons, one per address tried,
// each said once, on one line.
func connectDetails(ce *pgconn.ConnectError) string {
	inner := errors.Unwrap(ce)
	if inner == nil {
		return ce.Error()
	}
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(inner.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	who := ""
	if ce.Config != nil {
		who = " (user " + ce.Config.User + ", database " + ce.Config.Database + ")"
	}
	return strings.Join(out, "; ") + who
}

func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		m := pe.Message
		if pe.Detail != "" {
			m += " (" + pe.Detail + ")"
		}
		return m + " [" + pe.Code + "]"
	}
	return err.Error()
}

// pgServerReadOnly is why nothing can be written to a server that accepts
// no writes.
const pgServerReadOnly = "the PostgreSQL server accepts no writes (a standby, or default_transaction_read_only)"

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

// findSchema settles the schema the store lives in: the first schema the
// connection's search_path names (a "$user" entry counts only when the user
// has a schema of that name, as PostgreSQL's default path means it), which
// must exist. PostgreSQL itself reads and creates in the first schema of the
// path that exists: a path whose first schema is missing would put the store
// in the next one (often public, perhaps another store's), and a path that
// names none leaves the connection without a current schema. An open that
// may create the store (Options.Create, on a server that accepts writes)
// creates the missing schema, as it creates a missing file's directory; any
// other says that it is missing and how to make it.
func (f *dbfile) findSchema(ctx context.Context, opt Options) error {
	var cur sql.NullString
	var path, user, database string
	if err := f.w.QueryRowContext(ctx, `SELECT current_schema(), current_setting('search_path'), current_user, current_database()`).
		Scan(&cur, &path, &user, &database); err != nil {
		return classifyOn(postgresDialect, "open", err)
	}
	names, err := splitSearchPath(path)
	if err != nil {
		// The server parsed it already: it never reads otherwise.
		return &UnavailableError{Op: "open", Reason: "the search_path " + model.Sanitize(path, model.Line) + " cannot be read: " + err.Error()}
	}
	want := ""
	for _, n := range names {
		if n == "$user" {
			st, err := f.pgSchemaState(ctx, user)
			if err != nil {
				return classifyOn(postgresDialect, "open", err)
			}
			if !st.usable {
				continue
			}
			n = user
		}
		if n != "" {
			want = n
			break
		}
	}
	if want == "" {
		return &UnavailableError{Op: "open", Reason: fmt.Sprintf(
			"the search_path (%s) names no schema for the store: set one in the URL (search_path=NAME; approve-tui init creates it)",
			model.Sanitize(path, model.Line))}
	}
	if cur.Valid && cur.String == want {
		f.pg.schema = want
		return nil
	}
	st, err := f.pgSchemaState(ctx, want)
	if err != nil {
		return classifyOn(postgresDialect, "open", err)
	}
	shown := model.Sanitize(st.quoted, model.Line)
	missing := "schema " + shown + " does not exist in database " + model.Sanitize(database, model.Line) + " (the first schema of the search_path, where the store lives"
	if cur.Valid {
		missing += "; approve-tui does not fall back on " + model.Sanitize(cur.String, model.Line)
	}
	missing += ")"
	switch {
	case st.exists && !st.usable:
		return &UnavailableError{Op: "open", Reason: fmt.Sprintf("the PostgreSQL user %s may not use schema %s (no USAGE privilege): GRANT USAGE, CREATE ON SCHEMA %s TO %s;",
			model.Sanitize(user, model.Line), shown, shown, model.Sanitize(user, model.Line))}
	case st.exists:
		// Not reachable: an existing, usable first schema is the current one.
		return &UnavailableError{Op: "open", Reason: fmt.Sprintf("schema %s comes first in the search_path, but the connection's current schema is %s",
			shown, model.Sanitize(cur.String, model.Line))}
	case !opt.Create || opt.ReadOnly:
		return &UnavailableError{Op: "open", Reason: missing + ": `approve-tui init` on this URL creates it (and the tables), or in psql: CREATE SCHEMA " + shown + ";"}
	case f.fileRO != "":
		return &UnavailableError{Op: "open", Reason: missing + ", and " + f.fileRO + ", so it cannot be created here: create it on the primary: CREATE SCHEMA " + shown + ";"}
	}
	if _, err := f.w.ExecContext(ctx, `CREATE SCHEMA `+pgx.Identifier{want}.Sanitize()); err != nil {
		// Another process may have made it meanwhile (duplicate_schema,
		// or unique_violation in the same instant): then it is there.
		if again, serr := f.pgSchemaState(ctx, want); serr != nil || !again.exists {
			return createSchemaFailed(missing, shown, user, database, err)
		}
	} else {
		f.pg.madeSchema, f.pg.madeSchemaSQL = want, st.quoted
	}
	if err := f.w.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&cur); err != nil {
		return classifyOn(postgresDialect, "open", err)
	}
	if !cur.Valid || cur.String != want {
		return &UnavailableError{Op: "open", Reason: "schema " + shown + " was created, but the connection's current schema is not it (" +
			model.Sanitize(cur.String, model.Line) + "): look at the schema's privileges"}
	}
	f.pg.schema = want
	return nil
}

// createSchemaFailed explains why a missing schema could not be created.
func createSchemaFailed(missing, shown, user, database string, err error) error {
	switch pgCode(err) {
	case "42501":
		user = model.Sanitize(user, model.Line)
		return &UnavailableError{Op: "open", Err: err, Reason: fmt.Sprintf(
			"%s, and user %s may not create it (no CREATE privilege on database %s): ask the database's owner to create it: CREATE SCHEMA %s AUTHORIZATION %s;",
			missing, user, model.Sanitize(database, model.Line), shown, user)}
	case "25006":
		return &UnavailableError{Op: "open", Err: err, Reason: missing + ", and " + pgServerReadOnly + ", so it cannot be created here: create it on the primary: CREATE SCHEMA " + shown + ";"}
	}
	var un *UnavailableError
	if errors.As(classifyOn(postgresDialect, "open", err), &un) {
		return &UnavailableError{Op: "open", Err: err, Reason: missing + ", and creating it failed: " + un.Reason}
	}
	return classifyOn(postgresDialect, "open", err)
}

// pgSchemaState is what the server says of a schema name: as a statement writes
// it (quote_ident), whether it exists, and whether the user may use it.
type pgSchemaState struct {
	quoted         string
	exists, usable bool
}

func (f *dbfile) pgSchemaState(ctx context.Context, name string) (pgSchemaState, error) {
	var st pgSchemaState
	var usable sql.NullBool
	if err := f.w.QueryRowContext(ctx, `SELECT quote_ident(?), (SELECT has_schema_privilege(oid, 'USAGE') FROM pg_namespace WHERE nspname = ?)`,
		name, name).Scan(&st.quoted, &usable); err != nil {
		return st, err
	}
	st.exists, st.usable = usable.Valid, usable.Bool
	return st, nil
}

// splitSearchPath splits a search_path setting into its schema names as
// PostgreSQL does (SplitIdentifierString): names separated by commas, with
// optional white space around them; a double-quoted name as written (""
// within it is one quote), an unquoted one with ASCII letters in lower
// case; each cut at 63 bytes (NAMEDATALEN - 1), on a character boundary.
func splitSearchPath(s string) ([]string, error) {
	i := 0
	// PostgreSQL's white space (scanner_isspace).
	space := func(c byte) bool { return strings.IndexByte(" \t\n\r\f\v", c) >= 0 }
	skipSpace := func() {
		for i < len(s) && space(s[i]) {
			i++
		}
	}
	skipSpace()
	if i == len(s) {
		return nil, nil
	}
	var names []string
	for {
		var name string
		switch {
		case i == len(s):
			return nil, errors.New("a name is missing after the last comma")
		case s[i] == '"':
			var b strings.Builder
			for i++; ; i++ {
				if i == len(s) {
					return nil, errors.New("a quoted name has no closing quote")
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i++
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
			}
			name = b.String()
		default:
			start := i
			for i < len(s) && s[i] != ',' && !space(s[i]) {
				i++
			}
			if i == start {
				return nil, errors.New("a name is missing before a comma")
			}
			name = strings.Map(func(r rune) rune {
				if 'A' <= r && r <= 'Z' {
					return r + ('a' - 'A')
				}
				return r
			}, s[start:i])
		}
		if len(name) > 63 {
			n := 63
			for n > 0 && !utf8.RuneStart(name[n]) {
				n--
			}
			name = name[:n]
		}
		names = append(names, name)
		skipSpace()
		if i == len(s) {
			return names, nil
		}
		if s[i] != ',' {
			return nil, fmt.Errorf("%q follows a name where a comma should", s[i:])
		}
		i++
		skipSpace()
	}
}

// CreatedSchema is the PostgreSQL schema opening created (Options.Create,
// when the first schema of the search_path did not exist), or "".
func (s *Store) CreatedSchema() string {
	if b := s.bind(); b.pg != nil {
		return b.pg.madeSchema
	}
	return ""
}

// CreatedSchemaSQL is CreatedSchema as a statement writes it (the server's
// quote_ident: quoted where it must be), sanitised, for messages.
func (s *Store) CreatedSchemaSQL() string {
	if b := s.bind(); b.pg != nil {
		return model.Sanitize(b.pg.madeSchemaSQL, model.Line)
	}
	return ""
}

// releasePostgres forgets f in the registry (registry.mu held).
func (f *dbfile) forgetPostgres() {
	if pgRegistry[f.pg.key] == f {
		delete(pgRegistry, f.pg.key)
	}
}

// usePostgresSettings puts the view's lock timeout on the writer (wmu held).
func (f *dbfile) usePostgresSettings(ctx context.Context, opt Options) error {
	if err := f.reconnectWriter(ctx); err != nil {
		return err
	}
	if ms := opt.BusyTimeout.Milliseconds(); ms != f.busyMS {
		if _, err := f.w.ExecContext(ctx, fmt.Sprintf(`SET lock_timeout = %d`, ms)); err != nil {
			return err
		}
		f.busyMS = ms
	}
	return nil
}

// reconnectWriter makes a new writer connection when the last one was lost,
// and prepares the writer's statements on it (wmu held).
func (f *dbfile) reconnectWriter(ctx context.Context) error {
	if !f.pg.brokenWriter {
		return nil
	}
	if f.ws != nil {
		f.ws.close()
		f.ws = nil
	}
	f.w.Close()
	c, err := f.wdb.Conn(ctx)
	if err != nil {
		return err
	}
	f.w = &conn{Conn: c, e: f.eng}
	f.busyMS = -1 // the new connection has the URL's lock_timeout: set the view's again
	if err := f.noteWriterPID(ctx); err != nil {
		return err
	}
	if f.fileRO == "" {
		ws, err := prepareWriter(ctx, f.eng, f.w, selectColumns(false, f.tier2.Load()), f.tier2.Load())
		if err != nil {
			return err
		}
		f.ws = ws
	}
	f.pg.brokenWriter = false
	return nil
}

func (f *dbfile) noteWriterPID(ctx context.Context) error {
	var pid uint32
	if err := f.w.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return err
	}
	f.pg.writerPID.Store(pid)
	return nil
}

// noteWriterError marks the writer connection lost when err says so (wmu
// held).
func (f *dbfile) noteWriterError(err error) {
	if f.pg != nil && connLost(err) {
		f.pg.brokenWriter = true
	}
}

// commitLost is the error of a COMMIT whose answer never came: the server
// may have committed or rolled back, and only reading again tells.
func commitLost(op string, err error) error {
	return &UnavailableError{Op: op, Err: err, Reason: "the connection to the PostgreSQL server was lost during COMMIT (" + err.Error() +
		"): the server either recorded all of it or none of it; look at the proposal again (`approve-tui show ID`) before retrying"}
}

// pgListener is the hub's loop on PostgreSQL: LISTEN on a connection of its
// own, a wake-up for every notification of this schema, a new connection
// (and a wake-up: commits may have been missed) after a lost one, and a
// slow poll as a safety net.
func (h *hub) pgLoop(f *dbfile, lc *pgx.Conn) {
	defer close(h.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-h.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() {
		if lc != nil {
			lc.Close(context.Background())
		}
	}()
	backoff := 100 * time.Millisecond
	lazyOnly := func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.fast == 0
	}
	var lastBump time.Time
	pending := false
	for ctx.Err() == nil {
		if lc == nil {
			c, err := f.pgListen(ctx)
			if err != nil {
				h.setListening(false)
				h.notify()
				if !sleepCtx(ctx, backoff) {
					return
				}
				backoff = min(backoff*2, PollPostgresDown)
				continue
			}
			lc, backoff = c, 100*time.Millisecond
			h.setListening(true)
			h.notify() // commits while it was down were not notified
		}
		wait := PollPostgres
		if pending {
			wait = max(time.Until(lastBump.Add(LazyPoll)), time.Millisecond)
		}
		wctx, wcancel := context.WithTimeout(ctx, wait)
		n, err := lc.WaitForNotification(wctx)
		wcancel()
		switch {
		case err == nil:
			if n.Payload != f.pg.schema || n.PID == f.pg.writerPID.Load() {
				continue // another schema's, or this process's own commit (woken already)
			}
			// Agents that only wait (lazy watchers) are woken at most every
			// LazyPoll: every heartbeat of every agent notifies.
			if lazyOnly() && time.Since(lastBump) < LazyPoll {
				pending = true
				continue
			}
			h.notify()
			lastBump, pending = time.Now(), false
		case ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
			if pending && time.Since(lastBump) >= LazyPoll || time.Since(lastBump) >= PollPostgres {
				h.notify()
				lastBump, pending = time.Now(), false
			}
		default:
			lc.Close(context.Background())
			lc = nil
			h.setListening(false)
			h.notify()
		}
	}
}

// pgListen makes the listening connection.
func (f *dbfile) pgListen(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, f.pg.cfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err = c.Exec(ctx, `LISTEN `+pgChannel); err != nil {
		c.Close(context.Background())
		return nil, err
	}
	return c, nil
}

func (h *hub) setListening(on bool) {
	h.mu.Lock()
	h.notifying = on
	h.mu.Unlock()
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
