// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema in the server that APPROVE_TUI_TEST_POSTGRES names, dropped when
// the test ends. `sh examples/postgres-local.sh start DIR` starts a
// throw-away server and prints a URL for it.
package pgtest

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Env names the server; EnvRequired=1 makes its absence a failure (CI).
const (
	Env         = "APPROVE_TUI_TEST_POSTGRES"
	EnvRequired = "APPROVE_TUI_TEST_POSTGRES_REQUIRED"
)

// Available reports whether a test server is named.
func Available() bool { return os.Getenv(Env) != "" }

// Require skips t when no server is named, or fails it when one must be.
func Require(t testing.TB) {
	t.Helper()
	if Available() {
		return
	}
	if os.Getenv(EnvRequired) == "1" {
		t.Fatal(Env + " is not set, and the PostgreSQL tests are required")
	}
	t.Skip("no PostgreSQL server: set " + Env + " (sh examples/postgres-local.sh start DIR prints a URL)")
}

var admin struct {
	once sync.Once
	db   *sql.DB
	err  error
}

// Schema makes a schema for t and returns the server's URL with search_path
// set to it; the schema is dropped when t ends.
func Schema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	admin.once.Do(func() {
		admin.db, admin.err = sql.Open("pgx", base)
		if admin.err == nil {
			admin.err = admin.db.Ping()
		}
	})
	if admin.err != nil {
		t.Fatalf("PostgreSQL test server: %v", admin.err)
	}
	name := fmt.Sprintf("t_%x", rand.Uint64())
	if _, err := admin.db.Exec(`CREATE SCHEMA ` + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.db.Exec(`DROP SCHEMA ` + name + ` CASCADE`); err != nil {
			t.Logf("drop schema %s: %v", name, err)
		}
	})
	return WithParam(base, "search_path", name)
}

// WithParam is u with a query parameter set.
func WithParam(u, key, value string) string {
	p, err := url.Parse(u)
	if err != nil {
		panic(err)
	}
	q := p.Query()
	q.Set(key, value)
	p.RawQuery = q.Encode()
	return p.String()
}
