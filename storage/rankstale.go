package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A decision leaves its row's rank entry where it is and names it in the
// meta row rank_stale instead of deleting it. The decision rewrites the
// meta row audit_head anyway, and both rows share the meta table's one
// page: naming the entry costs SQLite no page of its own, where deleting
// it writes a page of the rank table and one of its order index.
//
//   - The ranked page skips such entries: its join keeps open rows only.
//   - The index's completeness check (rankUpToDate, catchUpRank) counts
//     entries less the named ones against the open rows, so it stays as
//     exact as it was: a missing entry cannot hide behind a named stale
//     one. A stale entry left by another program (Hermes deciding a row)
//     still makes the counts disagree, and the catch-up reconciles.
//   - The decision whose name makes the list longer than rankStaleBatch
//     names or rankStaleBytes bytes deletes the named entries, its own
//     included, in its own transaction: one page of each tree per batch
//     when the index is small.
//   - Whatever deletes entries wholesale (a reconcile, a rebuild, expiry)
//     first deletes the named ones and empties the list, so the count
//     stays exact.
//   - On PostgreSQL, where decisions of different rows run at once (read
//     committed), a name is appended by one upsert, which waits for and
//     sees another writer's committed list, and the wholesale deletions
//     lock the list's row first (TestStaleNamesSurviveConcurrentDecisions).
//
// The list holds each id as strconv.Quote writes it, one per line: any
// string an agent chose for an id round-trips, newlines and invalid UTF-8
// included, and the value stays ASCII (PostgreSQL's TEXT takes no NUL).
const (
	rankStaleBatch = 64
	rankStaleBytes = 2048
)

// staleKey is the meta row that names the stale rank entries.
const staleKey = "rank_stale"

// appendStale is list with id named at its end.
func appendStale(list, id string) string {
	if list != "" {
		list += "\n"
	}
	return list + strconv.Quote(id)
}

// decodeStale reads the list; an error means the value is not one
// appendStale wrote (then the caller reconciles the index in full).
func decodeStale(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	lines := strings.Split(v, "\n")
	ids := make([]string, len(lines))
	for i, l := range lines {
		id, err := strconv.Unquote(l)
		if err != nil || !strings.HasPrefix(l, `"`) {
			return nil, fmt.Errorf("the rank index's list of stale entries is damaged at line %d", i+1)
		}
		ids[i] = id
	}
	return ids, nil
}

// leaveRankEntry is a decision's share of the rank index's upkeep (inside
// its transaction, after the row left the open set): it names the row's
// entry stale, and deletes the named entries once the list is over its
// bounds.
func (s bound) leaveRankEntry(ctx context.Context, id string) error {
	var has bool
	if err := s.ws.rankIndexed.QueryRowContext(ctx, id).Scan(&has); err != nil {
		return err
	}
	if !has {
		return nil // never indexed (another program's row not caught up yet)
	}
	var list string
	if err := s.ws.rankName.QueryRowContext(ctx, appendStale("", id)).Scan(&list); err != nil {
		return err
	}
	// The list is read in full only when it is over its bounds (a damaged
	// list is found then, or by the index's check).
	if len(list) <= rankStaleBytes && strings.Count(list, "\n") < rankStaleBatch {
		return nil
	}
	return s.deleteStale(ctx, list)
}

// deleteStale deletes the entries the list names whose rows are not open
// (a row it names may have been made open again by hand) and empties the
// list; a damaged list names nothing for sure, and the whole index is
// reconciled instead.
func (s bound) deleteStale(ctx context.Context, list string) error {
	ids, err := decodeStale(list)
	if err != nil {
		return s.dropStaleRank(ctx)
	}
	for _, id := range ids {
		if _, err := s.ws.rankDelClosed.ExecContext(ctx, id); err != nil {
			return err
		}
	}
	_, err = s.ws.metaPut.ExecContext(ctx, staleKey, "")
	return err
}

// flushStale deletes the named stale entries, if any, before a statement
// that deletes entries by another criterion (expiry) changes the count.
func (s bound) flushStale(ctx context.Context) error {
	list, err := s.namedStale(ctx)
	if err != nil || list == "" {
		return err
	}
	return s.deleteStale(ctx, list)
}

// rankBalance is what the index's completeness check compares: its
// entries, less those the list names, against the open rows.
type rankBalance struct {
	entries, open int64
	named         sql.NullString
}

// rankBalanceSQL selects a rankBalance (into dest), counting the open
// rows within Hermes' partial index (run it through scanOpen).
func (s bound) rankBalanceSQL() string {
	return `(SELECT count(*) FROM approve_tui_rank),
		(SELECT value FROM approve_tui_meta WHERE key = '` + staleKey + `'),
		(SELECT count(*) FROM gateway_approvals` + pendingIndex + ` WHERE ` + s.openWhere("status") + `)`
}

func (b *rankBalance) dest() []any { return []any{&b.entries, &b.named, &b.open} }

// even: every open row has its entry, as far as counts can tell (a
// damaged list is not even).
func (b *rankBalance) even() bool {
	ids, err := decodeStale(b.named.String)
	return err == nil && b.entries-int64(len(ids)) == b.open
}

// dropStaleRank deletes every entry whose row is not open, named or not,
// and empties the list: the reconcile.
func (s bound) dropStaleRank(ctx context.Context) error {
	return s.deleteEntries(ctx, `DELETE FROM approve_tui_rank WHERE approval_id NOT IN
		(SELECT approval_id FROM gateway_approvals WHERE `+s.openWhere("status")+`)`)
}

// clearRank deletes every entry and empties the list: the index is rebuilt
// from nothing (it was built with other rules).
func (s bound) clearRank(ctx context.Context) error {
	return s.deleteEntries(ctx, `DELETE FROM approve_tui_rank`)
}

// deleteEntries runs the DELETE q on the rank index with the list's row
// locked, and empties the list.
func (s bound) deleteEntries(ctx context.Context, q string) error {
	if _, err := s.namedStale(ctx); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, q); err != nil {
		return err
	}
	_, err := s.ws.metaPut.ExecContext(ctx, staleKey, "")
	return err
}

// namedStale reads the list, and on PostgreSQL takes its row lock: read
// before entries are deleted wholesale, it makes a decision that names its
// entry meanwhile wait, and name it in the emptied list, instead of having
// its name overwritten.
func (s bound) namedStale(ctx context.Context) (string, error) {
	var list sql.NullString
	err := s.ws.rankNamed.QueryRowContext(ctx).Scan(&list)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return list.String, err
}
