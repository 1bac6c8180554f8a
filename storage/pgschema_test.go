package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// schemaCase is a search_path naming a schema that does not exist yet: the
// store's schema is name, shown (and created) as shown.
type schemaCase struct {
	what        string
	searchPath  string
	name, shown string
}

// missingSchemas are search paths of every shape whose store schema does
// not exist: alone, before an existing one (which PostgreSQL's
// current_schema() would silently use instead), after a "$user" that has
// no schema, and quoted (mixed case and a space). Each is dropped when t
// ends, if anything made it.
func missingSchemas(t *testing.T) []schemaCase {
	t.Helper()
	admin := rawDB(t, os.Getenv(envPostgres))
	n := fmt.Sprintf("miss_%x", rand.Uint64())
	cases := []schemaCase{
		{"alone", n + "_a", n + "_a", n + "_a"},
		{"before public", n + "_b, public", n + "_b", n + "_b"},
		{"after a $user without a schema", `"$user",` + n + "_c", n + "_c", n + "_c"},
		{"quoted", `"` + strings.ToUpper(n) + ` D", public`, strings.ToUpper(n) + " D", `"` + strings.ToUpper(n) + ` D"`},
	}
	for _, c := range cases {
		t.Cleanup(func() { admin.Exec(`DROP SCHEMA IF EXISTS "` + c.name + `" CASCADE`) })
	}
	return cases
}

// withSearchPath is the test server's URL with search_path set to sp,
// spaces as %20: pgx, as libpq, reads a + in a URL as a plus sign.
func withSearchPath(sp string) string {
	base := os.Getenv(envPostgres)
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + strings.ReplaceAll(url.QueryEscape(sp), "+", "%20")
}

func schemaExists(t *testing.T, name string) bool {
	t.Helper()
	var n int
	if err := rawDB(t, os.Getenv(envPostgres)).QueryRow(`SELECT count(*) FROM pg_namespace WHERE nspname = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// tableIn reports whether schema holds a gateway_approvals table.
func tableIn(t *testing.T, schema string) bool {
	t.Helper()
	var ok bool
	if err := rawDB(t, os.Getenv(envPostgres)).QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = ? AND tablename = 'gateway_approvals')`,
		schema).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// A search_path whose store schema does not exist is said in words (the
// schema, and how to make it), as the store being unavailable, by every
// open that may not create it; nothing is created, not the schema and not
// tables in another schema of the path.
func TestPostgresMissingSchemaIsSaid(t *testing.T) {
	postgresOnly(t)
	publicHad := tableIn(t, "public")
	for _, c := range missingSchemas(t) {
		t.Run(c.what, func(t *testing.T) {
			db := withSearchPath(c.searchPath)
			for _, opt := range []Options{{}, {ReadOnly: true}, {ReadOnly: true, Create: true}} {
				_, err := Open(ctx, db, opt)
				var un *UnavailableError
				if !errors.As(err, &un) {
					t.Fatalf("open %+v: %v (want an unavailable store)", opt, err)
				}
				for _, want := range []string{"schema " + c.shown + " does not exist", "CREATE SCHEMA " + c.shown + ";", "approve-tui init"} {
					if !strings.Contains(err.Error(), want) {
						t.Fatalf("open %+v: %v\n(want it to say %q)", opt, err, want)
					}
				}
				if strings.Contains(err.Error(), "Scan error") {
					t.Fatalf("open %+v: %v", opt, err)
				}
			}
			if schemaExists(t, c.name) {
				t.Fatal("an open that may not create made the schema")
			}
			if !publicHad && tableIn(t, "public") {
				t.Fatal("the tables were made in public")
			}
		})
	}
}

// An open that may create (init, copy --to) makes the missing schema, says
// so, and puts the tables there; the next open finds it and makes nothing.
func TestPostgresCreateMakesTheSchema(t *testing.T) {
	postgresOnly(t)
	publicHad := tableIn(t, "public")
	for _, c := range missingSchemas(t) {
		t.Run(c.what, func(t *testing.T) {
			db := withSearchPath(c.searchPath)
			s, err := Open(ctx, db, Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.CreatedSchema(); got != c.name || !s.CreatedTable() {
				t.Fatalf("created schema %q, table %v; want %q", got, s.CreatedTable(), c.name)
			}
			mustSubmit(t, s, proposal("schema-made-1", "ls", model.RiskLow, newClock().Now(), 0))
			s.Close()
			if !tableIn(t, c.name) {
				t.Fatal("no gateway_approvals table in the schema made")
			}
			if !publicHad && tableIn(t, "public") {
				t.Fatal("the tables were made in public")
			}
			again, err := Open(ctx, db, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if again.CreatedSchema() != "" || again.CreatedTable() {
				t.Fatalf("the second open made %q (table %v)", again.CreatedSchema(), again.CreatedTable())
			}
			if _, err := again.Get(ctx, "schema-made-1"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Where the schema cannot be made, the open says that it does not exist,
// why it cannot be made here, and the statement that makes it.
func TestPostgresSchemaCreateRefused(t *testing.T) {
	postgresOnly(t)
	base := os.Getenv(envPostgres)
	admin := rawDB(t, base)
	c := missingSchemas(t)[0]
	role := fmt.Sprintf("nocreate_%x", rand.Uint64())
	mustExec(t, admin, `CREATE ROLE `+role+` LOGIN`)
	t.Cleanup(func() { admin.Exec(`DROP ROLE IF EXISTS ` + role) })
	u := withSearchPath(c.searchPath)
	asRole := strings.Replace(u, "postgres://postgres@", "postgres://"+role+"@", 1)
	readOnly := u + "&default_transaction_read_only=on"
	for _, tc := range []struct{ what, db, why string }{
		{"no CREATE privilege", asRole, "user " + role + " may not create it"},
		{"a read-only server", readOnly, "accepts no writes"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			_, err := Open(ctx, tc.db, Options{Create: true})
			var un *UnavailableError
			if !errors.As(err, &un) {
				t.Fatalf("open: %v (want an unavailable store)", err)
			}
			for _, want := range []string{"schema " + c.shown + " does not exist", tc.why, "CREATE SCHEMA " + c.shown} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("open: %v\n(want it to say %q)", err, want)
				}
			}
			if schemaExists(t, c.name) {
				t.Fatal("the schema was made")
			}
		})
	}
}

// A search_path that names no schema at all (empty, or only a "$user" the
// user has no schema for) is said as such.
func TestPostgresSearchPathWithoutASchema(t *testing.T) {
	postgresOnly(t)
	for _, sp := range []string{`""`, `"$user"`} {
		db := withSearchPath(sp)
		for _, opt := range []Options{{}, {Create: true}} {
			_, err := Open(ctx, db, opt)
			var un *UnavailableError
			if !errors.As(err, &un) || !strings.Contains(err.Error(), "names no schema") {
				t.Fatalf("search_path %s, open %+v: %v", sp, opt, err)
			}
		}
	}
}

// search_path is split as PostgreSQL splits it: commas, optional spaces,
// double quotes keeping case and "" for a quote, unquoted names in lower
// case, names cut at 63 bytes.
func TestSplitSearchPath(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{"app", []string{"app"}},
		{"App, Public", []string{"app", "public"}},
		{`"$user", public`, []string{"$user", "public"}},
		{`$user,public`, []string{"$user", "public"}},
		{`"My ""Store""" ,x`, []string{`My "Store"`, "x"}},
		{`"a,b"`, []string{"a,b"}},
		{`""`, []string{""}},
		{long, []string{strings.Repeat("é", 31)}},
	} {
		got, err := splitSearchPath(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitSearchPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`"open`, "a,", ",a", "a b", `a,,b`} {
		if got, err := splitSearchPath(bad); err == nil {
			t.Errorf("splitSearchPath(%q) = %q, want an error", bad, got)
		}
	}
}
