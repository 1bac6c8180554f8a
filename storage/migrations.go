package storage

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// The DDL of each engine lives in migrations/ENGINE/, one file per part of
// the schema, read once when the program starts:
//
//	hermes.sql      the Hermes table and its indexes
//	execution.sql   the execution_* columns, each added when missing
//	versions.sql    approve_tui_migrations, which records the versions below
//	NNNN.sql        approve-tui migration NNNN (SchemaVersion is the last)
//	lockouts.sql    the lockouts table of Hermes' tier-2 revision
//	tier2.sql       what a copy of a tier-2 store adds
//	lock.sql        (PostgreSQL) runs first in the migration transaction
//	audit_refit.sql (SQLite) rebuilds an audit log made with AUTOINCREMENT
//
// A file holds statements ended by semicolons; "--" comments between them
// are for the reader. Migration numbers are the same on both engines: a
// store copied between them keeps its version.

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

var (
	sqliteSchema = mustLoadSchema("sqlite")
	pgSchema     = mustLoadSchema("postgres")
	// auditRefit rebuilds an audit log made with AUTOINCREMENT (by
	// approve-tui before 2026-12) without it, keeping every row as it is
	// (migrations/sqlite/0001.sql says why).
	auditRefit = mustStatements("sqlite", "audit_refit.sql")
)

func mustLoadSchema(dialect string) schemaDDL {
	s, err := loadSchema(migrationFiles, dialect)
	if err != nil {
		panic(err)
	}
	return s
}

func mustStatements(dialect, name string) []string {
	stmts, err := readStatements(migrationFiles, dialect, name, false)
	if err != nil {
		panic(err)
	}
	return stmts
}

// loadSchema reads one engine's schema from fsys.
func loadSchema(fsys fs.FS, dialect string) (schemaDDL, error) {
	var s schemaDDL
	var failed error
	read := func(name string, optional bool) []string {
		if failed != nil {
			return nil
		}
		stmts, err := readStatements(fsys, dialect, name, optional)
		failed = err
		return stmts
	}
	one := func(name string) string {
		stmts := read(name, false)
		if failed == nil && len(stmts) != 1 {
			failed = fmt.Errorf("migrations/%s/%s: %d statements where one should be", dialect, name, len(stmts))
		}
		if failed != nil {
			return ""
		}
		return stmts[0]
	}
	s.preMigrate = read("lock.sql", true)
	hermes := read("hermes.sql", false)
	if failed == nil && len(hermes) == 0 {
		failed = fmt.Errorf("migrations/%s/hermes.sql: no statements", dialect)
	}
	if failed == nil {
		s.hermesTable, s.hermesIndexes = hermes[0], hermes[1:]
	}
	for _, stmt := range read("execution.sql", false) {
		_, after, ok := strings.Cut(stmt, " ADD COLUMN ")
		name, _, _ := strings.Cut(after, " ")
		if !ok || name == "" {
			failed = fmt.Errorf("migrations/%s/execution.sql: %q adds no column", dialect, stmt)
			break
		}
		s.executionColumns = append(s.executionColumns, struct{ name, ddl string }{name, stmt})
	}
	s.migrationsTable = one("versions.sql")
	for v := 1; v <= SchemaVersion; v++ {
		s.migrations = append(s.migrations, read(fmt.Sprintf("%04d.sql", v), false))
	}
	if failed == nil {
		if _, err := fs.Stat(fsys, fmt.Sprintf("migrations/%s/%04d.sql", dialect, SchemaVersion+1)); err == nil {
			failed = fmt.Errorf("migrations/%s/%04d.sql is newer than SchemaVersion %d", dialect, SchemaVersion+1, SchemaVersion)
		}
	}
	s.lockoutsTable = one("lockouts.sql")
	s.tier2Columns = read("tier2.sql", false)
	return s, failed
}

// readStatements reads the statements of one file (none when it is missing
// and optional).
func readStatements(fsys fs.FS, dialect, name string, optional bool) ([]string, error) {
	path := "migrations/" + dialect + "/" + name
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		if optional && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	stmts, err := splitStatements(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return stmts, nil
}

// splitStatements splits a script at the semicolons that end its statements:
// not those inside a quoted string or identifier, a dollar-quoted body
// ($$ ... $$, $tag$ ... $tag$) or a "--" comment. Each statement is given
// without the comment lines before it, the white space around it and its
// semicolon. Text after the last semicolon must be white space or comments.
func splitStatements(script string) ([]string, error) {
	var out []string
	start := 0
	for i := 0; i < len(script); i++ {
		switch c := script[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(script[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("a %c quote is not closed", c)
			}
			i += j + 1
		case c == '-' && strings.HasPrefix(script[i:], "--"):
			j := strings.IndexByte(script[i:], '\n')
			if j < 0 {
				i = len(script)
			} else {
				i += j
			}
		case c == '$':
			j := strings.IndexByte(script[i+1:], '$')
			if j < 0 || strings.ContainsAny(script[i+1:i+1+j], " \t\r\n;'\"") {
				continue // not a dollar quote
			}
			tag := script[i : i+j+2]
			k := strings.Index(script[i+len(tag):], tag)
			if k < 0 {
				return nil, fmt.Errorf("the dollar quote %s is not closed", tag)
			}
			i += len(tag) + k + len(tag) - 1
		case c == ';':
			stmt := trimStatement(script[start:i])
			if stmt == "" {
				return nil, fmt.Errorf("an empty statement before byte %d", i)
			}
			out = append(out, stmt)
			start = i + 1
		}
	}
	if rest := trimStatement(script[start:]); rest != "" {
		return nil, fmt.Errorf("the last statement has no semicolon: %.40q", rest)
	}
	return out, nil
}

// trimStatement drops the white space and whole-line comments before a
// statement and the white space after it.
func trimStatement(s string) string {
	for {
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, "--") {
			return s
		}
		_, rest, ok := strings.Cut(s, "\n")
		if !ok {
			return ""
		}
		s = rest
	}
}
