package model

import (
	"os/user"
	"strings"
	"testing"
)

func TestActorSafeHost(t *testing.T) {
	for in, want := range map[string]string{
		"ops-1":                   "ops-1",
		"build.example.org":       "build.example.org",
		"vm (as carol)":           "vm-as-carol",
		"vm (SHA256:abc+/def)":    "vm-SHA256-abc-def",
		"a@b via ssh":             "a-b-via-ssh",
		"  spaced  ":              "spaced",
		"line\nsecond (as carol)": "line",
		"\x1b]0;x\x07host":        "0-x-host",
		"((()))":                  "",
		"Büro-PC":                 "Büro-PC",
	} {
		if got := SafeHost(in); got != want {
			t.Errorf("SafeHost(%q) = %q, want %q", in, got, want)
		}
	}
	if got := SafeHost(strings.Repeat("é", 300)); len(got) > maxHost || !strings.HasPrefix(got, "é") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("a long host name: %d bytes %q", len(got), got)
	}
}

func TestActorHostNameIsPlain(t *testing.T) {
	t.Setenv(EnvHost, "vm (as carol) via ssh")
	if got := HostName(); got != "vm-as-carol-via-ssh" {
		t.Fatalf("HostName() = %q", got)
	}
	a := LocalActor(SurfaceCLI)
	if _, host, _ := strings.Cut(a.Name, "@"); !strings.HasPrefix(host, "vm-as-carol-via-ssh") {
		t.Fatalf("the actor's name %q does not show the host made plain", a.Name)
	}
	if a.Person == "carol" || a.Key != "" {
		t.Fatalf("the host name named the actor: %+v", a)
	}
}

// localIdentity honours SUDO_UID and SUDO_USER only for real root, and
// only when they agree on an existing user.
func TestActorLocalIdentitySudo(t *testing.T) {
	daemon, err := user.Lookup("daemon")
	if err != nil {
		t.Skipf("needs the user daemon (Debian has it): %v", err)
	}
	root := userName(0)
	for _, tc := range []struct {
		name            string
		uid             int
		sudoUID, sudoer string
		want            string
	}{
		{"root-under-sudo", 0, daemon.Uid, "daemon", "daemon"},
		{"user-claims-sudo", 1, daemon.Uid, "daemon", userName(1)},
		{"disagree", 0, daemon.Uid, "bin", root},
		{"user-only", 0, "", "daemon", root},
		{"uid-only", 0, daemon.Uid, "", root},
		{"not-a-number", 0, "1; rm", "daemon", root},
		{"leading-zero", 0, "0" + daemon.Uid, "daemon", root},
		{"sudo-to-root", 0, "0", root, root},
		{"unknown-uid", 0, "4242424", "ghost", root},
		{"name-with-parens", 0, daemon.Uid, "daemon (as carol)", root},
	} {
		if got := localIdentity(tc.uid, tc.sudoUID, tc.sudoer).person; got != tc.want {
			t.Errorf("%s: person %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := localIdentity(4242424, "", ""); got.person != "uid:4242424" || got.user != "uid:4242424" {
		t.Errorf("a uid with no name: %+v", got)
	}
}
