package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/trust"
)

// The trust: section: mode defaults to required with a trust file and off
// without one; paths are taken from the file's directory.
func TestTrustSection(t *testing.T) {
	dir := t.TempDir()
	f := parseOK(t, dir, "trust:\n  allowed_signers: signers\n  policy_signers: [alice, bob]\n")
	want := TrustConfig{Mode: trust.ModeRequired, AllowedSigners: filepath.Join(dir, "signers"), PolicySigners: []string{"alice", "bob"}, Line: 1}
	if !reflect.DeepEqual(f.Trust, want) || !f.TrustRequired() {
		t.Errorf("got %+v, want %+v", f.Trust, want)
	}
	f = parseOK(t, dir, "trust:\n  allowed_signers: /etc/s\n  users: {asmith: alice, bjones: bob}\n")
	if !reflect.DeepEqual(f.Trust.Users, map[string]string{"asmith": "alice", "bjones": "bob"}) {
		t.Errorf("users: %+v", f.Trust.Users)
	}
	f = parseOK(t, dir, "trust: {mode: off, allowed_signers: /etc/s, store: prod}\n")
	if f.Trust.Mode != trust.ModeOff || f.TrustRequired() || f.Trust.Store != "prod" {
		t.Errorf("mode off: %+v", f.Trust)
	}
	for _, src := range []string{"", "open_hint: \"x {id}\"\n", "trust: {}\n", "trust:\n"} {
		if f := parseOK(t, dir, src); f.Trust.Mode != trust.ModeOff || f.TrustRequired() {
			t.Errorf("%q: %+v", src, f.Trust)
		}
	}
	if Defaults().TrustRequired() || Defaults().Trust.Mode != trust.ModeOff {
		t.Error("the defaults ask for signatures")
	}
	if s, err := Defaults().TrustSettings("sqlite:/x", AgentSide); s != nil || err != nil {
		t.Errorf("mode off: %v %v", s, err)
	}
}

// Each mistake in trust: is said where it is.
func TestTrustSectionProblems(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"unknown key", "trust: {signers: x}\n", `1:9: trust: unknown key "signers"; allowed: mode, allowed_signers, policy_signers, store, users`},
		{"bad mode", "trust:\n  mode: strict\n  allowed_signers: /x\n",
			`2:9: trust: mode: "strict" is not a mode; want required (nothing runs without enough valid signatures) or off (no signatures asked for or checked)`},
		{"required without file", "trust:\n  mode: required\n",
			`2:9: trust: mode: required needs allowed_signers: the trust file (OpenSSH allowed_signers format) that names whose keys may sign`},
		{"empty path", "trust: {allowed_signers: \"\"}\n", `1:26: trust: allowed_signers is empty; want a value`},
		{"path a number", "trust: {allowed_signers: 7}\n", `1:26: trust: allowed_signers: want a string, got a number`},
		{"pattern principal", "trust:\n  allowed_signers: /x\n  policy_signers: [alice, \"*@example.com\"]\n",
			`3:27: trust: policy_signers, item 2: "*@example.com" has '*': a principal is a plain name, not a pattern or a list; want a principal as the trust file names it, such as alice`},
		{"principal with space", "trust:\n  allowed_signers: /x\n  policy_signers: [\"alice smith\"]\n",
			`3:20: trust: policy_signers, item 1: "alice smith" has byte 0x20: only visible ASCII, no spaces; want a principal as the trust file names it, such as alice`},
		{"principals not a list", "trust: {allowed_signers: /x, policy_signers: alice}\n",
			`1:46: trust: policy_signers: want a list of principals as the trust file names them, such as [alice, bob], got a string`},
		{"store with space", "trust: {allowed_signers: /x, store: \"prod db\"}\n",
			`1:37: trust: store: "prod db" has byte 0x20: only visible ASCII, no spaces; want a name such as prod-approvals`},
		{"user mapped to a pattern", "trust:\n  allowed_signers: /x\n  users: {asmith: \"a*\"}\n",
			`3:19: trust: users: asmith: "a*" has '*': a principal is a plain name, not a pattern or a list; want a principal as the trust file names it, such as alice`},
		{"not a mapping", "trust: required\n", `1:8: trust: want a mapping (mode, allowed_signers, policy_signers, store, users), got a string`},
	} {
		got := problemsOf(t, c.src)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// trustFile writes a trust file naming a fresh ed25519 key as principal.
func trustFile(t *testing.T, dir, principal string) string {
	t.Helper()
	key := filepath.Join(dir, "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(p, []byte(principal+" "+string(pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TrustSettings loads the trust file: the store identity given unless the
// file names one; a world-writable or missing trust file is an error that
// says which file and where it is configured.
func TestTrustSettings(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed: the trust file needs a real key")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	signers := trustFile(t, dir, "alice")
	cfg := filepath.Join(dir, "config.yaml")
	f := parseOK(t, dir, "trust:\n  allowed_signers: allowed_signers\n  policy_signers: [alice]\n")
	f.Path = cfg
	s, err := f.TrustSettings("sqlite:/var/lib/a.db", OperatorSide)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Required() || s.Path != signers || s.Store != "sqlite:/var/lib/a.db" || !s.PolicySigner("alice") || len(s.Signers.Signers) != 1 {
		t.Errorf("%+v", s)
	}
	f.Trust.Store = "prod"
	if s, err := f.TrustSettings("sqlite:/var/lib/a.db", OperatorSide); err != nil || s.Store != "prod" {
		t.Errorf("store: %v %v", s, err)
	}
	if _, err := f.TrustSettings("", OperatorSide); err != nil {
		t.Errorf("a configured store needs no default: %v", err)
	}
	f.Trust.Store = ""
	if _, err := f.TrustSettings("", OperatorSide); err == nil || !strings.Contains(err.Error(), "set trust: store") {
		t.Errorf("no store identity: %v", err)
	}
	// As root, the agent side takes a root-owned file.
	if os.Geteuid() == 0 {
		if _, err := f.TrustSettings("sqlite:/a.db", AgentSide); err != nil {
			t.Errorf("agent side, root-owned file, run as root: %v", err)
		}
	}
	if err := os.Chmod(signers, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, side := range []Side{OperatorSide, AgentSide} {
		_, err := f.TrustSettings("sqlite:/a.db", side)
		if err == nil || !strings.Contains(err.Error(), cfg+":1: trust: allowed_signers ("+side.String()+")") || !strings.Contains(err.Error(), signers) {
			t.Errorf("%s, world-writable trust file: %v", side, err)
		}
	}
	f.Trust.AllowedSigners = filepath.Join(dir, "missing")
	if _, err := f.TrustSettings("sqlite:/a.db", OperatorSide); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing trust file: %v", err)
	}
}
