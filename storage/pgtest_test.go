package storage

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver for raw connections
)

// The suite runs twice: against SQLite files, then against PostgreSQL when
// APPROVE_TUI_TEST_POSTGRES names a server (a URL to a database the tests
// may create schemas in; `sh examples/postgres-local.sh start DIR` starts a
// throw-away one and prints it). APPROVE_TUI_TEST_POSTGRES_REQUIRED=1 makes
// its absence a failure (CI).

// testBackend is the backend of the pass running now.
var testBackend = "sqlite"

const (
	envPostgres         = "APPROVE_TUI_TEST_POSTGRES"
	envPostgresRequired = "APPROVE_TUI_TEST_POSTGRES_REQUIRED"
)

var pgAdmin struct {
	once sync.Once
	db   *sql.DB
	err  error
}

// pgtestSchema makes a schema of its own for t and returns the test URL
// with search_path set to it.
func pgtestSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(envPostgres)
	pgAdmin.once.Do(func() {
		pgAdmin.db, pgAdmin.err = sql.Open("pgx", base)
		if pgAdmin.err == nil {
			pgAdmin.err = pgAdmin.db.Ping()
		}
	})
	if pgAdmin.err != nil {
		t.Fatalf("PostgreSQL test server %s: %v", RedactURL(base), pgAdmin.err)
	}
	name := fmt.Sprintf("t_%x", rand.Uint64())
	if _, err := pgAdmin.db.Exec(`CREATE SCHEMA ` + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pgAdmin.db.Exec(`DROP SCHEMA ` + name + ` CASCADE`); err != nil {
			t.Logf("drop schema %s: %v", name, err)
		}
	})
	return withSearchPath(base, name)
}

func withSearchPath(base, schema string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// runBothBackends runs the tests on SQLite, then on PostgreSQL.
func runBothBackends(m *testing.M) int {
	code := m.Run()
	if os.Getenv(envPostgres) == "" {
		if os.Getenv(envPostgresRequired) == "1" {
			fmt.Fprintln(os.Stderr, "FAIL: "+envPostgres+" is not set, and the PostgreSQL pass is required")
			return 1
		}
		fmt.Fprintln(os.Stderr, "note: the PostgreSQL pass did not run: set "+envPostgres+
			" (sh examples/postgres-local.sh start DIR prints a URL)")
		return code
	}
	fmt.Fprintln(os.Stderr, "=== the same suite against PostgreSQL")
	testBackend = "postgres"
	if c := m.Run(); c != 0 {
		code = c
	}
	return code
}
