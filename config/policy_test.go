package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
)

const goodPolicy = `# the two-person rule
groups:
  dba: [alice, bob]
  sre:
    - carol
    - dave@ops-1
policy:
  - match: {risk: high, session: "agent:prod:*"}
    approvals: 2
    from: {dba: 1}
  - match:
      command: "terraform apply*"
      requester: "ci-*"
      pattern: "SQL *"
    approvals: 3
    from:
      dba: 1
      sre: 2
  - match: {}
    approvals: 1
  - match: {effect: delete}
    approvals: 1
  - match:
      effect: [delete, infra-destroy]
    approvals: 2
`

func TestParsePolicyGood(t *testing.T) {
	p, err := ParsePolicy("policy.yaml", []byte(goodPolicy))
	if err != nil {
		t.Fatalf("problems:\n%v", err)
	}
	want := &policy.Policy{
		Groups: map[string][]string{"dba": {"alice", "bob"}, "sre": {"carol", "dave@ops-1"}},
		Rules: []policy.Rule{
			{Match: policy.Match{Risk: model.RiskHigh, Session: "agent:prod:*"}, Approvals: 2, From: map[string]int{"dba": 1}, Line: 8},
			{Match: policy.Match{Command: "terraform apply*", Requester: "ci-*", Pattern: "SQL *"}, Approvals: 3,
				From: map[string]int{"dba": 1, "sre": 2}, Line: 11},
			{Match: policy.Match{}, Approvals: 1, Line: 19},
			{Match: policy.Match{Effect: []string{"delete"}}, Approvals: 1, Line: 21},
			{Match: policy.Match{Effect: []string{"delete", "infra-destroy"}}, Approvals: 2, Line: 23},
		},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got  %+v\nwant %+v", p, want)
	}
	if probs := p.Validate(); len(probs) != 0 {
		t.Fatalf("the parsed policy does not validate: %q", probs)
	}
	// What the store keeps reads back the same.
	if back, err := policy.Decode(p.Encode()); err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("decode: %+v %v", back, err)
	}
}

func TestParsePolicyEmpty(t *testing.T) {
	for name, src := range map[string]string{
		"empty":         "",
		"comments only": "# no rules yet\n\n",
		"no rules":      "policy: []\n",
	} {
		p, err := ParsePolicy("policy.yaml", []byte(src))
		if err != nil || p == nil || len(p.Rules) != 0 {
			t.Errorf("%s: %+v %v", name, p, err)
		}
	}
}

func TestLoadPolicy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(goodPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	p, data, err := LoadPolicy(path)
	if err != nil || len(p.Rules) != 5 || string(data) != goodPolicy {
		t.Fatalf("load: %+v %v", p, err)
	}
	if _, _, err := LoadPolicy(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("a missing file: %v", err)
	}
}

// Each bad file is refused with PATH:LINE:COLUMN and what is wrong.
func TestParsePolicyErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // each a line of the error, PATH:LINE:COLUMN: text
	}{
		{"unknown top key", "policies:\n  - match: {}\n    approvals: 2\n",
			[]string{`p.yaml:1:1: the policy file: unknown key "policies"; allowed: groups, policy`}},
		{"unknown rule key", "policy:\n  - match: {}\n    approvals: 2\n    quorum: 2\n",
			[]string{`p.yaml:4:5: rule 1: unknown key "quorum"; allowed: match, approvals, from`}},
		{"unknown match key", "policy:\n  - match: {host: x}\n    approvals: 2\n",
			[]string{`p.yaml:2:13: rule 1: match: unknown key "host"; allowed: risk, session, requester, command, pattern, effect`}},
		{"unknown effect", "policy:\n  - match: {effect: erase}\n    approvals: 1\n",
			[]string{`p.yaml:2:21: rule 1: match: effect: "erase" is not an effect; want one of read, write, delete,`}},
		{"unknown effect in a list", "policy:\n  - match:\n      effect: [delete, cloud-nuke]\n    approvals: 1\n",
			[]string{`p.yaml:3:24: rule 1: match: effect: "cloud-nuke" is not an effect; want one of`}},
		{"effect twice", "policy:\n  - match: {effect: [delete, delete]}\n    approvals: 1\n",
			[]string{`p.yaml:2:30: rule 1: match: effect: delete is named twice`}},
		{"effect not a string", "policy:\n  - match: {effect: 3}\n    approvals: 1\n",
			[]string{`p.yaml:2:21: rule 1: match: effect: want a string, got a number`}},
		{"approvals 0", "policy:\n  - match: {}\n    approvals: 0\n",
			[]string{`p.yaml:3:16: rule 1: approvals: 0 is less than 1`}},
		{"approvals too many", "policy:\n  - match: {}\n    approvals: 10\n",
			[]string{`p.yaml:3:16: rule 1: approvals 10 is more than 9`}},
		{"approvals not a number", "policy:\n  - match: {}\n    approvals: two\n",
			[]string{`p.yaml:3:16: rule 1: approvals: want a whole number of at least 1, got a string`}},
		{"no approvals", "policy:\n  - match: {}\n",
			[]string{`p.yaml:2:5: rule 1 has no approvals`}},
		{"no match", "policy:\n  - approvals: 2\n",
			[]string{`p.yaml:2:5: rule 1 has no match`}},
		{"from an undefined group", "groups:\n  dba: [alice, bob]\npolicy:\n  - match: {}\n    approvals: 2\n    from: {sre: 1}\n",
			[]string{`p.yaml:6:12: rule 1: from sre: no group sre under groups:; want one of: dba`}},
		{"from with no groups", "policy:\n  - match: {}\n    approvals: 2\n    from: {dba: 1}\n",
			[]string{`p.yaml:4:12: rule 1: from dba: no group dba under groups:; want one of: (none defined)`}},
		{"from more than approvals", "groups:\n  dba: [a, b, c]\npolicy:\n  - match: {}\n    approvals: 2\n    from: {dba: 3}\n",
			[]string{`p.yaml:6:17: rule 1: from dba: 3 is more than the rule's approvals (2)`}},
		{"from more than members", "groups:\n  dba: [alice]\npolicy:\n  - match: {}\n    approvals: 2\n    from: {dba: 2}\n",
			[]string{`p.yaml:6:17: rule 1: from dba: 2, but the group has 1 members`}},
		{"from 0", "groups:\n  dba: [alice]\npolicy:\n  - match: {}\n    approvals: 2\n    from: {dba: 0}\n",
			[]string{`p.yaml:6:17: rule 1: from dba: 0 is less than 1`}},
		{"bad risk", "policy:\n  - match: {risk: extreme}\n    approvals: 2\n",
			[]string{`p.yaml:2:19: rule 1: match: risk: "extreme" is not a risk; want low, medium or high`}},
		{"bad command glob", "policy:\n  - match: {command: \"rm [\"}\n    approvals: 2\n",
			[]string{`p.yaml:2:22: rule 1: match: command: "rm [" is not a glob`}},
		{"bad session glob", "policy:\n  - match: {session: \"agent:[\"}\n    approvals: 2\n",
			[]string{`p.yaml:2:22: rule 1: match: session: "agent:[" is not a glob`}},
		{"duplicate member", "groups:\n  dba: [alice, bob, Alice@laptop]\npolicy: []\n",
			[]string{`p.yaml:2:21: group dba, item 3: Alice@laptop is in the group already`}},
		{"groups but no policy", "groups:\n  dba: [alice]\n",
			[]string{`the policy file has no policy: list`}},
		{"a bad group name", "groups:\n  -dba: [alice]\npolicy: []\n",
			[]string{`p.yaml:2:3: group -dba: the name may hold letters`}},
		{"an empty group", "groups:\n  dba: []\npolicy: []\n",
			[]string{`p.yaml:2:8: group dba: the list is empty`}},
		{"a rule naming a group with a problem", "groups:\n  dba: [alice, Alice@laptop]\npolicy:\n  - match: {}\n    approvals: 2\n    from: {dba: 1}\n",
			[]string{`p.yaml:2:16: group dba, item 2: Alice@laptop is in the group already`}},
		{"every problem at once", "policy:\n  - match: {risk: extreme}\n    approvals: 0\n  - match: {}\n    approvals: 2\n    from: {x: 1}\n",
			[]string{`p.yaml:2:19: rule 1: match: risk: "extreme"`, `p.yaml:3:16: rule 1: approvals: 0 is less than 1`,
				`p.yaml:6:12: rule 2: from x: no group x`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePolicy("p.yaml", []byte(tc.src))
			var ce *Error
			if !errors.As(err, &ce) || p != nil {
				t.Fatalf("want *Error, got %+v %v", p, err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("problem %d:\n got  %s\n want %s", i+1, lines[i], w)
				}
			}
		})
	}
}
