package storage

import (
	"fmt"
	"os"
	"testing"

	"github.com/approve-tui/approve-tui/internal/pgtest"
)

// The suite runs twice: against SQLite files, then against PostgreSQL when
// APPROVE_TUI_TEST_POSTGRES names a server (a URL to a database the tests
// may create schemas in; `sh examples/postgres-local.sh start DIR` starts a
// throw-away one and prints it). APPROVE_TUI_TEST_POSTGRES_REQUIRED=1 makes
// its absence a failure (CI).

// testBackend is the backend of the pass running now.
var testBackend = "sqlite"

const (
	envPostgres         = pgtest.Env
	envPostgresRequired = pgtest.EnvRequired
)

// pgtestSchema is a schema of t's own in the test server.
func pgtestSchema(t testing.TB) string {
	t.Helper()
	return pgtest.Schema(t)
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
