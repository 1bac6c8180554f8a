package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
		{"route", routeKeys, "match, steps, remind_before_expiry, events"},
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

// An item of a list may be an alias of an anchor anywhere in the file:
// it is the anchor's value, in every list the file has, and a problem with
// it is said where the anchor's value is.
func TestListItemAliasesAnAnchorElsewhere(t *testing.T) {
	f := parseOK(t, "/cfg", "channels:\n  a: {type: exec, command: [&prog notify-send]}\n  b: {type: exec, command: [*prog, x]}\n"+
		"routes:\n  - steps: [{after: 0s, notify: [&ch a]}, {after: 1m, notify: [*ch, b]}]\n"+
		"risk: {sensitive_paths: [&p /srv/prod/], unasked: low}\ntrust: {allowed_signers: /etc/s, policy_signers: [*p]}\n")
	if got := f.Channels["b"].Command; !reflect.DeepEqual(got, []string{"notify-send", "x"}) {
		t.Errorf("channel b's command: %q", got)
	}
	if got := f.Routes[0].Steps[1].Notify; !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("step 2 notifies %q", got)
	}
	if _, err := Parse(filepath.Join("/cfg", "c.yaml"), []byte("channels: {a: {type: exec, command: [x]}}\nrisk: {sensitive_paths: [&p /srv/]}\nroutes:\n  - steps: [{after: 0s, notify: [*p]}]\n")); err == nil ||
		!strings.Contains(err.Error(), `c.yaml:2:29: route 1, step 1: notify: no channel "/srv/"`) {
		t.Errorf("an alias's value is checked as the item's: %v", err)
	}
	p, err := ParsePolicy("p.yaml", []byte("groups: {a: [&m alice], b: [*m, bob]}\npolicy: []\n"))
	if err != nil || !reflect.DeepEqual(p.Groups["b"], []string{"alice", "bob"}) {
		t.Errorf("group b: %v %v", p, err)
	}
}

// Aliases are followed one level where a value is read, never expanded:
// a few lines whose aliases of aliases would stand for 9^9 items are read
// as they are written, and the list that names them is said to be a list
// of lists.
func TestAliasesOfAliasesAreNotExpanded(t *testing.T) {
	src := "x: &a0 [x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 9; i++ {
		prev := fmt.Sprintf("*a%d", i-1)
		src += fmt.Sprintf("x%d: &a%d [%s]\n", i, i, strings.Repeat(prev+", ", 8)+prev)
	}
	src += "channels: {c: {type: exec, command: *a8}}\n"
	_, err := Parse("c.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "c.yaml:8:9: channel c (exec): command, item 1: want a string, got a list") {
		t.Fatalf("got %v", err)
	}
}
