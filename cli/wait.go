package cli

import (
	"context"
	"errors"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

var errWaitTimeout = errors.New("wait timed out")

func (a *app) waitCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait ID [--timeout D]",
		Short: "Block until a proposal is approved, denied or expires",
		Long: `Wait until proposal ID leaves pending, watching the store (no busy polling),
and say how: approved (by whom and when), denied (with the reason from the
audit log, if any), or expired. While it waits it heartbeats as a live waiter
on the id, so that the console can tell the operator someone is waiting
(not with --read-only). --timeout 0 (the default) waits for ever.

` + exitRowsText(exitRowsOf("wait")),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout < 0 {
				return usageErrorf("--timeout must not be negative (0: wait for ever)")
			}
			return a.wait(cmd.Context(), args[0], timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long, exit 12 (0: never)")
	return cmd
}

func (a *app) wait(ctx context.Context, id string, timeout time.Duration) error {
	// What waits is the agent's: the trust file as the agent side loads it.
	s, err := a.openSide(ctx, false, config.AgentSide)
	if err != nil {
		return err
	}
	defer s.Close()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errWaitTimeout)
		defer cancel()
	}
	// The one agent-side wait: watches the store, wakes at expiry, and
	// heartbeats as a live waiter (best effort: a missed beat only makes the
	// waiter look gone).
	rec, err := agent.WaitDecision(ctx, s, id, agent.WaitOptions{Surface: model.SurfaceCLI,
		OnProgress: func(q *storage.Quorum) { a.note("%s: %s", line(id), agent.QuorumWords(q)) }})
	switch {
	case err == nil:
		return a.waitDone(ctx, s, rec)
	case ctx.Err() == nil:
		return named(id, err)
	case rec != nil && !rec.EffectiveStatus.Open():
		// A decision that raced the end still counts.
		return a.waitDone(context.Background(), s, rec)
	case errors.Is(context.Cause(ctx), errWaitTimeout):
		return a.waitResult(ExitWaitTimeout, id, "timeout", "still pending after "+timeout.String()+" (timed out)", "", nil, "")
	}
	return exitf(ExitInterrupted, "interrupted: stopped waiting for %s; it is still pending", id)
}

// waitDone reports how the proposal left pending.
func (a *app) waitDone(ctx context.Context, s *storage.Store, rec *storage.Record) error {
	now := s.Now()
	id := rec.ApprovalID
	switch rec.EffectiveStatus {
	case model.StatusConsumed:
		msg := "approved" + decidedBy(rec, now)
		if ts := s.Trust(); ts.Required() {
			// A script runs the command on exit 0: under trust required the
			// approval must carry the signatures run and the hooks check,
			// never just a consumed row, which the agent's user can write.
			chk, err := agent.VerifySignatures(ctx, ts, s, rec, agent.Self{Requesters: agent.RequesterNames()})
			if err != nil {
				words := agent.RefuseSignatures(ctx, s, id, err, a.actor(), a.note)
				return a.waitResult(agent.ExitBlocked, id, "blocked", "approved but refused: its signatures do not hold: "+words+"; do not run it",
					rec.ConsumedBy, rec.ConsumedAt, agent.ReasonSignatureInvalid)
			}
			msg += ", " + chk.Words()
		}
		return a.waitResult(ExitOK, id, "approved", msg, rec.ConsumedBy, rec.ConsumedAt, "")
	case model.StatusDenied:
		reason, _ := s.DenyReason(ctx, id)
		msg := "denied" + decidedBy(rec, now)
		if reason != "" {
			msg += ": " + line(reason)
		}
		return a.waitResult(ExitWaitDenied, id, "denied", msg, rec.ConsumedBy, rec.ConsumedAt, reason)
	case model.StatusExpired:
		msg := "expired"
		if rec.ExpiresAt != nil {
			msg += " " + when(*rec.ExpiresAt, now)
		}
		return a.waitResult(ExitWaitExpired, id, "expired", msg, "", rec.ExpiresAt, "")
	}
	return exitf(ExitError, "proposal %s has an unknown status %q", id, string(rec.EffectiveStatus))
}

func decidedBy(rec *storage.Record, now time.Time) string {
	s := ""
	if rec.ConsumedBy != "" {
		s += " by " + line(rec.ConsumedBy)
	}
	if rec.ConsumedAt != nil {
		s += " " + when(*rec.ConsumedAt, now)
	}
	return s
}

// waitResult prints the outcome on stdout and returns the exit code.
func (a *app) waitResult(code int, id, outcome, msg, by string, at *float64, reason string) error {
	if a.json {
		o := model.NewJSONObject().Str("approval_id", id).Str("outcome", outcome).Int("exit_code", int64(code)).
			OptStr("by", by).OptNum("at", at).OptStr("reason", reason)
		a.printf("%s\n", o)
	} else {
		a.printf("%s %s\n", line(id), msg)
	}
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code}
}
