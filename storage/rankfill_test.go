package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// largeFile is a store on a new file into which another program wrote n
// proposals (hermesRows) that approve-tui never ranked, with a large
// backlog of 50 rows and fill batches of batch rows (smallFill); and the
// file's path, its clock and the open proposals' ids.
func largeFile(t *testing.T, n, batch int) (*Store, string, *clock, []string) {
	t.Helper()
	smallFill(t, 50, batch)
	c := newClock()
	path := tempDB(t)
	s := openAt(t, path, c)
	return s, path, c, hermesRows(t, path, c, 0, n)
}

// smallFill makes "a large backlog" n rows and a fill batch b rows for one
// test.
func smallFill(t *testing.T, n int64, b int) {
	t.Helper()
	oldAbove, oldBatch := rankFillAbove, rankFillBatch
	rankFillAbove, rankFillBatch = n, b
	t.Cleanup(func() { rankFillAbove, rankFillBatch, testHookRankFill = oldAbove, oldBatch, nil })
}

// hermesRows writes n proposals the way another program does (straight into
// the table: the rank index lacks them), every fifth one already consumed,
// in three risks and spread expiries; it returns the ids of the open ones.
func hermesRows(t *testing.T, path string, c *clock, from, n int) []string {
	t.Helper()
	db := rawDB(t, path)
	cmds := []struct {
		cmd  string
		risk model.RiskLevel
	}{{"ls -la /srv", model.RiskLow}, {"git push --force origin main", model.RiskMedium}, {"rm -rf /srv/cache", model.RiskHigh}}
	var open []string
	for i := from; i < from+n; i++ {
		k := cmds[i%3]
		id := fmt.Sprintf("fill%06d", i)
		ttl := time.Duration(60+(i*7919)%3600) * time.Second
		if i%11 == 0 {
			ttl = 0 // never expires
		}
		p := proposal(id, fmt.Sprintf("%s # %d", k.cmd, i), k.risk, c.Now(), ttl)
		status := "pending"
		if i%5 == 0 {
			status = "consumed"
		} else {
			open = append(open, id)
		}
		var exp any
		if p.ExpiresAt != nil {
			exp = *p.ExpiresAt
		}
		mustExec(t, db, `INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES (?, ?, ?, ?, ?)`,
			id, p.CreatedAt, exp, status, string(model.EncodePayload(p)))
	}
	return open
}

// allRanked is every pending proposal, most urgent first, ranked in memory
// from a full scan: what List must agree with.
func allRanked(t *testing.T, s *Store) []string {
	t.Helper()
	b := s.bind()
	recs, err := b.listPendingScan(ctx, b.now(), ListOptions{Limit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	return idsOf(recs)
}

// waitRanked waits for the background fill to end.
func waitRanked(t *testing.T, s *Store) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); s.bind().fill.progress().Filling; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the fill did not end: %+v", s.bind().fill.progress())
		}
	}
}

// The first open of a large file written by another program: ListUrgent
// answers at once with the soonest-expiring rows, most urgent first among
// them, and says the order is provisional; the index fills in the
// background in batches; rows decided and submitted meanwhile are right
// when it is done; then the list is the ranked one, the same as a full
// in-memory ranking, and the watchers were woken.
func TestRankFillOnFirstOpenOfALargeFile(t *testing.T) {
	s, path, c, open := largeFile(t, 600, 40)
	w := mustWatch(t, s)
	if _, err := w.Changed(ctx); err != nil {
		t.Fatal(err)
	}

	hold := make(chan struct{})
	batches := 0
	testHookRankFill = func() {
		if batches++; batches == 3 {
			<-hold // stop after two batches until the test says
		}
	}
	page, prog, err := s.ListUrgent(ctx, ListOptions{Limit: 25})
	if err != nil {
		t.Fatal(err)
	}
	if !prog.Filling || prog.Total != int64(len(open)) {
		t.Fatalf("progress %+v, want filling %d open rows", prog, len(open))
	}
	// The provisional page: the 25 soonest to expire, most urgent first.
	b := s.bind()
	soonest, err := b.queryRecords(ctx, c.Now(), `SELECT `+b.cols()+` FROM gateway_approvals g WHERE g.status = 'pending'
		AND g.expires_at > ? ORDER BY g.expires_at, g.approval_id LIMIT 25`, model.Epoch(c.Now()))
	if err != nil {
		t.Fatal(err)
	}
	SortUrgent(soonest)
	if got, want := idsOf(page), idsOf(soonest); !slices.Equal(got, want) {
		t.Fatalf("provisional page\n%v\nwant\n%v", got, want)
	}

	// Meanwhile: the console denies one row, another program submits one
	// and decides another.
	for s.bind().fill.progress().Indexed < 80 {
		time.Sleep(time.Millisecond)
	}
	if _, err := s.Deny(ctx, open[len(open)-1], alice, "no"); err != nil {
		t.Fatalf("deny during the fill: %v", err)
	}
	mustExec(t, rawDB(t, path), `UPDATE gateway_approvals SET status = 'consumed', consumed_at = 1, consumed_by = 'hermes' WHERE approval_id = ?`, open[1])
	added := hermesRows(t, path, c, 600, 5)
	if _, p, _ := s.ListUrgent(ctx, ListOptions{Limit: 25}); !p.Filling || p.Indexed == 0 || p.Percent() >= 100 {
		t.Fatalf("halfway: %+v", p)
	}
	close(hold)
	waitRanked(t, s)
	if err := s.RankProgress().Err; err != nil {
		t.Fatal(err)
	}
	if changed, err := w.Changed(ctx); err != nil || !changed {
		t.Fatalf("watchers not told of the ranking: %v %v", changed, err)
	}

	page, prog, err = s.ListUrgent(ctx, ListOptions{Limit: 1000})
	if err != nil || prog.Filling {
		t.Fatalf("after the fill: %+v %v", prog, err)
	}
	want := allRanked(t, s)
	if got := idsOf(page); !slices.Equal(got, want) {
		t.Fatalf("ranked list\n%v\nwant\n%v", got, want)
	}
	if len(want) != len(open)-2+len(added) {
		t.Fatalf("%d pending listed, want %d", len(want), len(open)-2+len(added))
	}
	if slices.Contains(want, open[1]) || slices.Contains(want, open[len(open)-1]) || !slices.Contains(want, added[0]) {
		t.Fatalf("decided rows listed or new one missing: %v", want)
	}
	// A fresh store on the same file ranks from the index at once.
	if l, err := openAt(t, path, c).List(ctx, ListOptions{Limit: 1000}); err != nil || !slices.Equal(idsOf(l), want) {
		t.Fatalf("reopened: %v %v", idsOf(l), err)
	}
}

// List (the CLI's) never gives a provisional order: it catches up in full
// before answering, even while a fill runs.
func TestListWaitsForTheRanking(t *testing.T) {
	s, _, _, _ := largeFile(t, 300, 40)
	testHookRankFill = func() { time.Sleep(20 * time.Millisecond) }
	if _, p, err := s.ListUrgent(ctx, ListOptions{Limit: 10}); err != nil || !p.Filling {
		t.Fatalf("%+v %v", p, err)
	}
	l, err := s.List(ctx, ListOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := idsOf(l), allRanked(t, s); !slices.Equal(got, want) {
		t.Fatalf("List during the fill\n%v\nwant\n%v", got, want)
	}
	waitRanked(t, s)
	if l, _ := s.List(ctx, ListOptions{Limit: 1000}); !slices.Equal(idsOf(l), allRanked(t, s)) {
		t.Fatal("List after the fill differs")
	}
}

// Closing the store stops a fill halfway; what it indexed stays right, and
// the next open finishes the job.
func TestRankFillStopsOnClose(t *testing.T) {
	smallFill(t, 50, 10)
	c := newClock()
	path := tempDB(t)
	s, err := Open(context.Background(), path, Options{Create: true, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	hermesRows(t, path, c, 0, 300)
	testHookRankFill = func() { time.Sleep(5 * time.Millisecond) }
	if _, p, err := s.ListUrgent(ctx, ListOptions{Limit: 10}); err != nil || !p.Filling {
		t.Fatalf("%+v %v", p, err)
	}
	for s.bind().fill.progress().Indexed < 30 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the fill to finish")
	}
	testHookRankFill = nil
	s2 := openAt(t, path, c)
	var inIndex int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM approve_tui_rank`).Scan(&inIndex); err != nil {
		t.Fatal(err)
	}
	if inIndex == 0 || inIndex >= 240 {
		t.Fatalf("%d rows indexed when the store closed; want some, not all", inIndex)
	}
	page, p, err := s2.ListUrgent(ctx, ListOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if p.Filling {
		waitRanked(t, s2)
		page, _, err = s2.ListUrgent(ctx, ListOptions{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, want := idsOf(page), allRanked(t, s2); !slices.Equal(got, want) {
		t.Fatalf("after a fill stopped halfway\n%v\nwant\n%v", got, want)
	}
}

// A read-only store cannot fill the index: ListUrgent ranks in memory, as
// List does, and says nothing is filling.
func TestListUrgentReadOnly(t *testing.T) {
	_, path, c, _ := largeFile(t, 120, 40)
	ro, err := Open(context.Background(), path, Options{ReadOnly: true, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	page, p, err := ro.ListUrgent(ctx, ListOptions{Limit: 1000})
	if err != nil || p.Filling {
		t.Fatalf("%+v %v", p, err)
	}
	if got, want := idsOf(page), allRanked(t, ro); !slices.Equal(got, want) {
		t.Fatalf("read-only list\n%v\nwant\n%v", got, want)
	}
}

// The fill's batches skip waiting for the disk; a decision after them does
// not: it runs at the store's synchronous mode (SQLite's FULL by default).
func TestRankFillLeavesDecisionsDurable(t *testing.T) {
	sqliteOnly(t, "PRAGMA synchronous")
	s, _, _, open := largeFile(t, 200, 40)
	if _, p, err := s.ListUrgent(ctx, ListOptions{Limit: 10}); err != nil || !p.Filling {
		t.Fatalf("%+v %v", p, err)
	}
	waitRanked(t, s)
	b := s.bind()
	mode := func() int {
		b.wmu.Lock()
		defer b.wmu.Unlock()
		var v int
		if err := b.w.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := mode(); v != 1 {
		t.Fatalf("synchronous %d after the fill; the test expects the fill's NORMAL (1) there", v)
	}
	if _, err := s.Deny(ctx, open[0], alice, "no"); err != nil {
		t.Fatal(err)
	}
	if v := mode(); v != 2 {
		t.Fatalf("a decision after the fill ran at synchronous=%d, want FULL (2)", v)
	}
}

// A fill that fails (the disk full, say) leaves the page provisional and
// says why; the next fill starts only rankFillRetryAfter later, not at
// every load, and its success clears the error.
func TestRankFillFailureIsReported(t *testing.T) {
	s, _, _, _ := largeFile(t, 300, 40)
	fail := errors.New("disk full (test)")
	testHookRankFillFail = func() error { return fail }
	t.Cleanup(func() { testHookRankFillFail = nil })
	if _, p, err := s.ListUrgent(ctx, ListOptions{Limit: 10}); err != nil || !p.Provisional {
		t.Fatalf("%+v %v", p, err)
	}
	waitRanked(t, s)
	page, p, err := s.ListUrgent(ctx, ListOptions{Limit: 10})
	if err != nil || p.Filling || !p.Provisional || !errors.Is(p.Err, fail) || len(page) != 10 {
		t.Fatalf("after a failed fill: %d rows, %+v, %v", len(page), p, err)
	}
	// Not restarted at once.
	testHookRankFillFail = nil
	if _, p, _ := s.ListUrgent(ctx, ListOptions{Limit: 10}); p.Filling {
		t.Fatal("a failed fill started again at once")
	}
	// Later it is, and succeeds.
	f := &s.bind().fill
	f.mu.Lock()
	f.failed = f.failed.Add(-rankFillRetryAfter)
	f.mu.Unlock()
	if _, p, _ := s.ListUrgent(ctx, ListOptions{Limit: 10}); !p.Filling || !errors.Is(p.Err, fail) {
		t.Fatalf("the retry: %+v", p)
	}
	waitRanked(t, s)
	page, p, err = s.ListUrgent(ctx, ListOptions{Limit: 1000})
	if err != nil || p.Provisional || p.Err != nil {
		t.Fatalf("after the retry: %+v %v", p, err)
	}
	if got, want := idsOf(page), allRanked(t, s); !slices.Equal(got, want) {
		t.Fatal("ranked list differs after the retry")
	}
}
