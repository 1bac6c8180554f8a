package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

func (a *app) lockoutsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lockouts [clear VERB TARGET]",
		Short: "List the tier-2 (verb, target) lockouts, or clear one",
		Long: `Hermes' tier-2 text confirm locks a (verb, target) out after too many wrong
phrases: no phrase is taken for it until the lockout ends. lockouts lists the
active ones: VERB, TARGET, UNTIL and REASON (tab-separated, every field
whole, when not on a terminal; with --json, an array of {verb, target,
expires_at, reason, created_at}). lockouts clear VERB TARGET ends one at
once, for an operator who knows why the phrases were wrong. Clearing is
recorded in the audit log and refused to a --read-only session.
` + exitCodesWhere(map[int]string{ExitNotFound: "not found: no lockout of that (verb, target)"}, ExitOK, ExitError, ExitUsage, ExitNotFound, ExitUnavailable),
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return nil
			case args[0] == "clear" && len(args) == 3:
				return nil
			}
			return usageErrorf("lockouts takes no arguments, or clear VERB TARGET")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx, false)
			if err != nil {
				return err
			}
			defer s.Close()
			if len(args) == 3 {
				err := s.ClearLockout(ctx, args[1], args[2], a.actor())
				if errors.Is(err, storage.ErrNotFound) {
					return exitf(ExitNotFound, "no lockout for %s %s", line(args[1]), line(args[2]))
				}
				if err != nil {
					return err
				}
				a.printf("cleared the lockout of %s %s\n", line(args[1]), line(args[2]))
				return nil
			}
			ls, err := s.Lockouts(ctx)
			if err != nil {
				return err
			}
			if a.json {
				a.printf("[")
				for i, l := range ls {
					if i > 0 {
						a.printf(", ")
					}
					a.printf("%s", model.NewJSONObject().Str("verb", l.Verb).Str("target", l.Target).
						Num("expires_at", l.ExpiresAt).Str("reason", l.Reason).Num("created_at", l.CreatedAt))
				}
				a.printf("]\n")
				return nil
			}
			if len(ls) == 0 {
				a.printf("no active lockouts\n")
				return nil
			}
			now := s.Now()
			t := &table{cols: []column{{name: "VERB", min: 8}, {name: "TARGET", min: 12, weight: 2},
				{name: "UNTIL", whole: true}, {name: "REASON", min: 8}}}
			for _, l := range ls {
				t.add(line(l.Verb), line(l.Target), when(l.ExpiresAt, now), line(l.Reason))
			}
			a.writeTable(t)
			return nil
		},
	}
	return cmd
}
