package risk

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
)

// RulesVersion identifies the rule set: the Hermes pattern table (PR #41427)
// plus this package's matching semantics. Bump it whenever patterns.tsv,
// the normalisation or the risk rule changes, so that anything caching a
// classification keyed by it recomputes.
const RulesVersion = "hermes-41427.1"

// Match is one rule that a command matched.
type Match struct {
	Kind        string // "hardline" | "dangerous" | "sudo_guard"
	Description string
	Level       model.RiskLevel
}

// Verdict is the classification of a command.
type Verdict struct {
	Level    model.RiskLevel // highest level of Matches; low when there are none
	Matches  []Match         // every matched description once, in table order
	Hardline bool            // a hardline rule matched (Hermes never runs it)
}

// Reason joins the matched descriptions with "; " (empty when none).
func (v Verdict) Reason() string {
	descs := make([]string, len(v.Matches))
	for i, m := range v.Matches {
		descs[i] = m.Description
	}
	return strings.Join(descs, "; ")
}

// Classify returns every rule of the table that command matches, after
// normalisation, and the highest risk among them (low when none).
//
// The first call loads the rule table (see rules), and a rule's regexp is
// compiled the first time a command gets past its literal prefilter; a
// malformed table makes the first call, and every later one, panic.
func Classify(command string) Verdict {
	return classify(rules(), command)
}

// classify is Classify with the table rs.
func classify(rs []rule, command string) Verdict {
	text := foldIgnoreCase(Normalize(command))
	folded := len(text) >= dfaMinLen && isFolded(text)
	v := Verdict{Level: model.RiskLow}
	for i := range rs {
		r := &rs[i]
		if slices.ContainsFunc(v.Matches, func(m Match) bool { return m.Description == r.desc }) || !r.matchesFolded(text, folded) {
			continue
		}
		v.Matches = append(v.Matches, Match{Kind: r.kind, Description: r.desc, Level: r.level})
		v.Level = model.MaxRisk(v.Level, r.level)
		v.Hardline = v.Hardline || r.kind == KindHardline
	}
	return v
}

// ignoreCase maps the non-ASCII letters that IGNORECASE matches with an
// ASCII letter to that letter: Python matches a pattern's i with the
// dotless ı (U+0131), which Go's (?i) does not. The long ſ (U+017F) and the
// Kelvin sign (U+212A) cannot survive NFKC and lowercasing; they are folded
// anyway so that the ASCII literal prefilter stays exact whatever the
// Unicode tables say.
var ignoreCase = strings.NewReplacer("\u0131", "i", "\u017f", "s", "\u212a", "k")

func foldIgnoreCase(s string) string { return ignoreCase.Replace(s) }

// matches reports whether the rule matches the normalised text: only a
// text that holds the literals every match holds (lit, need) compiles and
// runs the regexp.
func (r *rule) matches(text string) bool { return r.matchesFolded(text, false) }

// matchesFolded is matches; folded says that text holds no ASCII capital
// and neither of the two non-ASCII letters that IGNORECASE matches with an
// ASCII one (ſ, K), as a normalised text (see isFolded), so that on a long
// text a rule's DFA may jump to the literal every match begins with.
func (r *rule) matchesFolded(text string, folded bool) bool {
	if r.lit != "" && !strings.Contains(text, r.lit) {
		return false
	}
	for _, alts := range r.need {
		if !slices.ContainsFunc(alts, func(s string) bool { return strings.Contains(text, s) }) {
			return false
		}
	}
	if r.notBefore == "" {
		return r.re.matchString(text, folded)
	}
	return r.matchesNotBefore(text, folded)
}

// matchesNotBefore gives re(?![^\n]*\bWORD\b) Python's meaning: some match of
// re is not followed, later on its line, by WORD as a whole word (Unicode
// word boundaries, as Python's \b). The rule's matches cannot overlap
// (\bdelete\s+from\b) and each start has one end, so the leftmost
// non-overlapping matches are all the candidates. Linear in len(text): the
// next WORD and the next newline are found once and reused while they stay
// ahead of the match end. On a long text the match ends come from the DFA,
// which gives every end of every match (the same ends, the matches being
// those), without regexp's slow NFA.
func (r *rule) matchesNotBefore(text string, folded bool) bool {
	free := r.notFollowed(text)
	if len(text) >= dfaMinLen {
		if m, ok := r.re.dfa.ends(r.re.src, text, folded, free); ok {
			return m
		}
		free = r.notFollowed(text) // start again: the DFA gave up part way
	}
	for _, loc := range r.re.get().FindAllStringIndex(text, -1) {
		if free(loc[1]) {
			return true
		}
	}
	return false
}

// notFollowed returns a test of match ends, given in increasing order:
// whether WORD (r.notBefore) does not follow the end e on its line.
func (r *rule) notFollowed(text string) func(e int) bool {
	word, nl := -2, -2 // next whole WORD / newline at or after the match end; -1 = none
	return func(e int) bool {
		if word != -1 && word < e {
			word = nextWord(text, r.notBefore, e)
		}
		if nl != -1 && nl < e {
			if nl = strings.IndexByte(text[e:], '\n'); nl >= 0 {
				nl += e
			}
		}
		return word == -1 || (nl != -1 && nl < word)
	}
}

// nextWord returns the index of the first occurrence of w at or after from
// that is a whole word by Python's Unicode \b, or -1.
func nextWord(s, w string, from int) int {
	for from <= len(s) {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return -1
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(w):])
		if (i == 0 || !isPyWord(before)) && (i+len(w) == len(s) || !isPyWord(after)) {
			return i
		}
		from = i + 1
	}
	return -1
}

// highRiskMarkers are the substrings that make a description high risk
// (Hermes' _classify_pattern_risk).
var highRiskMarkers = []string{
	"recursive delete", "delete in root", "recursive world", "recursive chown to root",
	"format filesystem", "write to block device", "raw block device", "block device",
	"sql drop", "sql delete without", "sql truncate", "overwrite system config",
	"overwrite system file", "pipe remote content", "execute remote script",
	"kill all processes",
}

// DescriptionRisk is the risk Hermes gives a pattern description: high for
// an empty description or one that names a destructive class of command,
// medium otherwise. (Hardline matches are high whatever their description.)
func DescriptionRisk(desc string) model.RiskLevel {
	if desc == "" {
		return model.RiskHigh
	}
	lower := strings.ToLower(desc)
	for _, m := range highRiskMarkers {
		if strings.Contains(lower, m) {
			return model.RiskHigh
		}
	}
	return model.RiskMedium
}

// Rank orders risk levels low < medium < high < unknown; any value that is
// not a valid level ranks as unknown, above high.
func Rank(l model.RiskLevel) int { return l.Rank() }

// Effective is the risk to show and enforce (SPEC §3 invariant 6): the
// higher of the pinned level (unknown when it is not a valid level) and what
// the judgement says about command in c now (c: the proposal's cwd and the
// process's configured extras, as Propose judged it). It is never lower
// than pinned, nor than the pattern table's level.
func Effective(pinned model.RiskLevel, command string, c Context) model.RiskLevel {
	return model.MaxRisk(pinned.Normalized(), Judge(command, c).Level)
}

// GuardError is the runtime guard's refusal to run a consumed command.
type GuardError struct {
	Pinned  model.RiskLevel // as pinned in the proposal (possibly invalid)
	Current model.RiskLevel // the judgement's level now
	Reason  string          // the judgement's reason now (may be empty)
}

func (e *GuardError) Error() string {
	if !e.Pinned.Valid() {
		return fmt.Sprintf("risk guard: pinned risk level %q is not one of low, medium, high; refusing to run (fail closed)", string(e.Pinned))
	}
	msg := fmt.Sprintf("risk guard: command now classifies as %s, above its pinned risk %s; refusing to run", e.Current, e.Pinned)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

// Guard is the agent-side runtime check before running a consumed command:
// it returns a *GuardError when the command's judgement in c now (the
// record's cwd and the process's configured extras: what Propose judged it
// in) ranks above the pinned level, or when the pinned level is not valid
// (fail closed), and nil otherwise.
func Guard(pinned model.RiskLevel, command string, c Context) error {
	j := Judge(command, c)
	if !pinned.Valid() || Rank(j.Level) > Rank(pinned) {
		return &GuardError{Pinned: pinned, Current: j.Level, Reason: j.Reason()}
	}
	return nil
}
