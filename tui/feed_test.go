package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The feed's rules run on a clock the test moves, with no screen and no
// store: the loads it asks for are commands that are never run here, and
// their results are messages the test makes.

// feedAt is a feed on the clock *now.
func feedAt(now *time.Time) *feed {
	f := newFeed(context.Background(), nil)
	f.clock = func() time.Time { return *now }
	return &f
}

// feedRecs are n pending records in urgency order (the soonest expiry
// first among equal risks).
func feedRecs(prefix string, n int) []*storage.Record {
	var recs []*storage.Record
	for i := range n {
		recs = append(recs, fullRec(fmt.Sprintf("%s%05d", prefix, i), model.RiskHigh, float64(100+i), fmt.Sprintf("rm -rf /%s%d", prefix, i)))
	}
	return recs
}

// Commits noticed while a load is out coalesce into one more load after
// it; a load that came alone is followed at once, two in a row are paced
// by twice the time the last one took (within minReloadGap and
// maxReloadGap), counted from its end.
func TestFeedPacesLoadsAfterCommits(t *testing.T) {
	now := t0
	f := feedAt(&now)
	if f.startLoad(f.pageToLoad(0, false), shownPayload{}) == nil || f.gen != 1 || !f.loading {
		t.Fatalf("the first load: gen %d, loading %v", f.gen, f.loading)
	}
	if f.pageToLoad(0, false) != firstPage {
		t.Fatalf("the first load reads %d rows, want the first page", f.pageToLoad(0, false))
	}
	for range 3 {
		if f.changed(storage.Committers{Others: true}) {
			t.Fatal("a commit during a load read the list again at once")
		}
	}
	if !f.dirty || f.foreign != 3 {
		t.Fatalf("dirty %v, foreign %d after three commits during a load", f.dirty, f.foreign)
	}
	now = now.Add(20 * time.Millisecond)
	f.took(20 * time.Millisecond)
	f.take(pendingMsg{gen: f.gen, limit: firstPage, rows: feedRecs("a", 3), total: 3})
	f.owe(false)
	if again, rest := f.endLoad(); !again || rest {
		t.Fatalf("after a load with commits behind it: again %v, rest %v", again, rest)
	}
	if w := f.paced(); w != 0 {
		t.Fatalf("a load that came alone waits %v before the next", w)
	}
	f.startLoad(MaxLoaded, shownPayload{})
	f.loaded = true
	now = now.Add(10 * time.Millisecond)
	f.took(10 * time.Millisecond)
	if again, rest := f.endLoad(); again || rest {
		t.Fatalf("after a load with nothing behind it: again %v, rest %v", again, rest)
	}
	// Two loads 20ms apart: the next waits minReloadGap (twice 10ms is
	// less) from the end of the last.
	now = now.Add(5 * time.Millisecond)
	if !f.changed(storage.Committers{Others: true}) {
		t.Fatal("a commit with no load out read nothing")
	}
	if w := f.paced(); w != minReloadGap-5*time.Millisecond || !f.loading || !f.dirty {
		t.Fatalf("paced %v (loading %v, dirty %v), want %v", w, f.loading, f.dirty, minReloadGap-5*time.Millisecond)
	}
	if f.changed(storage.Committers{Others: true}) {
		t.Fatal("a commit while the paced load waits read the list")
	}
	// A slow load (100ms) paces the next by maxReloadGap at most.
	f.lastLoad = 100 * time.Millisecond
	f.loadStarts = [2]time.Time{now, now.Add(-time.Millisecond)}
	f.loadEnd = now
	if w := f.paced(); w != maxReloadGap {
		t.Fatalf("after a slow load: paced %v, want %v", w, maxReloadGap)
	}
}

// A load whose signature is unchanged reads nothing more, unless the last
// full read is older than fullReloadEvery and another process committed
// since.
func TestFeedReusesTheSignature(t *testing.T) {
	now := t0
	f := feedAt(&now)
	if f.signature(now) != nil {
		t.Fatal("a signature before the first load")
	}
	sig := &listSignature{PendingSignature: storage.PendingSignature{Count: 3}}
	f.startLoad(firstPage, shownPayload{})
	f.take(pendingMsg{gen: f.gen, limit: firstPage, rows: feedRecs("a", 3), total: 3, sig: sig})
	f.loaded = true
	if f.signature(now) != sig {
		t.Fatal("a fresh full read's signature is not reused")
	}
	now = now.Add(fullReloadEvery)
	if f.signature(now) != sig {
		t.Fatal("an old signature with no other process's commit since is not reused")
	}
	f.changed(storage.Committers{Others: true})
	if f.signature(now) != nil {
		t.Fatal("an old signature is reused after another process committed")
	}
	// A load that found it unchanged keeps the rows; a provisional list's
	// ranking moves on.
	f.ranking = storage.RankProgress{Provisional: true, Filling: true, Indexed: 1, Total: 10}
	f.unchanged(pendingMsg{same: true, ranking: storage.RankProgress{Provisional: true, Filling: true, Indexed: 5, Total: 10}})
	if f.ranking.Indexed != 5 || len(f.rows) != 3 {
		t.Fatalf("after an unchanged load: ranking %+v, %d rows", f.ranking, len(f.rows))
	}
}

// A first page of a long list keeps the rows of the last full read that
// rank after it until the rest is read, restDelay after; a commit stops
// the rest's read for its own page while the rest has been owed for less
// than restMaxWait, and waits for it after.
func TestFeedReadsTheRestBetweenCommits(t *testing.T) {
	now := t0
	f := feedAt(&now)
	all := feedRecs("r", 300)
	f.startLoad(MaxLoaded, shownPayload{})
	if rows, partial := f.take(pendingMsg{gen: f.gen, limit: MaxLoaded, rows: all, total: 300}); partial || len(rows) != 300 {
		t.Fatalf("a full read: partial %v, %d rows", partial, len(rows))
	}
	f.loaded = true
	f.owe(false)
	f.endLoad()
	if got := f.pageToLoad(24, false); got != 24+reloadMargin {
		t.Fatalf("a commit on a long list reads %d rows first, want %d", got, 24+reloadMargin)
	}
	if got := f.pageToLoad(24, true); got != MaxLoaded {
		t.Fatalf("with a filter a load reads %d rows, want all", got)
	}

	// A new row at the top: the page reads 44 rows, the rest stays.
	top := fullRec("new00000", model.RiskHigh, 50, "rm -rf /new")
	page := append([]*storage.Record{top}, all[:43]...)
	f.startLoad(44, shownPayload{})
	rows, partial := f.take(pendingMsg{gen: f.gen, limit: 44, rows: page, total: 301})
	if !partial || len(rows) != 301 || rows[0].rec != top || rows[44].rec.ApprovalID != all[43].ApprovalID || rows[300].rec.ApprovalID != all[299].ApprovalID {
		t.Fatalf("a first page: partial %v, %d rows (%s … %s)", partial, len(rows), rows[0].rec.ApprovalID, rows[len(rows)-1].rec.ApprovalID)
	}
	f.owe(partial)
	if again, rest := f.endLoad(); again || !rest || !f.restOwed || !f.restQueued {
		t.Fatalf("after a first page: again %v, rest %v (owed %v, queued %v)", again, rest, f.restOwed, f.restQueued)
	}
	if again, rest := f.endLoad(); again || rest {
		t.Fatal("a second rest was queued behind the first")
	}
	if !f.restDue() {
		t.Fatal("the rest is not read once due")
	}
	f.startRest()
	gen := f.gen
	if !f.resting() || !f.loading {
		t.Fatal("the rest's read is not on its way")
	}
	// A commit within restMaxWait: the rest's read stops, its result is
	// stale, the commit's page is read.
	now = now.Add(restDelay)
	if !f.changed(storage.Committers{Others: true}) || f.resting() || f.gen == gen {
		t.Fatalf("a commit did not stop the rest (resting %v, gen %d)", f.resting(), f.gen)
	}
	// Owed for restMaxWait: the rest is read to its end, the commit after.
	f.startRest()
	now = now.Add(restMaxWait)
	if f.changed(storage.Committers{Others: true}) || !f.resting() || !f.dirty {
		t.Fatal("a commit stopped a rest owed for restMaxWait")
	}
	f.take(pendingMsg{gen: f.gen, limit: MaxLoaded, rows: append([]*storage.Record{top}, all...), total: 301})
	f.owe(false)
	if again, rest := f.endLoad(); !again || rest || f.restOwed || f.resting() {
		t.Fatalf("after the rest: again %v, rest %v, owed %v", again, rest, f.restOwed)
	}
}

// A wake-up for this console's own presence refreshes alone reads
// nothing, and does not count as another process's commit.
func TestFeedOwnWritesReadNothing(t *testing.T) {
	now := t0
	f := feedAt(&now)
	f.startLoad(firstPage, shownPayload{})
	f.take(pendingMsg{gen: f.gen, limit: firstPage, rows: feedRecs("a", 2), total: 2})
	f.loaded = true
	f.endLoad()
	if !f.changed(storage.Committers{Written: 10, WrittenKnown: true}) {
		t.Fatal("the first wake-up, with no count to start from, read nothing")
	}
	f.loading = false
	f.ownWrite(10, 11)
	f.ownWrite(11, 12)
	if f.changed(storage.Committers{Written: 12, WrittenKnown: true}) || f.foreign != 0 {
		t.Fatalf("a wake-up for two own refreshes read the list (foreign %d)", f.foreign)
	}
	f.ownWrite(12, 13)
	if !f.changed(storage.Committers{Others: true, Written: 13, WrittenKnown: true}) || f.foreign != 1 {
		t.Fatalf("another process's commit beside an own refresh read nothing (foreign %d)", f.foreign)
	}
	if len(f.ownWrites) != 0 {
		t.Fatalf("refreshes seen are kept: %v", f.ownWrites)
	}
}

// A console woken by nothing but its own presence refreshes, each written
// alone, reads nothing; anything else written meanwhile, by this process or
// another, and it reads as before.
func TestOwnPresenceRefreshReadsNothing(t *testing.T) {
	own := func(c storage.Committers) storage.Committers { c.WrittenKnown = true; return c }
	for _, c := range []struct {
		name   string
		writes [][2]int64
		who    storage.Committers
		want   bool
	}{
		{"one refresh", [][2]int64{{10, 11}}, own(storage.Committers{Written: 11}), true},
		{"two, in either order", [][2]int64{{11, 12}, {10, 11}}, own(storage.Committers{Written: 12}), true},
		{"another process too", [][2]int64{{10, 11}}, own(storage.Committers{Others: true, Written: 11}), false},
		{"this process wrote more", [][2]int64{{10, 11}}, own(storage.Committers{Written: 13}), false},
		{"something between", [][2]int64{{12, 13}}, own(storage.Committers{Written: 13}), false},
		{"nothing written", nil, own(storage.Committers{Written: 10}), false},
		{"cannot tell", [][2]int64{{10, 11}}, storage.Committers{Written: 11}, false},
	} {
		m := &feed{written: 10, writtenKnown: true, ownWrites: c.writes}
		if got := m.onlyOwnPresence(c.who); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if m.written != c.who.Written {
			t.Errorf("%s: the count was not taken", c.name)
		}
	}
	m := &feed{}
	if m.onlyOwnPresence(own(storage.Committers{Written: 11})) {
		t.Error("the first wake-up knows no count to start from")
	}
	// A refresh whose rows were seen already is forgotten.
	m = &feed{written: 20, writtenKnown: true, ownWrites: [][2]int64{{10, 11}, {20, 21}}}
	m.onlyOwnPresence(own(storage.Committers{Written: 21}))
	if len(m.ownWrites) != 0 {
		t.Errorf("kept %v", m.ownWrites)
	}
}
