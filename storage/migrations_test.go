package storage

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestSplitStatements(t *testing.T) {
	for _, c := range []struct {
		script string
		want   []string
		err    string
	}{
		{"-- a comment\n\nCREATE TABLE a (x TEXT);\n\n-- another; with a semicolon\nCREATE INDEX i ON a(x);\n", []string{"CREATE TABLE a (x TEXT)", "CREATE INDEX i ON a(x)"}, ""},
		{"INSERT INTO m VALUES ('a;b', \"c;d\");", []string{"INSERT INTO m VALUES ('a;b', \"c;d\")"}, ""},
		{"CREATE FUNCTION f() AS $$\nBEGIN\n\tRETURN NULL;\nEND\n$$;\nSELECT 1;", []string{"CREATE FUNCTION f() AS $$\nBEGIN\n\tRETURN NULL;\nEND\n$$", "SELECT 1"}, ""},
		{"CREATE FUNCTION f() AS $body$ x; $$ y; $body$;", []string{"CREATE FUNCTION f() AS $body$ x; $$ y; $body$"}, ""},
		{"SELECT 1; SELECT 2", nil, "no semicolon"},
		{"SELECT 'a;", nil, "not closed"},
		{"SELECT $$ a;", nil, "not closed"},
		{"SELECT 1;\n-- nothing\n;", nil, "empty statement"},
		{"-- only a comment\n", nil, ""},
	} {
		got, err := splitStatements(c.script)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one saying %q", c.script, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %q, %v\nwant %q", c.script, got, err, c.want)
		}
	}
}

// The embedded DDL: every migration up to SchemaVersion on both engines,
// the parts each one needs, and the channel PostgreSQL's trigger notifies.
func TestMigrationFiles(t *testing.T) {
	for _, s := range []*schemaDDL{&sqliteSchema, &pgSchema} {
		if len(s.migrations) != SchemaVersion {
			t.Errorf("%d migrations, want %d", len(s.migrations), SchemaVersion)
		}
		for v, m := range s.migrations {
			if len(m) == 0 {
				t.Errorf("migration %d has no statements", v+1)
			}
		}
		if !strings.Contains(s.hermesTable, "CREATE TABLE IF NOT EXISTS gateway_approvals") {
			t.Errorf("hermes.sql starts with %q", s.hermesTable)
		}
		var names []string
		for _, c := range s.executionColumns {
			names = append(names, c.name)
		}
		if want := []string{"execution_status", "execution_reason", "execution_recorded_at"}; !reflect.DeepEqual(names, want) {
			t.Errorf("execution columns %q, want %q", names, want)
		}
	}
	if len(sqliteSchema.preMigrate) != 0 || len(pgSchema.preMigrate) != 1 {
		t.Errorf("lock.sql: %q on SQLite, %q on PostgreSQL", sqliteSchema.preMigrate, pgSchema.preMigrate)
	}
	if !strings.Contains(strings.Join(pgSchema.hermesIndexes, "\n"), "pg_notify('"+pgChannel+"', TG_TABLE_SCHEMA)") {
		t.Errorf("the notify function does not notify channel %s", pgChannel)
	}
	if len(auditRefit) != 5 {
		t.Errorf("audit_refit.sql: %d statements", len(auditRefit))
	}
}

func TestLoadSchemaErrors(t *testing.T) {
	base := fstest.MapFS{}
	for _, name := range []string{"hermes.sql", "execution.sql", "versions.sql", "lockouts.sql", "tier2.sql", "0001.sql", "0002.sql", "0003.sql", "0004.sql", "0005.sql", "0006.sql", "0007.sql"} {
		b, err := migrationFiles.ReadFile("migrations/sqlite/" + name)
		if err != nil {
			t.Fatal(err)
		}
		base["migrations/sqlite/"+name] = &fstest.MapFile{Data: b}
	}
	if _, err := loadSchema(base, "sqlite"); err != nil {
		t.Fatalf("the files as embedded: %v", err)
	}
	for name, data := range map[string]string{
		"migrations/sqlite/0007.sql":      "",
		"migrations/sqlite/0008.sql":      "SELECT 1;",
		"migrations/sqlite/versions.sql":  "SELECT 1; SELECT 2;",
		"migrations/sqlite/execution.sql": "ALTER TABLE gateway_approvals RENAME TO x;",
		"migrations/sqlite/hermes.sql":    "CREATE TABLE x (a TEXT)",
	} {
		fsys := fstest.MapFS{}
		for k, v := range base {
			fsys[k] = v
		}
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
		if data == "" {
			delete(fsys, name)
		}
		if _, err := loadSchema(fsys, "sqlite"); err == nil {
			t.Errorf("%s = %q: loaded without an error", name, data)
		}
	}
}
