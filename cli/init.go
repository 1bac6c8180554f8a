package cli

import (
	"context"
	"os"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

func (a *app) initCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the approval database (or migrate an existing one)",
		Long: `Create the approval database at --db, with its directory, in WAL journal
mode (DELETE where the filesystem cannot host WAL), and add approve-tui's own
tables. An existing file keeps its journal mode and data; missing columns and
tables are added (never Hermes' tier-2 columns: those are Hermes' to add).
Prints the path, the journal mode and the revision of Hermes' approval
store the table has: pr-41427 (the first: four statuses) or tier-2 (text
confirm: pending_confirm, blocked, lockouts).

On PostgreSQL the store is the first schema of the URL's search_path; init
creates that schema when it is missing, and says so. Every other command
opens the database without creating it.
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.initStore(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			if a.json {
				a.printf("%s\n", initJSON(s))
				return nil
			}
			a.printInit(s)
			return nil
		},
	}
}

// initStore creates or migrates the store at --db (init's work, which
// hermes install does too).
func (a *app) initStore(ctx context.Context) (*storage.Store, error) {
	if a.readOnly {
		return nil, usageErrorf("init creates or migrates the database: it cannot run with --read-only")
	}
	a.dbExisted = false
	if !storage.IsPostgresURL(a.db) {
		// Whether a file was there already (Hermes' state.db, with Hermes'
		// own tables) or is made now: asked of the path, never by opening it.
		_, err := os.Stat(a.db)
		a.dbExisted = err == nil
	}
	return a.open(ctx, true)
}

// initJSON is init's --json object for the store it made ready.
func initJSON(s *storage.Store) *model.JSONObject {
	return model.NewJSONObject().Str("path", s.Path()).Str("backend", s.Backend()).Str("journal_mode", s.JournalMode()).Str("hermes_revision", s.HermesRevision()).
		Bool("created", s.CreatedTable()).OptStr("created_schema", s.CreatedSchema()).Str("read_only", s.ReadOnlyReason())
}

// printInit says what init did with the store.
func (a *app) printInit(s *storage.Store) {
	if sc := s.CreatedSchemaSQL(); sc != "" {
		a.printf("created schema %s\n", sc)
	}
	verb := "opened existing"
	switch {
	case s.CreatedTable() && a.dbExisted && s.Backend() != "postgres":
		verb = "added the approval table gateway_approvals and approve-tui's tables to existing"
	case s.CreatedTable():
		verb = "created"
	}
	if s.Backend() == "postgres" {
		a.printf("%s %s (PostgreSQL, Hermes revision %s)\n", verb, s.Path(), s.HermesRevision())
	} else {
		a.printf("%s %s (journal mode %s, Hermes revision %s)\n", verb, s.Path(), s.JournalMode(), s.HermesRevision())
	}
	if r := s.ReadOnlyReason(); r != "" {
		a.note("note: the database is read-only: %s", r)
	}
}
