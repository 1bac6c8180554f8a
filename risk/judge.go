package risk

import (
	"bytes"
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk/catalogue"
	"github.com/approve-tui/approve-tui/shell"
)

// CatalogueVersion identifies the judgement's rules beside the pattern
// table: the program catalogue and the analysis that reads it. Bump it when
// either changes what a command is judged, so that anything caching a
// judgement keyed by it recomputes.
const CatalogueVersion = "judge.3"

// Version names everything a judgement depends on besides its inputs.
const Version = RulesVersion + "+" + CatalogueVersion

// Context is what the judgement knows besides the command. The zero value
// is usable: nothing is known of the working directory (an absolute path is
// then outside the workspace) and nothing is added to the built-in sensitive
// paths and programs.
type Context struct {
	// Cwd is the directory the command runs in: the workspace. Relative
	// paths that stay below it are inside the workspace. "" when unknown.
	Cwd string
	// Home is the home directory of the user the command runs as, when it
	// is known for sure ("" otherwise: a word starting with ~ is then in
	// some home, and judged as one).
	Home string
	// Paths are sensitive paths the operator's configuration adds (an
	// absolute path or one starting with ~/; a path ending in / is a
	// directory and everything below it). Approve-tui's own database and
	// configuration belong here too: the surface that judges knows them.
	Paths []string
	// Programs are programs the operator's configuration marks sensitive,
	// with the least level any use of them gets.
	Programs map[string]model.RiskLevel
}

// Finding is one reason for a judgement.
type Finding struct {
	// Rule names what found it: "hermes" for the pattern table (Why is the
	// matched description), "effect", "target", "flow", "opaque", "parse",
	// "unknown", "config".
	Rule   string          `json:"rule"`
	Level  model.RiskLevel `json:"level"`
	Effect string          `json:"effect,omitempty"`
	// Words are the words of the command that triggered it (as written).
	Words []string `json:"words"`
	Why   string   `json:"why"`
}

// Judgement is what approve-tui makes of a command: the pattern table's
// verdict as the floor, and what the parsed command does.
type Judgement struct {
	// Level is the higher of Table's and the analysis'.
	Level model.RiskLevel
	// Hardline is Table.Hardline: hardline rules are Hermes' alone.
	Hardline bool
	// ReadOnly: every part of the command is known to read only, nothing
	// is redirected into a file and nothing is unknown.
	ReadOnly bool
	// Effects are the effects found, each once, in the order found (what
	// a policy rule's effect key matches).
	Effects []string
	// Findings, the table's first, then the analysis', most urgent first
	// within it.
	Findings []Finding
	// Table is the pattern table's verdict (Classify).
	Table Verdict
}

// Reason is the findings' words for a proposal's risk reason: the why of
// every finding at the judgement's level, joined with "; " (the table's
// descriptions when they decided it).
func (j Judgement) Reason() string {
	var out []string
	for _, f := range j.Findings {
		if f.Level == j.Level && !containsString(out, f.Why) {
			out = append(out, f.Why)
		}
	}
	return strings.Join(out, "; ")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var defaultCatalogue = sync.OnceValues(catalogue.Default)

// findingSeed hashes the findings' keys for their deduplication.
var findingSeed = maphash.MakeSeed()

// Judge judges command in c. It never runs anything, never reads the
// filesystem or the environment (c carries what is known), and never
// returns a level below Classify's; Hardline is the table's alone.
//
// Every simple command of the parsed line (wrappers unwrapped, nested
// shells and find -exec commands included) is looked up in the program
// catalogue; its effects and the place of its targets (inside the
// workspace c.Cwd, outside it, a sensitive target) give findings, and so
// does the data flow between commands (a download piped into a shell,
// secrets read and sent). A line that cannot be read gets a "parse"
// finding at MEDIUM; code that cannot be read an "opaque" one at MEDIUM.
// See NOTES.md for the rules and their levels.
func Judge(command string, c Context) Judgement {
	if len(command) < tableBesideFrom {
		return judgeWith(command, c, Classify(command))
	}
	// A long line: the table's match and the parse and analysis are
	// each milliseconds of work that share nothing, so the table runs on
	// another goroutine meanwhile (a panic there is raised here, where
	// the caller would have seen it).
	done := make(chan tableResult, 1)
	go func() {
		var r tableResult
		defer func() {
			if v := recover(); v != nil {
				r.panicked, r.value = true, v
			}
			done <- r
		}()
		r.v = Classify(command)
	}()
	return judgeLater(command, c, func() Verdict {
		r := <-done
		if r.panicked {
			panic(r.value)
		}
		return r.v
	})
}

// tableBesideFrom is the length from which Judge matches the table on
// another goroutine: where the table's DFAs take over (a few KB), its
// work is worth more than starting one.
const tableBesideFrom = 4096

type tableResult struct {
	v        Verdict
	panicked bool
	value    any
}

// judgeWith is Judge with the table's verdict t already known.
func judgeWith(command string, c Context, t Verdict) Judgement {
	return judgeLater(command, c, func() Verdict { return t })
}

// judgeLater is Judge with the table's verdict given by table, which it
// calls once, after the analysis.
func judgeLater(command string, c Context, table func() Verdict) Judgement {
	// The analysis' first findings, before the catalogue's.
	var pre []Finding
	var a *analysis
	script, err := shell.Parse(command, shell.Options{})
	// Nothing the judgement returns points into the parsed commands (the
	// findings' words are strings): their memory goes to the next parse.
	defer script.Release()
	if err != nil {
		pre = append(pre, Finding{Rule: "parse", Level: model.RiskMedium, Words: []string{}, Why: parseWhy(err)})
	}
	if script != nil {
		if cat, cerr := defaultCatalogue(); cerr != nil {
			pre = append(pre, Finding{Rule: "unknown", Level: model.RiskMedium, Words: []string{}, Why: "the program catalogue did not load: " + cerr.Error()})
		} else {
			a = newAnalysis(len(command) >= longLine)
			defer release(a)
			a.c, a.cat, a.readOnly, a.noWorkspace = c, cat, err == nil && len(script.Commands) > 0, !isWorkspace(c)
			a.script(script)
		}
	}
	t := table()
	j := Judgement{Level: t.Level, Hardline: t.Hardline, Table: t}
	n := len(t.Matches) + len(pre)
	if a != nil {
		// The findings, most urgent first and in the order found among
		// equals, each once: their indexes first, so that the judgement's
		// findings are allocated once at their size.
		if a.seen == nil {
			a.seen = make(map[uint64]int, len(a.findings)/2)
		}
		a.ranks = byRankInto(a.ranks, a.findings, distinctIn(a.findings, a.seen, findingHash, func(i int) {
			a.kept = append(a.kept, i)
		}))
		n += len(a.kept)
	}
	if n > 0 {
		j.Findings = make([]Finding, 0, n)
	}
	for _, m := range t.Matches {
		j.Findings = append(j.Findings, Finding{Rule: "hermes", Level: m.Level, Words: []string{}, Why: m.Description})
	}
	for _, f := range pre {
		j.add(f)
	}
	if a == nil {
		return j
	}
	for _, i := range a.kept {
		f := a.findings[i]
		j.add(f)
		if f.Level != model.RiskLow {
			a.readOnly = false
		}
	}
	j.Effects = a.effects
	j.ReadOnly = a.readOnly && len(t.Matches) == 0
	return j
}

// parseWhy words a line that could not be read.
func parseWhy(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "could not parse") {
		return msg
	}
	return "could not parse: " + msg
}

// add appends f and raises the level to it.
func (j *Judgement) add(f Finding) {
	j.Findings = append(j.Findings, f)
	j.Level = model.MaxRisk(j.Level, f.Level)
}

// distinct returns a function that calls keep with each finding of fs it
// is given (by index) unless an equal one came before: rule, level, why
// and words tell them apart (findingKey), compared through hash and in
// full when two hashes meet.
func distinct(fs []Finding, hash func([]byte) uint64, keep func(Finding)) func(int) {
	return distinctIn(fs, make(map[uint64]int, len(fs)/2), hash, func(i int) { keep(fs[i]) })
}

// distinctIn is distinct with the map of hashes seen given (empty) and
// keep given the finding's index.
func distinctIn(fs []Finding, seen map[uint64]int, hash func([]byte) uint64, keep func(int)) func(int) {
	var collided map[string]bool
	var key, other []byte
	return func(i int) {
		f := fs[i]
		key = findingKey(key[:0], f)
		h := hash(key)
		if first, ok := seen[h]; ok {
			other = findingKey(other[:0], fs[first])
			if bytes.Equal(other, key) || collided[string(key)] {
				return
			}
			if collided == nil {
				collided = map[string]bool{}
			}
			collided[string(key)] = true
		} else {
			seen[h] = i
		}
		keep(i)
	}
}

func findingHash(key []byte) uint64 { return maphash.Bytes(findingSeed, key) }

// byRankInto calls f with the index of each finding, highest rank first,
// keeping the order found among equals: a pass over the findings for
// each rank they hold, without moving them. ranks is a buffer for the
// findings' ranks, returned for reuse.
func byRankInto(ranks []uint8, fs []Finding, f func(int)) []uint8 {
	// Rank is 1 (low) to 5 (unknown).
	ranks = slices.Grow(ranks[:0], len(fs))[:len(fs)]
	var count [6]int
	for i, x := range fs {
		r := min(max(x.Level.Rank(), 0), len(count)-1)
		ranks[i] = uint8(r)
		count[r]++
	}
	for r := len(count) - 1; r >= 0; r-- {
		if count[r] == 0 {
			continue
		}
		for i := range fs {
			if int(ranks[i]) == r {
				f(i)
			}
		}
	}
	return ranks
}
