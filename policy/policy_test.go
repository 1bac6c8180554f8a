package policy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

var prod = Subject{
	Risk: model.RiskHigh, Session: "agent:prod:db", Requester: "bob@laptop",
	Command: "psql -h db/main -c 'DROP TABLE users'", Patterns: []string{"SQL DROP", "database client"},
}

func TestCheckSaysWhyForEachField(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Match
		s    Subject
		ok   bool
		why  []string
	}{
		{"empty match", Match{}, prod, true, []string{"the rule matches every proposal"}},
		{"all hold", Match{Risk: model.RiskMedium, Session: "agent:prod:*", Requester: "bob@*", Command: "psql *DROP*", Pattern: "SQL *"},
			prod, true, []string{
				`risk high is at or above medium`,
				`session "agent:prod:db" matches "agent:prod:*"`,
				`requester "bob@laptop" matches "bob@*"`,
				`the command matches "psql *DROP*"`,
				`risk rule "SQL DROP" matches "SQL *"`,
			}},
		{"each fails", Match{Risk: model.RiskHigh, Session: "agent:dev:*", Requester: "alice*", Command: "terraform *", Pattern: "rm*"},
			Subject{Risk: model.RiskMedium, Session: "agent:prod:db", Requester: "bob", Command: "ls"}, false, []string{
				`risk medium is below high`,
				`session "agent:prod:db" does not match "agent:dev:*"`,
				`requester "bob" does not match "alice*"`,
				`the command does not match "terraform *"`,
				`no risk rule the command matches is "rm*"`,
			}},
		{"one failing field fails the rule", Match{Risk: model.RiskHigh, Session: "agent:dev:*"}, prod, false, []string{
			`risk high is at or above high`,
			`session "agent:prod:db" does not match "agent:dev:*"`,
		}},
		{"an unknown risk fails closed", Match{Risk: model.RiskHigh}, Subject{Risk: "extreme"}, true,
			[]string{`risk extreme is at or above high`}},
		{"tier-2 is above high", Match{Risk: model.RiskHigh}, Subject{Risk: model.RiskTier2}, true,
			[]string{`risk tier2_critical is at or above high`}},
		{"an effect the command has", Match{Effect: []string{"delete", "infra-destroy"}}, Subject{Effects: []string{"read", "infra-destroy"}}, true,
			[]string{`the command has the effect infra-destroy`}},
		{"an effect named by its alias", Match{Effect: []string{"cloud-destroy"}}, Subject{Effects: []string{"infra-destroy"}}, true,
			[]string{`the command has the effect cloud-destroy`}},
		{"no effect the rule names", Match{Effect: []string{"delete", "egress"}}, Subject{Effects: []string{"read"}}, false,
			[]string{`the command has no effect delete, egress`}},
		{"session glob stops at /", Match{Session: "agent:*"}, Subject{Session: "agent:a/b"}, false,
			[]string{`session "agent:a/b" does not match "agent:*"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := tc.m.Check(tc.s)
			if ok != tc.ok || !slices.Equal(why, tc.why) {
				t.Fatalf("Check = %v %q, want %v %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}

func TestCommandGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "anything at all", true},
		{"terraform apply*", "terraform apply -auto-approve ./envs/prod", true},
		{"*", "rm -rf /var/lib/postgresql", true},
		{"rm -rf /*", "rm -rf /srv/app/data", true},
		{"*DROP TABLE*", "psql -c 'DROP TABLE users'", true},
		{"*drop table*", "psql -c 'DROP TABLE users'", false}, // case counts
		{"kubectl delete ns ?", "kubectl delete ns a", true},
		{"kubectl delete ns ?", "kubectl delete ns ab", false},
		{"[!a]*", "bcd", true},
		{"[^a]*", "abc", false},
		{"[a-c]x", "bx", true},
		{`\*literal`, "*literal", true},
		{`\*literal`, "xliteral", false},
		{"a.b", "axb", false}, // regexp metacharacters are literal
		{"(x)+", "(x)+", true},
		{"line1*", "line1\nline2", true}, // * crosses newlines too
		{"ls", "ls -la", false},          // the whole command
		{"[", "[", false},                // malformed: matches nothing
		{`trailing\`, `trailing\`, false},
	} {
		if got := CommandGlob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("CommandGlob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
	if !Glob("", "x") || !Glob("agent:*", "agent:x") || Glob("agent:*", "agent:x/y") || Glob("[", "[") {
		t.Fatal("Glob")
	}
	for _, bad := range []string{"[", "a[b", `x\`} {
		if ValidGlob(bad) == nil {
			t.Errorf("ValidGlob(%q) is nil", bad)
		}
	}
	for _, good := range []string{"*", "agent:prod:*", "[a-z]?", `\*`, "rm -rf /*"} {
		if err := ValidGlob(good); err != nil {
			t.Errorf("ValidGlob(%q) = %v", good, err)
		}
	}
}

func TestPerson(t *testing.T) {
	for in, want := range map[string]string{
		"alice":            "alice",
		"alice@laptop":     "alice",
		"  Alice@ops-1  ":  "Alice",
		"@ops:example.org": "@ops:example.org", // a Matrix id keeps its @
		"":                 "",
		// Nothing but the host is cut: the rest is a name as written.
		"vm (as carol)":             "vm (as carol)",
		"agent@vm (as carol)":       "agent",
		"alice (SHA256:k)":          "alice (SHA256:k)",
		"root@ops-1 (as alice)":     "root",
		"alice@laptop (SHA256:abc)": "alice",
	} {
		if got := Person(in); got != want {
			t.Errorf("Person(%q) = %q, want %q", in, got, want)
		}
	}
	if !SamePerson("alice@laptop", "ALICE@ops-1") || !SamePerson("alice", "Alice") {
		t.Fatal("one person by two names")
	}
	if SamePerson("alice", "bob") || SamePerson("", "") || SamePerson("", "alice") || SamePerson("x (as carol)", "carol") {
		t.Fatal("two people, or nobody, taken for one")
	}
}

var groups = &Policy{Groups: map[string][]string{
	"dba": {"alice", "dave@db-1"},
	"sre": {"erin", "Dave"},
}}

func TestRequirementIsTheStrictestOfMatchingRules(t *testing.T) {
	p := &Policy{Groups: groups.Groups, Rules: []Rule{
		{Match: Match{Risk: model.RiskHigh}, Approvals: 2},
		{Match: Match{Command: "psql *"}, Approvals: 3, From: map[string]int{"dba": 1}},
		{Match: Match{Session: "agent:prod:*"}, Approvals: 2, From: map[string]int{"dba": 2, "sre": 1}},
		{Match: Match{Session: "agent:dev:*"}, Approvals: 5},
	}}
	req := p.Requirement(prod)
	if req.Approvals != 3 || !reflect.DeepEqual(req.From, map[string]int{"dba": 2, "sre": 1}) ||
		!slices.Equal(req.Rules, []int{0, 1, 2}) || !req.Ruled() {
		t.Fatalf("requirement %+v", req)
	}
	if got := req.Describe(); got != "3 approvers, at least 2 from dba, one from sre" {
		t.Fatalf("describe %q", got)
	}
	if !slices.Equal(req.Groups(), []string{"dba", "sre"}) {
		t.Fatalf("groups %v", req.Groups())
	}
	// None matches: one approver, unruled; so for a nil policy.
	none := p.Requirement(Subject{Risk: model.RiskLow, Session: "agent:main:x", Command: "ls"})
	if none.Approvals != 1 || none.Ruled() || none.From != nil || none.Describe() != "one approver" {
		t.Fatalf("no rule: %+v", none)
	}
	var nilPolicy *Policy
	if r := nilPolicy.Requirement(prod); r.Approvals != 1 || r.Ruled() {
		t.Fatalf("nil policy: %+v", r)
	}
	if v, r := nilPolicy.Explain(prod); v != nil || r.Ruled() {
		t.Fatalf("nil explain: %v %+v", v, r)
	}
	// A rule asking for one approver still applies (no self-approval).
	one := (&Policy{Rules: []Rule{{Match: Match{}, Approvals: 1}}}).Requirement(prod)
	if one.Approvals != 1 || !one.Ruled() {
		t.Fatalf("approvals 1: %+v", one)
	}
	verdicts, req2 := p.Explain(prod)
	if len(verdicts) != 4 || !verdicts[0].Matches || verdicts[3].Matches || verdicts[3].Rule != 3 ||
		!reflect.DeepEqual(req, req2) || !strings.Contains(verdicts[3].Why[0], "does not match") {
		t.Fatalf("explain %+v %+v", verdicts, req2)
	}
}

func TestStandNeededHelps(t *testing.T) {
	p := groups
	v := func(names ...string) []Voter {
		out := make([]Voter, len(names))
		for i, n := range names {
			out[i] = Voter{Person: n}
		}
		return out
	}
	two := Requirement{Approvals: 2, Rules: []int{0}}
	dba1 := Requirement{Approvals: 2, From: map[string]int{"dba": 1}, Rules: []int{0}}
	dba2 := Requirement{Approvals: 2, From: map[string]int{"dba": 2}, Rules: []int{0}}
	three := Requirement{Approvals: 3, From: map[string]int{"dba": 1}, Rules: []int{0}}
	both := Requirement{Approvals: 2, From: map[string]int{"dba": 1, "sre": 1}, Rules: []int{0}}
	for _, tc := range []struct {
		name     string
		req      Requirement
		voters   []Voter
		met      bool
		needed   string
		progress string
		helps    map[string]bool
	}{
		{"none yet", two, nil, false, "2 more approvers", "0 of 2 approvals", map[string]bool{"carol": true}},
		{"one of two", two, v("carol"), false, "one more approver", "1 of 2 approvals", map[string]bool{"erin": true}},
		{"met", two, v("carol", "erin"), true, "", "2 of 2 approvals", map[string]bool{"frank": true}},
		{"dba place kept", dba1, v("carol"), false, "one more approver from dba", "1 of 2 approvals",
			map[string]bool{"erin": false, "alice": true, "dave": true}},
		{"dba first", dba1, v("alice"), false, "one more approver", "1 of 2 approvals", map[string]bool{"carol": true}},
		{"dba and anyone", dba1, v("alice", "carol"), true, "", "2 of 2 approvals", nil},
		{"two dbas, none yet", dba2, nil, false, "2 more approvers from dba", "0 of 2 approvals",
			map[string]bool{"carol": false, "alice": true}},
		{"two dbas, one", dba2, v("alice"), false, "one more approver from dba", "1 of 2 approvals",
			map[string]bool{"carol": false, "dave": true}},
		{"a free place and a kept one", three, nil, false, "one more approver from dba and 2 more from anyone", "0 of 3 approvals",
			map[string]bool{"carol": true}},
		{"the free places taken", three, v("carol", "frank"), false, "one more approver from dba", "2 of 3 approvals",
			map[string]bool{"erin": false, "alice": true}},
		// dave is in both: carol and dave would do, so carol's vote counts.
		{"two groups", both, nil, false, "one more approver from dba and one more from sre", "0 of 2 approvals",
			map[string]bool{"carol": true, "alice": true, "erin": true, "dave": true}},
		// alice and erin share no group: after alice, only sre can help.
		{"two groups, one met", both, v("alice"), false, "one more approver from sre", "1 of 2 approvals",
			map[string]bool{"carol": false, "erin": true, "dave": true}},
		{"two groups, three places", Requirement{Approvals: 3, From: map[string]int{"dba": 2, "sre": 1}, Rules: []int{0}}, v("carol"), false,
			"2 more approvers: 2 from dba and one from sre (one person may count for several groups)", "1 of 3 approvals",
			map[string]bool{"frank": false, "erin": false, "alice": true, "dave": true}},
		{"one member of both counts for both", both, v("dave"), false, "one more approver", "1 of 2 approvals",
			map[string]bool{"carol": true}},
		{"member names compare as people", dba1, v("Dave"), false, "one more approver", "1 of 2 approvals", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := p.Stand(tc.req, tc.voters)
			if st.Met() != tc.met || st.Needed() != tc.needed || st.Progress() != tc.progress || st.Votes != len(tc.voters) {
				t.Fatalf("stand %+v: met %v needed %q progress %q", st, st.Met(), st.Needed(), st.Progress())
			}
			for who, want := range tc.helps {
				if got := p.Helps(st, who); got != want {
					t.Errorf("Helps(%s) = %v, want %v", who, got, want)
				}
			}
		})
	}
	var nilPolicy *Policy
	if nilPolicy.Member("dba", "alice") || groups.Member("dba", "") || groups.Member("nope", "alice") {
		t.Fatal("member of nothing")
	}
}

func TestEncodeDecode(t *testing.T) {
	p := &Policy{Groups: map[string][]string{"dba": {"alice", "bob"}}, Rules: []Rule{
		{Match: Match{Risk: model.RiskHigh, Session: "agent:prod:*", Command: "psql *"}, Approvals: 2, From: map[string]int{"dba": 1}, Line: 4},
		{Match: Match{}, Approvals: 1},
		{Match: Match{Effect: []string{"delete", "infra-destroy"}}, Approvals: 1},
	}}
	got, err := Decode(p.Encode())
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	empty, err := Decode((&Policy{}).Encode())
	if err != nil || len(empty.Rules) != 0 {
		t.Fatalf("empty policy: %+v %v", empty, err)
	}
	for name, bad := range map[string]string{
		"not JSON":          `garbage`,
		"truncated":         `{"policy": [`,
		"unknown top key":   `{"policy": [], "extra": 1}`,
		"unknown rule key":  `{"policy": [{"match": {}, "approvals": 2, "quorum": 2}]}`,
		"unknown match key": `{"policy": [{"match": {"host": "x"}, "approvals": 2}]}`,
		"approvals 0":       `{"policy": [{"match": {}, "approvals": 0}]}`,
		"approvals 10":      `{"policy": [{"match": {}, "approvals": 10}]}`,
		"bad risk":          `{"policy": [{"match": {"risk": "extreme"}, "approvals": 2}]}`,
		"bad glob":          `{"policy": [{"match": {"command": "["}, "approvals": 2}]}`,
		"unknown effect":    `{"policy": [{"match": {"effect": ["erase"]}, "approvals": 2}]}`,
		"undefined group":   `{"policy": [{"match": {}, "approvals": 2, "from": {"dba": 1}}]}`,
		"from > approvals":  `{"groups": {"dba": ["a", "b", "c"]}, "policy": [{"match": {}, "approvals": 2, "from": {"dba": 3}}]}`,
		"from > members":    `{"groups": {"dba": ["a"]}, "policy": [{"match": {}, "approvals": 2, "from": {"dba": 2}}]}`,
		"from 0":            `{"groups": {"dba": ["a"]}, "policy": [{"match": {}, "approvals": 2, "from": {"dba": 0}}]}`,
		"empty group":       `{"groups": {"dba": []}, "policy": []}`,
		"empty member":      `{"groups": {"dba": [" "]}, "policy": []}`,
		"wrong type":        `{"policy": [{"match": {}, "approvals": "2"}]}`,
		"two values":        `{"policy": []} {"policy": []}`,
		"null":              `null`,
		"no rules key":      `{}`,
		"a list":            `[]`,
	} {
		if p, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%s: Decode(%s) = %+v, want an error", name, bad, p)
		}
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	p := &Policy{Groups: map[string][]string{"dba": {"alice", "Alice@x"}}, Rules: []Rule{
		{Approvals: 0},
		{Match: Match{Risk: "extreme", Session: "["}, Approvals: 2, From: map[string]int{"sre": 1}},
		{Approvals: 2, From: map[string]int{"dba": 2}}, // alice twice is one member
	}}
	probs := p.Validate()
	want := []string{"rule 1: approvals 0", `rule 2: risk "extreme"`, `rule 2: "[" is not a glob`, "rule 2: from names group sre",
		"rule 3: from dba: 2, but the group has 1 members"}
	for _, w := range want {
		if !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, w) }) {
			t.Errorf("no problem %q in %q", w, probs)
		}
	}
	if len(probs) != len(want) {
		t.Errorf("%d problems, want %d: %q", len(probs), len(want), probs)
	}
}

// A voter is the actor's structured Person and Key: whatever its name
// says (a host name set by the environment, a key comment) counts for
// nothing.
func TestVoterOfReadsNoName(t *testing.T) {
	for _, tc := range []struct {
		a    model.Actor
		want Voter
	}{
		{model.Actor{Name: "agent@vm (as carol)", Person: "agent"}, Voter{Person: "agent"}},
		{model.Actor{Name: "agent@vm (SHA256:bobkey)", Person: "Agent"}, Voter{Person: "agent"}},
		{model.Actor{Name: "alice@laptop (SHA256:aaa)", Person: "alice", Key: "SHA256:aaa"}, Voter{Person: "alice", Key: "SHA256:aaa"}},
		{model.Actor{Name: "carol@laptop (SHA256:ccc)"}, Voter{}},
		{model.Actor{Name: "root@ops-1 (as alice) via cli"}, Voter{}},
	} {
		if got := VoterOf(tc.a); got != tc.want {
			t.Errorf("VoterOf(%+v) = %+v, want %+v", tc.a, got, tc.want)
		}
	}
	if (Voter{}).Same(Voter{}) {
		t.Fatal("two nobodies are one person")
	}
}
