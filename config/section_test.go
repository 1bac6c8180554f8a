package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/parser"
)

// The keys messages list come from the structs' tags, in the order the
// file's users have always read them.
func TestKeysFromTags(t *testing.T) {
	for _, c := range []struct {
		name string
		got  []string
		want string
	}{
		{"top", topKeys, "channels, routes, open_hint, include_command, serve, tier2, risk, trust"},
		{"route", routeKeys, "match, steps, remind_before_expiry"},
		{"step", stepKeys, "after, notify"},
		{"trust", trustKeys, "mode, allowed_signers, policy_signers, store, users"},
		{"risk", riskKeys, "sensitive_paths, sensitive_programs, unasked"},
		{"system", systemKeys, "trust"},
		{"serve", yamlKeys[ServeSettings](), "listen, host_key, approvers, watchers, max_sessions, max_sessions_per_key, idle_timeout, login_grace, auth_failures, auth_backoff, shutdown_grace"},
		{"tier2", yamlKeys[Tier2Settings](), "phrase_limit, lockout"},
		{"ntfy", channelKeysFor(TypeNtfy), "type, include_command, timeout, parallel, url, url_env, url_file, token_env, token_file"},
		{"slack", channelKeysFor(TypeSlack), "type, include_command, timeout, parallel, url_env, url_file"},
		{"pagerduty", channelKeysFor(TypePagerDuty), "type, include_command, timeout, parallel, routing_key_env, routing_key_file, events_url"},
		{"webhook", channelKeysFor(TypeWebhook), "type, include_command, timeout, parallel, url, url_env, url_file, secret_env, secret_file"},
		{"exec", channelKeysFor(TypeExec), "type, include_command, timeout, parallel, command"},
	} {
		if got := strings.Join(c.got, ", "); got != c.want {
			t.Errorf("%s keys: %s\nwant %s", c.name, got, c.want)
		}
	}
	// Every serve: and tier2: key names the flag it stands for.
	for _, typ := range []reflect.Type{reflect.TypeFor[ServeSettings](), reflect.TypeFor[Tier2Settings]()} {
		for _, f := range sectionFields(typ) {
			if f.flag != strings.ReplaceAll(f.key, "_", "-") {
				t.Errorf("%s: %s stands for flag %q", typ.Name(), f.key, f.flag)
			}
		}
	}
}

// A value goccy/go-yaml itself refuses (here a mapping with a key its
// struct lacks, decoded strictly) is a problem at its place, never a value
// taken silently.
func TestDecodeValueRefusalIsAProblem(t *testing.T) {
	file, err := parser.ParseBytes([]byte("x: {a: 1, b: 2}\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	l := newLoader("c.yaml")
	es, ok := l.mapping(file.Docs[0].Body, "the file", "a mapping", nil)
	if !ok || len(es) != 1 {
		t.Fatalf("entries %v, %v", es, ok)
	}
	var dst struct {
		A float64 `yaml:"a"`
	}
	if l.decodeValue(es[0], "x", "", &dst) {
		t.Fatalf("taken: %+v", dst)
	}
	if len(l.probs) != 1 || l.probs[0].Line != 1 || l.probs[0].Column != 4 || !strings.HasPrefix(l.probs[0].Message, "x: ") {
		t.Fatalf("problems: %+v", l.probs)
	}
}
