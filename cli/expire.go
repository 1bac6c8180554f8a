package cli

import (
	"github.com/approve-tui/approve-tui/model"
	"github.com/spf13/cobra"
)

func (a *app) expireCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "expire",
		Short: "Mark pending proposals past their expiry as expired",
		Long: `Rewrite the status of every pending proposal whose expiry has passed to
expired, auditing each, and print their ids one per line (with --json, an
array). Such proposals could not be approved already; this makes the table
say so.
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer s.Close()
			ids, err := s.ExpireDue(cmd.Context(), a.actor())
			if err != nil {
				return err
			}
			if a.json {
				a.printf("%s\n", model.JSONStrings(ids))
				return nil
			}
			for _, id := range ids {
				a.printf("%s\n", line(id))
			}
			if len(ids) == 0 {
				a.note("no pending proposal was past its expiry")
			}
			return nil
		},
	}
}
