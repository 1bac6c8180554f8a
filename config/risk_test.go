package config

import (
	"os/user"
	"path/filepath"
	"slices"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// RiskContext gives the judgement the file's paths and programs, the file
// itself and the store's files, the cwd asked for, and the home of this
// process's user from the user database, not from $HOME.
func TestRiskContext(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", "/agent/says/home")
	f := parseOK(t, dir, "risk:\n  sensitive_paths: [/srv/prod/, ~/.kube/config]\n  sensitive_programs: {psql: medium}\n")
	f.Path = filepath.Join(dir, "config.yaml")
	db := filepath.Join(dir, "state.db")
	c := f.RiskContext("/work/repo", "sqlite:"+db)
	if c.Cwd != "/work/repo" || c.Programs["psql"] != model.RiskMedium {
		t.Fatalf("%+v", c)
	}
	for _, p := range []string{"/srv/prod/", "~/.kube/config", f.Path, db, db + "-wal", db + "-shm"} {
		if !slices.Contains(c.Paths, p) {
			t.Errorf("%s is not among the sensitive paths %q", p, c.Paths)
		}
	}
	if u, err := user.Current(); err == nil && c.Home != filepath.Clean(u.HomeDir) {
		t.Errorf("home %q, the user database says %q", c.Home, u.HomeDir)
	}
	// A PostgreSQL store has no file; no file, no file path; the defaults
	// add nothing of their own.
	c = Defaults().RiskContext("", "postgres://u:pw@h/db")
	if len(c.Paths) != 0 || len(c.Programs) != 0 {
		t.Errorf("%+v", c)
	}
	// The context's map is its own: changing it changes nothing in f.
	c = f.RiskContext("", "")
	c.Programs["psql"] = model.RiskLow
	if f.Risk.SensitivePrograms["psql"] != model.RiskMedium {
		t.Error("RiskContext shares the file's map")
	}
}
