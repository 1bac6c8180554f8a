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
	policyTopKeys   = []string{"groups", "policy"}
	policyRuleKeys  = []string{"match", "approvals", "from"}
	policyMatchKeys = []string{"risk", "session", "requester", "command", "pattern", "effect"}
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
	l := &loader{anchors: map[string]ast.Node{}, badChannels: map[string]bool{}}
	p := &policy.Policy{}
	if body := l.body(data); body != nil {
		l.policy(p, body)
	}
	if len(l.probs) > 0 {
		l.sortProblems()
		return nil, &Error{Path: path, Problems: l.probs}
	}
	return p, nil
}

func (l *loader) policy(p *policy.Policy, body ast.Node) {
	top, ok := l.mapping(body, "the policy file", "a mapping of keys ("+strings.Join(policyTopKeys, ", ")+")", policyTopKeys)
	if !ok {
		return
	}
	// bad are the groups defined with a problem (said already): a rule
	// naming one is not told that it is not defined.
	bad := map[string]bool{}
	if e, ok := find(top, "groups"); ok {
		es, ok := l.mapping(e.val, "groups", "a mapping of group names to lists of members, such as dba: [alice, bob]", nil)
		if ok {
			p.Groups = map[string][]string{}
			for _, ge := range es {
				what := "group " + ge.name
				bad[ge.name] = true
				if !channelName().MatchString(ge.name) {
					l.add(ge.key, "%s: the name may hold letters, digits, _ . - and must start with a letter or digit", what)
					continue
				}
				ms, items, ok := l.strList(ge, what, "a list of members (OS user names or SSH key comments)")
				if !ok {
					continue
				}
				seen := map[string]bool{}
				for i, m := range ms {
					k := strings.ToLower(policy.Person(m))
					if k == "" {
						l.add(items[i], "%s, item %d names nobody", what, i+1)
						ok = false
					} else if seen[k] {
						l.add(items[i], "%s, item %d: %s is in the group already", what, i+1, m)
						ok = false
					}
					seen[k] = true
				}
				if ok {
					p.Groups[ge.name] = ms
					delete(bad, ge.name)
				}
			}
		}
	}
	e, ok := find(top, "policy")
	if !ok {
		if len(top) > 0 {
			l.add(body, "the policy file has no policy: list; want policy: a list of rules (each with match and approvals)")
		}
		return
	}
	items, ok := l.list(e, "policy", "a list of rules (each with match and approvals)")
	if !ok {
		return
	}
	for i, it := range items {
		if r, ok := l.policyRule(p, bad, it, i+1); ok {
			p.Rules = append(p.Rules, r)
		}
	}
}

func (l *loader) policyRule(p *policy.Policy, bad map[string]bool, n ast.Node, num int) (policy.Rule, bool) {
	what := fmt.Sprintf("rule %d", num)
	line, _ := pos(n)
	r := policy.Rule{Line: line}
	es, ok := l.mapping(n, what, "a mapping ("+strings.Join(policyRuleKeys, ", ")+")", policyRuleKeys)
	if !ok {
		return r, false
	}
	good := true
	me, ok := find(es, "match")
	if ok {
		good = l.matchKeys(&r.Match, me, what+": match", policyMatchKeys) && good
	} else {
		l.add(n, "%s has no match; want match: {risk, session, requester, command, pattern, effect} (match: {} takes every proposal)", what)
		good = false
	}
	ae, ok := find(es, "approvals")
	if ok {
		n, ok := l.count(ae, what+": approvals")
		switch {
		case !ok:
			good = false
		case n > policy.MaxApprovals:
			l.add(ae.at(), "%s: approvals %d is more than %d; want the number of distinct people who must approve", what, n, policy.MaxApprovals)
			good = false
		default:
			r.Approvals = n
		}
	} else {
		l.add(n, "%s has no approvals; want approvals: N, the number of distinct people who must approve", what)
		good = false
	}
	if fe, ok := find(es, "from"); ok {
		fs, ok := l.mapping(fe.val, what+": from", "a mapping of group names to counts, such as {dba: 1}", nil)
		if !ok {
			good = false
		}
		for _, ge := range fs {
			k := what + ": from " + ge.name
			c, ok := l.count(ge, k)
			if !ok {
				good = false
				continue
			}
			ms, defined := p.Groups[ge.name]
			switch {
			case !defined && bad[ge.name]:
				good = false // the group's own problem is said
				continue
			case !defined:
				l.add(ge.key, "%s: no group %s under groups:; want one of: %s", k, ge.name, groupNames(p))
				good = false
				continue
			case r.Approvals > 0 && c > r.Approvals:
				l.add(ge.at(), "%s: %d is more than the rule's approvals (%d)", k, c, r.Approvals)
				good = false
			case c > len(ms):
				l.add(ge.at(), "%s: %d, but the group has %d members: no proposal this rule matches could ever be approved", k, c, len(ms))
				good = false
			}
			if r.From == nil {
				r.From = map[string]int{}
			}
			r.From[ge.name] = c
		}
	}
	return r, good
}

func groupNames(p *policy.Policy) string {
	if len(p.Groups) == 0 {
		return "(none defined)"
	}
	return strings.Join(p.GroupNames(), ", ")
}
