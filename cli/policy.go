package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// The approval policy's commands: set a file in force, show the version in
// force, explain what it asks of a proposal or a command. The store keeps
// the policy and enforces it (storage/quorum.go); these only read files,
// print, and call the store.

func (a *app) policyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "policy",
		Short: "The approval policy: proposals that need more than one approver",
		Long: `The approval policy says which proposals need more than one approver (a
two-person rule), and how many of them from which groups. The store keeps
it, one version after another, and every approval reads the version in
force in its own transaction. Where a rule applies, an approval is a vote:
the proposal stays pending until enough distinct people voted, nobody
approves a proposal their own agent asked for, one person counts once
(whatever the surface, host or key), and one deny vetoes it. Where no rule
applies, or no policy was ever set, one approver decides, as without one.

  approve-tui policy set FILE       check FILE and put it in force
  approve-tui policy show           the version in force, in words
  approve-tui policy explain ID     what the policy asks of a proposal, and why
  approve-tui policy explain --command "..."   the same for a command

A policy file:

  groups:
    dba: [alice, bob]
  policy:
    - match: {risk: high, session: "agent:prod:*"}
      approvals: 2
      from: {dba: 1}

Group members are OS user names or SSH key comments: alice is alice@laptop
and "alice@laptop (SHA256:...)" alike. A rule's match takes risk (the
proposal's risk at or above low, medium or high), session and requester
(globs in which * does not cross /), command (a glob on the whole command,
* any run of characters), pattern (a glob on the descriptions of the
risk rules the command matches) and effect (an effect the judgement finds
in the command, or a list of them: effect: delete, effect: [delete,
infra-destroy]; one of ` + strings.Join(policy.EffectNames(), ", ") + `);
every key given must hold, match: {} takes every proposal. A rule binds
whatever the command's level: run and the hooks ask for a command a rule
names even when it would have gone without asking. approvals is how many distinct people must approve,
from how many of them must be members of each group. Every rule that
matches applies: the proposal needs the most approvals any of them asks,
and from each group the most any asks.`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(a.policySetCmd(), a.policyShowCmd(), a.policyExplainCmd())
	return c
}

func (a *app) policySetCmd() *cobra.Command {
	var (
		dryRun  bool
		keyFile string
	)
	cmd := &cobra.Command{
		Use:   "set FILE [--dry-run] [--json]",
		Short: "Check a policy file and put it in force (a new version, audited)",
		Long: `Read and check FILE, then put it in force: the store keeps it as a new
version, with the file's SHA-256, who set it and when, and audits the change
(event policy_set, with the old and new SHA-256). A file the same as the
version in force changes nothing. Pending proposals are judged by the new
version from their next approval on; votes already cast still count.

Problems are listed as FILE:LINE:COLUMN: what is wrong and what is wanted,
all of them, on stderr, and nothing is set. --dry-run checks the file, says
what would be set and sets nothing. A watcher (--read-only) is refused by
the store, and the refusal audited.

Where the configuration's trust: section requires signatures, the policy is
signed with your SSH key (the ssh-agent's key the trust file knows, or
--key FILE) by a principal of trust: policy_signers; a policy put in the
store any other way changes nothing.

Prints "policy v2 in force (sha256 ...), 2 rules, 1 group; was v1 (sha256
...)" or "policy unchanged: v2 is already this file". With --json, one
object: path, ok, problems, dry_run, changed, version, sha256, rules,
groups, previous (its version and sha256, or null), set_by, set_at.
` + exitCodesWhere(map[int]string{ExitError: "error, or problems: the file is missing, unreadable or invalid"},
			ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.policySet(cmd.Context(), args[0], dryRun, keyFile)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the file and say what would be set; set nothing")
	cmd.Flags().StringVar(&keyFile, "key", "", "sign with this private key `file` (unencrypted) instead of the ssh-agent's key, where trust is required")
	return cmd
}

// loadPolicyFile reads and checks a policy file for set (report: with
// --json its problems are one object on stdout) and explain --file. The
// problems go to stderr, and the error exits 1.
func (a *app) loadPolicyFile(path string, report bool) (*policy.Policy, []byte, error) {
	if a.as != nil {
		// Another surface's session (SSH) reads no file of this host's.
		return nil, nil, usageErrorf("a policy file is not taken here")
	}
	p, src, err := config.LoadPolicy(path)
	if err == nil {
		return p, src, nil
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		ce = &config.Error{Path: path, Problems: []config.Problem{{Message: err.Error()}}}
		if !report || !a.json {
			return nil, nil, exitf(ExitError, "%v", err)
		}
	}
	if report && a.json {
		probs := make([]*model.JSONObject, len(ce.Problems))
		for i, pr := range ce.Problems {
			probs[i] = problemJSON(pr)
		}
		a.printf("%s\n", model.NewJSONObject().Str("path", line(path)).Bool("ok", false).Raw("problems", model.JSONObjects(probs)))
		return nil, nil, exitf(ExitError, "")
	}
	for _, pr := range ce.Problems {
		a.note("%s", line(ce.Format(pr)))
	}
	what := ""
	if report {
		what = "; nothing was set"
	}
	return nil, nil, exitf(ExitError, "%s: %s%s", line(path), human.CountNo(len(ce.Problems), "problem"), what)
}

// policySet is policy set.
func (a *app) policySet(ctx context.Context, path string, dryRun bool, keyFile string) error {
	p, src, err := a.loadPolicyFile(path, true)
	if err != nil {
		return err
	}
	s, err := a.open(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	old, err := s.Policy(ctx)
	var rf *storage.RefusedError
	if err != nil && !errors.As(err, &rf) {
		return err // an unreadable version in force may be replaced
	}
	sum := sha256Text(src)
	counts := fmt.Sprintf("%s, %s", human.CountNo(len(p.Rules), "rule"), human.CountNo(len(p.Groups), "group"))
	if len(p.Rules) == 0 {
		counts += " (no rules: one approver for everything)"
	}
	report := func(changed bool, version int64, prev *storage.PolicyVersion, v *storage.PolicyVersion) {
		o := model.NewJSONObject().Str("path", line(path)).Bool("ok", true).Raw("problems", "[]").
			Bool("dry_run", dryRun).Bool("changed", changed).Int("version", version).Str("sha256", sum).
			Int("rules", int64(len(p.Rules))).Int("groups", int64(len(p.Groups)))
		if prev != nil {
			o.Obj("previous", model.NewJSONObject().Int("version", prev.Version).Str("sha256", prev.SHA256))
		} else {
			o.Raw("previous", "null")
		}
		if v != nil {
			o.Str("set_by", v.SetBy).Num("set_at", v.SetAt)
		} else {
			o.Raw("set_by", "null").Raw("set_at", "null")
		}
		a.printf("%s\n", o)
	}
	was := func(prev *storage.PolicyVersion, version int64) string {
		switch {
		case prev != nil && prev.Version == version-1:
			return fmt.Sprintf("v%d (sha256 %s)", prev.Version, shortSum(prev.SHA256))
		case version <= 1:
			return "no policy (one approver for everything)"
		}
		return fmt.Sprintf("v%d", version-1)
	}
	if dryRun {
		if old != nil && old.SHA256 == sum && old.Policy != nil {
			if a.json {
				report(false, old.Version, nil, old)
				return nil
			}
			a.printf("dry run: policy unchanged: v%d is already this file (sha256 %s); nothing set\n", old.Version, shortSum(sum))
			return nil
		}
		next := int64(1)
		if old != nil {
			next = old.Version + 1
		}
		if a.json {
			report(true, next, old, nil)
			return nil
		}
		a.printf("dry run: policy v%d would be in force (sha256 %s), %s; now %s; nothing set\n", next, shortSum(sum), counts, was(old, next))
		writePolicySummary(a.out, p)
		return nil
	}
	actor := a.actor()
	if ts := s.Trust(); ts.Required() && s.ReadOnlyReason() == "" && !actor.ReadOnly {
		sig, err := a.signPolicy(ts, keyFile, sum)
		if err != nil {
			return exitf(ExitError, "policy not set: %v", err)
		}
		actor.Signature = sig
	}
	v, changed, err := s.SetPolicy(ctx, src, p, actor)
	if err != nil {
		return err
	}
	if a.json {
		var prev *storage.PolicyVersion
		if changed && old != nil && old.Version == v.Version-1 {
			prev = old
		}
		report(changed, v.Version, prev, v)
		return nil
	}
	if !changed {
		a.printf("policy unchanged: v%d is already this file (sha256 %s)\n", v.Version, shortSum(v.SHA256))
		return nil
	}
	a.printf("policy v%d in force (sha256 %s), %s; was %s\n", v.Version, shortSum(v.SHA256), counts, was(old, v.Version))
	return nil
}

// signPolicy signs the policy file of SHA-256 sum under ts, by a policy
// signer: a key whose principal is not one is refused before it signs.
func (a *app) signPolicy(ts *trust.Settings, keyFile, sum string) (*model.Signature, error) {
	k, err := a.signer(ts, keyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot sign: %v; %s", err, signingHelp(ts))
	}
	defer k.Close()
	principal, err := ts.PrincipalOf(k.PublicKey())
	if err != nil {
		return nil, errors.New(line(err.Error()))
	}
	if !ts.PolicySigner(principal) {
		return nil, fmt.Errorf("%s (%s) may not sign a policy: the configuration's trust: policy_signers is %s", line(principal), k.Fingerprint(), orNoneList(ts.PolicySigners))
	}
	sig, err := a.sign(ts, k, trust.Statement{Decision: trust.DecisionPolicy, PolicySHA256: sum})
	if err != nil {
		return nil, fmt.Errorf("cannot sign: %v", err)
	}
	a.note("signed by %s (%s)", line(sig.Principal), line(sig.Key))
	return sig, nil
}

// orNoneList is names as [a, b], or "empty (nobody may)".
func orNoneList(names []string) string {
	if len(names) == 0 {
		return "empty (nobody may)"
	}
	return "[" + line(strings.Join(names, ", ")) + "]"
}

func sha256Text(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// shortSum is a SHA-256 as the one-line messages give it: its first 12
// digits (show gives it whole).
func shortSum(sum string) string { return line(sum[:min(12, len(sum))]) }

func (a *app) policyShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show [--json]",
		Short: "Show the policy in force: its file, and its rules in words",
		Long: `Show the version of the approval policy in force: its version, SHA-256, who
set it and when, the file as it was set (with line numbers; sanitised), and
its groups and rules in words, each rule with what it asks. With no policy
set, says so: one approver decides everything.

With --json, one object: version, sha256, set_by, set_at, source (the file),
groups (name: members) and rules (each with rule, line, match, approvals,
from and needs); with no policy, version and the others are null.
` + exitCodesWhere(map[int]string{ExitError: "error, or the policy in the store cannot be read (nothing is approved until one is set)"},
			ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx, false)
			if err != nil {
				return err
			}
			defer s.Close()
			v, err := s.Policy(ctx)
			var rf *storage.RefusedError
			if err != nil && !(errors.As(err, &rf) && v != nil) {
				return err
			}
			if a.json {
				a.printf("%s\n", policyVersionJSON(v))
			} else {
				a.writePolicyVersion(v, s.Now())
			}
			if rf != nil {
				return exitf(ExitError, "%s", rf.Reason)
			}
			return nil
		},
	}
}

// writePolicyVersion is policy show's text.
func (a *app) writePolicyVersion(v *storage.PolicyVersion, now time.Time) {
	if v == nil {
		a.printf("no policy: one approver for everything\n")
		return
	}
	field := func(name, value string) { a.printf("%-14s %s\n", name+":", value) }
	a.printf("policy v%d in force\n", v.Version)
	field("sha256", line(v.SHA256))
	field("set by", line(v.SetBy))
	field("set at", when(v.SetAt, now))
	if v.SignedBy != "" {
		field("signed by", line(v.SignedBy)+" ("+line(v.SignedKey)+"), "+when(model.Epoch(v.SignedAt), now))
	}
	a.printf("file:\n")
	src := strings.TrimSuffix(v.Source, "\n")
	if src == "" {
		a.printf("    (empty)\n")
	} else {
		verbatim(a.out, func() {
			for i, l := range strings.Split(src, "\n") {
				a.printf("%6d  %s\n", i+1, line(strings.TrimSuffix(l, "\r")))
			}
		})
	}
	if v.Policy != nil {
		writePolicySummary(a.out, v.Policy)
	}
}

// writePolicySummary is a policy's groups and rules in words.
func writePolicySummary(w io.Writer, p *policy.Policy) {
	names := p.GroupNames()
	fmt.Fprintf(w, "groups (%d):\n", len(names))
	if len(names) == 0 {
		fmt.Fprintf(w, "  none\n")
	}
	for _, g := range names {
		fmt.Fprintf(w, "  %s: %s\n", line(g), approvals.Names(p.Groups[g]))
	}
	fmt.Fprintf(w, "rules (%d):\n", len(p.Rules))
	if len(p.Rules) == 0 {
		fmt.Fprintf(w, "  none: one approver for everything\n")
	}
	for i, r := range p.Rules {
		fmt.Fprintf(w, "  %s: match %s; needs %s\n", ruleName(i, r), matchWords(r.Match), line(ruleNeeds(r)))
	}
}

// ruleName is "rule 2 (line 7)", i from 0.
func ruleName(i int, r policy.Rule) string {
	if r.Line > 0 {
		return fmt.Sprintf("rule %d (line %d)", i+1, r.Line)
	}
	return fmt.Sprintf("rule %d", i+1)
}

// ruleNeeds is what one rule asks, in words.
func ruleNeeds(r policy.Rule) string {
	return policy.Requirement{Approvals: r.Approvals, From: r.From}.Describe()
}

// matchWords is a rule's match in words, every value sanitised: `risk at
// or above high, session "agent:prod:*"`, or "every proposal".
func matchWords(m policy.Match) string {
	var parts []string
	if m.Risk != "" {
		parts = append(parts, "risk at or above "+line(string(m.Risk)))
	}
	for _, f := range []struct{ name, glob string }{
		{"session", m.Session}, {"requester", m.Requester}, {"command", m.Command}, {"risk rule", m.Pattern},
	} {
		if f.glob != "" {
			parts = append(parts, f.name+` "`+line(f.glob)+`"`)
		}
	}
	if len(m.Effect) > 0 {
		parts = append(parts, "effect "+line(strings.Join(m.Effect, " or ")))
	}
	if len(parts) == 0 {
		return "every proposal"
	}
	return strings.Join(parts, ", ")
}

// policyVersionJSON is policy show --json.
func policyVersionJSON(v *storage.PolicyVersion) *model.JSONObject {
	o := model.NewJSONObject()
	if v == nil {
		return o.Raw("version", "null").Raw("sha256", "null").Raw("set_by", "null").Raw("set_at", "null").
			Raw("source", "null").Raw("groups", "{}").Raw("rules", "[]")
	}
	o.Int("version", v.Version).Str("sha256", v.SHA256).Str("set_by", v.SetBy).Num("set_at", v.SetAt).Str("source", v.Source)
	if v.SignedBy != "" {
		o.Str("signed_by", v.SignedBy).Str("signed_key", v.SignedKey).Num("signed_at", model.Epoch(v.SignedAt))
	}
	if v.Policy == nil {
		return o.Raw("groups", "null").Raw("rules", "null")
	}
	return o.Obj("groups", groupsJSON(v.Policy)).Raw("rules", rulesJSON(v.Policy))
}

func groupsJSON(p *policy.Policy) *model.JSONObject {
	o := model.NewJSONObject()
	for _, g := range p.GroupNames() {
		o.Strs(g, p.Groups[g])
	}
	return o
}

func fromJSON(from map[string]int) *model.JSONObject {
	names := make([]string, 0, len(from))
	for g := range from {
		names = append(names, g)
	}
	sort.Strings(names)
	o := model.NewJSONObject()
	for _, g := range names {
		o.Int(g, int64(from[g]))
	}
	return o
}

func matchJSON(m policy.Match) *model.JSONObject {
	o := model.NewJSONObject().OptStr("risk", string(m.Risk)).OptStr("session", m.Session).
		OptStr("requester", m.Requester).OptStr("command", m.Command).OptStr("pattern", m.Pattern)
	if len(m.Effect) > 0 {
		o.Strs("effect", m.Effect)
	}
	return o
}

func rulesJSON(p *policy.Policy) string {
	rs := make([]*model.JSONObject, len(p.Rules))
	for i, r := range p.Rules {
		rs[i] = model.NewJSONObject().Int("rule", int64(i+1)).Int("line", int64(r.Line)).Obj("match", matchJSON(r.Match)).
			Int("approvals", int64(r.Approvals)).Obj("from", fromJSON(r.From)).Str("needs", ruleNeeds(r))
	}
	return model.JSONObjects(rs)
}

// explainFlags are policy explain's flags.
type explainFlags struct {
	command, session, requester, risk, file string
}

func (a *app) policyExplainCmd() *cobra.Command {
	var f explainFlags
	cmd := &cobra.Command{
		Use:   "explain (ID | --command \"...\" [--session S] [--requester R] [--risk LEVEL]) [--file FILE]",
		Short: "Say which rules apply to a proposal or a command, why, and what it needs",
		Long: `Say, for one proposal (ID) or for a command not yet proposed (--command),
whether each rule of the policy matches and why, and what follows: the
approvals it needs, and from which groups. For a proposal, also where it
stands: the votes that count so far and who cast them, what is still
needed, and who may not approve it (whoever asked for it).

--command is judged at --risk, by default what the judgement says of the
command in the current directory (its effects are what effect rules
match), with --session and --requester as given (by default empty, which
no session or requester glob other than * matches).

--file FILE explains against a policy file instead of the version in force,
to try a change before setting it (nothing is set).

With --json, one object: policy (version, sha256, file), subject (risk,
session, requester, command, patterns, effects), rules (each with rule, line,
matches, why and needs), ruled, approvals_required, from, needs; for a
proposal also approval_id, status, votes, progress, approvals_needed,
needed and may_not_approve.
` + exitCodesWhere(map[int]string{ExitError: "error, or the policy cannot be read (the one in force, or --file's)"},
			ExitOK, ExitError, ExitUsage, ExitNotFound, ExitUnavailable) + dashIDHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			byCommand := cmd.Flags().Changed("command")
			switch {
			case len(args) > 1:
				return usageErrorf("policy explain takes one approval id, and got %d arguments (a command goes in --command \"...\", quoted)", len(args))
			case len(args) == 1 && byCommand:
				return usageErrorf("policy explain: an approval id or --command, not both")
			case len(args) == 0 && !byCommand:
				return usageErrorf("policy explain needs an approval id, or --command \"...\"")
			case len(args) == 1:
				for _, fl := range []string{"session", "requester", "risk"} {
					if cmd.Flags().Changed(fl) {
						return usageErrorf("--%s goes with --command: a proposal's own is used", fl)
					}
				}
			}
			return nil
		},
		ValidArgsFunction: a.completeIDs(storage.ListAll),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return a.policyExplain(cmd.Context(), id, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.command, "command", "", "explain this `command` (not proposed)")
	fl.StringVar(&f.session, "session", "", "with --command: the session `key`")
	fl.StringVar(&f.requester, "requester", "", "with --command: the `requester`")
	fl.StringVar(&f.risk, "risk", "", "with --command: the `level` (low, medium, high; default: the classifier's)")
	fl.StringVar(&f.file, "file", "", "explain against this policy `file`, not the version in force")
	_ = cmd.RegisterFlagCompletionFunc("risk", cobra.FixedCompletions([]string{"low", "medium", "high"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// explained is what policy explain found.
type explained struct {
	// The policy explained: the version in force (pv), or a file.
	pv       *storage.PolicyVersion
	p        *policy.Policy
	file     string
	fileSum  string
	subject  policy.Subject
	verdicts []policy.Verdict
	req      policy.Requirement
	// For a proposal:
	rec        *storage.Record
	votes      []storage.Vote // every vote cast on it
	counting   []storage.Vote // those that count
	standing   policy.Standing
	requesters []string
	// held is where it stands against every version it is held to (the
	// one in force now, at its submit and at each vote: storage.Quorum),
	// when that is more than the version explained.
	held *storage.Quorum
}

// policyExplain is policy explain.
func (a *app) policyExplain(ctx context.Context, id string, f explainFlags) error {
	var e explained
	if f.file != "" {
		p, src, err := a.loadPolicyFile(f.file, false)
		if err != nil {
			return err
		}
		e.p, e.file, e.fileSum = p, f.file, sha256Text(src)
	}
	var level model.RiskLevel
	var judged risk.Judgement
	if id == "" {
		cwd, _ := os.Getwd()
		rc, err := a.riskContext(cwd)
		if err != nil {
			return err
		}
		judged = risk.Judge(f.command, rc)
		switch v := model.RiskLevel(strings.ToLower(strings.TrimSpace(f.risk))); v {
		case "":
			level = judged.Level
		case model.RiskLow, model.RiskMedium, model.RiskHigh, model.RiskTier2, model.RiskUnknown:
			level = v
		default:
			return usageErrorf("--risk %q: want low, medium or high", f.risk)
		}
	}
	if id != "" || e.p == nil {
		s, err := a.open(ctx, false)
		if err != nil {
			return err
		}
		defer s.Close()
		if e.p == nil {
			pv, err := s.Policy(ctx)
			var rf *storage.RefusedError
			if errors.As(err, &rf) {
				return exitf(ExitError, "%s", rf.Reason)
			}
			if err != nil {
				return err
			}
			e.pv = pv
			if pv != nil {
				e.p = pv.Policy
			}
		}
		if id != "" {
			rec, err := s.Get(ctx, id)
			if err != nil {
				return named(id, err)
			}
			e.rec = rec
			e.subject = storage.SubjectOf(rec)
			if e.votes, err = s.Votes(ctx, id); err != nil {
				return err
			}
			if e.requesters, err = s.Requesters(ctx, rec); err != nil {
				return err
			}
			if e.file == "" && rec.EffectiveStatus.Open() {
				if q, err := s.Quorum(ctx, rec); err == nil && q != nil && (len(q.Versions) > 1 || e.pv == nil || q.Policy.Version != e.pv.Version) {
					e.held = q
				}
			}
		}
	}
	if id == "" {
		ps := make([]string, len(judged.Table.Matches))
		for i, m := range judged.Table.Matches {
			ps[i] = m.Description
		}
		e.subject = policy.Subject{Risk: level, Session: f.session, Requester: f.requester, Command: f.command, Patterns: ps,
			Effects: judged.Effects}
	}
	e.verdicts, e.req = e.p.Explain(e.subject)
	if e.rec != nil {
		var voters []policy.Voter
		for _, v := range e.votes {
			if approvals.VoteCounts(e.rec, v) {
				e.counting = append(e.counting, v)
				voters = append(voters, policy.Voter{Person: v.Person, Key: v.Key})
			}
		}
		e.standing = e.p.Stand(e.req, voters)
	}
	if a.json {
		a.printf("%s\n", e.toJSON())
		return nil
	}
	a.writeExplained(&e)
	return nil
}

// writeExplained is policy explain's text.
func (a *app) writeExplained(e *explained) {
	now := a.now()
	switch {
	case e.file != "":
		a.printf("policy file %s (sha256 %s; not in force, nothing is set)\n", line(e.file), shortSum(e.fileSum))
	case e.pv != nil:
		a.printf("policy %s in force (set by %s %s)\n", line(e.pv.Label()), line(e.pv.SetBy), relTime(e.pv.SetAt, now))
	}
	sub := e.subject
	if e.rec != nil {
		a.printf("proposal %s (%s): risk %s, session \"%s\", requester \"%s\"\n", line(e.rec.ApprovalID),
			line(string(e.rec.EffectiveStatus)), line(string(sub.Risk)), line(sub.Session), line(sub.Requester))
		if e.rec.Corrupt != "" {
			a.printf("corrupt: it cannot be approved whatever the policy says (%s)\n", line(e.rec.Corrupt))
		}
	} else {
		a.printf("command at risk %s, session \"%s\", requester \"%s\"\n", line(string(sub.Risk)), line(sub.Session), line(sub.Requester))
	}
	a.printf("command: %s\n", line(sub.Command))
	if len(sub.Patterns) > 0 {
		a.printf("risk rules it matches: %s\n", approvals.Names(sub.Patterns))
	}
	if len(sub.Effects) > 0 {
		a.printf("effects: %s\n", approvals.Names(sub.Effects))
	}
	if e.p == nil {
		a.printf("no policy: one approver for everything\n")
		return
	}
	if len(e.p.Rules) == 0 {
		a.printf("the policy has no rules\n")
	}
	for _, v := range e.verdicts {
		r := e.p.Rules[v.Rule]
		if v.Matches {
			a.printf("%s: matches; it asks for %s\n", ruleName(v.Rule, r), line(ruleNeeds(r)))
		} else {
			a.printf("%s: does not match\n", ruleName(v.Rule, r))
		}
		for _, why := range v.Why {
			a.printf("    %s\n", line(why))
		}
	}
	switch n := len(e.req.Rules); {
	case n == 0:
		a.printf("no rule matches: one approver\n")
	case n == 1:
		a.printf("needs %s (%s)\n", line(e.req.Describe()), approvals.RuleList(e.req.Rules))
	default:
		a.printf("needs %s (%s match: the most approvals any asks, and from each group the most any asks)\n",
			line(e.req.Describe()), approvals.RuleList(e.req.Rules))
	}
	if e.rec == nil {
		return
	}
	if !e.rec.EffectiveStatus.Open() {
		a.printf("it is %s: nothing more can be approved\n", line(string(e.rec.EffectiveStatus)))
		for _, v := range e.votes {
			a.printf("    vote by %s %s (%s)\n", approvals.VoteWho(v), relTime(v.At, now), orDash(line(v.Ended)))
		}
		return
	}
	if q := e.held; q != nil {
		vs := make([]string, len(q.Versions))
		for i, v := range q.Versions {
			vs[i] = fmt.Sprintf("v%d", v)
		}
		a.printf("held to policy %s (in force now, at its submit or at a vote on it): every one must be met; %s by %s; still needed: %s\n",
			strings.Join(vs, ", "), q.Progress(), line(q.Policy.Label()), orDash(line(q.Needed())))
	}
	if !e.req.Ruled() {
		return
	}
	if len(e.counting) == 0 {
		a.printf("votes so far: none\n")
	} else {
		a.printf("votes so far: %s\n", e.standing.Progress())
		for _, v := range e.counting {
			a.printf("    %s %s\n", approvals.VoteWho(v), relTime(v.At, now))
		}
	}
	for _, v := range e.votes {
		if !approvals.VoteCounts(e.rec, v) {
			why := line(v.Ended)
			if why == "" {
				why = "cast on another payload"
			}
			a.printf("    (%s %s: no longer counts, %s)\n", approvals.VoteWho(v), relTime(v.At, now), why)
		}
	}
	if e.standing.Met() {
		a.printf("still needed: nothing: the next approval approves it\n")
	} else {
		a.printf("still needed: %s\n", line(e.standing.Needed()))
	}
	if len(e.requesters) > 0 {
		a.printf("may not approve it: %s (who asked for it)\n", approvals.Names(e.requesters))
	}
}

// toJSON is policy explain --json.
func (e *explained) toJSON() *model.JSONObject {
	po := model.NewJSONObject()
	switch {
	case e.file != "":
		po.Raw("version", "null").Str("sha256", e.fileSum).Str("file", e.file)
	case e.pv != nil:
		po.Int("version", e.pv.Version).Str("sha256", e.pv.SHA256).Raw("file", "null")
	default:
		po = nil
	}
	o := model.NewJSONObject()
	if po != nil {
		o.Obj("policy", po)
	} else {
		o.Raw("policy", "null")
	}
	sub := e.subject
	o.Obj("subject", model.NewJSONObject().Str("risk", string(sub.Risk)).Str("session", sub.Session).
		Str("requester", sub.Requester).Str("command", sub.Command).Strs("patterns", sub.Patterns).Strs("effects", sub.Effects))
	rs := make([]*model.JSONObject, len(e.verdicts))
	for i, v := range e.verdicts {
		r := e.p.Rules[v.Rule]
		rs[i] = model.NewJSONObject().Int("rule", int64(v.Rule+1)).Int("line", int64(r.Line)).
			Bool("matches", v.Matches).Strs("why", v.Why).Str("needs", ruleNeeds(r))
	}
	o.Raw("rules", model.JSONObjects(rs)).Bool("ruled", e.req.Ruled()).Int("approvals_required", int64(e.req.Approvals)).
		Obj("from", fromJSON(e.req.From)).Str("needs", e.req.Describe())
	if e.rec == nil {
		return o
	}
	vs := make([]*model.JSONObject, len(e.votes))
	for i, v := range e.votes {
		vs[i] = approvals.VoteJSON(e.rec, v)
	}
	needed, words, progress := 0, "", ""
	if e.rec.EffectiveStatus.Open() && e.req.Ruled() {
		needed, words, progress = e.standing.Short, e.standing.Needed(), e.standing.Progress()
	}
	mayNot := e.requesters
	if !e.req.Ruled() {
		mayNot = nil // without a rule, no separation of duties
	}
	return o.Str("approval_id", e.rec.ApprovalID).Str("status", string(e.rec.EffectiveStatus)).
		Raw("votes", model.JSONObjects(vs)).Str("progress", progress).Int("approvals_needed", int64(needed)).
		Str("needed", words).Strs("may_not_approve", mayNot)
}
