package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/approve-tui/approve-tui/model"
	"github.com/spf13/cobra"
)

func (a *app) initCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the approval database (or migrate an existing one)",
		Long: `Create the approval database at --db, with its directory, in WAL journal
mode (DELETE where the filesystem cannot host WAL), and add approve-tui's own
tables. An existing file keeps its journal mode and data; missing columns and
tables are added. Prints the path and the journal mode.

Every other command opens the database without creating it.
` + exitCodesHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.readOnly {
				return usageErrorf("init creates or migrates the database: it cannot run with --read-only")
			}
			abs, _ := filepath.Abs(a.db)
			_, statErr := os.Stat(abs)
			created := errors.Is(statErr, fs.ErrNotExist)
			s, err := a.open(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer s.Close()
			if a.json {
				o := model.NewJSONObject().Str("path", s.Path()).Str("journal_mode", s.JournalMode()).
					Bool("created", created).Str("read_only", s.ReadOnlyReason())
				a.printf("%s\n", o)
				return nil
			}
			verb := "opened existing"
			if created {
				verb = "created"
			}
			a.printf("%s %s (journal mode %s)\n", verb, s.Path(), s.JournalMode())
			if r := s.ReadOnlyReason(); r != "" {
				a.note("note: the database is read-only: %s", r)
			}
			return nil
		},
	}
}
