package cli

import (
	"encoding/json"
	"errors"

	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

func (a *app) copyCmd() *cobra.Command {
	var from, to string
	var replace bool
	cmd := &cobra.Command{
		Use:   "copy --from DB --to DB",
		Short: "Copy a store to another database (SQLite <-> PostgreSQL), audit chain included",
		Long: `Copy every proposal (payload_json byte for byte), the hash-chained audit log,
the waiters and the tier-2 lockouts of one approval store into another: a
SQLite file into PostgreSQL when the agents spread to more hosts, or back.

The source is only read (one snapshot) and its audit chain must verify. The
target is created when missing (on PostgreSQL, its schema too) and written
in one transaction, which appends one audit event recording the copy; its
chain is then verified, and only then is the copy reported done. A target
that holds proposals or audit events is refused: --replace empties it
first, in the same transaction.

Stop the agents and consoles on the source first: what they write after the
snapshot stays in the source.

  approve-tui copy --from ~/.hermes/state.db --to 'postgres://approve@db.internal/approvals?sslmode=verify-full'
` + exitCodesWhere(map[int]string{ExitError: "error: nothing copied, or the copy did not verify (the message says which)"}, ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return usageErrorf("copy needs both --from and --to")
			}
			ctx := cmd.Context()
			src, err := storage.Open(ctx, from, storage.Options{ReadOnly: true, BusyTimeout: a.lockTimeout})
			if err != nil {
				return &storeOpenError{err: err}
			}
			defer src.Close()
			dst, err := storage.Open(ctx, to, storage.Options{Create: true, BusyTimeout: a.lockTimeout})
			if err != nil {
				return &storeOpenError{err: err}
			}
			defer dst.Close()
			res, err := storage.Copy(ctx, src, dst, storage.CopyOptions{Replace: replace}, a.actor())
			if errors.Is(err, storage.ErrTargetNotEmpty) {
				return exitf(ExitError, "%v", err)
			}
			if err != nil {
				return err
			}
			if a.json {
				b, err := json.Marshal(res)
				if err != nil {
					return err
				}
				a.printf("%s\n", b)
				return nil
			}
			if sc := dst.CreatedSchemaSQL(); sc != "" {
				a.printf("created schema %s on the target\n", sc)
			}
			a.printf("copied %d proposal(s), %d audit event(s), %d waiter(s), %d lockout(s)\n  from %s (%s)\n  to   %s (%s)\n",
				res.Proposals, res.Events, res.Waiters, res.Lockouts, src.Path(), src.Backend(), dst.Path(), dst.Backend())
			a.printf("audit chain of the target verified: %d events (the last records the copy)\n", res.Verify.Events)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the store to copy: a SQLite file `path` or a postgres:// URL")
	f.StringVar(&to, "to", "", "the store to copy into (created when missing): a `path` or a postgres:// URL")
	f.BoolVar(&replace, "replace", false, "empty a target that holds proposals first (in the copy's transaction)")
	return cmd
}
