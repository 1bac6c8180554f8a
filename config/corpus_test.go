package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCorpus rewrites testdata/corpus.golden from the loader as it is:
// only when adding a case, and the diff read line by line (a changed line
// is a changed message).
var writeCorpus = flag.Bool("corpus.write", false, "rewrite testdata/corpus.golden")

// corpusCase is one file given to one parser.
type corpusCase struct {
	kind string // "config", "policy" or "system"
	src  string
}

// corpus are files, most of them hostile or wrong, with what the loader
// makes of each: every problem as it is said, or the values taken.
var corpus = []corpusCase{
	// The document itself.
	{"config", ""},
	{"config", "# only a comment\n"},
	{"config", "---\n"},
	{"config", "[a, b]\n"},
	{"config", "just text\n"},
	{"config", "42\n"},
	{"config", "null\n"},
	{"config", "{}\n"},
	{"config", "open_hint: a{id}\n---\nopen_hint: b{id}\n"},
	{"config", "open_hint: [unclosed\n"},
	{"config", "a: b: c\n"},
	{"config", "\tchannels: {}\n"},
	{"config", "open_hint: a{id}\nopen_hint: b{id}\n"},
	{"config", "!!map {open_hint: a{id}}\n"},
	{"config", "? [a]\n: b\n"},
	{"config", "1: x\ntrue: y\n"},
	{"config", "<<: {open_hint: a{id}}\n"},
	{"config", "bogus: 1\nother: 2\nopen_hint: x\n"},
	{"config", "Channels: {}\n"},
	// Top-level values of the wrong kind.
	{"config", "channels: [a]\nroutes: {a: b}\nopen_hint: 3\ninclude_command: yes\nserve: 1\ntier2: []\nrisk: x\ntrust: 5\n"},
	{"config", "channels:\nroutes:\nopen_hint:\ninclude_command:\nserve:\ntier2:\nrisk:\ntrust:\n"},
	{"config", "include_command: \"true\"\n"},
	{"config", "include_command: 1\n"},
	{"config", "include_command: false\nchannels: {a: {type: exec, command: [x]}, b: {type: exec, command: [y], include_command: true}}\n"},
	{"config", "open_hint: no id here\n"},
	{"config", "open_hint: |\n  ssh open {id}\n"},
	{"config", "open_hint: !!str a{id}\n"},
	{"config", "open_hint: &h a{id}\nserve: {listen: *h}\n"},
	{"config", "open_hint: *nowhere\n"},
	{"config", "serve: {listen: &l \":22\"}\ntier2: {lockout: *l}\n"},
	// Channels.
	{"config", "channels:\n  \"bad name\": {type: exec, command: [x]}\n  -x: {type: exec, command: [x]}\n  ok.name_1-2: {type: exec, command: [x]}\n"},
	{"config", "channels:\n  a: {}\n  b: {command: [x]}\n  c: exec\n  d:\n  e: [type, exec]\n"},
	{"config", "channels:\n  a: {type: sms}\n  b: {type: 3}\n  c: {type: [exec]}\n  d: {type: }\n"},
	{"config", "channels:\n  a: {type: ntfy}\n  b: {type: slack}\n  c: {type: pagerduty}\n  d: {type: webhook}\n  e: {type: exec}\n"},
	{"config", "channels:\n  a: {type: slack, url: \"https://hooks.slack/x\"}\n  b: {type: ntfy, url: \"https://n/t\", token: abc}\n  c: {type: pagerduty, routing_key: k}\n  d: {type: webhook, url: \"https://w/h\", secret: s}\n"},
	{"config", "channels:\n  a: {type: ntfy, url: \"https://n/t\", command: [x], routing_key_env: K, bogus: 1}\n"},
	{"config", "channels:\n  a: {type: ntfy, url: \"https://n/t\", url_env: U, url_file: f}\n"},
	{"config", "channels:\n  a: {type: slack, url_env: U, url_file: f}\n"},
	{"config", "channels:\n  a: {type: ntfy, url: \"https://n/t\", token_env: A, token_file: b}\n"},
	{"config", "channels:\n  a: {type: ntfy, url: \"ftp://n/t\"}\n  b: {type: ntfy, url: \"https://user:pw@n/t\"}\n  c: {type: ntfy, url: \"n/t\"}\n  d: {type: ntfy, url: \"\"}\n  e: {type: ntfy, url: \"   \"}\n  f: {type: ntfy, url: 5}\n  g: {type: ntfy, url: \"http://%zz\"}\n  h: {type: ntfy, url: \"https://\"}\n"},
	{"config", "channels:\n  a: {type: ntfy, url_env: \"1BAD\"}\n  b: {type: ntfy, url_env: \"has space\"}\n  c: {type: ntfy, url_env: \"\"}\n  d: {type: ntfy, url_env: [X]}\n  e: {type: ntfy, url_file: rel/path}\n  f: {type: ntfy, url_file: /abs/../p}\n  g: {type: ntfy, url_env: GOOD_1}\n"},
	{"config", "channels:\n  a: {type: exec, command: []}\n  b: {type: exec, command: \"notify-send x\"}\n  c: {type: exec, command: [\"\", x]}\n  d: {type: exec, command: [x, 3, [y]]}\n  e: {type: exec, command: [x, \"\"]}\n  f: {type: exec, command: }\n"},
	{"config", "channels:\n  a: {type: exec, command: [x], timeout: 0s}\n  b: {type: exec, command: [x], timeout: -1s}\n  c: {type: exec, command: [x], timeout: 30}\n  d: {type: exec, command: [x], timeout: 0}\n  e: {type: exec, command: [x], timeout: soon}\n  f: {type: exec, command: [x], timeout: 1.5}\n  g: {type: exec, command: [x], timeout: \" 2s \"}\n  h: {type: exec, command: [x], timeout: [1s]}\n"},
	{"config", "channels:\n  a: {type: exec, command: [x], parallel: 0}\n  b: {type: exec, command: [x], parallel: -3}\n  c: {type: exec, command: [x], parallel: 99999999999}\n  d: {type: exec, command: [x], parallel: 2.5}\n  e: {type: exec, command: [x], parallel: \"4\"}\n  f: {type: exec, command: [x], parallel: 0x10}\n  g: {type: exec, command: [x], parallel: 18446744073709551615}\n  h: {type: exec, command: [x], parallel: 2147483647}\n"},
	{"config", "channels:\n  a: {type: exec, command: [x], include_command: maybe}\n  b: {type: exec, command: [x], include_command: }\n"},
	{"config", "channels:\n  p: {type: pagerduty, routing_key_env: K}\n  q: {type: pagerduty, routing_key_file: k, events_url: \"https://e/v2\"}\n  r: {type: pagerduty, routing_key_env: K, events_url: \"mailto:x\"}\n"},
	{"config", "channels:\n  w: {type: webhook, url: \"https://w/h\"}\n  v: {type: webhook, secret_env: S}\n  u: {type: webhook, url_env: U, secret_file: s.key, timeout: 2s, parallel: 3}\n"},
	{"config", "channels:\n  a: &c {type: exec, command: [x]}\n  b: *c\n  c: {type: exec, command: &argv [y, z]}\n  d: {type: exec, command: *argv}\n"},
	{"config", "channels:\n  a: !!map {type: exec, command: [x]}\n  b: {type: !custom exec, command: [x]}\n  c: {type: exec, command: [!!str x]}\n"},
	{"config", "channels:\n  a: {<<: {type: exec}, command: [x]}\n  3: {type: exec, command: [x]}\n"},
	{"config", "channels:\n  a:\n    type: exec\n    command:\n      - notify-send\n      - approve-tui\n    timeout: 5s\n"},
	{"config", "channels:\n  a: {type: exec, type: ntfy}\n"},
	// Routes.
	{"config", "routes: []\n"},
	{"config", "routes:\n  - 3\n  - []\n  - \n  - {}\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - match: {risk: extreme, session: \"[\", requester: \"\"}\n    steps: [{after: 0s, notify: [a]}]\n  - match: {command: x, pattern: y, effect: delete}\n    steps: [{after: 0s, notify: [a]}]\n  - match: [risk]\n    steps: [{after: 0s, notify: [a]}]\n  - match:\n    steps: [{after: 0s, notify: [a]}]\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - match: {risk: 3, session: [a], requester: null}\n    steps: [{after: 0s, notify: [a]}]\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: []\n  - steps: {after: 0s}\n  - steps: [3]\n  - steps: [{}]\n  - steps: [{after: 0s}]\n  - steps: [{notify: [a]}]\n  - steps: [{after: 0s, notify: [a], extra: 1}]\n"},
	{"config", "channels: {a: {type: exec, command: [x]}, b: {type: exec, command: [y]}}\nroutes:\n  - steps:\n      - {after: 5m, notify: [a]}\n      - {after: 5m, notify: [b]}\n      - {after: 1m, notify: [a]}\n      - {after: 10m, notify: [a, b, a]}\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{after: 0s, notify: [zz, a]}]\n  - steps: [{after: 0s, notify: []}]\n  - steps: [{after: 0s, notify: a}]\n  - steps: [{after: 0s, notify: [\"\"]}]\n  - steps: [{after: 0s, notify: [3]}]\n"},
	{"config", "routes:\n  - steps: [{after: 0s, notify: [nowhere]}]\n"},
	{"config", "channels: {bad: {type: sms}}\nroutes:\n  - steps: [{after: 0s, notify: [bad, gone]}]\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{after: -1s, notify: [a]}, {after: 0s, notify: [a]}]\n  - steps: [{after: x, notify: [a]}, {after: 1s, notify: [a]}]\n  - steps: [{after: 0, notify: [a]}]\n  - steps: [{after: 5, notify: [a]}]\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{after: 0s, notify: [a]}]\n    remind_before_expiry: 0s\n  - steps: [{after: 0s, notify: [a]}]\n    remind_before_expiry: -2m\n  - steps: [{after: 0s, notify: [a]}]\n    remind_before_expiry: 2m\n  - steps: [{after: 0s, notify: [a]}]\n    remind_before_expiry: true\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - match: {risk: medium}\n    steps: [{after: 0s, notify: [a]}]\n    bogus: 1\n  - remind_before_expiry: 1m\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nstep: &s {after: 0s, notify: [a]}\nroutes:\n  - steps: [*s]\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - &r\n    steps: [{after: 0s, notify: [a]}]\n  - *r\n"},
	// serve: and tier2:.
	{"config", "serve:\n  listen: \":2222\"\n  host_key: keys/host\n  approvers: /etc/approvers\n  watchers: w\n  max_sessions: 8\n  max_sessions_per_key: 2\n  idle_timeout: 30m\n  login_grace: 30s\n  auth_failures: 5\n  auth_backoff: 1s\n  shutdown_grace: 5s\ntier2: {phrase_limit: 3, lockout: 5m}\n"},
	{"config", "serve:\n  listen: \"\"\n  host_key: 3\n  approvers:\n  max_sessions: 0\n  max_sessions_per_key: -1\n  idle_timeout: 0s\n  login_grace: 5\n  auth_failures: many\n  auth_backoff: -1s\n  shutdown_grace: [1s]\n  bogus: 1\ntier2: {phrase_limit: 0, lockout: 0, extra: x}\n"},
	{"config", "serve: {listen: \":22\", listen: \":23\"}\n"},
	{"config", "serve: {max_sessions: 1e3, idle_timeout: 1.5h}\n"},
	{"config", "tier2: {lockout: 10s}\n"},
	{"config", "serve: {max_sessions: 3000000000}\n"},
	// risk:.
	{"config", "risk:\n  sensitive_paths: [/srv/prod/, ~/.kube/config]\n  sensitive_programs: {psql: medium, kubectl: high}\n  unasked: read-only\n"},
	{"config", "risk:\n  sensitive_paths: [rel/path, \"~user/x\", \"\", 3]\n  sensitive_programs: {\"a b\": high, \"/bin/x\": high, psql: low, kubectl: [high], ok: medium}\n  unasked: everything\n  bogus: 1\n"},
	{"config", "risk:\n  sensitive_paths: /srv\n  sensitive_programs: [psql]\n  unasked: 3\n"},
	{"config", "risk:\n  sensitive_paths: []\n  sensitive_programs: {}\n  unasked: nothing\n"},
	{"config", "risk:\n  sensitive_paths:\n  sensitive_programs:\n  unasked:\n"},
	// trust:.
	{"config", "trust:\n  mode: required\n  allowed_signers: signers\n  policy_signers: [alice, bob]\n  users: {asmith: alice}\n  store: prod-approvals\n"},
	{"config", "trust:\n  mode: required\n"},
	{"config", "trust:\n  mode: sometimes\n  allowed_signers: \"\"\n  policy_signers: [\"a,b\", \"c*\", \"\", \"d e\"]\n  users: {\"bad user\": alice, ok: \"x?\", good: \"\"}\n  store: \"has space\"\n  bogus: 1\n"},
	{"config", "trust:\n  allowed_signers: /etc/signers\n"},
	{"config", "trust:\n  mode: off\n"},
	{"config", "trust:\n  mode: [required]\n  allowed_signers: [x]\n  policy_signers: alice\n  users: [asmith]\n  store: 3\n"},
	{"config", "trust:\n  mode: required\n  store: bad store\n"},
	{"config", "trust:\n"},
	{"config", "trust: {}\n"},
	// A long file with a problem in every part.
	{"config", "include_command: 2\nchannels:\n  push: {type: ntfy, url: \"https://n/t\", token_env: T}\n  bad: {type: exec}\nroutes:\n  - match: {risk: high}\n    steps:\n      - {after: 0s, notify: [push, bad, gone]}\nopen_hint: hello\nserve: {listen: 3}\ntier2: {lockout: x}\nrisk: {unasked: all}\ntrust: {mode: x}\n"},

	// Parts in any order: a part's defaults and checks that reach across
	// parts do not depend on where they are in the file.
	{"config", "channels: {a: {type: exec, command: [x]}, b: {type: exec, command: [y], include_command: true}}\ninclude_command: false\n"},
	{"config", "routes:\n  - steps: [{after: 0s, notify: [a, b]}]\nchannels: {a: {type: exec, command: [x]}}\n"},
	{"config", "routes:\n  - steps: [{after: 0s, notify: [a]}]\n    match: {risk: low}\nchannels: {a: {type: exec, command: [x]}}\nopen_hint: \"x {id}\"\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{after: 5m, notify: [a]}, 3, {after: 1m, notify: [a]}, {after: x, notify: [a]}, {after: 2m, notify: [a]}]\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{notify: [a], after: 0s}, {notify: [a, zz], after: 0s}]\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nn: &n [a]\nroutes:\n  - steps: [{after: 0s, notify: *n}]\n"},
	{"config", "routes:\n  - !!map {steps: []}\n  - {steps: [], bogus: 1}\n  - {bogus: 1}\n"},
	{"config", "routes:\n  - bogus: 1\n    other: 2\n"},
	{"config", "channels:\n  a: {type: ntfy, url: \"https://n/t\", url_env: U, url_file: f}\n  b: {type: slack, url: \"https://s/x\", url_env: U}\n  c: {type: webhook, secret_env: S, url_file: f, url: \"https://w/h\"}\n"},
	{"config", "channels:\n  a: {type: ntfy, token_env: T, url: \"https://n/t\", token_file: t, token_env: U}\n"},
	{"config", "channels:\n  a: {command: [x], type: exec, timeout: 1s, parallel: 2, include_command: false}\n  b: {type: exec, command: [x], url: \"https://x/y\"}\n"},
	{"config", "serve:\n  shutdown_grace: 5s\n  listen: \":1\"\n  max_sessions: 2\n  host_key: /abs/../key\n  watchers: ../w\n"},
	{"config", "risk:\n  unasked: low\n  sensitive_programs: {psql: high}\n  sensitive_paths: [/x]\n"},
	{"config", "risk:\n  unasked: bad\n  sensitive_programs:\n  sensitive_paths: [/x, y]\n"},
	{"config", "trust: {policy_signers: [alice]}\n"},
	{"config", "trust: {mode: required, policy_signers: [\"a b\"]}\n"},
	{"config", "trust: {users: {a: b}, mode: required, allowed_signers: s, store: st}\n"},
	{"config", "trust: {users: null}\n"},
	{"config", "trust: {users: {\"\": a}}\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - match: {effect: delete}\n    steps: [{after: 0s, notify: [a]}]\n  - match: {command: x}\n    steps: [{after: 0s, notify: [a]}]\n"},
	{"config", "tier2: {phrase_limit: 2, lockout: 1m}\nserve: {listen: \":1\"}\nrisk: {unasked: nothing}\n"},

	// Policy files.
	{"policy", ""},
	{"policy", "groups:\n  dba: [alice, bob]\npolicy:\n  - match: {risk: high, session: \"agent:prod:*\"}\n    approvals: 2\n    from: {dba: 1}\n"},
	{"policy", "[a]\n"},
	{"policy", "groups: {}\n"},
	{"policy", "bogus: 1\npolicy: []\n"},
	{"policy", "groups: [a]\npolicy: {a: b}\n"},
	{"policy", "groups:\n  \"bad name\": [a]\n  dba: []\n  ops: alice\n  dev: [alice, \"\", 3]\n  sec: [alice, Alice@laptop]\n  nobody: [\"@host\"]\npolicy: []\n"},
	{"policy", "policy:\n  - 3\n  - {}\n  - match: {}\n  - approvals: 1\n  - match: {}\n    approvals: 1\n    bogus: x\n"},
	{"policy", "policy:\n  - match: {risk: x, session: \"[\", command: \"[\", pattern: \"\", effect: [delete, nope, delete], bogus: 1}\n    approvals: 1\n"},
	{"policy", "policy:\n  - match: {effect: delete}\n    approvals: 1\n  - match: {effect: []}\n    approvals: 1\n  - match: {effect: 3}\n    approvals: 1\n  - match: {effect: nope}\n    approvals: 1\n"},
	{"policy", "policy:\n  - match: {}\n    approvals: 0\n  - match: {}\n    approvals: 1000\n  - match: {}\n    approvals: two\n  - match: {}\n    approvals: -1\n"},
	{"policy", "groups: {dba: [alice, bob], bad name: [x]}\npolicy:\n  - match: {}\n    approvals: 2\n    from: {dba: 3, ops: 1, bad name: 1}\n  - match: {}\n    approvals: 1\n    from: {dba: 2}\n  - match: {}\n    approvals: 2\n    from: [dba]\n  - match: {}\n    approvals: 2\n    from: {dba: 0}\n"},
	{"policy", "policy:\n  - match: {}\n    approvals: 1\n    from: {dba: 1}\n"},
	{"policy", "groups: {dba: [a, b]}\npolicy:\n  - match: {}\n    approvals: bad\n    from: {dba: 2}\n"},
	{"policy", "policy:\n  - match: {risk: low}\n    approvals: 1\n---\npolicy: []\n"},
	{"policy", "policy: &p []\ngroups: *p\n"},

	// System files.
	{"system", ""},
	{"system", "trust:\n  mode: required\n  allowed_signers: /etc/approve-tui/signers\n"},
	{"system", "channels: {}\ntrust: {mode: off}\n"},
	{"system", "[trust]\n"},
	{"system", "trust:\n  mode: required\n"},
	{"system", "trust: {store: \"x y\", users: {a: b}}\n"},
	{"policy", "policy:\n  - match: {}\n    approvals: 2\n    from: {dba: 3}\ngroups: {dba: [a, b]}\n"},
	{"policy", "groups: {dba: [a, b, c]}\npolicy:\n  - from: {dba: 3}\n    approvals: 2\n    match: {}\n"},
	{"policy", "groups: {dba: [a, b, c], ops: [x]}\npolicy:\n  - match: {}\n    approvals: 3\n    from: {ops: 2, dba: 3, zz: 1, dba2: x}\n"},
	{"policy", "policy:\n  - match: {}\n    approvals: 1\n    from:\n"},
	{"policy", "policy:\n  - match: {effect: [delete, \"\"]}\n    approvals: 1\n  - match: {effect: }\n    approvals: 1\n  - match: {effect: [delete, read, write]}\n    approvals: 1\n"},
	{"policy", "groups:\n  dba: [alice]\n"},
	{"policy", "groups:\npolicy:\n"},
	{"policy", "policy:\n  - match: {risk: medium, requester: \"ci-*\", command: \"terraform apply*\", pattern: \"SQL *\"}\n    approvals: 1\n"},
	{"policy", "policy:\n  - match: {}\n    approvals: 1\n  - match: {}\n    approvals: 21\n  - match: {}\n    approvals: 20\n"},
	{"system", "trust:\n"},
	{"system", "trust: {mode: off, bogus: 1}\nother: 1\n"},
	{"system", "trust: {users: {alice: al}, policy_signers: [al]}\n"},
	// A route's events: the kinds of page it sends.
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{after: 0s, notify: [a]}]\n    events: [ran_without_approval]\n  - steps: [{after: 0s, notify: [a]}]\n    events: [page, escalation, resolved]\n"},
	{"config", "channels: {a: {type: exec, command: [x]}}\nroutes:\n  - steps: [{after: 0s, notify: [a]}]\n    events: [ran_without_aproval, Page, page, page]\n  - steps: [{after: 0s, notify: [a]}]\n    events: [page, \"\"]\n  - steps: [{after: 0s, notify: [a]}]\n    events: []\n  - steps: [{after: 0s, notify: [a]}]\n    events: ran_without_approval\n  - steps: [{after: 0s, notify: [a]}]\n    events: [[page]]\n"},
}

// TestCorpus: each file in corpus gives exactly what it gave before,
// problem for problem, value for value.
func TestCorpus(t *testing.T) {
	var b strings.Builder
	for i, c := range corpus {
		fmt.Fprintf(&b, "=== %d %s\n%s--- gives\n%s\n", i, c.kind, c.src, corpusResult(c))
	}
	golden := filepath.Join("testdata", "corpus.golden")
	if *writeCorpus {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(b.String(), "\n")
	lines := strings.Split(string(want), "\n")
	for i := 0; i < max(len(got), len(lines)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(lines) {
			w = lines[i]
		}
		if g != w {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
		}
	}
}

// corpusResult is what the parser of c's kind makes of it: its problems,
// one per line, or its values as JSON.
func corpusResult(c corpusCase) string {
	const path = "/cfg/c.yaml"
	var v any
	var err error
	switch c.kind {
	case "config":
		var f *File
		f, err = Parse(path, []byte(c.src))
		if f != nil {
			// The settings as flags read them: by section.
			v = struct {
				*File
				ServeFlags, Tier2Flags, RiskFlags []Setting
			}{f, f.Settings("serve"), f.Settings("tier2"), f.Settings("risk")}
		}
	case "policy":
		v, err = ParsePolicy(path, []byte(c.src))
	case "system":
		v, err = ParseSystem(path, []byte(c.src))
	}
	if err != nil {
		var ce *Error
		if !errors.As(err, &ce) {
			return "not a *Error: " + err.Error()
		}
		return err.Error()
	}
	out, jerr := json.MarshalIndent(v, "", " ")
	if jerr != nil {
		return "json: " + jerr.Error()
	}
	return string(out)
}

// BenchmarkParse is what reading the configuration adds to each run and
// hook call: the example file (every channel type, two routes) decoded
// and checked, and a file with one problem in every part.
func BenchmarkParse(b *testing.B) {
	bad := corpus[len(corpus)-1]
	for _, c := range corpus {
		if strings.HasPrefix(c.src, "include_command: 2\n") {
			bad = c
		}
	}
	for _, c := range []struct{ name, src string }{{"example", Example}, {"problems", bad.src}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Parse("/cfg/config.yaml", []byte(c.src))
			}
		})
	}
}
