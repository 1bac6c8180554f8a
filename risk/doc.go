// Package risk classifies shell commands by risk, compatibly with the Hermes
// agent (tools/approval.py at PR #41427), so that a risk approve-tui computes
// can be compared with the one Hermes pinned in a proposal (SPEC §2, and §3
// invariant 6: risk is never downgraded).
//
// The rules are Hermes' own, embedded from patterns.tsv (hardline patterns,
// the sudo -S guard and the dangerous patterns, with {FRAGMENT} placeholders
// expanded). They are parsed, checked and translated at build time into
// table_gen.go (go generate; TestTableGen fails when it is stale), which the
// first classification uses when the copy of patterns.tsv it holds is the
// embedded file, and otherwise parses the embedded table: a malformed table panics
// there, and at every later classification, so a command is never
// classified against a missing table. Each rule's regexp is compiled when a
// command first gets past the rule's literal prefilter (the text every match
// must contain), so a process that classifies one command (an agent hook)
// compiles a few regexps at most, and one that classifies nothing none.
// A command is normalised as Hermes does it (see Normalize) and every rule is
// matched against it with Python's IGNORECASE|DOTALL. On a text of 4 KB or
// more, a rule is matched by a lazily built DFA over its compiled program
// (dfa.go) instead of by regexp, whose NFA is slow on long texts: the DFA
// answers exactly regexp's MatchString (the same program, the same
// empty-width assertions; tested against regexp on the corpora, long
// synthetic lines and fuzzed texts), jumps over the text where no match
// can begin (to the literal a rule begins with, on a normalised text), and
// gives way to regexp when its states would grow past a bound. A description's risk
// is Hermes' _classify_pattern_risk (see DescriptionRisk); hardline matches
// are high, a command that matches nothing is low and several matches give
// the highest of their levels. Effective and Guard implement invariant 6.
//
// Deliberate differences from Hermes:
//
//   - Every matched description is returned (deduplicated, in table order),
//     where Hermes stops at the first match of each kind. The level is the
//     same either way: Hermes classifies the joined descriptions.
//   - The sudo -S guard always applies; Hermes skips it when SUDO_PASSWORD
//     is set in its environment. Like Hermes' table, it is medium risk, and
//     Verdict.Hardline is set by hardline rules only, although Hermes also
//     refuses a sudo -S command outright.
//
// Python re and Go's RE2 differ; the translation keeps Python's meaning:
//
//   - \s, \w and \d are Unicode in Python (str patterns) and ASCII in Go; they
//     are rewritten to explicit Unicode classes (\s is str.isspace, which
//     includes \v, \x1c-\x1f, U+0085, U+00A0, U+2028...; \w is letters,
//     numbers and _).
//   - Python's $ also matches before a final newline: it becomes \n?\z,
//     which is exact because every $ in the table ends its pattern (checked
//     when the table is loaded). {,n} becomes {0,n}.
//   - Go has no lookahead. The one the table uses, SQL DELETE without WHERE
//     (\bDELETE\s+FROM\b(?![^\n]*\bWHERE\b)), is a procedural check with the
//     lookahead's exact meaning, Unicode word boundaries included. Any other
//     lookaround, atomic group, possessive quantifier, backreference or
//     inline flag other than i and s is refused when the table is loaded.
//   - Under IGNORECASE Python matches i with the dotless ı (U+0131); Go does
//     not, so ı is folded to i before matching. Lowercasing maps İ (U+0130)
//     to "i" U+0307 like Python's str.lower.
//   - \b stays Go's ASCII word boundary, where Python's is Unicode. Every \b
//     in the table touches an ASCII letter or digit of the pattern, so Go
//     finds a boundary wherever Python does, and also next to a non-ASCII
//     letter or digit (Go flags "érm -rf x" as a recursive delete, Hermes
//     does not). Go can only flag more, never less.
//   - Python's str.lower turns a word-final Σ into ς, Go's into σ; both are
//     letters, which no pattern tells apart.
//   - Invalid UTF-8 becomes U+FFFD before normalisation (a Python str cannot
//     hold it). Unicode tables (NFKC, letter classes, case) are Go's and
//     golang.org/x/text's, not those of the Python running Hermes.
//
// # Judgement
//
// Judge goes further than the table: it parses the command (package shell:
// simple commands, wrappers unwrapped, nested sh -c, find -exec children,
// variables set earlier in the line), looks every simple command up in the
// program catalogue (package risk/catalogue) and rates each effect by its
// targets: inside the workspace (Context.Cwd) or outside it, sensitive
// (system configuration, credentials and keys, shell start-up files, cron
// and systemd units, git hooks and config, block devices, approve-tui's own
// files, the agents' hook settings, and Context.Paths), and by the data flow
// between commands (a download or decoded payload fed to a shell, secrets
// read and sent to another host). Code it cannot read (interpreter -c,
// eval, source, a command name it cannot know) and a line it cannot parse
// are at least MEDIUM. The level is the higher of the table's and the
// analysis'; Hardline is the table's. ReadOnly is a proof: every part known
// and read-only per the catalogue, nothing written, nothing unknown that
// matters, no table match. Judge runs nothing and reads neither the
// filesystem nor the environment. NOTES.md gives the rules, their levels
// and the decisions behind them.
package risk
