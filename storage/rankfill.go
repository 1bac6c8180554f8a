package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Filling the rank index in the background. The first time approve-tui
// opens a large file written by another program (a Hermes state.db with a
// long history), the rank index lacks every pending row, and indexing them
// means decoding and classifying each: seconds for 100,000 of them. A
// console does not wait for that: ListUrgent gives it the soonest-expiring
// page at once, each row classified as it is read, and says so
// (RankProgress), while one goroutine per file fills the index in short
// transactions of rankFillBatch rows, in rowid order, moving the catch-up's
// mark with each. The mark's meaning stays the one catchUpRank relies on
// (every open row at or below it was indexed), so a catch-up or a fill by
// any process, before, during or after, composes with it.

// rankFillAbove: a catch-up that has more rows than this past its mark (or
// the whole table, when the rules changed) to read is left to the
// background fill when the caller can show a provisional order. (A
// variable for the tests.)
var rankFillAbove int64 = 5000

// rankFillBatch is the most open rows one fill transaction indexes: short
// enough (tens of milliseconds) that a decision waiting for the write lock
// is not held up noticeably. (A variable for the tests.)
var rankFillBatch = 1000

// testHookRankFill, when set (by tests only), runs before each batch of
// the background fill.
var testHookRankFill func()

// rankFillRetries bounds the failed batches in a row (another process
// holding the write lock, mostly) before the fill gives up; the next
// ListUrgent starts it again.
const rankFillRetries = 20

// rankFillRetryAfter: after a fill failed, the next starts no sooner than
// this (the page stays provisional meanwhile, and says why).
const rankFillRetryAfter = 5 * time.Second

// testHookRankFillFail, when set (by tests only), is the error of every
// fill batch it returns one for.
var testHookRankFillFail func() error

// RankProgress says whether the most urgent page was ranked in full or
// provisionally, while the rank index is being filled.
type RankProgress struct {
	// Filling: the index is being filled; the page is the soonest
	// expiring pending rows, most urgent first among them, not the most
	// urgent of all.
	Filling bool
	// Provisional: the page is the soonest-expiring rows (Filling, or the
	// last fill failed and the next is not due yet: Err says why).
	Provisional bool
	// Indexed of Total open rows are ranked so far (Total: the open rows
	// when the fill started).
	Indexed, Total int64
	// Err is why the last fill stopped before it was done (nil: it did
	// not); it is kept while the next one runs, until one is done.
	Err error
}

// Percent is the share of the open rows indexed so far, 0-99 while filling.
func (p RankProgress) Percent() int {
	if p.Total <= 0 {
		return 0
	}
	return int(min(99, p.Indexed*100/p.Total))
}

type rankFill struct {
	mu      sync.Mutex
	running bool
	quit    chan struct{}
	done    chan struct{}
	err     error     // why the last fill stopped early (nil: it did not)
	failed  time.Time // when it did
	indexed atomic.Int64
	total   atomic.Int64
}

// progress is the fill's state now.
func (r *rankFill) progress() RankProgress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RankProgress{Filling: r.running, Provisional: r.running, Indexed: r.indexed.Load(), Total: r.total.Load(), Err: r.err}
}

// ListUrgent is List of pending proposals for a screen that can show a
// provisional order: when the rank index has far too many rows to catch up
// (a large file approve-tui has never opened), it returns at once the
// o.Limit soonest-expiring pending rows, most urgent first among
// themselves, and fills the index in the background; RankProgress says so.
// Once the fill is done, it lists by rank as List does. A read-only store
// cannot fill and ranks in memory (List's fallback).
func (st *Store) ListUrgent(ctx context.Context, o ListOptions) ([]*Record, RankProgress, error) {
	o.Status = ListPending
	if o.Limit <= 0 {
		o.Limit = 200
	}
	o.Offset = max(o.Offset, 0)
	s := st.bind()
	recs, p, err := s.listPending(ctx, s.now(), o, true)
	if err == nil {
		err = s.classify("list", s.markTampered(ctx, s.rdb, recs, &s.submits))
	}
	if err != nil {
		return nil, p, err
	}
	return recs, p, nil
}

// RankProgress is the background fill's progress now (Filling false when
// none runs).
func (st *Store) RankProgress() RankProgress { return st.bind().fill.progress() }

// rankBacklogBigLocked reports, from reads alone, whether bringing the
// rank index up to date means reading more than rankFillAbove rows (wmu
// held).
func (s bound) rankBacklogBigLocked(ctx context.Context) (bool, error) {
	hw, _, rules, err := s.rankMeta(ctx)
	if err != nil {
		return false, err
	}
	if rules != rankVersion {
		hw = 0
	}
	maxRow, err := s.maxRowid(ctx)
	if err != nil {
		return false, err
	}
	return maxRow-hw > rankFillAbove, nil
}

// listPendingByExpiry is the provisional page: the o.Offset+o.Limit open,
// unexpired rows that expire soonest (through Hermes' partial index of
// pending expiries), then those that never expire, sorted most urgent
// first among themselves.
func (s bound) listPendingByExpiry(ctx context.Context, now time.Time, o ListOptions) ([]*Record, error) {
	nowE := model.Epoch(now)
	n := o.Offset + o.Limit
	sel := `SELECT ` + s.cols() + ` FROM gateway_approvals g` + pendingIndex + ` WHERE ` + s.openWhere("g.status")
	query := func(q string, args ...any) (recs []*Record, err error) {
		err = s.viaPendingIndex(q, func(q string) error {
			recs, err = s.queryRecords(ctx, now, q, args...)
			return err
		})
		return recs, err
	}
	recs, err := query(sel+` AND g.expires_at > ? ORDER BY g.expires_at, g.approval_id LIMIT ?`, nowE, n)
	if err != nil {
		return nil, err
	}
	if len(recs) < n {
		more, err := query(sel+` AND g.expires_at IS NULL ORDER BY g.approval_id LIMIT ?`, n-len(recs))
		if err != nil {
			return nil, err
		}
		recs = append(recs, more...)
	}
	SortUrgent(recs)
	if o.Offset >= len(recs) {
		return nil, nil
	}
	return recs[o.Offset:], nil
}

// startRankFill starts the background fill unless one runs; it reports
// whether one runs now.
func (s bound) startRankFill() bool {
	f := &s.fill
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running {
		return true
	}
	if f.quit == nil {
		f.quit = make(chan struct{})
	}
	select {
	case <-f.quit:
		return false // the file is closing
	default:
	}
	if f.err != nil && time.Since(f.failed) < rankFillRetryAfter {
		return false // failed a moment ago: not again at every load
	}
	sig, err := s.Store.PendingSignature(context.Background())
	if err != nil {
		return false
	}
	f.running = true
	f.indexed.Store(0)
	f.total.Store(sig.Count)
	f.done = make(chan struct{})
	go s.fillRank(f.quit, f.done)
	return true
}

// fillRank is the fill's goroutine: one short transaction per batch until
// the mark reaches the newest row, quit is closed, or a write fails for a
// reason other than a busy lock.
func (s bound) fillRank(quit <-chan struct{}, done chan<- struct{}) {
	f := &s.fill
	var stopErr error
	defer func() {
		f.mu.Lock()
		f.running, f.err = false, stopErr
		if stopErr != nil {
			f.failed = time.Now()
		}
		f.mu.Unlock()
		close(done)
		// The last batch's commit woke every watcher; the end of the fill
		// itself is news too for this process's consoles (RankProgress).
		s.hub.notify()
	}()
	// A batch in progress is not cancelled (a cancelled statement costs a
	// PostgreSQL connection): it is short, and the fill stops after it.
	ctx := context.Background()
	brief := forUpkeep(s.opt)
	// The index is derived data, rebuilt from the table whenever it
	// disagrees: its batches need not wait for the disk (a decision's
	// commit, at FULL, makes them durable with it).
	brief.Synchronous = "NORMAL"
	busy := 0
	for {
		var added int
		var finished bool
		if testHookRankFill != nil {
			testHookRankFill()
		}
		s.wmu.Lock()
		err := s.txLocked(ctx, "rank", brief, func(ctx context.Context) error {
			var err error
			added, finished, err = s.fillRankBatch(ctx, rankFillBatch)
			return err
		})
		s.wmu.Unlock()
		switch {
		case err != nil && busy < rankFillRetries:
			busy++ // most likely another process's write lock: try again
		case err != nil:
			stopErr = fmt.Errorf("ranking the pending proposals stopped: %w", err)
			return
		default:
			busy = 0
			f.indexed.Add(int64(added))
			if finished {
				return
			}
		}
		// Let a decision waiting for the writer take it between batches.
		select {
		case <-quit:
			return
		case <-time.After(time.Duration(1+busy*10) * time.Millisecond):
		}
	}
}

// fillRankBatch runs inside the write transaction: it indexes the next
// batch of open rows past the mark that the index lacks and moves the mark
// past them; finished when no row is left past the mark.
func (s bound) fillRankBatch(ctx context.Context, batch int) (added int, finished bool, err error) {
	if testHookRankFillFail != nil {
		if err := testHookRankFillFail(); err != nil {
			return 0, false, err
		}
	}
	hw, _, rules, err := s.rankMeta(ctx)
	if err != nil {
		return 0, false, err
	}
	if rules != rankVersion {
		// Built with other rules: start again (catchUpRank does the same).
		if err := s.clearRank(ctx); err != nil {
			return 0, false, err
		}
		hw = 0
	}
	maxRow, err := s.maxRowid(ctx)
	if err != nil {
		return 0, false, err
	}
	// The batch ends at the batch-th open row past the mark, or at the
	// newest row.
	end := maxRow
	var at int64
	// (In rowid order: through the status index SQLite would read and sort
	// every open row for each batch.)
	err = s.w.QueryRowContext(ctx, `SELECT rowid FROM gateway_approvals`+s.eng.byRowid()+` WHERE rowid > ? AND `+s.openWhere("status")+
		` ORDER BY rowid LIMIT 1 OFFSET ?`, hw, batch-1).Scan(&at)
	switch {
	case err == nil:
		end = at
	case !errors.Is(err, sql.ErrNoRows):
		return 0, false, err
	}
	added, err = s.indexRows(ctx, `SELECT `+s.cols()+` FROM gateway_approvals g`+s.eng.byRowid()+`
		WHERE g.rowid > ? AND g.rowid <= ? AND `+s.openWhere("g.status")+` AND NOT EXISTS
		(SELECT 1 FROM approve_tui_rank r WHERE r.approval_id = g.approval_id)`, hw, end)
	if err != nil {
		return 0, false, err
	}
	if err := s.setRankMark(ctx, end); err != nil {
		return 0, false, err
	}
	return added, end >= maxRow, nil
}

// setRankMark records rowid (and the id of its row) as the catch-up's mark,
// with the rules the index is built with; unchanged values are not
// written.
func (s bound) setRankMark(ctx context.Context, rowid int64) error {
	var id string
	if rowid > 0 {
		err := s.w.QueryRowContext(ctx, `SELECT approval_id FROM gateway_approvals WHERE rowid = ?`, rowid).Scan(&id)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	hw, hwID, rules, err := s.rankMeta(ctx)
	if err != nil {
		return err
	}
	put := func(k, v, was string) error {
		if v == was {
			return nil // an unchanged value is not written: a commit wakes every console
		}
		_, err := s.ws.metaPut.ExecContext(ctx, k, v)
		return err
	}
	return errors.Join(put("rank_rowid", fmt.Sprint(rowid), fmt.Sprint(hw)), put("rank_rowid_id", id, hwID), put("rank_rules", rankVersion, rules))
}

// stopRankFill stops the background fill and waits for it (the file is
// closing).
func (f *dbfile) stopRankFill() {
	r := &f.fill
	r.mu.Lock()
	if r.quit == nil {
		r.quit = make(chan struct{})
	}
	select {
	case <-r.quit:
	default:
		close(r.quit)
	}
	done := r.done
	r.mu.Unlock()
	if done != nil {
		<-done
	}
}
