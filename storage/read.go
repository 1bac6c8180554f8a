package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

// Get reads one proposal.
func (st *Store) Get(ctx context.Context, id string) (*Record, error) {
	s := st.bind()
	rec, err := s.scanRecord(s.rdb.QueryRowContext(ctx, `SELECT `+s.cols()+` FROM gateway_approvals g WHERE g.approval_id = ?`, id), s.now())
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err == nil {
		err = s.markTampered(ctx, s.rdb, []*Record{rec}, &s.submits)
	}
	if err == nil {
		rec.Park, err = scanPark(s.rdb.QueryRowContext(ctx, selectPark, id), id)
		if err != nil && s.eng.noTable(err) && s.roReason() != "" {
			// A store this build may not migrate (read only): no park
			// can have been recorded in it.
			err = nil
		}
	}
	if err != nil {
		return nil, s.classify("get", err)
	}
	return rec, nil
}

// cols is the row SELECT list for this file.
func (s bound) cols() string { return selectColumns(s.legacy.Load(), s.tier2.Load()) }

// openWhere is the condition on status of an open proposal: pending, and on
// a tier-2 file also pending_confirm, written exactly as Hermes' partial
// index of open expiries is, so that SQLite can use it.
func (f *dbfile) openWhere(col string) string {
	if f.tier2.Load() {
		return col + ` IN ('pending', 'pending_confirm')`
	}
	return col + ` = 'pending'`
}

// StatusFilter selects rows for List by effective status.
type StatusFilter string

// List filters. "all" lists every row.
const (
	ListPending  StatusFilter = "pending"
	ListConsumed StatusFilter = "consumed"
	ListDenied   StatusFilter = "denied"
	ListExpired  StatusFilter = "expired"
	ListBlocked  StatusFilter = "blocked" // tier-2 files
	ListAll      StatusFilter = "all"
)

// ParseStatusFilter validates a --status value.
func ParseStatusFilter(v string) (StatusFilter, error) {
	switch f := StatusFilter(v); f {
	case ListPending, ListConsumed, ListDenied, ListExpired, ListBlocked, ListAll:
		return f, nil
	case "":
		return ListPending, nil
	}
	return "", fmt.Errorf("unknown status %q (want pending, consumed, denied, expired, blocked or all)", v)
}

// ListOptions page through List.
type ListOptions struct {
	Status StatusFilter // default pending
	Limit  int          // default 200
	Offset int
}

// List returns proposals by effective status. Pending ones come most urgent
// first: effective risk (unknown, then high, medium, low), then time left
// (soonest expiry first, never-expiring last). Other statuses come newest
// first.
func (st *Store) List(ctx context.Context, o ListOptions) ([]*Record, error) {
	s := st.bind()
	recs, err := s.list(ctx, o)
	if err == nil {
		err = s.classify("list", s.markTampered(ctx, s.rdb, recs, &s.submits))
	}
	if err != nil {
		return nil, err
	}
	return recs, nil
}

func (s bound) list(ctx context.Context, o ListOptions) ([]*Record, error) {
	if o.Status == "" {
		o.Status = ListPending
	}
	if o.Limit <= 0 {
		o.Limit = 200
	}
	if o.Offset < 0 {
		o.Offset = 0
	}
	now := s.now()
	if o.Status == ListPending {
		recs, _, err := s.listPending(ctx, now, o, false)
		return recs, err
	}
	nowE := model.Epoch(now)
	var where, order string
	var args []any
	switch o.Status {
	case ListConsumed, ListDenied, ListBlocked:
		where, order, args = `g.status = ?`, `g.consumed_at DESC, g.approval_id`, []any{string(o.Status)}
	case ListExpired:
		where, order = `g.status = 'expired' OR (`+s.openWhere("g.status")+` AND g.expires_at <= ?)`, `g.expires_at DESC, g.approval_id`
		args = []any{nowE}
	case ListAll:
		where, order = `1=1`, `g.created_at DESC, g.approval_id`
	default:
		return nil, fmt.Errorf("unknown status filter %q", o.Status)
	}
	args = append(args, o.Limit, o.Offset)
	return s.queryRecords(ctx, now, `SELECT `+s.cols()+` FROM gateway_approvals g WHERE `+where+` ORDER BY `+order+` LIMIT ? OFFSET ?`, args...)
}

// listPending lists pending rows most urgent first. provisional: when the
// rank index is far behind, start the background fill and list the
// soonest-expiring rows instead (ListUrgent).
func (s bound) listPending(ctx context.Context, now time.Time, o ListOptions, provisional bool) ([]*Record, RankProgress, error) {
	if provisional {
		if p := s.fill.progress(); p.Filling {
			recs, err := s.listPendingByExpiry(ctx, now, o)
			return recs, p, s.classify("list", err)
		}
	}
	ok, behind := s.syncRankOr(ctx, provisional)
	if behind {
		// Fill in the background; when the last fill failed a moment ago,
		// the page stays provisional and says why (ranking every row
		// in memory at each load is what the fill is there to avoid).
		started := s.startRankFill()
		p := s.fill.progress()
		if started || p.Err != nil {
			p.Provisional = true
			recs, err := s.listPendingByExpiry(ctx, now, o)
			return recs, p, s.classify("list", err)
		}
	}
	if ok {
		recs, err := s.listPendingIndexed(ctx, now, o)
		if err == nil {
			return recs, RankProgress{}, nil
		}
		if !isNoTable(err) {
			return nil, RankProgress{}, s.classify("list", err)
		}
	}
	recs, err := s.listPendingScan(ctx, now, o)
	return recs, RankProgress{}, err
}

func (s bound) queryRecords(ctx context.Context, now time.Time, q string, args ...any) ([]*Record, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.classify("list", err)
	}
	defer rows.Close()
	var out []*Record
	for rows.Next() {
		rec, err := s.scanRecord(rows, now)
		if err != nil {
			return nil, s.classify("list", err)
		}
		out = append(out, rec)
	}
	return out, s.classify("list", rows.Err())
}

// listPendingScan ranks every pending row in memory: the fallback when the
// rank index cannot be kept current (read-only file, lock held elsewhere).
func (s bound) listPendingScan(ctx context.Context, now time.Time, o ListOptions) ([]*Record, error) {
	all, err := s.queryRecords(ctx, now, `SELECT `+s.cols()+` FROM gateway_approvals g
		WHERE `+s.openWhere("g.status")+` AND (g.expires_at IS NULL OR g.expires_at > ?)`, model.Epoch(now))
	if err != nil {
		return nil, err
	}
	SortUrgent(all)
	if o.Offset >= len(all) {
		return nil, nil
	}
	all = all[o.Offset:]
	if len(all) > o.Limit {
		all = all[:o.Limit]
	}
	return all, nil
}

// SortUrgent orders pending records most urgent first, as List does.
func SortUrgent(recs []*Record) {
	sort.SliceStable(recs, func(i, j int) bool { return Urgent(recs[i], recs[j]) })
}

// Urgent reports whether a sorts before b: higher effective risk, then
// sooner expiry (no expiry last), then id.
func Urgent(a, b *Record) bool {
	ra, rb := a.EffectiveRisk.Rank(), b.EffectiveRisk.Rank()
	if ra != rb {
		return ra > rb
	}
	switch {
	case a.ExpiresAt != nil && b.ExpiresAt != nil && *a.ExpiresAt != *b.ExpiresAt:
		return *a.ExpiresAt < *b.ExpiresAt
	case a.ExpiresAt != nil && b.ExpiresAt == nil:
		return true
	case a.ExpiresAt == nil && b.ExpiresAt != nil:
		return false
	}
	return a.ApprovalID < b.ApprovalID
}

// The rank index (approve_tui_rank) holds, for each pending row, its
// effective rank and expiry, so that the most urgent page is a few index
// range scans however many rows the table holds. approve-tui's own
// transitions maintain it in the same transaction (a decided row's entry is
// left in place and named stale: rankstale.go); rows that other processes
// (Hermes) write or decide are caught up by syncRankOr whenever
// PRAGMA data_version on the writer connection says another connection
// committed.
type rankState struct {
	mu      sync.Mutex
	synced  bool
	version int64
}

// indexUnusable: a query that names Hermes' partial index cannot use it on
// this file (the index is missing, or its WHERE is not the one the query
// implies: a file upgraded to the tier-2 revision keeps the first
// revision's index over pending only). The caller asks without it.
func indexUnusable(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "no such index") || strings.Contains(err.Error(), "no query solution"))
}

// rankVersion names the rules (the judgement's: the pattern table and the
// catalogue) and the rank scale the index was built with: a change of
// either rebuilds it (ranks 1-5 since tier2_critical).
const rankVersion = risk.Version + "/ranks5"

// upkeepLockWait bounds how long upkeep that can wait waits for another
// process's write lock: the rank index's catch-up (past it, List ranks by
// a full scan instead), its background fill (tried again a little later)
// and the audit log's refit (tried again at the next open).
const upkeepLockWait = 250 * time.Millisecond

// forUpkeep is o with upkeepLockWait as its lock timeout.
func forUpkeep(o Options) Options {
	o.BusyTimeout = upkeepLockWait
	return o
}

// syncRankOr brings the rank index up to date and reports whether it can
// be used; with leave, an index more than rankFillAbove rows behind is left
// as it is and behind says so (the caller fills it in the background).
func (s bound) syncRankOr(ctx context.Context, leave bool) (ok, behind bool) {
	if s.roReason() != "" || s.ws == nil {
		return false, false
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	v, err := s.writerVersion(ctx)
	if err != nil {
		return false, false
	}
	if s.rank.synced && v == s.rank.version {
		return true, false
	}
	if !s.tier2.Load() {
		s.noticeTier2Locked(ctx)
	}
	// Most commits leave nothing to catch up (approve-tui's own keep the
	// index in their transaction): a few reads say so without taking the
	// write lock, or a transaction, at all.
	if ok, err := s.rankUpToDate(ctx); err == nil && ok {
		s.rank.synced, s.rank.version = true, v
		return true, false
	}
	if leave {
		if big, err := s.rankBacklogBigLocked(ctx); err == nil && big {
			return false, true
		}
	}
	err = s.txLocked(ctx, "rank", forUpkeep(s.opt), func(ctx context.Context) error {
		var err error
		if v, err = s.writerVersion(ctx); err != nil {
			return err
		}
		return s.catchUpRank(ctx)
	})
	if err != nil {
		s.rank.synced = false
		return false, false
	}
	s.rank.synced, s.rank.version = true, v
	return true, false
}

// writerVersion changes when another connection commits (SQLite's
// data_version on the writer). PostgreSQL has no such counter: there it is
// a fingerprint of the open rows (their count, and the sum and largest of
// their rowids), which moves when a row enters or leaves the open set,
// whoever wrote it. approve-tui's own transitions keep the index in their
// own transaction; the catch-up is for rows that other programs wrote.
// Rows awaiting confirmation count as open even before this process knows
// the table is tier-2: the first one Hermes arms after upgrading the table
// moves the fingerprint, and with it the look at the columns
// (noticeTier2Locked).
func (s bound) writerVersion(ctx context.Context) (int64, error) {
	return s.eng.commitMark(ctx, s.w)
}

// rankMeta reads the catch-up's mark (the rowid and id of the newest row
// the last catch-up saw) and the rules the index was built with.
func (s bound) rankMeta(ctx context.Context) (hw int64, hwID, rules string, err error) {
	var mark, id, rv sql.NullString
	err = s.w.QueryRowPrepared(ctx, `SELECT
		(SELECT value FROM approve_tui_meta WHERE key = 'rank_rowid'),
		(SELECT value FROM approve_tui_meta WHERE key = 'rank_rowid_id'),
		(SELECT value FROM approve_tui_meta WHERE key = 'rank_rules')`).Scan(&mark, &id, &rv)
	if err != nil {
		return 0, "", "", err
	}
	fmt.Sscan(mark.String, &hw)
	return hw, id.String, rv.String, nil
}

// maxRowid is the newest row's rowid, read on the writer (0: no row).
func (s bound) maxRowid(ctx context.Context) (int64, error) {
	var v int64
	err := s.w.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0) FROM gateway_approvals`).Scan(&v)
	return v, err
}

// rankUpToDate reports, from reads alone, whether catchUpRank would change
// nothing: same rules, the mark's row still the one it was, as many entries
// as open rows, no open row past the mark missing from the index, and the
// mark not too far behind.
func (s bound) rankUpToDate(ctx context.Context) (bool, error) {
	hw, hwID, rules, err := s.rankMeta(ctx)
	if err != nil || rules != rankVersion {
		return false, err
	}
	var maxRow int64
	var atMark sql.NullString
	var bal rankBalance
	if err := s.scanOpen(ctx, s.w, `SELECT
		(SELECT coalesce(max(rowid), 0) FROM gateway_approvals),
		(SELECT approval_id FROM gateway_approvals WHERE rowid = ?), `+s.rankBalanceSQL(),
		[]any{hw}, append([]any{&maxRow, &atMark}, bal.dest()...)...); err != nil {
		return false, err
	}
	if !bal.even() || (hw > 0 && atMark.String != hwID) || maxRow-hw >= rankMarkSlack {
		return false, nil
	}
	var missing int
	err = s.w.QueryRowPrepared(ctx, `SELECT 1 FROM gateway_approvals g
		WHERE g.rowid > ? AND `+s.openWhere("g.status")+` AND NOT EXISTS
		(SELECT 1 FROM approve_tui_rank r WHERE r.approval_id = g.approval_id) LIMIT 1`, hw).Scan(&missing)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	}
	return false, err
}

// catchUpRank runs inside the write transaction. New rows normally get
// rowids above the high-water mark of the last catch-up, so reading those is
// enough. A row can get a rowid at or below the mark only if the row at the
// mark was deleted (SQLite hands out max(rowid)+1) or the table was
// vacuumed; the id recorded for the mark row tells. Then, or when the index
// (less the entries named stale) and the table disagree on the number of
// pending rows (rows decided by other processes leave stale entries), a
// full reconcile runs.
func (s bound) catchUpRank(ctx context.Context) error {
	hw, hwID, rules, err := s.rankMeta(ctx)
	if err != nil {
		return err
	}
	maxRow, err := s.maxRowid(ctx)
	if err != nil {
		return err
	}
	reconcile := false
	if rules != rankVersion {
		if err := s.clearRank(ctx); err != nil {
			return err
		}
		hw = 0
	} else if hw > 0 {
		var id string
		err := s.w.QueryRowContext(ctx, `SELECT approval_id FROM gateway_approvals WHERE rowid = ?`, hw).Scan(&id)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		reconcile = id != hwID
	}
	// Rows past the mark that the index lacks: approve-tui's own are in it
	// already (their transitions wrote them), so a catch-up after them
	// writes nothing.
	added, err := s.indexRows(ctx, `SELECT `+s.cols()+` FROM gateway_approvals g
		WHERE g.rowid > ? AND `+s.openWhere("g.status")+` AND NOT EXISTS
		(SELECT 1 FROM approve_tui_rank r WHERE r.approval_id = g.approval_id)`, hw)
	if err != nil {
		return err
	}
	if !reconcile {
		// One statement: on PostgreSQL each statement of the transaction
		// sees the commits made before it, and a decision committed between
		// two counts would look like a missing entry.
		var bal rankBalance
		if err := s.scanOpen(ctx, s.w, `SELECT `+s.rankBalanceSQL(), nil, bal.dest()...); err != nil {
			return err
		}
		reconcile = !bal.even()
	}
	if reconcile {
		if err := s.dropStaleRank(ctx); err != nil {
			return err
		}
		if _, err := s.indexRows(ctx, `SELECT `+s.cols()+` FROM gateway_approvals g
			WHERE `+s.openWhere("g.status")+` AND NOT EXISTS
			(SELECT 1 FROM approve_tui_rank r WHERE r.approval_id = g.approval_id)`); err != nil {
			return err
		}
	}
	if added == 0 && !reconcile && maxRow-hw < rankMarkSlack && rules == rankVersion {
		// Nothing was missing: moving the mark is not worth a commit (which
		// would wake every console) until it lags far enough to make the
		// scan above long.
		return nil
	}
	return s.setRankMark(ctx, maxRow)
}

// rankMarkSlack is how far the catch-up's mark may lag the newest row
// before a catch-up that found nothing to add moves it anyway.
const rankMarkSlack = 1000

// indexRows adds the rows a query selects to the rank index, and says how
// many.
func (s bound) indexRows(ctx context.Context, q string, args ...any) (int, error) {
	rows, err := s.w.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	now := s.now()
	type ent struct {
		id  string
		eff int
		exp *float64
	}
	var ents []ent
	for rows.Next() {
		rec, err := s.scanRecord(rows, now)
		if err != nil {
			rows.Close()
			return 0, err
		}
		ents = append(ents, ent{rec.ApprovalID, rec.EffectiveRisk.Rank(), rec.ExpiresAt})
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	for _, e := range ents {
		if _, err := s.ws.rankPut.ExecContext(ctx, e.id, e.eff, nullFloat(e.exp)); err != nil {
			return 0, err
		}
	}
	return len(ents), nil
}

// listPendingIndexed reads the most urgent page through the rank index: per
// rank, from unknown down to low, unexpired rows by expiry, then rows that
// never expire.
//
// The rank and the limit are bound as expressions (? + 0), not as plain
// parameters: SQLite, built with STAT4 as modernc's is, plans with the
// values bound where a plain parameter is compared or limits (a LIMIT, a
// term that a partial index's condition is checked against), and prepares
// the statement again whenever such a value changes. That parsing was half
// the cost of a console's page (ten statements, each rank and limit in
// turn). The plan is the same either way: the rank index, then the row by
// its key.
func (s bound) listPendingIndexed(ctx context.Context, now time.Time, o ListOptions) ([]*Record, error) {
	if s.eng.urgentInOneQuery() {
		return s.listPendingOneQuery(ctx, now, o)
	}
	nowE := model.Epoch(now)
	skip, need := o.Offset, o.Limit
	var out []*Record
	base := `SELECT ` + s.cols() + ` FROM approve_tui_rank r
		JOIN gateway_approvals g ON g.approval_id = r.approval_id
		WHERE r.rank = ? + 0 AND ` + s.openWhere("g.status") + ` AND (g.expires_at IS NULL OR g.expires_at > ?) AND `
	queries := []string{
		base + `r.expires_at > ? ORDER BY r.expires_at, r.approval_id LIMIT ? + 0`,
		base + `r.expires_at IS NULL ORDER BY r.approval_id LIMIT ? + 0`,
	}
	for rank := model.RiskUnknown.Rank(); rank >= 1 && need > 0; rank-- {
		for qi, q := range queries {
			if need <= 0 {
				break
			}
			args := []any{rank, nowE}
			if qi == 0 {
				args = append(args, nowE)
			}
			args = append(args, skip+need)
			rows, err := s.rdb.QueryPrepared(ctx, q, args...)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var r rawRow
				if err := rows.Scan(r.dest()...); err != nil {
					rows.Close()
					return nil, err
				}
				if skip > 0 {
					skip--
					continue
				}
				out = append(out, r.decode(now, &s.decoded, s.judge))
				need--
			}
			if err := rows.Close(); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// listPendingOneQuery is listPendingIndexed in one statement, for a server
// a round trip away (PostgreSQL): its index on (rank DESC, expires_at,
// approval_id) gives the rows in urgency order, never-expiring ones last
// within a rank (ascending order puts NULLs last there), and the scan stops
// at the limit. SQLite has no round trips to save, and its planner serves
// the per-rank range scans better.
func (s bound) listPendingOneQuery(ctx context.Context, now time.Time, o ListOptions) ([]*Record, error) {
	nowE := model.Epoch(now)
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+s.cols()+` FROM approve_tui_rank r
		JOIN gateway_approvals g ON g.approval_id = r.approval_id
		WHERE `+s.openWhere("g.status")+` AND (g.expires_at IS NULL OR g.expires_at > ?)
		AND (r.expires_at IS NULL OR r.expires_at > ?)
		ORDER BY r.rank DESC, r.expires_at, r.approval_id LIMIT ? OFFSET ?`, nowE, nowE, o.Limit, o.Offset)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Record
	for rows.Next() {
		var r rawRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, err
		}
		out = append(out, r.decode(now, &s.decoded, s.judge))
	}
	return out, rows.Err()
}

// CountPending counts the proposals pending and unexpired now.
func (st *Store) CountPending(ctx context.Context) (int, error) {
	_, n, err := st.PendingSummary(ctx)
	return n, classify("count", err)
}

// rowQuerier is the writer connection or the readers' pool.
type rowQuerier interface {
	QueryRowPrepared(ctx context.Context, q string, args ...any) rowScanner
}

// pendingIndex stands, in a count of open rows, for Hermes' partial index
// of pending expiries (scanOpen).
const pendingIndex = "{pending-index}"

// viaPendingIndex runs q (with run) naming Hermes' partial index of
// pending expiries where pendingIndex stands: the index holds the pending
// rows alone, in expiry order, so a count runs through its few pages
// without reading a column, where SQLite's planner would otherwise go
// through the status index and test each row (a count of 10,000 pending
// rows: 0.25 ms against 0.6-0.9), and the soonest-expiring rows come
// without a sort. On a file that cannot use the index, it asks without.
func (s bound) viaPendingIndex(q string, run func(q string) error) error {
	err := run(strings.ReplaceAll(q, pendingIndex, s.eng.indexedBy("idx_gateway_approvals_pending_expires")))
	if err != nil && indexUnusable(err) {
		err = run(strings.ReplaceAll(q, pendingIndex, ""))
	}
	return err
}

// scanOpen runs a one-row query whose counts of open rows go through
// Hermes' partial index where pendingIndex stands (viaPendingIndex).
func (s bound) scanOpen(ctx context.Context, db rowQuerier, q string, args []any, dest ...any) error {
	return s.viaPendingIndex(q, func(q string) error { return db.QueryRowPrepared(ctx, q, args...).Scan(dest...) })
}

// PendingSignature is a cheap fingerprint of the set of open rows: how many
// there are, and the table's newest row (its rowid and id). Rows enter the
// open set only as new rows (a decided row stays decided: the data
// contract), so a set that changed has a new newest row, or, when no row
// came, another count. The id tells a new row that took the rowid of a
// deleted newest one. A commit that touches only other tables (heartbeats,
// the audit log, another program's own tables) leaves it as it was, so a
// console need not re-read its list after such a commit.
//
// It does not see a pending row's payload rewritten in place (the payload
// is written once, by contract), nor a decided row made open again: a
// reader that must notice those re-reads in full from time to time anyway.
//
// It also moves when a vote is cast (the count of votes that count) or a
// policy is set (its version): neither touches gateway_approvals, and both
// change what a console shows of a pending proposal.
type PendingSignature struct {
	Count, MaxRowid int64
	MaxID           string
	Votes, Policy   int64
}

// PendingSignature reads the signature.
func (st *Store) PendingSignature(ctx context.Context) (PendingSignature, error) {
	sig, _, err := st.PendingSummary(ctx)
	return sig, err
}

// PendingSummary reads the signature and, in the same statement, what
// CountPending counts (live: pending and unexpired now), with two counts
// within Hermes' partial index of pending expiries and two index lookups:
// a few hundred microseconds for 10,000 pending rows.
func (st *Store) PendingSummary(ctx context.Context) (sig PendingSignature, live int, err error) {
	s := st.bind()
	open := s.openWhere("status")
	var expired int64
	var maxID sql.NullString
	votes := `0, 0`
	if s.votes.Load() {
		votes = `(SELECT count(*) FROM approve_tui_votes WHERE ended = ''),
		(SELECT coalesce(max(version), 0) FROM approve_tui_policy)`
	}
	err = s.scanOpen(ctx, s.rdb, `SELECT
		(SELECT count(*) FROM gateway_approvals`+pendingIndex+` WHERE `+open+`),
		(SELECT count(*) FROM gateway_approvals`+pendingIndex+` WHERE `+open+` AND expires_at <= ?),
		(SELECT coalesce(max(rowid), 0) FROM gateway_approvals),
		(SELECT approval_id FROM gateway_approvals ORDER BY rowid DESC LIMIT 1),
		`+votes,
		[]any{model.Epoch(s.now())}, &sig.Count, &expired, &sig.MaxRowid, &maxID, &sig.Votes, &sig.Policy)
	sig.MaxID = maxID.String
	return sig, int(sig.Count - expired), s.classify("list", err)
}

// DenyReason returns the reason recorded with the deny event of id, if any.
func (s *Store) DenyReason(ctx context.Context, id string) (string, error) {
	evs, err := s.Audit(ctx, AuditQuery{ApprovalID: id, Limit: 20})
	if err != nil {
		return "", err
	}
	for _, e := range evs {
		if e.Event == EventDeny && e.Outcome == OutcomeOK {
			r, _ := e.Detail["reason"].(string)
			return r, nil
		}
	}
	return "", nil
}
