package config

import (
	"errors"
	"github.com/approve-tui/approve-tui/policy"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// secretValue is a recognisable secret: no output may ever contain it.
const secretValue = "s3cr3t-VALUE"

// parseOK parses src as dir/config.yaml and fails on any problem.
func parseOK(t *testing.T, dir, src string) *File {
	t.Helper()
	f, err := Parse(filepath.Join(dir, "config.yaml"), []byte(src))
	if err != nil {
		t.Fatalf("unexpected problems:\n%v", err)
	}
	return f
}

// problemsOf parses src and returns its problems as "LINE:COL: message".
func problemsOf(t *testing.T, src string) []string {
	t.Helper()
	_, err := Parse("c.yaml", []byte(src))
	if err == nil {
		t.Fatalf("no problem found in:\n%s", src)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("not a *config.Error: %T %v", err, err)
	}
	var out []string
	for i, p := range ce.Problems {
		// Error() is the same list, one per line, with the path.
		if got := strings.Split(ce.Error(), "\n")[i]; got != ce.Format(p) || !strings.HasPrefix(got, "c.yaml:") {
			t.Errorf("Error() line %d = %q, want %q", i, got, ce.Format(p))
		}
		out = append(out, strings.TrimPrefix(ce.Format(p), "c.yaml:"))
	}
	return out
}

// The brief's file, with every optional key, loads into exactly these
// values.
func TestGoodFileRoundTrips(t *testing.T) {
	dir := t.TempDir()
	src := `channels:
  push:  {type: ntfy, url: "https://ntfy.example/approvals", token_env: NTFY_TOKEN}
  chat:  {type: slack, url_env: SLACK_WEBHOOK_URL, include_command: true}
  pager: {type: pagerduty, routing_key_file: keys/pd, events_url: "https://events.eu.pagerduty.com/v2/enqueue"}
  hook:  {type: webhook, url_file: /etc/approve-tui/hook-url, secret_env: APPROVE_TUI_WEBHOOK_SECRET, timeout: 3s}
  desk:  {type: exec, command: [notify-send, approve-tui]}
  tok:   {type: ntfy, url_env: NTFY_URL, token_file: /run/secrets/ntfy}
  sig:   {type: webhook, url: "http://localhost:8080/hook", secret_file: sig.key}
routes:
  - match: {risk: high, session: "agent:prod:*"}   # risk: at or above
    steps:
      - {after: 0s, notify: [push, hook]}
      - {after: 5m, notify: [pager]}
    remind_before_expiry: 2m
  - match:
      requester: "ci-*"
    steps:
      - after: 0
        notify: [desk, chat]
  - steps: [{after: 1h30m, notify: [tok, sig]}]
open_hint: "ssh -t -p 2222 approvals.example open {id}"
include_command: false
serve:
  listen: "127.0.0.1:2222"
  host_key: keys/host
  approvers: /etc/approve-tui/approvers
  watchers: watchers
  max_sessions: 10
  max_sessions_per_key: 2
  idle_timeout: 10m
  login_grace: 20s
  auth_failures: 5
  auth_backoff: 2m
  shutdown_grace: 3s
tier2: {phrase_limit: 5, lockout: 1h}
`
	f := parseOK(t, dir, src)
	ch := func(c Channel) *Channel { return &c }
	want := &File{
		Path: filepath.Join(dir, "config.yaml"),
		Channels: map[string]*Channel{
			"push": ch(Channel{Name: "push", Type: TypeNtfy, URL: "https://ntfy.example/approvals",
				Token: Secret{Env: "NTFY_TOKEN", Key: "token_env", Line: 2, Column: 62}, Timeout: DefaultTimeout, Line: 2}),
			"chat": ch(Channel{Name: "chat", Type: TypeSlack, URLSecret: Secret{Env: "SLACK_WEBHOOK_URL", Key: "url_env", Line: 3, Column: 24},
				IncludeCommand: true, Timeout: DefaultTimeout, Line: 3}),
			"pager": ch(Channel{Name: "pager", Type: TypePagerDuty, RoutingKey: Secret{File: filepath.Join(dir, "keys/pd"), Key: "routing_key_file", Line: 4, Column: 28},
				EventsURL: "https://events.eu.pagerduty.com/v2/enqueue", Timeout: DefaultTimeout, Line: 4}),
			"hook": ch(Channel{Name: "hook", Type: TypeWebhook, URLSecret: Secret{File: "/etc/approve-tui/hook-url", Key: "url_file", Line: 5, Column: 26},
				SigningSecret: Secret{Env: "APPROVE_TUI_WEBHOOK_SECRET", Key: "secret_env", Line: 5, Column: 63}, Timeout: 3 * time.Second, Line: 5}),
			"desk": ch(Channel{Name: "desk", Type: TypeExec, Command: []string{"notify-send", "approve-tui"}, Timeout: DefaultTimeout, Line: 6}),
			"tok": ch(Channel{Name: "tok", Type: TypeNtfy, URLSecret: Secret{Env: "NTFY_URL", Key: "url_env", Line: 7, Column: 23},
				Token: Secret{File: "/run/secrets/ntfy", Key: "token_file", Line: 7, Column: 42}, Timeout: DefaultTimeout, Line: 7}),
			"sig": ch(Channel{Name: "sig", Type: TypeWebhook, URL: "http://localhost:8080/hook",
				SigningSecret: Secret{File: filepath.Join(dir, "sig.key"), Key: "secret_file", Line: 8, Column: 61}, Timeout: DefaultTimeout, Line: 8}),
		},
		Routes: []*Route{
			{Match: Match{Risk: model.RiskHigh, Session: "agent:prod:*"},
				Steps:              []Step{{After: 0, Notify: []string{"push", "hook"}, Line: 12}, {After: 5 * time.Minute, Notify: []string{"pager"}, Line: 13}},
				RemindBeforeExpiry: 2 * time.Minute, Line: 10},
			{Match: Match{Requester: "ci-*"}, Steps: []Step{{After: 0, Notify: []string{"desk", "chat"}, Line: 18}}, Line: 15},
			{Steps: []Step{{After: 90 * time.Minute, Notify: []string{"tok", "sig"}, Line: 20}}, Line: 20},
		},
		OpenHint:       "ssh -t -p 2222 approvals.example open {id}",
		IncludeCommand: false,
		Serve: ServeSettings{Listen: "127.0.0.1:2222", HostKey: filepath.Join(dir, "keys/host"), Approvers: "/etc/approve-tui/approvers",
			Watchers: filepath.Join(dir, "watchers"), MaxSessions: 10, MaxSessionsPerKey: 2, IdleTimeout: 10 * time.Minute,
			LoginGrace: 20 * time.Second, AuthFailures: 5, AuthBackoff: 2 * time.Minute, ShutdownGrace: 3 * time.Second},
		Tier2: Tier2Settings{PhraseLimit: 5, Lockout: time.Hour},
		Trust: TrustConfig{Mode: trust.ModeOff},
	}
	got := *f
	got.settings = nil
	if !reflect.DeepEqual(&got, want) {
		for name, c := range want.Channels {
			if !reflect.DeepEqual(f.Channels[name], c) {
				t.Errorf("channel %s:\n got %+v\nwant %+v", name, f.Channels[name], c)
			}
		}
		for i, r := range want.Routes {
			if i >= len(f.Routes) || !reflect.DeepEqual(f.Routes[i], r) {
				var g any = "none"
				if i < len(f.Routes) {
					g = *f.Routes[i]
				}
				t.Errorf("route %d:\n got %+v\nwant %+v", i+1, g, *r)
			}
		}
		t.Fatalf("got  %+v\nwant %+v", got, *want)
	}
	// The settings, as the flags take them, in the file's order.
	var flags []string
	for _, s := range append(f.Settings("serve"), f.Settings("tier2")...) {
		flags = append(flags, s.Flag+"="+s.Value)
	}
	wantFlags := []string{"listen=127.0.0.1:2222", "host-key=" + filepath.Join(dir, "keys/host"), "approvers=/etc/approve-tui/approvers",
		"watchers=" + filepath.Join(dir, "watchers"), "max-sessions=10", "max-sessions-per-key=2", "idle-timeout=10m0s",
		"login-grace=20s", "auth-failures=5", "auth-backoff=2m0s", "shutdown-grace=3s", "phrase-limit=5", "lockout=1h0m0s"}
	if !reflect.DeepEqual(flags, wantFlags) {
		t.Errorf("settings %q\nwant %q", flags, wantFlags)
	}
	if s := f.Settings("tier2")[1]; s.Line != 35 || s.Column != 26 || s.Key != "lockout" {
		t.Errorf("tier2 lockout setting at %d:%d (%s), want 35:26", s.Line, s.Column, s.Key)
	}
	if got := f.ChannelNames(); !reflect.DeepEqual(got, []string{"chat", "desk", "hook", "pager", "push", "sig", "tok"}) {
		t.Errorf("ChannelNames %v", got)
	}
	if got := len(f.Channels["hook"].Secrets()); got != 2 {
		t.Errorf("hook has %d secrets, want 2 (url, signing secret)", got)
	}
}

// Each kind of problem, where it is and what it says.
func TestProblems(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"not YAML", "channels: [\n", `1:11: not valid YAML: sequence end token ']' not found`},
		{"duplicate key", "open_hint: a{id}\nopen_hint: b{id}\n", `2:1: not valid YAML: mapping key "open_hint" already defined at [1:1]`},
		{"not a mapping", "- a\n", `1:1: the file: want a mapping of keys (channels, routes, open_hint, include_command, serve, tier2, risk, trust), got a list`},
		{"unknown top key", "open_hint: x{id}\nchanels: {}\n", `2:1: the file: unknown key "chanels"; allowed: channels, routes, open_hint, include_command, serve, tier2, risk, trust`},
		{"two documents", "open_hint: x{id}\n---\nroutes: []\n", `3:1: a second YAML document (after ---): the file is one document`},
		{"channels not a mapping", "channels: [a]\n", `1:11: channels: want a mapping of channel names to channels, got a list`},
		{"channel name", "channels:\n  \"a b\": {type: exec, command: [x]}\n", `2:3: channel name "a b": want letters, digits, '_', '.' and '-', starting with a letter or digit`},
		{"channel no type", "channels:\n  a: {command: [x]}\n", `2:3: channel a has no type; want type: one of ntfy, slack, pagerduty, webhook, exec`},
		{"channel unknown type", "channels:\n  a: {type: email}\n", `2:13: channel a: unknown type "email"; want one of ntfy, slack, pagerduty, webhook, exec`},
		{"channel unknown key", "channels:\n  a:\n    type: exec\n    command: [x]\n    comand: [y]\n",
			`5:5: channel a (exec): unknown key "comand"; allowed for exec: type, include_command, timeout, parallel, command`},
		{"ntfy needs url", "channels:\n  a: {type: ntfy, token_env: T}\n", `2:3: channel a (ntfy) needs its topic's URL: url (or url_env, url_file when it is a secret)`},
		{"ntfy url not http", "channels:\n  a: {type: ntfy, url: \"ftp://x/" + secretValue + "\"}\n", `2:24: channel a (ntfy): url: not an http or https URL; want one such as https://host/path`},
		{"url with a password", "channels:\n  a: {type: ntfy, url: \"https://u:" + secretValue + "@x/t\"}\n",
			`2:24: channel a (ntfy): url: the URL carries a user or password, a secret: want it without, or the whole URL in url_env or url_file`},
		{"url twice", "channels:\n  a: {type: ntfy, url: \"https://x/t\", url_env: U}\n", `2:39: channel a (ntfy): url and url_env: give the URL once (one of url, url_env, url_file)`},
		{"slack plain url", "channels:\n  a:\n    type: slack\n    url: \"https://hooks.slack.com/services/" + secretValue + "\"\n    url_env: U\n",
			`4:5: channel a (slack): url: a Slack webhook URL is a secret, never written in the file; want url_env (an environment variable) or url_file (a file) that holds it`},
		{"slack needs url", "channels:\n  a: {type: slack}\n", `2:3: channel a (slack) needs its incoming-webhook URL, a secret: url_env or url_file`},
		{"plain token", "channels:\n  a: {type: ntfy, url: \"https://x/t\", token: " + secretValue + "}\n",
			`2:39: channel a (ntfy): token: a secret is never written in the file; want token_env (an environment variable) or token_file (a file) that holds it`},
		{"pagerduty needs key", "channels:\n  a: {type: pagerduty}\n", `2:3: channel a (pagerduty) needs its integration's routing key, a secret: routing_key_env or routing_key_file`},
		{"secret env and file", "channels:\n  a: {type: pagerduty, routing_key_env: K, routing_key_file: k}\n",
			`2:44: channel a (pagerduty): routing_key_file: routing_key_env is given already; want one of the two`},
		{"webhook needs url", "channels:\n  a: {type: webhook, secret_env: S}\n", `2:3: channel a (webhook) needs the URL to post to: url (or url_env, url_file when it is a secret)`},
		{"webhook needs secret", "channels:\n  a: {type: webhook, url: \"https://x/h\"}\n",
			`2:3: channel a (webhook) needs the key its requests are signed with (HMAC-SHA256), a secret: secret_env or secret_file`},
		{"exec needs command", "channels:\n  a: {type: exec}\n", `2:3: channel a (exec) needs command: the program to run and its arguments, as a list, such as [notify-send, approve-tui]`},
		{"exec command a string", "channels:\n  a: {type: exec, command: notify-send}\n",
			`2:28: channel a (exec): command: want the program and its arguments, such as [notify-send, approve-tui], got a string`},
		{"exec command empty", "channels:\n  a: {type: exec, command: []}\n",
			`2:28: channel a (exec): command: the list is empty; want the program and its arguments, such as [notify-send, approve-tui]`},
		{"exec command not strings", "channels:\n  a: {type: exec, command: [x, 1]}\n", `2:32: channel a (exec): command, item 2: want a string, got a number`},
		{"env name", "channels:\n  a: {type: ntfy, url: \"https://x/t\", token_env: \"$T\"}\n",
			`2:50: channel a (ntfy): token_env: "$T" is not an environment variable's name; want letters, digits and '_', such as NTFY_TOKEN`},
		{"include_command type", "channels:\n  a: {type: exec, command: [x], include_command: \"no\"}\n",
			`2:50: channel a (exec): include_command: want true or false, got a string`},
		{"timeout no unit", "channels:\n  a: {type: exec, command: [x], timeout: 10}\n",
			`2:42: channel a (exec): timeout: 10 has no unit; want a duration above zero, such as 30s, 5m or 1h`},
		{"timeout zero", "channels:\n  a: {type: exec, command: [x], timeout: 0s}\n",
			`2:42: channel a (exec): timeout: 0s is not above zero; want a duration above zero, such as 30s, 5m or 1h`},
		{"empty value", "channels:\n  a:\n    type: ntfy\n    url:\n", `4:5: channel a (ntfy): url: want a string, got nothing`},
		{"routes not a list", "routes: {a: 1}\n", `1:9: routes: want a list of routes (each with match and steps), got a mapping`},
		{"route unknown key", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{after: 0s, notify: [a]}]\n    remind: 1m\n",
			`4:5: route 1: unknown key "remind"; allowed: match, steps, remind_before_expiry, events`},
		{"route no steps", "routes:\n  - match: {risk: high}\n", `2:5: route 1 has no steps; want steps: a list of {after: DURATION, notify: [CHANNEL, ...]}`},
		{"route unknown channel", "channels: {push: {type: exec, command: [x]}, desk: {type: exec, command: [y]}}\nroutes:\n  - steps: [{after: 0s, notify: [push, pager]}]\n",
			`3:40: route 1, step 1: notify: no channel "pager"; want one of the channels defined: desk, push`},
		{"route channel twice", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{after: 0s, notify: [a, a]}]\n",
			`3:37: route 1, step 1: notify: channel "a" is named twice`},
		{"risk", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - match: {risk: critical}\n    steps: [{after: 0s, notify: [a]}]\n",
			`3:19: route 1: match: risk: "critical" is not a risk; want low, medium or high (it takes that risk and above)`},
		{"match unknown key", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - match: {session_key: x}\n    steps: [{after: 0s, notify: [a]}]\n",
			`3:13: route 1: match: unknown key "session_key"; allowed: risk, session, requester`},
		{"bad glob", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - match: {session: \"agent:[prod\"}\n    steps: [{after: 0s, notify: [a]}]\n",
			`3:22: route 1: match: session: "agent:[prod" is not a glob; want a pattern such as agent:prod:* (* any run of characters but /, ? one, [a-z] a class, \ quotes)`},
		{"bad requester glob", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - match: {requester: \"ci-\\\\\"}\n    steps: [{after: 0s, notify: [a]}]\n",
			`3:24: route 1: match: requester: "ci-\\" is not a glob; want a pattern such as agent:prod:* (* any run of characters but /, ? one, [a-z] a class, \ quotes)`},
		{"bad duration", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps:\n      - {after: 5 min, notify: [a]}\n",
			`4:17: route 1, step 1: after: "5 min" is not a duration; want a duration such as 30s, 5m or 1h (units ns, us, ms, s, m, h)`},
		{"negative duration", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{after: 0s, notify: [a]}]\n    remind_before_expiry: -2m\n",
			`4:27: route 1: remind_before_expiry: -2m is negative; want a duration such as 30s, 5m or 1h`},
		{"steps not increasing", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps:\n      - {after: 5m, notify: [a]}\n      - {after: 5m, notify: [a]}\n",
			`5:17: route 1, step 2: after 5m is not later than the step before (5m); want the steps in increasing after`},
		{"step no after", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps:\n      - notify: [a]\n",
			`4:9: route 1, step 1 has no after; want after: how long after the proposal opened, such as 0s or 5m`},
		{"step no notify", "routes:\n  - steps:\n      - after: 0s\n", `3:9: route 1, step 1 has no notify; want notify: a list of channel names, such as [push]`},
		{"steps empty", "routes:\n  - steps: []\n", `2:12: route 1: steps: the list is empty; want a list of {after: DURATION, notify: [CHANNEL, ...]}`},
		{"open_hint without id", "open_hint: \"ssh -t host open\"\n",
			`1:12: open_hint: "ssh -t host open" has no {id}; want the command that opens a proposal, with {id} where its id goes (such as "ssh -t approvals.example open {id}")`},
		{"open_hint a number", "open_hint: 7\n", `1:12: open_hint: want a string, got a number`},
		{"top include_command", "include_command: 1\n", `1:18: include_command: want true or false, got a number`},
		{"serve unknown key", "serve:\n  approvers_file: a\n",
			`2:3: serve: unknown key "approvers_file"; allowed: listen, host_key, approvers, watchers, max_sessions, max_sessions_per_key, idle_timeout, login_grace, auth_failures, auth_backoff, shutdown_grace`},
		{"serve listen type", "serve: {listen: 2222}\n", `1:17: serve: listen: want a string, got a number`},
		{"serve count", "serve: {max_sessions: 0}\n", `1:23: serve: max_sessions: 0 is less than 1; want a whole number of at least 1`},
		{"serve count type", "serve: {auth_failures: many}\n", `1:24: serve: auth_failures: want a whole number of at least 1, got a string`},
		{"serve duration", "serve: {idle_timeout: forever}\n",
			`1:23: serve: idle_timeout: "forever" is not a duration; want a duration above zero, such as 30s, 5m or 1h (units ns, us, ms, s, m, h)`},
		{"tier2 type", "tier2:\n  phrase_limit: \"3\"\n", `2:17: tier2: phrase_limit: want a whole number of at least 1, got a string`},
		{"tier2 unknown key", "tier2: {limit: 3}\n", `1:9: tier2: unknown key "limit"; allowed: phrase_limit, lockout`},
		{"risk unknown key", "risk: {sensitive: [/x]}\n", `1:8: risk: unknown key "sensitive"; allowed: sensitive_paths, sensitive_programs, unasked`},
		{"risk relative path", "risk:\n  sensitive_paths: [/srv/, prod/db]\n",
			`2:28: risk: sensitive_paths, item 2: "prod/db" is neither absolute nor under ~/; want a path such as /srv/prod/ or ~/.kube/config`},
		{"risk paths not a list", "risk: {sensitive_paths: /srv}\n",
			`1:25: risk: sensitive_paths: want a list of absolute paths or paths starting with ~/ (a directory ends in /), got a string`},
		{"risk program level", "risk:\n  sensitive_programs: {psql: low}\n",
			`2:30: risk: sensitive_programs: psql: "low" is not a level; want medium or high (the least level any use of it gets)`},
		{"risk program name", "risk:\n  sensitive_programs: {/usr/bin/psql: high}\n",
			`2:24: risk: sensitive_programs: "/usr/bin/psql" is not a program name; want a name as it is run, such as psql`},
		{"risk unasked", "risk: {unasked: all}\n",
			`1:17: risk: unasked: "all" is not one of nothing, read-only, low; want what run and the hooks let through without asking`},
		{"tag", "open_hint: !!str x{id}\n", `1:12: tags (!!str) are not taken here: write the value plainly`},
		{"merge key", "channels:\n  a: {<<: {type: exec}, command: [x]}\n", `2:7: channel a: merge keys (<<) are not taken here: write each key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, tc.src)
			found := false
			for _, g := range got {
				found = found || g == tc.want
				if strings.Contains(g, secretValue) {
					t.Errorf("a problem quotes the secret: %q", g)
				}
			}
			if !found {
				t.Errorf("problems:\n  %s\nwant among them:\n  %s", strings.Join(got, "\n  "), tc.want)
			}
		})
	}
}

// All the problems of a file are said at once, in the file's order, and a
// route naming a channel that has problems of its own is not blamed again.
func TestAllProblemsAtOnce(t *testing.T) {
	src := `channels:
  push: {type: ntfy, url: "https://ntfy.example/t", tokn: X}
  chat: {type: slack, url: "https://hooks.slack.com/x"}
routes:
  - match: {risk: critical}
    steps:
      - {after: 5m, notify: [push, chat, nope]}
      - {after: 1m, notify: [push]}
open_hint: "ssh x"
`
	got := problemsOf(t, src)
	want := []string{
		`2:53: channel push (ntfy): unknown key "tokn"; allowed for ntfy: type, include_command, timeout, parallel, url, url_env, url_file, token_env, token_file`,
		`3:3: channel chat (slack) needs its incoming-webhook URL, a secret: url_env or url_file`,
		`3:23: channel chat (slack): url: a Slack webhook URL is a secret, never written in the file; want url_env (an environment variable) or url_file (a file) that holds it`,
		`5:19: route 1: match: risk: "critical" is not a risk; want low, medium or high (it takes that risk and above)`,
		`7:42: route 1, step 1: notify: no channel "nope"; want one of the channels defined: chat, push`,
		`8:17: route 1, step 2: after 1m is not later than the step before (5m); want the steps in increasing after`,
		`9:12: open_hint: "ssh x" has no {id}; want the command that opens a proposal, with {id} where its id goes (such as "ssh -t approvals.example open {id}")`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// The example loads, with every channel type and two routes, and so do
// its commented-out serve: and tier2: sections once uncommented.
func TestExampleLoads(t *testing.T) {
	f := parseOK(t, t.TempDir(), Example)
	types := map[string]bool{}
	for _, c := range f.Channels {
		types[c.Type] = true
	}
	if len(types) != 5 || len(f.Routes) != 2 || f.OpenHint == "" {
		t.Fatalf("example: types %v, %d routes, open hint %q", types, len(f.Routes), f.OpenHint)
	}
	// Uncomment "# serve:" and "# tier2:" and their "#   key: value" lines.
	var lines []string
	in := false
	for _, l := range strings.Split(Example, "\n") {
		switch {
		case l == "# serve:" || l == "# tier2:" || l == "# risk:" || l == "# trust:":
			in = true
			l = strings.TrimPrefix(l, "# ")
		case in && strings.HasPrefix(l, "#   "):
			l = strings.TrimPrefix(l, "# ")
		default:
			in = false
		}
		lines = append(lines, l)
	}
	f = parseOK(t, t.TempDir(), strings.Join(lines, "\n"))
	if n := len(f.Settings("serve")); n != len(sectionFields(reflect.TypeFor[ServeSettings]())) {
		t.Errorf("the example's serve: gives %d settings, want every one (%d)", n, len(sectionFields(reflect.TypeFor[ServeSettings]())))
	}
	if f.Tier2.PhraseLimit != 3 || f.Tier2.Lockout != 15*time.Minute {
		t.Errorf("the example's tier2: %+v", f.Tier2)
	}
	if !reflect.DeepEqual(f.Risk.SensitivePaths, []string{"/srv/prod/", "~/.kube/config"}) || f.Risk.SensitivePrograms["kubectl"] != model.RiskHigh ||
		len(f.Settings("risk")) != 1 || f.Settings("risk")[0].Value != UnaskedReadOnly {
		t.Errorf("the example's risk: %+v %+v", f.Risk, f.Settings("risk"))
	}
	if f.Trust.Mode != trust.ModeRequired || f.Trust.AllowedSigners != "/etc/approve-tui/allowed_signers" ||
		!reflect.DeepEqual(f.Trust.PolicySigners, []string{"alice", "bob"}) || f.Trust.Store != "prod-approvals" {
		t.Errorf("the example's trust: %+v", f.Trust)
	}
	// Every key of every part of the file is in the example.
	for _, k := range append(append(append(append(append(append([]string{}, topKeys...), routeKeys...), matchKeys...), stepKeys...), channelKeysFor("")...), append(riskKeys, trustKeys...)...) {
		if !regexp.MustCompile(`(?m)\b` + k + `:`).MatchString(Example) {
			t.Errorf("the example does not show %s", k)
		}
	}
	for _, k := range channelSchema() {
		if !strings.Contains(Example, k.key) {
			t.Errorf("the example does not show %s", k.key)
		}
	}
}

func TestEmptyFileIsTheDefaults(t *testing.T) {
	for _, src := range []string{"", "# nothing yet\n", "---\n"} {
		f := parseOK(t, t.TempDir(), src)
		if len(f.Channels) != 0 || len(f.Routes) != 0 || !f.IncludeCommand || f.OpenHint != "" {
			t.Errorf("%q: %+v", src, f)
		}
	}
}

func TestAnchorsAndAliases(t *testing.T) {
	f := parseOK(t, t.TempDir(), `channels:
  a: {type: exec, command: &argv [notify-send, approve-tui]}
  b: {type: exec, command: *argv}
routes:
  - steps: &s [{after: 0s, notify: [a, b]}]
  - steps: *s
`)
	if !reflect.DeepEqual(f.Channels["b"].Command, []string{"notify-send", "approve-tui"}) || len(f.Routes) != 2 || len(f.Routes[1].Steps) != 1 {
		t.Fatalf("aliases: %+v %+v", f.Channels["b"], f.Routes)
	}
	if got := problemsOf(t, "open_hint: *nope\n"); len(got) != 1 || !strings.Contains(got[0], "alias *nope names no anchor") {
		t.Errorf("unknown alias: %q", got)
	}
}

func TestMatches(t *testing.T) {
	m := Match{Risk: model.RiskHigh, Session: "agent:prod:*"}
	for _, tc := range []struct {
		risk    model.RiskLevel
		session string
		want    bool
	}{
		{model.RiskHigh, "agent:prod:7", true},
		{model.RiskTier2, "agent:prod:7", true},
		{"garbage", "agent:prod:7", true}, // unknown ranks above high
		{model.RiskMedium, "agent:prod:7", false},
		{model.RiskHigh, "agent:dev:7", false},
	} {
		if got, _ := m.Check(policy.Subject{Risk: tc.risk, Session: tc.session, Requester: "anyone"}); got != tc.want {
			t.Errorf("Matches(%s, %s) = %v", tc.risk, tc.session, got)
		}
	}
	if ok, _ := (Match{}).Check(policy.Subject{Risk: model.RiskLow}); !ok {
		t.Error("an empty match takes everything")
	}
	f := &File{Routes: []*Route{{Match: Match{Requester: "ci-*"}, Line: 1}, {Line: 2}}}
	if f.Route(model.RiskLow, "s", "ci-7").Line != 1 || f.Route(model.RiskLow, "s", "bob").Line != 2 {
		t.Error("Route: the first that matches")
	}
}

func TestDefaultPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env   map[string]string
		want  string
		named bool
	}{
		{map[string]string{"APPROVE_TUI_CONFIG": "/etc/a.yaml", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/etc/a.yaml", true},
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/approve-tui/config.yaml", false},
		{map[string]string{"XDG_CONFIG_HOME": "relative", "HOME": "/h"}, "/h/.config/approve-tui/config.yaml", false},
		{map[string]string{"HOME": "/h"}, "/h/.config/approve-tui/config.yaml", false},
		{map[string]string{}, "", false},
	} {
		if got, named := DefaultPathFrom(env(tc.env)); got != tc.want || named != tc.named {
			t.Errorf("%v: %q %v, want %q %v", tc.env, got, named, tc.want, tc.named)
		}
	}
	t.Setenv("APPROVE_TUI_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if got := DefaultPath(); got != "/xdg/approve-tui/config.yaml" {
		t.Errorf("DefaultPath %q", got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	if _, err := Load(missing); !errors.Is(err, fs.ErrNotExist) || err.Error() != "no config file at "+missing {
		t.Errorf("Load(missing): %v", err)
	}
	if f, err := LoadOptional(missing); err != nil || f.Path != "" || len(f.Channels) != 0 || !f.IncludeCommand {
		t.Errorf("LoadOptional(missing): %+v %v", f, err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("Load(a directory): %v", err)
	}
	p := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(p, []byte("open_hint: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOptional(p); err == nil || err.Error() != p+":1:12: open_hint: \"x\" has no {id}; want the command that opens a proposal, with {id} where its id goes (such as \"ssh -t approvals.example open {id}\")" {
		t.Errorf("LoadOptional(bad file): %v", err)
	}
	if err := os.WriteFile(p, []byte("open_hint: \"x {id}\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("APPROVE_TUI_CONFIG", p)
	if f, err := LoadDefault(); err != nil || f.OpenHint != "x {id}" || f.Path != p {
		t.Errorf("LoadDefault: %+v %v", f, err)
	}
	t.Setenv("APPROVE_TUI_CONFIG", missing)
	if _, err := LoadDefault(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadDefault of a named missing file: %v", err)
	}
}

func TestSecrets(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("AT_SECRET", secretValue)
	t.Setenv("AT_EMPTY", "")
	t.Setenv("AT_LINES", secretValue+"\n"+secretValue)
	good := write("good", secretValue+"\n", 0o600)
	crlf := write("crlf", secretValue+"\r\n", 0o600)
	open := write("open", secretValue, 0o644)
	empty := write("empty", "\n", 0o600)
	lines := write("lines", secretValue+"\n"+secretValue+"\n", 0o600)
	locked := write("locked", secretValue, 0o000)
	var outputs []string
	for _, tc := range []struct {
		s        Secret
		want     string // the value, or the error
		redacted string
	}{
		{Secret{Env: "AT_SECRET"}, secretValue, "$AT_SECRET (set, 12 characters)"},
		{Secret{Env: "AT_UNSET_VAR"}, "error: AT_UNSET_VAR is not set", "$AT_UNSET_VAR (not set)"},
		{Secret{Env: "AT_EMPTY"}, "error: AT_EMPTY is set but empty", "$AT_EMPTY (set but empty)"},
		{Secret{Env: "AT_LINES"}, "error: AT_LINES holds more than one line", "$AT_LINES (holds more than one line)"},
		{Secret{File: good}, secretValue, "file " + good + " (readable, 12 characters)"},
		{Secret{File: crlf}, secretValue, "file " + crlf + " (readable, 12 characters)"},
		{Secret{File: open}, "error: secret file " + open + " may be read or written by its group and others (mode 0644): refused; chmod 600 " + open,
			"file " + open + " (may be read or written by its group and others (mode 0644): refused; chmod 600 " + open + ")"},
		{Secret{File: empty}, "error: secret file " + empty + " is empty", "file " + empty + " (empty)"},
		{Secret{File: lines}, "error: secret file " + lines + " holds more than one line", "file " + lines + " (holds more than one line)"},
		{Secret{File: filepath.Join(dir, "none")}, "error: secret file " + filepath.Join(dir, "none") + " cannot be read: no such file or directory",
			"file " + filepath.Join(dir, "none") + " (cannot be read: no such file or directory)"},
		{Secret{}, "error: no secret named (want NAME_env or NAME_file)", "(none) (no secret named (want NAME_env or NAME_file))"},
	} {
		v, err := tc.s.Resolve()
		got := v
		if err != nil {
			got = "error: " + err.Error()
			outputs = append(outputs, err.Error())
		}
		if got != tc.want {
			t.Errorf("%+v: Resolve %q, want %q", tc.s, got, tc.want)
		}
		r := tc.s.Redacted()
		outputs = append(outputs, r, tc.s.Source())
		if r != tc.redacted {
			t.Errorf("%+v: Redacted %q, want %q", tc.s, r, tc.redacted)
		}
	}
	if os.Geteuid() != 0 { // root reads any file
		_, err := Secret{File: locked}.Resolve()
		if err == nil || err.Error() != "secret file "+locked+" cannot be read: permission denied" {
			t.Errorf("unreadable: %v", err)
		}
		outputs = append(outputs, Secret{File: locked}.Redacted())
	}
	for _, o := range outputs {
		if strings.Contains(o, secretValue) {
			t.Errorf("the secret's value is in %q", o)
		}
	}
}
