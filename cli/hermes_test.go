package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/integrations/hermes"
	"github.com/approve-tui/approve-tui/storage"
)

// hdocRun runs the CLI in-process with exactly the environment env.
func hdocRun(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errb)
	a.isTTY = func() bool { return false }
	a.getenv = func(k string) string { return env[k] }
	code := a.execute(context.Background(), args)
	return code, out.String(), errb.String()
}

// fakeApproveTUI writes an executable approve-tui into dir that prints
// this build's version, as the real one would.
func hdocFakeBinary(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "approve-tui")
	v := "approve-tui " + Build.String()
	script := "#!/bin/sh\nprintf '%s\\n' '" + strings.ReplaceAll(v, "'", `'\''`) + "'\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func hdocHash(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func hdocHasTable(t *testing.T, db string) bool {
	t.Helper()
	s, err := storage.Open(context.Background(), db, storage.Options{ReadOnly: true})
	if err != nil {
		return false
	}
	s.Close()
	return true
}

func TestHermesInstall(t *testing.T) {
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.yaml")
	cfg := "model: some/model\nplugins:\n  enabled: [other]\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := hdocRun(t, nil, "hermes", "install", "--hermes-home", home)
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errs)
	}
	pdir := filepath.Join(home, "plugins", "approve-tui")
	for _, want := range []string{"installed the Hermes plugin approve-tui in " + pdir, "created " + filepath.Join(home, "state.db"),
		"add to " + cfgPath, "plugins:\n  enabled:\n    - approve-tui\nsecurity:\n  approval:\n    transport: approve-tui\n",
		"approve-tui hermes doctor --hermes-home " + home} {
		if !strings.Contains(out, want) {
			t.Errorf("install output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "db:") {
		t.Errorf("the default store needs no settings.db:\n%s", out)
	}
	for _, name := range hermes.Files() {
		want, _ := hermes.File(name)
		got, err := os.ReadFile(filepath.Join(pdir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not the embedded bytes (%v)", name, err)
		}
		if fi, err := os.Stat(filepath.Join(pdir, name)); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v (%v), want 0644", name, fi.Mode(), err)
		}
	}
	if got, _ := os.ReadFile(cfgPath); string(got) != cfg {
		t.Errorf("config.yaml was changed: %q", got)
	}
	if !hdocHasTable(t, filepath.Join(home, "state.db")) {
		t.Errorf("state.db has no gateway_approvals table after install")
	}

	// Again: current, the store opened.
	code, out, errs = hdocRun(t, nil, "hermes", "install", "--hermes-home", home)
	if code != 0 || !strings.Contains(out, "the Hermes plugin approve-tui in "+pdir+" is current") ||
		!strings.Contains(out, "opened existing "+filepath.Join(home, "state.db")) {
		t.Fatalf("second install: exit %d\n%s%s", code, out, errs)
	}

	// A changed file is replaced, and said so; nothing else is touched.
	os.WriteFile(filepath.Join(pdir, "__init__.py"), []byte("# edited\n"), 0o644)
	os.WriteFile(filepath.Join(pdir, "extra.txt"), []byte("mine"), 0o644)
	code, out, _ = hdocRun(t, nil, "hermes", "install", "--hermes-home", home)
	if code != 0 || !strings.Contains(out, "updated the Hermes plugin approve-tui in "+pdir+" (rewrote __init__.py)") {
		t.Fatalf("update: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(pdir, "extra.txt")); string(b) != "mine" {
		t.Errorf("install touched a file not its own")
	}
	if left, _ := filepath.Glob(filepath.Join(pdir, ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// A config that has it all: said so, no snippet.
	done := "plugins:\n  enabled:\n    - approve-tui\nsecurity:\n  approval:\n    transport: approve-tui\n"
	os.WriteFile(cfgPath, []byte(done), 0o600)
	code, out, _ = hdocRun(t, nil, "hermes", "install", "--hermes-home", home)
	if code != 0 || !strings.Contains(out, cfgPath+" already enables approve-tui and selects it as the approval transport") ||
		strings.Contains(out, "plugins:") {
		t.Fatalf("configured: exit %d\n%s", code, out)
	}
	if got, _ := os.ReadFile(cfgPath); string(got) != done {
		t.Errorf("config.yaml was changed: %q", got)
	}

	// --json
	code, out, _ = hdocRun(t, nil, "--json", "hermes", "install", "--hermes-home", home)
	var m map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("--json: exit %d %s", code, out)
	}
	if m["plugin"] != "current" || m["config_state"] != "configured" || m["config_snippet"] != nil ||
		m["store"].(map[string]any)["path"] != filepath.Join(home, "state.db") || m["plugin_dir"] != pdir {
		t.Errorf("--json: %s", out)
	}
}

// A store other than DIR/state.db: its path is printed as settings.db, and
// made ready there; Hermes' state.db is not created.
func TestHermesInstallOtherStore(t *testing.T) {
	home := t.TempDir()
	db := filepath.Join(t.TempDir(), "approvals.db")
	code, out, errs := hdocRun(t, nil, "--db", db, "hermes", "install", "--hermes-home", home)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, hdocCfgMissing(home)) || !strings.Contains(out, "  entries:\n    approve-tui:\n      settings:\n        db: "+db+"\n") {
		t.Errorf("no settings.db in:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "state.db")); err == nil {
		t.Errorf("state.db was created for another store")
	}
	if !hdocHasTable(t, db) {
		t.Errorf("%s not made ready", db)
	}
	if _, err := os.Stat(filepath.Join(home, "config.yaml")); err == nil {
		t.Errorf("config.yaml was created")
	}
	// $APPROVE_TUI_DB counts as given too.
	db2 := filepath.Join(t.TempDir(), "env.db")
	code, out, _ = hdocRun(t, map[string]string{"APPROVE_TUI_DB": db2}, "hermes", "install", "--hermes-home", home)
	if code != 0 || !strings.Contains(out, "db: "+db2+"\n") || !hdocHasTable(t, db2) {
		t.Errorf("APPROVE_TUI_DB: exit %d\n%s", code, out)
	}
	// --read-only: a usage error, nothing installed.
	other := t.TempDir()
	if code, _, _ := hdocRun(t, nil, "--read-only", "hermes", "install", "--hermes-home", other); code != ExitUsage {
		t.Errorf("--read-only: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(other, "plugins")); err == nil {
		t.Errorf("--read-only installed the plugin")
	}
}

func hdocCfgMissing(home string) string {
	return filepath.Join(home, "config.yaml") + " does not exist yet"
}

const hdocGoodConfig = `plugins:
  enabled:
    - approve-tui
  entries:
    approve-tui:
      settings:
        binary: BIN
security:
  approval:
    transport: approve-tui
approvals:
  mode: manual
  timeout: 300
`

type hdocResult struct {
	code     int
	out      string
	status   map[string]string
	messages map[string]string
	raw      string
}

// doctor runs hermes doctor --json and reads each check's status.
func hdocDoctor(t *testing.T, env map[string]string, home string) hdocResult {
	t.Helper()
	code, out, errs := hdocRun(t, env, "--json", "hermes", "doctor", "--hermes-home", home)
	var v struct {
		OK       bool `json:"ok"`
		Problems int  `json:"problems"`
		Checks   []struct {
			Name, Status, Message string
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, out, errs)
	}
	r := hdocResult{code: code, out: out, status: map[string]string{}, messages: map[string]string{}, raw: out}
	var names []string
	for _, c := range v.Checks {
		r.status[c.Name], r.messages[c.Name] = c.Status, c.Message
		names = append(names, c.Name)
	}
	if want := []string{"plugin", "config", "enabled", "transport", "fallback", "mode", "timeout", "binary", "store"}; !slices.Equal(names, want) {
		t.Fatalf("checks %v, want %v", names, want)
	}
	if v.OK != (v.Problems == 0) || (code == 0) != v.OK {
		t.Fatalf("exit %d with ok %v, %d problems", code, v.OK, v.Problems)
	}
	return r
}

// only reports the checks whose status is not ok.
func (r hdocResult) notOK() map[string]string {
	m := map[string]string{}
	for k, v := range r.status {
		if v != "ok" {
			m[k] = v
		}
	}
	return m
}

// hermesSetup installs everything in a fresh home and returns it with the
// path of the fake binary.
func hdocSetup(t *testing.T) (home, bin string) {
	t.Helper()
	home = t.TempDir()
	bin = hdocFakeBinary(t, filepath.Join(t.TempDir(), "bin"))
	if code, out, errs := hdocRun(t, nil, "hermes", "install", "--hermes-home", home); code != 0 {
		t.Fatalf("install: %d %s%s", code, out, errs)
	}
	hdocWriteConfig(t, home, strings.ReplaceAll(hdocGoodConfig, "BIN", bin))
	return home, bin
}

func hdocWriteConfig(t *testing.T, home, cfg string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestHermesDoctorNothingInstalled(t *testing.T) {
	home := t.TempDir()
	r := hdocDoctor(t, map[string]string{"PATH": t.TempDir()}, home)
	want := map[string]string{"plugin": "problem", "config": "problem", "enabled": "problem", "transport": "problem",
		"binary": "problem", "store": "problem"}
	if r.code != ExitError || !maps.Equal(r.notOK(), want) {
		t.Fatalf("exit %d, %v\n%s", r.code, r.notOK(), r.raw)
	}
	for name, has := range map[string]string{
		"plugin": "run approve-tui hermes install --hermes-home " + home,
		"config": "does not exist",
		"binary": "not on this shell's PATH",
		"store":  filepath.Join(home, "state.db") + " (from the default) does not exist: run approve-tui hermes install",
	} {
		if !strings.Contains(r.messages[name], has) {
			t.Errorf("%s: %q lacks %q", name, r.messages[name], has)
		}
	}
	// It created nothing.
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Errorf("doctor created %v", ents)
	}
}

func TestHermesDoctorAllInPlace(t *testing.T) {
	home, bin := hdocSetup(t)
	db := filepath.Join(home, "state.db")
	before := hdocHash(t, db)
	r := hdocDoctor(t, nil, home)
	if r.code != 0 || len(r.notOK()) != 0 {
		t.Fatalf("exit %d, %v\n%s", r.code, r.notOK(), r.raw)
	}
	if !strings.Contains(r.messages["binary"], bin+" (from settings.binary) is approve-tui ") ||
		!strings.Contains(r.messages["store"], db+" (from the default) has the approval table") ||
		!strings.Contains(r.messages["timeout"], "approvals.timeout is 300s: an operator has 4m55s") {
		t.Errorf("messages: %v", r.messages)
	}
	if hdocHash(t, db) != before {
		t.Errorf("doctor changed the store")
	}
	// The text form: one line per check, then the count.
	code, out, _ := hdocRun(t, nil, "hermes", "doctor", "--hermes-home", home)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 10 || !strings.HasPrefix(lines[0], "ok       plugin     ") || lines[9] != "no problems, no warnings" {
		t.Fatalf("text: exit %d\n%s", code, out)
	}

	// Found only on PATH: a warning that says how to pin it, exit 0.
	hdocWriteConfig(t, home, strings.ReplaceAll(hdocGoodConfig, "        binary: BIN\n", "        other: 1\n"))
	r = hdocDoctor(t, map[string]string{"PATH": filepath.Dir(bin)}, home)
	if r.code != 0 || !maps.Equal(r.notOK(), map[string]string{"binary": "warning"}) ||
		!strings.Contains(r.messages["binary"], "a service's PATH may differ from this shell's: set plugins.entries.approve-tui.settings.binary: "+bin) {
		t.Fatalf("PATH: exit %d %v\n%s", r.code, r.notOK(), r.raw)
	}
	// $APPROVE_TUI_BIN: no warning.
	r = hdocDoctor(t, map[string]string{"APPROVE_TUI_BIN": bin}, home)
	if r.code != 0 || len(r.notOK()) != 0 || !strings.Contains(r.messages["binary"], "(from $APPROVE_TUI_BIN)") {
		t.Fatalf("APPROVE_TUI_BIN: exit %d %v\n%s", r.code, r.notOK(), r.raw)
	}
}

// Each single thing wrong is found, alone, with its fix.
func TestHermesDoctorSingleProblems(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(cfg string) string
		check   string
		status  string
		message string
	}{
		{"disabled", func(c string) string {
			return strings.Replace(c, "  entries:", "  disabled: [approve-tui]\n  entries:", 1)
		}, "enabled", "problem", "approve-tui is in plugins.disabled: remove it from there"},
		{"not enabled", func(c string) string { return strings.Replace(c, "    - approve-tui\n", "    - other\n", 1) },
			"enabled", "problem", "approve-tui is not in plugins.enabled"},
		{"wrong transport", func(c string) string { return strings.Replace(c, "transport: approve-tui", "transport: slack", 1) },
			"transport", "problem", `security.approval.transport is "slack": set it to approve-tui`},
		{"fallback builtin", func(c string) string {
			return strings.Replace(c, "transport: approve-tui", "transport: approve-tui\n    transport_fallback: builtin", 1)
		}, "fallback", "warning", "Hermes shows its own prompt instead of denying"},
		{"fallback bogus", func(c string) string {
			return strings.Replace(c, "transport: approve-tui", "transport: approve-tui\n    transport_fallback: allow", 1)
		}, "fallback", "problem", `is "allow": want deny`},
		{"mode off", func(c string) string { return strings.Replace(c, "mode: manual", "mode: off", 1) },
			"mode", "problem", "approvals.mode is off: Hermes asks nobody"},
		{"mode quoted off", func(c string) string { return strings.Replace(c, "mode: manual", `mode: "off"`, 1) },
			"mode", "problem", "approvals.mode is off"},
		{"timeout 20", func(c string) string { return strings.Replace(c, "timeout: 300", "timeout: 20", 1) },
			"timeout", "problem", "approvals.timeout is 20s, which after approve-tui's 5s margin leaves an operator 15s (want at least 30s): set it to 35 or more"},
		{"timeout text", func(c string) string { return strings.Replace(c, "timeout: 300", "timeout: soon", 1) },
			"timeout", "problem", `approvals.timeout is "soon", not a number`},
		{"binary missing", func(c string) string {
			return hdocReplaceLine(c, "binary: ", "binary: /nonexistent/approve-tui")
		}, "binary", "problem", "/nonexistent/approve-tui (from settings.binary) does not exist"},
		{"binary not approve-tui", func(c string) string { return hdocReplaceLine(c, "binary: ", "binary: /bin/true") },
			"binary", "problem", "not approve-tui's version"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, bin := hdocSetup(t)
			hdocWriteConfig(t, home, c.edit(strings.ReplaceAll(hdocGoodConfig, "BIN", bin)))
			r := hdocDoctor(t, nil, home)
			if !maps.Equal(r.notOK(), map[string]string{c.check: c.status}) || !strings.Contains(r.messages[c.check], c.message) {
				t.Fatalf("want only %s %s with %q; got %v:\n%s", c.check, c.status, c.message, r.notOK(), r.raw)
			}
			if want := 1; c.status == "warning" {
				want = 0
				if r.code != want {
					t.Fatalf("a warning exits %d", r.code)
				}
			} else if r.code != want {
				t.Fatalf("a problem exits %d", r.code)
			}
		})
	}
}

// replaceLine replaces the rest of the line that starts with prefix.
func hdocReplaceLine(s, prefix, repl string) string {
	i := strings.Index(s, prefix)
	j := strings.IndexByte(s[i:], '\n')
	return s[:i] + repl + s[i+j:]
}

// A store without the approval table: a problem, and the file is left as
// it was (no table made, nothing migrated).
func TestHermesDoctorStoreWithoutTable(t *testing.T) {
	home, bin := hdocSetup(t)
	other := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := hdocHash(t, other)
	cfg := strings.ReplaceAll(hdocGoodConfig, "BIN", bin) + ""
	cfg = strings.Replace(cfg, "        binary: "+bin+"\n", "        binary: "+bin+"\n        db: "+other+"\n", 1)
	hdocWriteConfig(t, home, cfg)
	r := hdocDoctor(t, nil, home)
	if r.code != 1 || !maps.Equal(r.notOK(), map[string]string{"store": "problem"}) ||
		!strings.Contains(r.messages["store"], other+" (from settings.db)") || !strings.Contains(r.messages["store"], "no gateway_approvals table") ||
		!strings.Contains(r.messages["store"], "approve-tui init --db "+other) {
		t.Fatalf("exit %d %v\n%s", r.code, r.notOK(), r.raw)
	}
	if hdocHash(t, other) != before || hdocHasTable(t, other) {
		t.Errorf("doctor changed the store")
	}
}

func TestHermesDoctorStoreReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: root may write a file whatever its mode, so a 0444 store is writable")
	}
	home, _ := hdocSetup(t)
	db := filepath.Join(home, "state.db")
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(db, 0o644)
	r := hdocDoctor(t, nil, home)
	if r.code != 1 || !maps.Equal(r.notOK(), map[string]string{"store": "problem"}) ||
		!strings.Contains(r.messages["store"], "not writable by this user") {
		t.Fatalf("exit %d %v\n%s", r.code, r.notOK(), r.raw)
	}
}

func TestHermesDoctorMalformedConfig(t *testing.T) {
	home, _ := hdocSetup(t)
	hdocWriteConfig(t, home, "plugins:\n  enabled: [approve-tui\nsecurity:\n  approval:\n    transport: approve-tui\n")
	r := hdocDoctor(t, nil, home)
	if r.code != 1 || r.status["config"] != "problem" || !strings.Contains(r.messages["config"], filepath.Join(home, "config.yaml")+":") {
		t.Fatalf("exit %d %v\n%s", r.code, r.notOK(), r.raw)
	}
	// path:line:column: message
	rest := strings.TrimPrefix(r.messages["config"], filepath.Join(home, "config.yaml")+":")
	var ln, col int
	if n, _ := fmt.Sscanf(rest, "%d:%d:", &ln, &col); n != 2 || ln < 1 || col < 1 {
		t.Fatalf("no line:column in %q", r.messages["config"])
	}
	if !strings.Contains(r.messages["enabled"], "not checked") {
		t.Errorf("enabled: %q", r.messages["enabled"])
	}
}

// A value from config.yaml is foreign text: an escape sequence in it is
// shown inert, in the text output and the JSON alike.
func TestHermesDoctorHostileValue(t *testing.T) {
	home, bin := hdocSetup(t)
	cfg := strings.Replace(strings.ReplaceAll(hdocGoodConfig, "BIN", bin), "transport: approve-tui", `transport: "\e]0;pwned\a\e[2Japprove-tui"`, 1)
	hdocWriteConfig(t, home, cfg)
	code, out, errs := hdocRun(t, nil, "hermes", "doctor", "--hermes-home", home)
	if code != 1 || strings.ContainsAny(out+errs, "\x1b\a") {
		t.Fatalf("exit %d, raw control bytes in %q", code, out)
	}
	if !strings.Contains(out, `security.approval.transport is "\x1b]0;pwned\x07\x1b[2Japprove-tui": set it to approve-tui`) {
		t.Fatalf("not shown escaped:\n%s", out)
	}
	r := hdocDoctor(t, nil, home)
	if !strings.Contains(r.messages["transport"], `\x1b]0;pwned`) {
		t.Fatalf("json: %q", r.messages["transport"])
	}
}

// hermes install and doctor say their exit codes, within 80 columns.
func TestHermesHelp(t *testing.T) {
	for cmd, want := range map[string][]int{"hermes install": {0, 1, 2, 6}, "hermes doctor": {0, 1, 2}} {
		help := helpOf(t, strings.Fields(cmd)...)
		if got := exitCodesIn(help); !slices.Equal(got, want) {
			t.Errorf("%s --help: exit codes %v, want %v", cmd, got, want)
		}
		for _, l := range strings.Split(help[:strings.Index(help, "\nUsage:")], "\n") {
			if cells(l) > 80 {
				t.Errorf("%s --help: a line of %d cells: %q", cmd, cells(l), l)
			}
		}
	}
	if h := helpOf(t, "hermes"); !strings.Contains(h, "approve-tui hermes doctor") {
		t.Errorf("hermes --help:\n%s", h)
	}
}
