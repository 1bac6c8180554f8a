package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/trust"
)

// No system file, or no directory for it: none, not an error.
func TestLoadSystemMissing(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"", filepath.Join(dir, "config.yaml"), filepath.Join(dir, "no", "such", "config.yaml")} {
		if s, err := LoadSystemAt(p, AgentSide); s != nil || err != nil {
			t.Errorf("%q: %v %v", p, s, err)
		}
	}
	if SystemConfigPath != "/etc/approve-tui/config.yaml" {
		t.Errorf("SystemConfigPath = %q: the default is /etc/approve-tui/config.yaml (packagers set another with -ldflags -X)", SystemConfigPath)
	}
}

// The system file takes trust: only, checked as in the user's file; its
// relative paths are taken from its directory.
func TestParseSystem(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	s, err := ParseSystem(path, []byte("# managed\ntrust:\n  allowed_signers: allowed_signers\n  store: prod\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Path != path || s.Trust.Mode != trust.ModeRequired || s.Trust.AllowedSigners != filepath.Join(dir, "allowed_signers") || s.Trust.Store != "prod" || s.Trust.Line != 2 {
		t.Errorf("%+v", s)
	}
	for _, src := range []string{"", "# nothing\n", "trust: {mode: off}\n"} {
		if s, err := ParseSystem(path, []byte(src)); err != nil || s.Trust.Mode != trust.ModeOff {
			t.Errorf("%q: %+v %v", src, s, err)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"channels: {}\ntrust: {allowed_signers: /x}\n", `:1:1: the system configuration: unknown key "channels"; allowed: trust`},
		{"trust: {mode: lax}\n", `:1:15: trust: mode: "lax" is not a mode`},
		{"trust: [\n", `not valid YAML`},
		{"- trust\n", `the system configuration: want a mapping with trust: only`},
	} {
		_, err := ParseSystem(path, []byte(c.src))
		var ce *Error
		if !errors.As(err, &ce) || ce.Path != path || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
}

// A system file others may write, or whose directory they may, is refused
// with what to fix; so is one that is not a file.
func TestLoadSystemRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("trust: {mode: off}\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	refused := func(what, want string) {
		t.Helper()
		s, err := LoadSystemAt(path, AgentSide)
		var se *SystemError
		if s != nil || !errors.As(err, &se) || !strings.Contains(err.Error(), "system configuration "+path+" refused: ") ||
			!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "chown root:root") {
			t.Errorf("%s: %v %v, want %q", what, s, err, want)
		}
	}
	refused("world-writable", "file is world-writable (mode 0666)")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o775); err != nil {
		t.Fatal(err)
	}
	refused("group-writable directory", dir+": directory is group-writable (mode 0775)")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		// The user running owns it: the agent, run as that user, could
		// rewrite it.
		refused("owned by the user running", "the user this verifier runs as")
	} else if s, err := LoadSystemAt(path, AgentSide); err != nil || s == nil {
		t.Errorf("root-owned, run as root: %v %v", s, err)
	}
	// The operator side takes a file of its own user's (an operators'
	// account may own it), not another's.
	if s, err := LoadSystemAt(path, OperatorSide); err != nil || s == nil {
		t.Errorf("operator side, owned by the user running: %v %v", s, err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(path, 4711, 4711); err != nil {
			t.Fatal(err)
		}
		var se *SystemError
		if _, err := LoadSystemAt(path, OperatorSide); !errors.As(err, &se) || !strings.Contains(err.Error(), "owned by uid 4711, not by root") {
			t.Errorf("operator side, owned by another user: %v", err)
		}
		if s, err := LoadSystemAt(path, AgentSide); err != nil || s == nil {
			t.Errorf("agent side as root, owned by another user: %v %v", s, err)
		}
		if err := os.Chown(path, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	refused("a directory", "not a regular file")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone"), path); err != nil {
		t.Fatal(err)
	}
	refused("a dangling link", "cannot resolve")
}

// On the agent side the system file's trust section is in force whatever
// the user's says; on the operator side the user's own, else the system
// file's. A user section that differs is said.
func TestTrustFor(t *testing.T) {
	dir := t.TempDir()
	signers := trustFile(t, dir, "alice")
	sys, err := ParseSystem(filepath.Join(dir, "system.yaml"), []byte("trust:\n  allowed_signers: allowed_signers\n  store: prod\n"))
	if err != nil {
		t.Fatal(err)
	}
	user := parseOK(t, dir, "trust: {mode: off}\n")
	user.Path = filepath.Join(dir, "config.yaml")
	if tc, from := user.TrustFor(AgentSide); tc.Mode != trust.ModeOff || from.System || from.String() != user.Path+":1" {
		t.Errorf("no system file: %+v %+v", tc, from)
	}
	if w := user.TrustWarning(AgentSide); w != "" {
		t.Errorf("no system file, a warning: %s", w)
	}
	user.Anchor(sys)
	if user.System() != sys {
		t.Error("System() is not the anchor")
	}
	tc, from := user.TrustFor(AgentSide)
	if tc.Mode != trust.ModeRequired || !from.System || from.String() != sys.Path+":1" || tc.AllowedSigners != signers {
		t.Errorf("agent side: %+v %+v", tc, from)
	}
	if tc, from := user.TrustFor(OperatorSide); tc.Mode != trust.ModeOff || from.System {
		t.Errorf("operator side, the user's own: %+v %+v", tc, from)
	}
	if w := user.TrustWarning(AgentSide); !strings.Contains(w, user.Path+":1: trust: (mode off) is ignored here: the system configuration "+sys.Path+" decides") ||
		!strings.Contains(w, "mode required, allowed_signers "+signers+", store prod") {
		t.Errorf("agent side warning: %s", w)
	}
	if w := user.TrustWarning(OperatorSide); !strings.Contains(w, "(mode off) differs from the system configuration "+sys.Path) || !strings.Contains(w, "run and the hooks verify with the system file's") {
		t.Errorf("operator side warning: %s", w)
	}
	// The agent side loads the system file's trust file, whatever the user's says.
	if os.Geteuid() == 0 {
		s, err := user.TrustSettings("sqlite:/a.db", AgentSide)
		if err != nil || s == nil || s.Path != signers || s.Store != "prod" {
			t.Errorf("agent side settings: %+v %v", s, err)
		}
	}
	if s, err := user.TrustSettings("sqlite:/a.db", OperatorSide); s != nil || err != nil {
		t.Errorf("operator side, the user's mode off: %+v %v", s, err)
	}
	// Another trust file and store: each said.
	other := parseOK(t, dir, "trust: {allowed_signers: /home/agent/mine, store: elsewhere}\n")
	other.Anchor(sys)
	if w := other.TrustWarning(AgentSide); !strings.Contains(w, "(another trust file, /home/agent/mine, another store name, elsewhere) is ignored here") {
		t.Errorf("another file: %s", w)
	}
	// No trust: section of the user's: the system file's on both sides,
	// nothing to warn of.
	none := parseOK(t, dir, "open_hint: \"x {id}\"\n")
	none.Anchor(sys)
	if tc, from := none.TrustFor(OperatorSide); tc.Mode != trust.ModeRequired || !from.System {
		t.Errorf("operator side, no section: %+v %+v", tc, from)
	}
	if w := none.TrustWarning(AgentSide) + none.TrustWarning(OperatorSide); w != "" {
		t.Errorf("no section, a warning: %s", w)
	}
	// The same section: nothing to say.
	same := parseOK(t, dir, "trust:\n  allowed_signers: allowed_signers\n  store: prod\n")
	same.Anchor(sys)
	if w := same.TrustWarning(AgentSide); w != "" {
		t.Errorf("same section, a warning: %s", w)
	}
	// A world-writable trust file named by the system file: the error
	// names the system file.
	if err := os.Chmod(signers, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := user.TrustSettings("sqlite:/a.db", AgentSide); err == nil || !strings.Contains(err.Error(), sys.Path+":1: trust: allowed_signers (agent side)") {
		t.Errorf("world-writable trust file: %v", err)
	}
}

// BenchmarkLoadSystem is what the system file adds to each run and hook
// call on the agent side: the path walked and checked component by
// component, the file read and its trust: section parsed.
func BenchmarkLoadSystem(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "config.yaml")
	src := "trust:\n  allowed_signers: /etc/approve-tui/allowed_signers\n  policy_signers: [alice, bob]\n  store: prod-approvals\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	side := AgentSide
	if os.Geteuid() != 0 {
		side = OperatorSide // the agent side refuses a file of the user running
	}
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		s, err := LoadSystemAt(path, side)
		times = append(times, time.Since(start))
		if err != nil || s == nil {
			b.Fatal(s, err)
		}
	}
	slices.Sort(times)
	at := func(q float64) float64 { return float64(times[int(q*float64(len(times)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
