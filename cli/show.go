package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/risk"

	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

func (a *app) showCmd() *cobra.Command {
	var signatures bool
	cmd := &cobra.Command{
		Use:   "show ID [--signatures]",
		Short: "Show every field of one proposal",
		Long: `Show one proposal: status, times, who decided, effective risk (the higher of
the pinned risk and what the classifier says now) with the classifier's
matches, policy, context, whether a live process is waiting on it, hidden
content found in agent strings, why a row is corrupt, and the full command
and diff. Every agent string is sanitised: control characters, escape
sequences, bidirectional and zero-width characters are shown escaped.

With --json: one object with every payload key of the data contract, where
status and risk_level are the effective values, plus stored_status,
pinned_risk_level, classifier_risk_level, classifier_matches, suspicious,
findings, corrupt ("" when the row is fine), waiter and, while the execution
is recorded as started, run: "running" when its runner still heartbeats,
"runner_died" when it stopped (the outcome is unknown) or "unknown" when no
runner ever heartbeated for it. Strings keep their exact bytes (invalid
UTF-8 as \udcXX escapes).

A parked proposal (its agent stopped waiting; an approval lets the same
call through when it is asked again, once) says so on its "parked:" line,
and --json adds park: {state, stopped_at, until, why, taken_by, taken_at,
words}, where state is parked, reserved (its hook was killed before it
could say it stopped: stopped_at is null and gone_at is its last
heartbeat), window_over (an approval is refused), taken or closed (denied
or expired since). A call its agent reported as run while it was not
approved shows execution "ran without approval (what the agent
reported)"; in --json execution_status is ran_without_approval.

Under an approval policy (see policy --help), the text says the quorum
the proposal needs, what is still needed, who may not approve it, and each
vote cast on it (who, when, whether it still counts). --json adds votes
(each with actor, at, payload_sha256, surface, person, ended, ended_at and
counts), approvals_needed (approvals still needed: 0 when none is, the
proposal is decided, or no rule applies), approvals_required (the quorum),
needed (what is still needed, in words) and approval_policy_version
(the version of the approval policy in force; null: none).

Why the command got its level: the text's "why LEVEL" lines give each
finding of its judgement now (as classify judges it, in the proposal's
cwd): its level, the rule that found it, the effect, why, and the words
that triggered it; then whether it is proven read-only. --json adds
judgement: {level, hardline, read_only, effects, findings: [{rule, level,
effect, words, why}], table_level, version}.

--signatures shows the signatures kept for the proposal (show policy
--signatures: the policies'): for each, who signed (principal), the
decision, the key's fingerprint, the exact signed statement (base64) and
the signature, whether it verifies against the configured trust file (and
why not), and three lines that check it without approve-tui: write the
statement and the signature with base64 -d, then run OpenSSH's
ssh-keygen -Y verify -f ALLOWED_SIGNERS -I PRINCIPAL -n approve-tui -s
SIGFILE < STATEMENT. With --json: id, store, trust_file and signatures
(each with seq, event, principal, decision, time, key, statement,
signature, verified, problem, note, write_statement, write_signature and
verify_command).
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitNotFound, ExitUnavailable) + dashIDHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer s.Close()
			if signatures {
				return a.showSignatures(cmd.Context(), s, args[0])
			}
			p, err := approvals.Read(cmd.Context(), s, args[0])
			if err != nil {
				return named(args[0], err)
			}
			rec := p.Record
			j, err := a.judgeRecord(rec)
			if err != nil {
				return err
			}
			if a.json {
				o := withJudgement(approvals.WithQuorumJSON(approvals.RecordJSON(rec, &p.Waiter), rec, p.Quorum), j)
				approvals.WithParkJSON(o, rec, &p.Waiter, s.Now())
				a.printf("%s\n", o.Raw("signers", approvals.SignersJSON(p.Signers)))
				return nil
			}
			writeShow(a.out, rec, &p.Waiter, s.Now(), &j)
			writeQuorum(a.out, rec, p.Quorum, s.Now())
			writeSigners(a.out, p.Signers, s.Trust().Required())
			a.printf("%-14s %s\n", "file:", "Hermes revision "+s.HermesRevision())
			return nil
		},
	}
	cmd.Flags().BoolVar(&signatures, "signatures", false, "show the signatures kept for it, and how to check each with ssh-keygen -Y verify")
	return cmd
}

// named makes a not-found error name the id.
func named(id string, err error) error {
	if errors.Is(err, storage.ErrNotFound) {
		return exitf(ExitNotFound, "no proposal with id %s", id)
	}
	return err
}

// judgeRecord judges a proposal's command in its directory (its cwd as the
// proposal says it: "" when it says none), as classify would.
func (a *app) judgeRecord(rec *storage.Record) (risk.Judgement, error) {
	jc, err := a.riskContext(rec.Cwd)
	if err != nil {
		return risk.Judgement{}, err
	}
	return risk.Judge(rec.Command, jc), nil
}

// writeWhy says why a command got its level: each finding on a line of
// its own (its level, rule and effect, why, the words that triggered it),
// then whether it is proven read-only. Everything from the command is
// sanitised.
func writeWhy(w io.Writer, j risk.Judgement) {
	label := "why " + levelWord(j.Level) + ":"
	if len(j.Findings) == 0 {
		fmt.Fprintf(w, "%-14s %s\n", label, "no pattern matched and the analysis found nothing")
	}
	for i, f := range j.Findings {
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "%-14s %s\n", label, findingText(f))
	}
	ro := "no: not proven to only read"
	if j.ReadOnly {
		ro = "yes: proven to only read"
	}
	fmt.Fprintf(w, "%-14s %s\n", "read-only:", ro)
}

// findingText is one finding on one line: "HIGH hermes: why" or "MED
// effect delete: why — rm -rf /tmp/x".
func findingText(f risk.Finding) string {
	var b strings.Builder
	b.WriteString(f.Level.Short() + " " + line(f.Rule))
	if f.Effect != "" {
		b.WriteString(" " + line(f.Effect))
	}
	b.WriteString(": " + line(f.Why))
	if len(f.Words) > 0 {
		b.WriteString(" — " + wordsText(f.Words))
	}
	return b.String()
}

// writeSigners says who signed the proposal's decisions, each signature as
// checked against the trust file; where signatures are required and none
// is kept, it says so. Nothing where none is kept and none is asked for.
func writeSigners(w io.Writer, signers []approvals.Signer, required bool) {
	if len(signers) == 0 {
		if required {
			fmt.Fprintf(w, "%-14s %s\n", "signed:", approvals.NoSignature)
		}
		return
	}
	for i, sg := range signers {
		label := ""
		if i == 0 {
			label = "signed:"
		}
		fmt.Fprintf(w, "%-14s %s\n", label, approvals.SignerWords(sg))
	}
}
