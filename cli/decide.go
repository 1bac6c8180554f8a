package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
	"github.com/spf13/cobra"
)

func (a *app) approveCmd() *cobra.Command {
	var (
		confirm, phrase, readSHA string
		keyFile                  string
		limit                    int
		lockout                  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "approve ID [--confirm ID | --phrase \"VERB TARGET NONCE\"] [--payload-sha256 HEX]",
		Short: "Approve one proposal, once, by retyping its id (or its tier-2 phrase)",
		Long: `Approve exactly one proposal: this command, once. There is no bulk approval
and no wildcard.

On a terminal, the proposal is shown in full (sanitised) and you are asked to
type its approval id. Without a terminal, --confirm ID is required: the
retyped id. Either way the store compares the typed text with the id; a
mismatch approves nothing.

A tier-2 proposal (Hermes' text confirm, risk tier2_critical) is approved
only by its phrase VERB TARGET NONCE (show prints it), never by its id: on a
terminal you are asked for it, in a script pass --phrase. A wrong phrase is
counted as Hermes counts it: at --phrase-limit wrong phrases the proposal is
blocked and its (verb, target) locked out for --lockout (see lockouts).

The approval names what was read: on a terminal, the SHA-256 of the payload
shown; in a script, --payload-sha256 HEX (payload_sha256 in show --json). If
the proposal's payload is not that one any more, the store refuses (exit 1,
audited as content_changed): read it again.

Where a rule of the approval policy applies (see policy --help), an
approval is a vote: it is recorded and audited, the proposal stays pending,
and approve exits 7 saying what is still needed ("vote recorded on ID: 1 of
2 approvals (alice@laptop via cli); still needed: one more approver from
dba"). The vote that completes the quorum approves it (exit 0; consumed_by
names every approver). On a terminal you are told before you type that it
is a vote, who voted and what is needed.

Where the configuration's trust: section requires signatures, the approval
is signed with your own SSH key over what you read (store, id, payload
SHA-256, pinned risk): the one key of the ssh-agent at $SSH_AUTH_SOCK that
the trust file knows, or --key FILE. A security key asks for a touch
first. No agent, a refusal, or no key the trust file knows: nothing is
approved (exit 1), and the message says what to do.

Prints "approved ID" (with --json, the proposal, with its votes).
` + exitCodesWhere(map[int]string{ExitError: "error, or refused whatever is typed (below)",
			ExitVoted: "a vote recorded: the proposal needs more approvals and stays pending"},
			ExitOK, ExitError, ExitUsage, ExitNotFound, ExitNotPending, ExitMismatch, ExitUnavailable, ExitVoted, ExitInterrupted) + dashIDHelp + `

Refused whatever is typed (exit 1; deny them): a corrupt proposal, a command
that matches a hardline rule (Hermes never runs it), an id shorter than 8
characters, a tier-2 proposal approved by its id, a locked-out (verb, target).

Under the approval policy, refused too (exit 1): a vote by whoever asked for
the proposal (self_approval: their agent submitted it), a second vote by one
person, by name or by SSH key (duplicate_approver), and a vote that cannot
count toward what is left, the places left being kept for a group the voter
is not in (not_eligible).`,
		Args: a.oneID("phrase", `approve ID --phrase "VERB TARGET NONCE"`, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			ctx := cmd.Context()
			tty := a.isTTY()
			confirmed := cmd.Flags().Changed("confirm") || cmd.Flags().Changed("phrase")
			if cmd.Flags().Changed("confirm") && cmd.Flags().Changed("phrase") {
				return usageErrorf("--confirm and --phrase: one or the other (a tier-2 proposal takes its phrase, any other its id)")
			}
			if !tty && !confirmed {
				return usageErrorf("stdin is not a terminal: approve needs --confirm ID (the approval id, retyped), or --phrase for a tier-2 proposal")
			}
			s, err := a.open(ctx, false)
			if err != nil {
				return err
			}
			defer s.Close()
			typed, byPhrase := confirm, cmd.Flags().Changed("phrase")
			if byPhrase {
				typed = phrase
			}
			// Under trust required the approval is signed: the key is found
			// first, so that the terminal's note says who the approver is
			// (the key's principal), and the signing is after the prompt.
			actor := a.actor()
			ts := s.Trust()
			signing := ts.Required() && s.ReadOnlyReason() == "" && !actor.ReadOnly
			var (
				key    *keySigner
				keyErr error
			)
			if signing {
				if key, keyErr = a.signer(ts, keyFile); key != nil {
					defer key.Close()
				}
			}
			var shown *storage.Record // the proposal as shown
			if tty {
				p, err := approvals.Get(ctx, s, id)
				if err != nil {
					return named(id, err)
				}
				rec := p.Record
				shown = rec
				j, err := a.judgeRecord(rec)
				if err != nil {
					return err
				}
				writeShow(a.err, rec, &p.Waiter, s.Now(), &j)
				if rec.EffectiveStatus.Open() {
					a.voteNote(ctx, s, rec, signerActor(actor, ts, key))
				}
				if readSHA == "" {
					readSHA = rec.PayloadSHA256 // what was shown is what is approved
				}
				byPhrase = byPhrase || rec.RequiresTextConfirm
				// The store refuses what cannot be approved whatever is
				// typed; ask only when typing can matter.
				askable := rec.EffectiveStatus.Open() && rec.Corrupt == "" && s.ReadOnlyReason() == "" &&
					!rec.Hardline && (rec.RequiresTextConfirm || (len([]rune(rec.ApprovalID)) >= storage.MinApprovableID && model.UntypableID(rec.ApprovalID) == ""))
				if signing && keyErr != nil && askable {
					// Nothing typed could be signed: say so before asking.
					return exitf(ExitError, "not approved: cannot sign: %v; %s; %s is still pending", keyErr, signingHelp(ts), line(id))
				}
				if !confirmed && askable {
					question := "\nType the approval id to approve: "
					if rec.RequiresTextConfirm {
						question = "\nTier-2: type the phrase shown above (VERB TARGET NONCE) to approve: "
					}
					typed, err = a.prompt(ctx, question)
					if err != nil {
						return err
					}
				}
			}
			// The signature is over the payload read (shown, or named by
			// --payload-sha256), which the store then pins. A watcher's
			// attempt is the store's to refuse.
			if signing {
				if shown == nil {
					if shown, err = recordFor(ctx, s, id); err != nil {
						return err
					}
				}
				if readSHA == "" {
					readSHA = shown.PayloadSHA256
				}
				err := keyErr
				var signed *model.Signature
				if err == nil {
					st, serr := a.approvalStatement(ctx, s, shown, readSHA)
					if serr != nil {
						return exitf(ExitError, "not approved: %v; %s is still pending", serr, line(id))
					}
					signed, err = a.sign(ts, key, st)
				}
				if err != nil {
					return exitf(ExitError, "not approved: cannot sign: %v; %s; %s is still pending", err, signingHelp(ts), line(id))
				}
				actor.Signature = signed
				a.note("signed by %s (%s)", line(signed.Principal), line(signed.Key))
			}
			// Whether anyone waits is judged before the decision: a waiter
			// that wakes on it stops heartbeating at once.
			waiter, werr := s.WaiterState(ctx, id)
			var rec *storage.Record
			if byPhrase {
				if err := a.configFlags(cmd, "tier2"); err != nil { // the file's tier2: for flags not given
					return err
				}
				rec, err = s.ConsumePhrase(ctx, id, typed, readSHA, storage.PhraseOptions{Limit: limit, Lockout: lockout}, actor)
			} else {
				rec, err = s.ConsumeRead(ctx, id, typed, readSHA, actor)
			}
			var (
				rf    *storage.RefusedError
				voted *storage.VoteRecorded
			)
			switch {
			case errors.As(err, &voted):
				return a.votedOn(ctx, s, id, voted)
			case errors.Is(err, storage.ErrConfirmMismatch):
				return exitf(ExitMismatch, "not approved: the typed confirmation does not match the approval id; %s is still pending", id)
			case errors.As(err, &rf) && rf.Code == storage.RefusedPhraseMismatch:
				return exitf(ExitMismatch, "not approved: %s", rf.Reason)
			case err != nil:
				return a.abandonedRefusal(ctx, s, id, err)
			}
			if a.json {
				qv, err := approvals.ReadQuorum(ctx, s, rec)
				if err != nil {
					return err
				}
				a.printf("%s\n", approvals.WithQuorumJSON(approvals.RecordJSON(rec, nil), rec, qv))
			} else {
				a.printf("approved %s\n", line(id))
			}
			if rec.Park == nil {
				rec.Park, _ = s.ParkOf(ctx, id) // unread: the notes below say it may run nothing
			}
			parked := ""
			if werr == nil {
				parked = approvals.ApprovedParkedWords(rec, &waiter, s.Now())
			}
			switch {
			case parked != "":
				a.note("note: %s: %s", line(id), parked)
			case werr != nil || waiter.State == storage.WaiterLive:
			case waiter.State == storage.WaiterDead && waiter.Waiter != nil:
				w := waiter.Waiter
				a.note("note: the process that waited on %s (pid %d on %s, %s) is gone: it stopped heartbeating %s; nothing waits to run this approval, so it runs nothing",
					id, w.PID, line(w.Host), orDash(line(w.Surface)), relTime(w.HeartbeatAt, s.Now()))
			default:
				a.note("note: no live process is waiting on %s: the approval may run nothing until its agent checks the store", id)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&confirm, "confirm", "", "the approval `id`, retyped (required without a terminal)")
	cmd.Flags().StringVar(&phrase, "phrase", "", "a tier-2 proposal's `phrase`: VERB TARGET NONCE (case and spacing as you like)")
	cmd.Flags().StringVar(&readSHA, "payload-sha256", "", "approve only if the proposal's payload still has this SHA-256 (`hex`, as show --json gives it)")
	cmd.Flags().StringVar(&keyFile, "key", "", "sign with this private key `file` (unencrypted) instead of the ssh-agent's key, where trust is required")
	cmd.Flags().IntVar(&limit, "phrase-limit", storage.DefaultPhraseLimit, "wrong tier-2 phrases that block the proposal and lock its (verb, target) out")
	cmd.Flags().DurationVar(&lockout, "lockout", storage.DefaultLockout, "how long a (verb, target) stays locked out after a block (an active lockout is never shortened)")
	return cmd
}

// votedOn reports a vote that did not complete the quorum: on stdout what
// it has and what is still needed (with --json, the proposal with its
// votes), and exit 7.
func (a *app) votedOn(ctx context.Context, s *storage.Store, id string, voted *storage.VoteRecorded) error {
	if a.json {
		rec, err := s.Get(ctx, id)
		if err != nil {
			return named(id, err)
		}
		qv, err := approvals.ReadQuorum(ctx, s, rec)
		if err != nil {
			return err
		}
		a.printf("%s\n", approvals.WithQuorumJSON(approvals.RecordJSON(rec, nil), rec, qv))
		return exitf(ExitVoted, "")
	}
	q := voted.Quorum
	a.printf("vote recorded on %s: %s (%s); still needed: %s\n", line(id), q.Progress(),
		approvals.Voters(q.Votes), line(q.Needed()))
	return exitf(ExitVoted, "")
}

// voteNote tells the approver at a terminal, before they type, that the
// approval is a vote: what the proposal needs, who voted, what is still
// needed, and whether the store will refuse them (their own agent's
// proposal, or a second vote). Said on stderr; nothing when no rule
// applies.
func (a *app) voteNote(ctx context.Context, s *storage.Store, rec *storage.Record, actor model.Actor) {
	q, err := s.Quorum(ctx, rec)
	var rf *storage.RefusedError
	switch {
	case errors.As(err, &rf):
		a.note("\nnote: %s", line(rf.Reason))
		return
	case err != nil || q == nil:
		return
	}
	fmt.Fprintf(a.err, "\nThis approval is a vote: under policy %s, %s needs %s.\n", q.Policy.Label(), line(rec.ApprovalID), line(q.Describe()))
	if len(q.Votes) == 0 {
		fmt.Fprintf(a.err, "Nobody has voted yet; still needed: %s.\n", line(q.Needed()))
	} else {
		fmt.Fprintf(a.err, "So far %s (%s); still needed: %s.\n", q.Progress(), approvals.Voters(q.Votes), line(q.Needed()))
	}
	// Who may vote is the store's rule (policy.Eligibility): said here
	// before typing, decided there.
	me := policy.VoterOf(actor)
	switch r, at := policy.Eligibility(me, q.Requesters, approvals.Cast(q.Votes), true, true); r {
	case policy.NoPerson:
		fmt.Fprintf(a.err, "You are no person approve-tui could establish: the store refuses your vote (not_eligible).\n")
		return
	case policy.OwnProposal:
		fmt.Fprintf(a.err, "You (%s) asked for it: the store refuses your vote (self_approval); another approver must.\n", line(me.Person))
		return
	case policy.VotedAlready:
		fmt.Fprintf(a.err, "You (%s) voted already, as %s: the store refuses a second vote (duplicate_approver).\n", line(me.Person), approvals.VoteWho(q.Votes[at]))
		return
	}
	if len(q.Requesters) > 0 {
		fmt.Fprintf(a.err, "Not by %s: who asked for it may not approve it.\n", approvals.Names(q.Requesters))
	}
}

func (a *app) denyCmd() *cobra.Command {
	var (
		reason, keyFile string
		yes             bool
	)
	cmd := &cobra.Command{
		Use:   "deny ID [--reason TEXT]",
		Short: "Deny one proposal",
		Long: `Deny one proposal, with an optional reason kept in the audit log. A corrupt
proposal can be denied. On a terminal you are asked "Deny ID? [y/N]" unless
--yes; anything but y or yes cancels (exit 1, nothing changed). Without a
terminal there is no prompt.

Where the configuration's trust: section requires signatures, the deny is
signed as approve signs (the ssh-agent's key, or --key FILE); with no key
to sign with it is recorded unsigned, with a warning (a deny never lets
anything run). A --key that cannot sign denies nothing.

Prints "denied ID" (with --json, the proposal).
` + exitCodesWhere(map[int]string{ExitError: "error, or cancelled at the prompt"},
			ExitOK, ExitError, ExitUsage, ExitNotFound, ExitNotPending, ExitUnavailable, ExitInterrupted) + dashIDHelp,
		Args: a.oneID("reason", `deny ID --reason "no piping to sh"`, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			ctx := cmd.Context()
			s, err := a.open(ctx, false)
			if err != nil {
				return err
			}
			defer s.Close()
			if a.isTTY() && !yes && s.ReadOnlyReason() == "" {
				rec, err := s.Get(ctx, id)
				if err != nil {
					return named(id, err)
				}
				fmt.Fprintf(a.err, "%s\n", cut(line(id)+"  "+rec.EffectiveRisk.Short()+"  "+line(string(rec.EffectiveStatus))+"  "+line(rec.Command), a.width()))
				// Only a pending proposal is worth asking about; the store
				// refuses the others.
				answer := "y"
				if rec.EffectiveStatus.Open() {
					if answer, err = a.prompt(ctx, "Deny "+line(id)+"? [y/N] "); err != nil {
						return err
					}
				}
				switch strings.ToLower(strings.TrimSpace(answer)) {
				case "y", "yes":
				default:
					return exitf(ExitError, "not denied: cancelled; nothing changed")
				}
			}
			actor := a.actor()
			if ts := s.Trust(); ts.Required() && s.ReadOnlyReason() == "" && !actor.ReadOnly {
				sig, err := a.signDeny(ctx, s, ts, keyFile, id)
				if err != nil {
					return err
				}
				actor.Signature = sig
			}
			rec, err := s.Deny(ctx, id, actor, reason)
			if err != nil {
				return named(id, err)
			}
			if a.json {
				a.printf("%s\n", approvals.RecordJSON(rec, nil))
				return nil
			}
			a.printf("denied %s\n", line(id))
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (kept in the audit log)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation on a terminal")
	cmd.Flags().StringVar(&keyFile, "key", "", "sign with this private key `file` (unencrypted) instead of the ssh-agent's key, where trust is required")
	return cmd
}

// signDeny signs a deny of id under ts. Without a key to sign with the
// deny goes unsigned, with a warning (a deny never lets anything run),
// unless --key named one: then its failure is the error.
func (a *app) signDeny(ctx context.Context, s *storage.Store, ts *trust.Settings, keyFile, id string) (*model.Signature, error) {
	rec, err := recordFor(ctx, s, id)
	if err != nil {
		return nil, err
	}
	sig, err := a.signDecision(ts, keyFile, trust.DecisionDeny, rec, "")
	switch {
	case err != nil && keyFile != "":
		return nil, exitf(ExitError, "not denied: cannot sign with --key: %v; %s is still pending", err, line(id))
	case err != nil:
		a.note("warning: this deny is unsigned (%v): it is recorded and shown as unsigned", err)
		return nil, nil
	}
	a.note("signed by %s (%s)", line(sig.Principal), line(sig.Key))
	return sig, nil
}

// oneID is the Args check of a command that takes one approval id and a
// flag of free text (deny --reason, approve --phrase). More words than the
// id are most often that text unquoted (deny ID --reason no piping to sh),
// and the error says how to quote it; over ssh, where the remote command
// arrives as one string that the server splits as a shell would, in words
// that work there. always: say it even when the flag was not given.
func (a *app) oneID(flag, example string, always bool) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		given := cmd.Flags().Changed(flag)
		if len(args) <= 1 || !always && !given {
			return cobra.ExactArgs(1)(cmd, args)
		}
		what := fmt.Sprintf("%s takes one approval id, and got %d arguments", cmd.Name(), len(args))
		if given {
			v, _ := cmd.Flags().GetString(flag)
			what += fmt.Sprintf(" (the %s was read as %q)", flag, v)
		}
		if a.as != nil && a.as.Surface == model.SurfaceSSH {
			return usageErrorf("%s; a %s of several words needs quotes, and over ssh they must reach the server, which splits the command as a shell would: ssh HOST '%s'",
				what, flag, example)
		}
		return usageErrorf("%s; a %s of several words needs quotes: %s", what, flag, example)
	}
}

// abandonedRefusal is err, a refused approval of id, unless id was
// abandoned (its agent stopped waiting, storage.Abandon): then it says so,
// and that approving it would run nothing.
func (a *app) abandonedRefusal(ctx context.Context, s *storage.Store, id string, err error) error {
	var np *storage.NotPendingError
	if errors.As(err, &np) && np.Status == model.StatusExpired {
		if rec, gerr := s.Get(ctx, id); gerr == nil && rec.ExecutionStatus == model.ExecRanWithoutApproval {
			return exitf(ExitNotPending, "not approved: proposal %s was closed because its agent reported running the command without approval (%s); approving it would run nothing",
				line(id), line(rec.ExecutionReason))
		}
		if r, rerr := s.AbandonReason(ctx, id); rerr == nil && r != "" {
			return exitf(ExitNotPending, "not approved: proposal %s was abandoned: %s; approving it would run nothing", line(id), line(r))
		}
	}
	return named(id, err)
}
