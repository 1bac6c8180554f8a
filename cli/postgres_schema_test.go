package cli

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/internal/pgtest"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the test's own statements
)

// pgAdmin is a plain connection to the test server, for what the test sets
// up behind approve-tui's back.
func pgAdmin(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", os.Getenv(pgtest.Env))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// missingSchemaURL is the test server's URL with a search_path whose first
// schema, name, does not exist, followed by rest (",public"); the schema is
// dropped when t ends if anything made it.
func missingSchemaURL(t *testing.T, admin *sql.DB, rest string) (string, string) {
	t.Helper()
	name := fmt.Sprintf("cli_miss_%x", rand.Uint64())
	t.Cleanup(func() { admin.Exec(`DROP SCHEMA IF EXISTS ` + name + ` CASCADE`) })
	return pgtest.WithParam(os.Getenv(pgtest.Env), "search_path", name+rest), name
}

// A URL whose search_path names a schema that does not exist: every
// command that only opens the store exits 6 saying which schema and how to
// make it (never a driver's Scan error); init and copy --to make it and
// say so; where the user may not make it, they say that too.
func TestPostgresMissingSchemaCLI(t *testing.T) {
	pgtest.Require(t)
	admin := pgAdmin(t)
	db, name := missingSchemaURL(t, admin, "")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"list"}, {"show", "abcdefgh12"}, {"deny", "abcdefgh12"}, {"audit", "--verify"}, {"expire"},
		{"run", "--", "true"}, {"serve", "--listen", "127.0.0.1:0", "--host-key", filepath.Join(dir, "hk"), "--approvers", os.DevNull},
		{"copy", "--from", db, "--to", filepath.Join(dir, "out.db")},
	} {
		code, out, errs := runCLI(t, nil, append([]string{"--db", db}, args...)...)
		if code != ExitUnavailable || !strings.Contains(errs, "schema "+name+" does not exist") ||
			!strings.Contains(errs, "CREATE SCHEMA "+name+";") || !strings.Contains(errs, "approve-tui init") || strings.Contains(errs, "Scan error") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	var n int
	admin.QueryRow(`SELECT count(*) FROM pg_namespace WHERE nspname = $1`, name).Scan(&n)
	if n != 0 {
		t.Fatal("a command that only opens the store made the schema")
	}

	code, out, errs := runCLI(t, nil, "--db", db, "init")
	if code != 0 || !strings.Contains(out, "created schema "+name+"\n") || !strings.Contains(out, "created postgres://") {
		t.Fatalf("init: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, nil, "--db", db, "init")
	if code != 0 || strings.Contains(out, "schema") || !strings.Contains(out, "opened existing") {
		t.Fatalf("init again: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, nil, "--db", db, "list"); code != 0 {
		t.Fatalf("list after init: exit %d\n%s%s", code, out, errs)
	}

	// init --json says it too.
	db2, name2 := missingSchemaURL(t, admin, ",public")
	code, out, errs = runCLI(t, nil, "--db", db2, "--json", "init")
	var got struct {
		CreatedSchema string `json:"created_schema"`
		Created       bool   `json:"created"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.CreatedSchema != name2 || !got.Created {
		t.Fatalf("init --json: exit %d\n%s%s", code, out, errs)
	}

	// copy --to makes the target's schema, as it makes its tables.
	file := filepath.Join(dir, "src.db")
	if code, out, errs := runCLI(t, nil, "--db", file, "init"); code != 0 {
		t.Fatalf("init %s: %d\n%s%s", file, code, out, errs)
	}
	if code, out, errs := runCLI(t, nil, "--db", file, "submit", "--", "rm -rf /srv/copied"); code != 0 {
		t.Fatalf("submit: %d\n%s%s", code, out, errs)
	}
	to, toName := missingSchemaURL(t, admin, "")
	code, out, errs = runCLI(t, nil, "copy", "--from", file, "--to", to)
	if code != 0 || !strings.Contains(out, "created schema "+toName) || !strings.Contains(out, "copied 1 proposal(s)") {
		t.Fatalf("copy into a missing schema: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, nil, "--db", to, "audit", "--verify"); code != 0 {
		t.Fatalf("audit --verify on the copy: %d\n%s%s", code, out, errs)
	}

	// A user who may not create schemas is told what to ask for.
	role := fmt.Sprintf("cli_nocreate_%x", rand.Uint64())
	if _, err := admin.Exec(`CREATE ROLE ` + role + ` LOGIN`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(`DROP ROLE IF EXISTS ` + role) })
	noCreate, ncName := missingSchemaURL(t, admin, "")
	noCreate = strings.Replace(noCreate, "://postgres@", "://"+role+"@", 1)
	for _, args := range [][]string{{"--db", noCreate, "init"}, {"copy", "--from", file, "--to", noCreate}} {
		code, out, errs := runCLI(t, nil, args...)
		if code != ExitUnavailable || !strings.Contains(errs, "schema "+ncName+" does not exist") ||
			!strings.Contains(errs, "may not create it") || !strings.Contains(errs, "CREATE SCHEMA "+ncName+" AUTHORIZATION "+role+";") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
}

// init names the schema it made as a statement writes it, as the server
// quotes it: a name with capitals or a space in quotes.
func TestPostgresCreatedSchemaIsQuotedAsTheServerQuotes(t *testing.T) {
	pgtest.Require(t)
	admin := pgAdmin(t)
	name := fmt.Sprintf("Cli Made %x", rand.Uint64())
	t.Cleanup(func() { admin.Exec(`DROP SCHEMA IF EXISTS "` + name + `" CASCADE`) })
	db := os.Getenv(pgtest.Env) + "&search_path=" + strings.ReplaceAll(`"`+name+`"`, " ", "%20")
	code, out, errs := runCLI(t, nil, "--db", db, "init")
	if code != 0 || !strings.Contains(out, `created schema "`+name+`"`+"\n") {
		t.Fatalf("init: %d %q %q", code, out, errs)
	}
}
