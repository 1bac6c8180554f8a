package hermes

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

// doctorRig is a Hermes home in a temporary directory, with a real store
// and a real program standing in for approve-tui (it prints the version).
type doctorRig struct {
	home, bin, db string
	env           DoctorEnv
}

func newDoctorRig(t *testing.T) *doctorRig {
	t.Helper()
	dir := t.TempDir()
	r := &doctorRig{home: filepath.Join(dir, "hermes"), bin: filepath.Join(dir, "bin", "approve-tui"), db: filepath.Join(dir, "state.db")}
	if err := os.MkdirAll(filepath.Dir(r.bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.bin, []byte("#!/bin/sh\necho 'approve-tui 9.9.9 test'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := storage.Open(context.Background(), r.db, storage.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	r.env = DoctorEnv{Home: r.home, Getenv: func(string) string { return "" }, LockTimeout: time.Second,
		Version: "approve-tui 9.9.9 test", LookPath: func(string) (string, bool) { return "", false },
		BinaryVersion: func(ctx context.Context, path string) (string, error) {
			out, err := exec.CommandContext(ctx, path, "--version").Output()
			first, _ := bufio.NewReader(bytes.NewReader(out)).ReadString('\n')
			return strings.TrimSpace(first), err
		}}
	return r
}

func (r *doctorRig) config(t *testing.T, yaml string) {
	t.Helper()
	if err := os.MkdirAll(r.home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.home, "config.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
}

func byName(checks []Check) map[string]Check {
	out := map[string]Check{}
	for _, c := range checks {
		out[c.Name] = c
	}
	return out
}

func TestDoctorAllGood(t *testing.T) {
	r := newDoctorRig(t)
	if _, err := Install(filepath.Join(r.home, "plugins", PluginName)); err != nil {
		t.Fatal(err)
	}
	r.config(t, "plugins:\n  enabled: [approve-tui]\n  entries:\n    approve-tui:\n      settings:\n        db: "+r.db+"\n        binary: "+r.bin+
		"\nsecurity:\n  approval:\n    transport: approve-tui\n    transport_fallback: deny\napprovals:\n  mode: manual\n  timeout: 300\n")
	checks := Doctor(context.Background(), r.env)
	want := []string{"plugin", "config", "enabled", "transport", "fallback", "mode", "timeout", "binary", "store"}
	if len(checks) != len(want) {
		t.Fatalf("%d checks, want %d: %+v", len(checks), len(want), checks)
	}
	for i, c := range checks {
		if c.Name != want[i] || c.Status != CheckOK {
			t.Errorf("check %d: %+v, want %s ok", i, c, want[i])
		}
	}
	if m := byName(checks)["store"].Message; !strings.Contains(m, "has the approval table") || !strings.Contains(m, "writable by this user") {
		t.Errorf("store: %s", m)
	}
}

func TestDoctorSaysWhatToFix(t *testing.T) {
	r := newDoctorRig(t)
	r.env.HomeFlag = r.home
	r.config(t, "plugins:\n  enabled: approve-tui\n  disabled: [approve-tui]\nsecurity:\n  approval:\n    transport: builtin\n    transport_fallback: builtin\napprovals:\n  mode: off\n  timeout: 20\n")
	got := byName(Doctor(context.Background(), r.env))
	for _, c := range []struct{ name, status, words string }{
		{"plugin", CheckProblem, "not installed"},
		{"plugin", CheckProblem, "--hermes-home " + r.home},
		{"config", CheckOK, "parses"},
		{"enabled", CheckProblem, `plugins.enabled is "approve-tui", not a list`},
		{"enabled", CheckProblem, "is in plugins.disabled: remove it"},
		{"transport", CheckProblem, `security.approval.transport is "builtin": set it to approve-tui`},
		{"fallback", CheckWarning, "set it to deny to fail closed"},
		{"mode", CheckProblem, "approvals.mode is off"},
		{"timeout", CheckProblem, "approvals.timeout is 20s"},
		{"binary", CheckProblem, "not on this shell's PATH"},
		{"store", CheckProblem, "does not exist"},
	} {
		ch := got[c.name]
		if ch.Status != c.status || !strings.Contains(ch.Message, c.words) {
			t.Errorf("%s: %s %q; want %s with %q", c.name, ch.Status, ch.Message, c.status, c.words)
		}
	}
}

func TestDoctorUnreadableConfig(t *testing.T) {
	r := newDoctorRig(t)
	r.config(t, "plugins:\n  enabled: [approve-tui\n")
	got := byName(Doctor(context.Background(), r.env))
	if c := got["config"]; c.Status != CheckProblem || !strings.Contains(c.Message, "config.yaml:") || !strings.Contains(c.Message, "fix the YAML") {
		t.Errorf("config: %+v", c)
	}
	for _, name := range []string{"enabled", "transport", "fallback", "mode", "timeout"} {
		if c := got[name]; c.Status != CheckProblem || !strings.HasPrefix(c.Message, "not checked: ") {
			t.Errorf("%s: %+v, want not checked", name, c)
		}
	}
}

func TestTimeoutLeavesTheOperatorTime(t *testing.T) {
	for _, c := range []struct {
		yaml, status, words string
	}{
		{"", CheckOK, "approvals.timeout is not set (300s)"},
		{"approvals:\n  timeout: \"120\"\n", CheckOK, "approvals.timeout is 120s"},
		{"approvals:\n  timeout: soon\n", CheckProblem, "not a number of seconds"},
		{"approvals:\n  timeout: 1\n", CheckProblem, "leaves an operator no time"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "config.yaml")
		os.WriteFile(path, []byte(c.yaml), 0o644)
		status, msg := checkTimeout(LoadConfig(path))
		if status != c.status || !strings.Contains(msg, c.words) {
			t.Errorf("%q: %s %q; want %s with %q", c.yaml, status, msg, c.status, c.words)
		}
	}
}

func TestAdvise(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "config.yaml")
	adv := Advise(LoadConfig(path), home, filepath.Join(home, "state.db"), false)
	if adv.State != "missing" || adv.Snippet != "plugins:\n  enabled:\n    - approve-tui\nsecurity:\n  approval:\n    transport: approve-tui\n" {
		t.Errorf("missing: %+v", adv)
	}
	os.WriteFile(path, []byte("plugins:\n  enabled: [approve-tui]\nsecurity:\n  approval:\n    transport: approve-tui\n"), 0o644)
	if adv := Advise(LoadConfig(path), home, filepath.Join(home, "state.db"), false); adv.State != "configured" || adv.Snippet != "" {
		t.Errorf("configured: %+v", adv)
	}
	other := filepath.Join(home, "other dir", "s.db")
	adv = Advise(LoadConfig(path), home, other, false)
	if adv.State != "incomplete" || !strings.Contains(adv.Snippet, "db: \""+other+"\"") {
		t.Errorf("another store: %+v", adv)
	}
	adv = Advise(LoadConfig(path), home, "postgres://u:xxxxx@db/approvals", true)
	if len(adv.Notes) != 1 || !strings.Contains(adv.Notes[0], "password is shown as xxxxx") {
		t.Errorf("postgres: %+v", adv)
	}
}
