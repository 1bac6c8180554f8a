// Package policy is approve-tui's approval policy: the rules that ask for
// more than one approver (a two-person rule), the groups they name, and the
// arithmetic of a quorum. It is pure: no SQL, no files, no terminal. The
// store keeps the policy and enforces it in the transaction that decides
// (storage); the configuration package reads the YAML file into it
// (config.ParsePolicy).
package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk/catalogue"
)

// MaxApprovals bounds a rule's approvals: a quorum larger than this is a
// typing mistake, and a proposal that needs it would never be approved.
const MaxApprovals = 9

// Policy is one version of the rules.
type Policy struct {
	// Groups maps a group's name to its members, by the names actors carry
	// (an OS user, an SSH key's comment: see Person).
	Groups map[string][]string `json:"groups,omitempty" yaml:"groups"`
	// Rules apply to the proposals they match: every matching rule
	// applies, and the strictest of each demand wins (Requirement).
	Rules []Rule `json:"policy" yaml:"policy"`
}

// Rule is one entry of policy:.
type Rule struct {
	Match Match `json:"match" yaml:"match"`
	// Approvals is how many distinct people must approve (at least 1).
	Approvals int `json:"approvals" yaml:"approvals"`
	// From asks that at least so many of the approvers be members of each
	// named group.
	From map[string]int `json:"from,omitempty" yaml:"from"`
	// Line is where the rule is in the file it was read from (0: unknown).
	Line int `json:"line,omitempty"`
}

// Match says which proposals a rule takes. Every field given must hold;
// none given matches every proposal.
type Match struct {
	// Risk: the proposal's effective risk at or above this level.
	Risk model.RiskLevel `json:"risk,omitempty" yaml:"risk"`
	// Session and Requester: globs (path.Match: * is any run of characters
	// but /) on the session key and the requester.
	Session   string `json:"session,omitempty" yaml:"session"`
	Requester string `json:"requester,omitempty" yaml:"requester"`
	// Command: a glob on the whole command, where * is any run of
	// characters, / and spaces included.
	Command string `json:"command,omitempty" yaml:"command"`
	// Pattern: a glob (as Command's) on the descriptions of the risk rules
	// the command matches ("SQL DROP", "delete in root path", ...).
	Pattern string `json:"pattern,omitempty" yaml:"pattern"`
	// Effect: the command has at least one of these effects, as the
	// judgement finds them (names of risk/catalogue's effects: "delete",
	// "infra-destroy", ...).
	Effect []string `json:"effect,omitempty" yaml:"effect"`
}

// Subject is what a rule is matched against: one proposal.
type Subject struct {
	Risk      model.RiskLevel // effective risk
	Session   string
	Requester string
	Command   string
	Patterns  []string // descriptions of the risk rules the command matches
	Effects   []string // the command's effects, as the judgement finds them
}

// Check reports why m matches s or does not: ok, and one reason per field
// given, in the order risk, session, requester, command, pattern.
func (m Match) Check(s Subject) (ok bool, why []string) {
	ok = true
	say := func(hold bool, yes, no string) {
		if hold {
			why = append(why, yes)
		} else {
			ok = false
			why = append(why, no)
		}
	}
	if m.Risk != "" {
		// An unknown risk ranks above high: it fails closed.
		say(s.Risk.Normalized().Rank() >= m.Risk.Rank(),
			fmt.Sprintf("risk %s is at or above %s", s.Risk, m.Risk),
			fmt.Sprintf("risk %s is below %s", s.Risk, m.Risk))
	}
	if m.Session != "" {
		say(Glob(m.Session, s.Session),
			fmt.Sprintf("session %q matches %q", s.Session, m.Session),
			fmt.Sprintf("session %q does not match %q", s.Session, m.Session))
	}
	if m.Requester != "" {
		say(Glob(m.Requester, s.Requester),
			fmt.Sprintf("requester %q matches %q", s.Requester, m.Requester),
			fmt.Sprintf("requester %q does not match %q", s.Requester, m.Requester))
	}
	if m.Command != "" {
		say(CommandGlob(m.Command, s.Command),
			fmt.Sprintf("the command matches %q", m.Command),
			fmt.Sprintf("the command does not match %q", m.Command))
	}
	if m.Pattern != "" {
		hit := ""
		for _, p := range s.Patterns {
			if CommandGlob(m.Pattern, p) {
				hit = p
				break
			}
		}
		say(hit != "",
			fmt.Sprintf("risk rule %q matches %q", hit, m.Pattern),
			fmt.Sprintf("no risk rule the command matches is %q", m.Pattern))
	}
	if len(m.Effect) > 0 {
		hit := ""
		for _, e := range m.Effect {
			if slices.Contains(s.Effects, CanonicalEffect(e)) {
				hit = e
				break
			}
		}
		want := strings.Join(m.Effect, ", ")
		say(hit != "",
			fmt.Sprintf("the command has the effect %s", hit),
			fmt.Sprintf("the command has no effect %s", want))
	}
	if len(why) == 0 {
		why = append(why, "the rule matches every proposal")
	}
	return ok, why
}

// EffectNames are the effects a rule's effect may name: the catalogue's.
func EffectNames() []string {
	out := make([]string, len(catalogue.Effects))
	for i, e := range catalogue.Effects {
		out[i] = string(e)
	}
	return out
}

// effectAliases are other names a rule may give an effect: cloud
// resources are infrastructure (effect: cloud-destroy is infra-destroy).
var effectAliases = map[string]catalogue.Effect{
	"cloud-destroy": catalogue.InfraDestroy,
	"cloud-apply":   catalogue.InfraApply,
}

// CanonicalEffect is the catalogue's name of effect e (e itself unless it
// is an alias).
func CanonicalEffect(e string) string {
	if c, ok := effectAliases[e]; ok {
		return string(c)
	}
	return e
}

// ValidEffect reports whether e names one of the catalogue's effects, or
// an alias of one (cloud-destroy, cloud-apply).
func ValidEffect(e string) bool {
	return slices.Contains(catalogue.Effects, catalogue.Effect(CanonicalEffect(e)))
}

// Glob is path.Match, false for a malformed pattern; "" matches anything.
func Glob(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	ok, err := path.Match(pattern, s)
	return ok && err == nil
}

// CommandGlob matches a glob in which * is any run of characters (/ and
// spaces included), ? one character, [...] a class and \ quotes the next
// character: the shape of a command, which path.Match's * (no /) does not
// fit. "" matches anything; a malformed pattern matches nothing.
func CommandGlob(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	re, err := commandRegexp(pattern)
	return err == nil && re.MatchString(s)
}

// ValidGlob reports a malformed glob of either kind.
func ValidGlob(pattern string) error {
	if _, err := path.Match(pattern, ""); err != nil {
		return err
	}
	_, err := commandRegexp(pattern)
	return err
}

func commandRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 == len(rs) {
				return nil, errors.New("a trailing \\ quotes nothing")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '[':
			j := i + 1
			if j < len(rs) && (rs[j] == '^' || rs[j] == '!') {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				return nil, errors.New("a [ has no closing ]")
			}
			class := string(rs[i+1 : j])
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`\z`)
	return regexp.Compile(b.String())
}

// Requirement is what a proposal needs: Approvals distinct people, From[g]
// of them members of group g. The zero-rule requirement (no rule matched)
// is one approver, as without a policy.
type Requirement struct {
	Approvals int            `json:"approvals"`
	From      map[string]int `json:"from,omitempty"`
	// Rules are the indexes (from 0) of the rules that matched.
	Rules []int `json:"rules,omitempty"`
}

// Ruled reports whether any rule matched: only then do separation of
// duties (no self-approval) and votes apply.
func (r Requirement) Ruled() bool { return len(r.Rules) > 0 }

// Requirement is what p asks of s: the strictest of every rule that
// matches (the most approvals, and for each group the most from it). A nil
// policy, or no rule matching, asks for one approver.
func (p *Policy) Requirement(s Subject) Requirement {
	req := Requirement{Approvals: 1}
	if p == nil {
		return req
	}
	for i, r := range p.Rules {
		if ok, _ := r.Match.Check(s); !ok {
			continue
		}
		req.Rules = append(req.Rules, i)
		if r.Approvals > req.Approvals {
			req.Approvals = r.Approvals
		}
		for g, n := range r.From {
			if req.From == nil {
				req.From = map[string]int{}
			}
			if n > req.From[g] {
				req.From[g] = n
			}
		}
	}
	return req
}

// Groups returns the sorted names of the groups r asks for.
func (r Requirement) Groups() []string {
	out := make([]string, 0, len(r.From))
	for g := range r.From {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// GroupNames are the groups' names, sorted.
func (p *Policy) GroupNames() []string {
	if p == nil {
		return nil
	}
	names := make([]string, 0, len(p.Groups))
	for g := range p.Groups {
		names = append(names, g)
	}
	sort.Strings(names)
	return names
}

// Member reports whether person is a member of group g.
func (p *Policy) Member(g, person string) bool {
	if p == nil {
		return false
	}
	for _, m := range p.Groups[g] {
		if SamePerson(m, person) {
			return true
		}
	}
	return false
}

// Person is a person's name as people write it in a policy file (a
// group's members) or as a requester names itself: "alice" and
// "alice@laptop" are both alice. What follows the first @ goes (one that
// starts the name stays), and spaces
// at either end; nothing else is read from the text (no "(as …)", no key
// fingerprint, no "via"): an actor's person is its structured Person, set
// by the code that established it, never taken from a name.
func Person(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.Index(name, "@"); i > 0 {
		name = name[:i] // "@ops:example.org" (a Matrix id) keeps its @
	}
	return strings.TrimSpace(name)
}

// SamePerson compares two person names as the rule counts them, without
// regard to case (Person of each).
func SamePerson(a, b string) bool {
	pa := Person(a)
	return pa != "" && strings.EqualFold(pa, Person(b))
}

// Voter is one approver as the quorum counts them.
type Voter struct {
	Person string // the actor's person, folded to lower case
	Key    string // the SSH key fingerprint the server verified ("" for a local actor)
}

// VoterOf is how the quorum tells actor a apart from others: its
// structured Person (folded to lower case) and Key, nothing read from its
// name. An actor without a Person is nobody (Person ""): it cannot vote.
func VoterOf(a model.Actor) Voter {
	return Voter{Person: strings.ToLower(strings.TrimSpace(a.Person)), Key: strings.TrimSpace(a.Key)}
}

// Same reports whether v and o are one person: the same name, or the same
// key under another name.
func (v Voter) Same(o Voter) bool {
	return v.Person != "" && v.Person == o.Person || v.Key != "" && v.Key == o.Key
}

// Standing is where a proposal stands against its requirement.
type Standing struct {
	Requirement
	// Votes is the number of distinct approvers so far.
	Votes int
	// Short is the number of approvers still needed (0: the quorum is
	// met), and ShortFrom per group.
	Short     int
	ShortFrom map[string]int
	voters    []Voter
}

// Met reports whether the quorum is reached.
func (st Standing) Met() bool {
	if st.Short > 0 {
		return false
	}
	for _, n := range st.ShortFrom {
		if n > 0 {
			return false
		}
	}
	return true
}

// Stand counts voters against req: each voter counts once, and toward
// every group they are a member of. Short is the fewest more approvers
// that could meet it: a member of two short groups counts for both.
func (p *Policy) Stand(req Requirement, voters []Voter) Standing {
	st := Standing{Requirement: req, Votes: len(voters), voters: voters}
	for g, n := range req.From {
		if have := p.members(g, voters); have < n {
			if st.ShortFrom == nil {
				st.ShortFrom = map[string]int{}
			}
			st.ShortFrom[g] = n - have
		}
	}
	st.Short = p.fewestMore(st)
	return st
}

// members counts the voters in group g.
func (p *Policy) members(g string, voters []Voter) int {
	n := 0
	for _, v := range voters {
		if p.Member(g, v.Person) {
			n++
		}
	}
	return n
}

// maxCoverSearch bounds the search for the fewest approvers that meet the
// groups: past it, each group's shortfall is counted apart (never fewer
// than are needed).
const maxCoverSearch = 20000

// fewestMore is the fewest more approvers that would meet st: at least
// what the count still lacks, and enough members, not yet voters, to cover
// every group's shortfall (a search over the groups' members; a shortfall
// no members can cover counts in full).
func (p *Policy) fewestMore(st Standing) int {
	base := st.Requirement.Approvals - st.Votes
	if base < 0 {
		base = 0
	}
	if len(st.ShortFrom) == 0 {
		return base
	}
	voted := func(m string) bool {
		for _, v := range st.voters {
			if SamePerson(m, v.Person) {
				return true
			}
		}
		return false
	}
	groups := make([]string, 0, len(st.ShortFrom))
	sum, most := 0, 0
	for g, n := range st.ShortFrom {
		groups = append(groups, g)
		sum += n
		most = max(most, n)
	}
	sort.Strings(groups)
	need := map[string]int{}
	for g, n := range st.ShortFrom {
		need[g] = n
	}
	best, steps := sum, 0 // one person per place always covers, if members suffice
	var chosen []string
	var search func()
	search = func() {
		if steps++; steps > maxCoverSearch || len(chosen) >= best {
			return
		}
		g := ""
		for _, name := range groups {
			if need[name] > 0 {
				g = name
				break
			}
		}
		if g == "" {
			best = len(chosen)
			return
		}
		for _, m := range p.Groups[g] {
			if voted(m) || slicesHasPerson(chosen, m) {
				continue
			}
			chosen = append(chosen, m)
			for _, h := range groups {
				if p.Member(h, m) {
					need[h]--
				}
			}
			search()
			for _, h := range groups {
				if p.Member(h, m) {
					need[h]++
				}
			}
			chosen = chosen[:len(chosen)-1]
		}
	}
	search()
	return max(base, best, most)
}

func slicesHasPerson(list []string, m string) bool {
	for _, v := range list {
		if SamePerson(v, m) {
			return true
		}
	}
	return false
}

// Helps reports whether a vote by person would bring st closer to its
// quorum: with it, fewer approvers would still be needed. A vote that
// cannot count is refused, so that nobody believes a proposal is one vote
// closer than it is.
func (p *Policy) Helps(st Standing, person string) bool {
	if st.Met() {
		return true
	}
	after := p.Stand(st.Requirement, append(append([]Voter(nil), st.voters...), Voter{Person: person}))
	return after.Short < st.Short
}

// Needed says in words what is still needed: "one more approver from
// dba", "2 more approvers", "one more approver from dba and one more from
// sre". "" when the quorum is met.
func (st Standing) Needed() string {
	if st.Met() {
		return ""
	}
	groups := make([]string, 0, len(st.ShortFrom))
	for g := range st.ShortFrom {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	if len(groups) == 0 {
		return count(st.Short, "more approver")
	}
	var parts []string
	reserved := 0
	for i, g := range groups {
		n := st.ShortFrom[g]
		reserved += n
		if i == 0 {
			parts = append(parts, count(n, "more approver")+" from "+g)
		} else {
			parts = append(parts, count(n, "more")+" from "+g)
		}
	}
	switch free := st.Short - reserved; {
	case free > 0:
		parts = append(parts, count(free, "more")+" from anyone")
	case free < 0:
		// Members of several groups count for each: fewer people will do.
		var each []string
		for _, g := range groups {
			n := "one"
			if st.ShortFrom[g] != 1 {
				n = fmt.Sprint(st.ShortFrom[g])
			}
			each = append(each, n+" from "+g)
		}
		return count(st.Short, "more approver") + ": " + strings.Join(each, " and ") + " (one person may count for several groups)"
	}
	return strings.Join(parts, " and ")
}

// Progress is "1 of 2 approvals".
func (st Standing) Progress() string {
	return fmt.Sprintf("%d of %d approvals", st.Votes, st.Votes+st.Short)
}

func count(n int, what string) string {
	if n == 1 {
		return "one " + what
	}
	word := what
	if strings.HasSuffix(what, "approver") {
		word += "s"
	}
	return fmt.Sprintf("%d %s", n, word)
}

// Encode is the policy as the store keeps it (JSON).
func (p *Policy) Encode() []byte {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // only maps, strings and ints
	}
	return b
}

// Decode reads what Encode wrote, and validates it again: a policy the
// store cannot read is an error, never an empty policy.
func Decode(b []byte) (*Policy, error) {
	var p Policy
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("the stored policy cannot be read: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the stored policy cannot be read: something follows it")
	}
	// What Encode writes is an object with the rules' key: null, {} or
	// another shape is not a policy without rules, but a damaged one.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		return nil, errors.New("the stored policy cannot be read: it is not an object")
	}
	if _, ok := top["policy"]; !ok {
		return nil, errors.New("the stored policy cannot be read: it has no policy key")
	}
	if probs := p.Validate(); len(probs) > 0 {
		return nil, fmt.Errorf("the stored policy is not valid: %s", strings.Join(probs, "; "))
	}
	return &p, nil
}

// Validate lists every problem of p (none: nil), for a policy built other
// than from a file (the file's reader says where each problem is).
func (p *Policy) Validate() []string {
	var probs []string
	for g, ms := range p.Groups {
		if g == "" {
			probs = append(probs, "a group has no name")
		}
		if len(ms) == 0 {
			probs = append(probs, fmt.Sprintf("group %s has no members", g))
		}
		for _, m := range ms {
			if Person(m) == "" {
				probs = append(probs, fmt.Sprintf("group %s has an empty member", g))
			}
		}
	}
	for i, r := range p.Rules {
		probs = append(probs, r.Problems(p, i+1)...)
	}
	return probs
}

// Problems lists what is wrong with rule number num of p.
func (r Rule) Problems(p *Policy, num int) []string {
	var probs []string
	what := fmt.Sprintf("rule %d", num)
	if r.Approvals < 1 || r.Approvals > MaxApprovals {
		probs = append(probs, fmt.Sprintf("%s: approvals %d; want 1 to %d", what, r.Approvals, MaxApprovals))
	}
	switch r.Match.Risk {
	case "", model.RiskLow, model.RiskMedium, model.RiskHigh:
	default:
		probs = append(probs, fmt.Sprintf("%s: risk %q; want low, medium or high", what, r.Match.Risk))
	}
	for _, g := range []string{r.Match.Session, r.Match.Requester, r.Match.Command, r.Match.Pattern} {
		if g != "" {
			if err := ValidGlob(g); err != nil {
				probs = append(probs, fmt.Sprintf("%s: %q is not a glob: %v", what, g, err))
			}
		}
	}
	for _, e := range r.Match.Effect {
		if !ValidEffect(e) {
			probs = append(probs, fmt.Sprintf("%s: effect %q; want one of %s", what, e, strings.Join(EffectNames(), ", ")))
		}
	}
	for g, n := range r.From {
		ms, ok := p.Groups[g]
		switch {
		case !ok:
			probs = append(probs, fmt.Sprintf("%s: from names group %s, which groups: does not define", what, g))
		case n < 1:
			probs = append(probs, fmt.Sprintf("%s: from %s: %d; want at least 1", what, g, n))
		case n > r.Approvals:
			probs = append(probs, fmt.Sprintf("%s: from %s: %d is more than its approvals (%d)", what, g, n, r.Approvals))
		case n > distinct(ms):
			probs = append(probs, fmt.Sprintf("%s: from %s: %d, but the group has %d members: no proposal it matches could ever be approved", what, g, n, distinct(ms)))
		}
	}
	return probs
}

func distinct(ms []string) int {
	seen := map[string]bool{}
	for _, m := range ms {
		seen[strings.ToLower(Person(m))] = true
	}
	return len(seen)
}

// Verdict is one rule's answer for a subject, as explain prints it.
type Verdict struct {
	Rule    int // index from 0
	Matches bool
	Why     []string
}

// Explain is every rule's verdict on s, in order, and the requirement that
// follows.
func (p *Policy) Explain(s Subject) ([]Verdict, Requirement) {
	if p == nil {
		return nil, p.Requirement(s)
	}
	out := make([]Verdict, len(p.Rules))
	for i, r := range p.Rules {
		ok, why := r.Match.Check(s)
		out[i] = Verdict{Rule: i, Matches: ok, Why: why}
	}
	return out, p.Requirement(s)
}

// Describe is r in words: "2 approvers, at least one from dba".
func (r Requirement) Describe() string {
	s := count(r.Approvals, "approver")
	if r.Approvals == 1 {
		s = "one approver"
	}
	for i, g := range r.Groups() {
		sep := ", "
		if i == 0 {
			sep = ", at least "
		}
		n := r.From[g]
		if n == 1 {
			s += sep + "one from " + g
		} else {
			s += sep + fmt.Sprintf("%d from %s", n, g)
		}
	}
	return s
}
