package storage

import (
	"context"
	"database/sql"
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
//   - The decision whose name would make the list longer than
//     rankStaleBatch names or rankStaleBytes bytes deletes the named
//     entries (and its own) instead, in its own transaction: one page of
//     each tree per batch when the index is small.
//   - Whatever deletes entries wholesale (a reconcile, a rebuild, expiry)
//     first deletes the named ones and empties the list, so the count
//     stays exact.
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
// entry stale, or deletes the named entries when the list is full.
func (s bound) leaveRankEntry(ctx context.Context, id string) error {
	var list sql.NullString
	var has bool
	if err := s.ws.rankStale.QueryRowContext(ctx, id).Scan(&list, &has); err != nil {
		return err
	}
	if !has {
		return nil // never indexed (another program's row not caught up yet)
	}
	// The list is read in full only when it is full: until then the name
	// is appended (a damaged list is found by the index's check, or here
	// when it is full).
	named := 0
	if list.String != "" {
		named = strings.Count(list.String, "\n") + 1
	}
	if v := appendStale(list.String, id); named < rankStaleBatch && len(v) <= rankStaleBytes {
		_, err := s.ws.metaPut.ExecContext(ctx, staleKey, v)
		return err
	}
	ids, err := decodeStale(list.String)
	if err != nil {
		return s.dropStaleRank(ctx)
	}
	return s.deleteStale(ctx, append(ids, id))
}

// deleteStale deletes the entries of ids whose rows are not open (a row
// the list names may have been made open again by hand) and empties the
// list.
func (s bound) deleteStale(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if _, err := s.ws.rankDelClosed.ExecContext(ctx, id); err != nil {
			return err
		}
	}
	_, err := s.ws.metaPut.ExecContext(ctx, staleKey, "")
	return err
}

// flushStale deletes the named stale entries, if any, before a statement
// that deletes entries by another criterion (expiry) changes the count.
func (s bound) flushStale(ctx context.Context) error {
	var list sql.NullString
	err := s.w.QueryRowContext(ctx, `SELECT value FROM approve_tui_meta WHERE key = '`+staleKey+`'`).Scan(&list)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	if list.String == "" {
		return nil
	}
	ids, err := decodeStale(list.String)
	if err != nil {
		return s.dropStaleRank(ctx)
	}
	return s.deleteStale(ctx, ids)
}

// staleCount is how many entries a rank_stale value names; ok false: the
// value is damaged.
func staleCount(v sql.NullString) (n int64, ok bool) {
	ids, err := decodeStale(v.String)
	return int64(len(ids)), err == nil
}

// dropStaleRank deletes every entry whose row is not open, named or not,
// and empties the list: the reconcile.
func (s bound) dropStaleRank(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM approve_tui_rank WHERE approval_id NOT IN
		(SELECT approval_id FROM gateway_approvals WHERE `+s.openWhere("status")+`)`); err != nil {
		return err
	}
	_, err := s.ws.metaPut.ExecContext(ctx, staleKey, "")
	return err
}

// clearRank deletes every entry and empties the list: the index is rebuilt
// from nothing (other rules, or a copy's fresh file).
func (s bound) clearRank(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM approve_tui_rank`); err != nil {
		return err
	}
	_, err := s.ws.metaPut.ExecContext(ctx, staleKey, "")
	return err
}
