package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/approve-tui/approve-tui/model"
)

// The schema a PostgreSQL store lives in: the first of the search_path.

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
