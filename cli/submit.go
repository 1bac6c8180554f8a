package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/spf13/cobra"
)

type submitFlags struct {
	session, cwd, backend, requester, reason, risk string
	ttl                                            time.Duration
	diffFile, diffSummary                          string
}

func (a *app) submitCmd() *cobra.Command {
	var f submitFlags
	cmd := &cobra.Command{
		Use:   "submit [flags] -- COMMAND...",
		Short: "Propose a command for approval",
		Long: `Store a new pending proposal for COMMAND and print its approval id (with
--json, the proposal). The command words are joined with single spaces: quote
the command as one argument to keep its exact spacing, and put -- before it
so that its own flags are not read as approve-tui's.

The risk level and reason come from the Hermes-compatible classifier. --risk
may only raise the level (lowering it is a usage error). --reason is your
context (why, for whom): shown apart from the classifier's reason, labelled
as the requester's words, it never changes the verdict. A command that
matches no pattern is still submittable, as low risk.

Defaults: --session cli:USER@HOST, --requester approve-tui-cli, --cwd the
current directory, --backend local, --ttl 10m (0: never expires). High risk
always defaults to deny.
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.submit(cmd, f, args) },
	}
	cmd.Flags().SetInterspersed(false)
	addSubmitFlags(cmd, &f, "cli", "approve-tui-cli", "attach the diff in `file` (- for stdin), byte for byte")
	return cmd
}

// addSubmitFlags registers the flags that describe a proposal (submit's,
// shared by run): the default session is PREFIX:USER@HOST.
func addSubmitFlags(cmd *cobra.Command, f *submitFlags, sessionPrefix, requester, diffUsage string) {
	fl := cmd.Flags()
	fl.StringVar(&f.session, "session", "", "session `key` (default "+sessionPrefix+":USER@HOST)")
	fl.StringVar(&f.cwd, "cwd", "", "working `dir` the command runs in (default: current directory)")
	fl.StringVar(&f.backend, "backend", "local", "execution backend `name`")
	fl.StringVar(&f.requester, "requester", requester, "who asks (agent or program `name`)")
	fl.StringVar(&f.reason, "reason", "", "context: why the command is asked for (shown as the requester's words, apart from the risk reason)")
	fl.StringVar(&f.risk, "risk", "", "raise the risk `level` (low, medium, high); never lower")
	fl.DurationVar(&f.ttl, "ttl", 10*time.Minute, "time until the proposal expires (0: never)")
	fl.StringVar(&f.diffFile, "diff-file", "", diffUsage)
	fl.StringVar(&f.diffSummary, "diff-summary", "", "one-line summary of the change")
}

func (a *app) submit(cmd *cobra.Command, f submitFlags, args []string) error {
	command := strings.Join(args, " ")
	if strings.TrimSpace(command) == "" {
		return usageErrorf("the command is empty")
	}
	actor := a.actor()
	d, err := a.draft(f, command, "cli", actor)
	if err != nil {
		return err
	}
	if d.Judging, err = a.riskContext(d.Cwd); err != nil {
		return err
	}
	p, v, err := risk.Propose(d, time.Now())
	var lower *risk.LowerRiskError
	if errors.As(err, &lower) {
		return usageErrorf("--risk %s would lower the classifier's risk %s: --risk may only raise it", lower.Asked, lower.Classified)
	} else if err != nil {
		return err
	}
	// The agent submits: the trust file as the agent side loads it.
	s, err := a.openSide(cmd.Context(), false, config.AgentSide)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Submit(cmd.Context(), p, actor); err != nil {
		return err
	}
	if v.Hardline {
		a.note("warning: %s matches a hardline rule: Hermes never runs it, whatever the decision", p.ApprovalID)
	}
	if a.json {
		rec, err := s.Get(cmd.Context(), p.ApprovalID)
		if err != nil {
			return err
		}
		a.printf("%s\n", approvals.RecordJSON(rec, nil))
		return nil
	}
	a.printf("%s\n", p.ApprovalID)
	return nil
}

// draft builds the proposal's draft from the submit flags; the default
// session is PREFIX:USER@HOST.
func (a *app) draft(f submitFlags, command, sessionPrefix string, actor model.Actor) (risk.Draft, error) {
	if f.ttl < 0 {
		return risk.Draft{}, usageErrorf("--ttl must not be negative (0: never expires)")
	}
	d := risk.Draft{
		Command:     command,
		SessionKey:  f.session,
		Requester:   f.requester,
		Cwd:         f.cwd,
		Backend:     f.backend,
		DiffSummary: f.diffSummary,
		Raise:       model.RiskLevel(strings.ToLower(f.risk)),
		Context:     f.reason,
		TTL:         f.ttl,
		Origin:      model.LocalOrigin(),
	}
	if d.SessionKey == "" {
		d.SessionKey = sessionPrefix + ":" + actor.Name
	}
	if d.Cwd == "" {
		if wd, err := os.Getwd(); err == nil {
			d.Cwd = wd
		}
	}
	if f.diffFile != "" {
		var (
			diff []byte
			err  error
		)
		if f.diffFile == "-" {
			diff, err = io.ReadAll(a.in)
		} else {
			diff, err = os.ReadFile(f.diffFile)
		}
		if err != nil {
			return risk.Draft{}, fmt.Errorf("--diff-file: %w", err)
		}
		d.DiffText = string(diff)
	}
	if f.risk != "" && !d.Raise.Valid() {
		return risk.Draft{}, usageErrorf("--risk %q is not one of low, medium, high", f.risk)
	}
	return d, nil
}
