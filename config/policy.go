package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/approve-tui/approve-tui/policy"
	"github.com/goccy/go-yaml/ast"
)

// The keys of a policy file.
var (
	policyTopKeys   = yamlKeys[policy.Policy]()
	policyRuleKeys  = yamlKeys[policy.Rule]()
	policyMatchKeys = yamlKeys[policy.Match]()
)

// LoadPolicy reads and validates the policy file at path (see
// ParsePolicy); it returns the file's bytes too, which the store keeps
// with their hash.
func LoadPolicy(path string) (*policy.Policy, []byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("policy file %s cannot be read: %w", path, bare(err))
	}
	if fi.Size() > maxFileSize {
		return nil, nil, fmt.Errorf("policy file %s is larger than %d KiB: not a policy file", path, maxFileSize>>10)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("policy file %s cannot be read: %w", path, bare(err))
	}
	p, err := ParsePolicy(path, data)
	return p, data, err
}

// ParsePolicy validates data, a policy file:
//
//	groups:
//	  dba: [alice, bob]
//	policy:
//	  - match: {risk: high, session: "agent:prod:*"}
//	    approvals: 2
//	    from: {dba: 1}
//
// Every problem is reported, as *Error with PATH:LINE:COLUMN. An empty
// file is a policy with no rules (one approver for everything).
func ParsePolicy(path string, data []byte) (*policy.Policy, error) {
	l := newLoader(path)
	p := &policy.Policy{}
	if body := l.body(data); body != nil {
		l.policy(p, body)
	}
	if err := l.problems(path); err != nil {
		return nil, err
	}
	return p, nil
}

// policy decodes a policy file's body into p.
func (l *loader) policy(p *policy.Policy, body ast.Node) {
	top, ok, _ := l.object(body, part{what: "the policy file", want: "a mapping of keys (" + strings.Join(policyTopKeys, ", ") + ")", read: map[string]func(entry) bool{
		"groups": func(e entry) bool { return l.groups(p, e) },
		"policy": func(e entry) bool { return l.rules(p, e) },
	}}, p)
	if _, has := find(top, "policy"); ok && !has && len(top) > 0 {
		l.add(body, "the policy file has no policy: list; want policy: a list of rules (each with match and approvals)")
	}
}

// groups decodes groups: group names and their members. A group with a
// problem is noted (l.badGroups): a rule naming it is not told again.
func (l *loader) groups(p *policy.Policy, e entry) bool {
	es, ok := l.mapping(e.val, "groups", "a mapping of group names to lists of members, such as dba: [alice, bob]", nil)
	if !ok {
		return false
	}
	p.Groups = map[string][]string{}
	good := true
	for _, ge := range es {
		what := "group " + ge.name
		var ms []string
		switch {
		case !channelName().MatchString(ge.name):
			l.add(ge.key, "%s: the name may hold letters, digits, _ . - and must start with a letter or digit", what)
		case l.decodeValue(ge, what, kindMembers, &ms):
			p.Groups[ge.name] = ms
			delete(l.badGroups, ge.name)
			continue
		}
		l.badGroups[ge.name] = true
		good = false
	}
	return good
}

// rules decodes policy: a list of rules, each in place (where its values
// are, l.at, is by their addresses).
func (l *loader) rules(p *policy.Policy, e entry) bool {
	items, ok := l.list(e, "policy", "a list of rules (each with match and approvals)")
	if !ok {
		return false
	}
	if len(items) > 0 {
		p.Rules = make([]policy.Rule, len(items))
	}
	good := true
	for i, it := range items {
		what := fmt.Sprintf("rule %d", i+1)
		r := &p.Rules[i]
		r.Line = line(it)
		_, ok, rgood := l.object(it, part{what: what, prefix: what + ": ", want: "a mapping (" + strings.Join(policyRuleKeys, ", ") + ")",
			kinds: map[string]string{"approvals": kindApprovals},
			required: map[string]string{
				"match":     "match: {risk, session, requester, command, pattern, effect} (match: {} takes every proposal)",
				"approvals": "approvals: N, the number of distinct people who must approve",
			},
			read: map[string]func(entry) bool{
				"match": func(me entry) bool { return l.match(&r.Match, me, what+": match", policyMatchKeys) },
				"from":  func(fe entry) bool { return l.from(r, fe, what) },
			}}, r)
		// groups: is decoded before policy:, so the rule is checked
		// against them here.
		l.validateRule(p, r, what)
		good = good && ok && rgood
	}
	return good
}

// fromKey is where a rule's from: count for a group is (l.at).
type fromKey struct {
	rule  *policy.Rule
	group string
}

// from decodes a rule's from: group names and counts (checked against
// the groups by validateRule).
func (l *loader) from(r *policy.Rule, e entry, what string) bool {
	fs, ok := l.mapping(e.val, what+": from", "a mapping of group names to counts, such as {dba: 1}", nil)
	good := ok
	for _, ge := range fs {
		var c int
		if !l.decodeValue(ge, what+": from "+ge.name, "", &c) {
			good = false
			continue
		}
		if r.From == nil {
			r.From = map[string]int{}
		}
		r.From[ge.name] = c
		l.at[fromKey{r, ge.name}] = ge
	}
	return good
}

// validateRule checks what holds across the policy's parts: the rule's
// from: names groups defined, and asks no more of each than the rule's
// approvals or the group's members.
func (l *loader) validateRule(p *policy.Policy, r *policy.Rule, what string) {
	for _, g := range sortedKeys(r.From) {
		ge := l.at[fromKey{r, g}]
		k := what + ": from " + g
		c := r.From[g]
		ms, defined := p.Groups[g]
		_, approvals := l.at[&r.Approvals]
		switch {
		case !defined && l.badGroups[g]:
			// The group's own problem is said.
		case !defined:
			l.add(ge.key, "%s: no group %s under groups:; want one of: %s", k, g, groupNames(p))
		case approvals && c > r.Approvals:
			l.add(ge.at(), "%s: %d is more than the rule's approvals (%d)", k, c, r.Approvals)
		case c > len(ms):
			l.add(ge.at(), "%s: %d, but the group has %d members: no proposal this rule matches could ever be approved", k, c, len(ms))
		}
	}
}

func groupNames(p *policy.Policy) string {
	if len(p.Groups) == 0 {
		return "(none defined)"
	}
	return strings.Join(p.GroupNames(), ", ")
}
