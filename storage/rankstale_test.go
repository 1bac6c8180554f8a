package storage

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// rankEntries is the rank index's entry ids and the ids rank_stale names.
func rankEntries(t *testing.T, path string) (entries, named []string) {
	t.Helper()
	db := rawDB(t, path)
	rows, err := db.Query(`SELECT approval_id FROM approve_tui_rank ORDER BY approval_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, id)
	}
	var v sql.NullString
	if err := db.QueryRow(`SELECT value FROM approve_tui_meta WHERE key = 'rank_stale'`).Scan(&v); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	named, err = decodeStale(v.String)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(named)
	return entries, named
}

// upToDate is the rank index's check from reads alone.
func upToDate(t *testing.T, s *Store) bool {
	t.Helper()
	b := s.bind()
	b.wmu.Lock()
	defer b.wmu.Unlock()
	ok, err := b.rankUpToDate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func listedIDs(t *testing.T, s *Store) []string {
	t.Helper()
	l, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := idsOf(l)
	slices.Sort(ids)
	return ids
}

func submitN(t *testing.T, s *Store, c *clock, n int, ttl time.Duration) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("proposal-%03d", i)
		mustSubmit(t, s, proposal(ids[i], "rm -rf /srv/"+ids[i], model.RiskHigh, c.Now(), ttl))
	}
	listedIDs(t, s) // as a console does: the index's mark and rules are set
	return ids
}

// A decision leaves its row's entry in place and names it stale: the list
// does not show the row, and the index's check needs no catch-up.
func TestDecisionNamesItsRankEntryStale(t *testing.T) {
	s, c := newStore(t)
	ids := submitN(t, s, c, 3, time.Hour)
	if _, err := s.Consume(ctx, ids[0], ids[0], alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deny(ctx, ids[1], alice, "no"); err != nil {
		t.Fatal(err)
	}
	entries, named := rankEntries(t, s.DSN())
	if !slices.Equal(entries, ids) || !slices.Equal(named, ids[:2]) {
		t.Fatalf("entries %v, named stale %v; want %v and %v", entries, named, ids, ids[:2])
	}
	if !upToDate(t, s) {
		t.Fatal("the index's check wants a catch-up after the store's own decisions")
	}
	if got := listedIDs(t, s); !slices.Equal(got, ids[2:]) {
		t.Fatalf("listed %v, want %v", got, ids[2:])
	}
}

// The decision that would overfill the list deletes the named entries and
// its own, in its transaction.
func TestStaleRankEntriesAreDeletedInBatches(t *testing.T) {
	s, c := newStore(t)
	ids := submitN(t, s, c, rankStaleBatch+3, time.Hour)
	for _, id := range ids[:rankStaleBatch] {
		if _, err := s.Consume(ctx, id, id, alice); err != nil {
			t.Fatal(err)
		}
	}
	if entries, named := rankEntries(t, s.DSN()); len(entries) != len(ids) || len(named) != rankStaleBatch {
		t.Fatalf("after %d decisions: %d entries, %d named; want %d and %d", rankStaleBatch, len(entries), len(named), len(ids), rankStaleBatch)
	}
	id := ids[rankStaleBatch]
	if _, err := s.Consume(ctx, id, id, alice); err != nil {
		t.Fatal(err)
	}
	entries, named := rankEntries(t, s.DSN())
	if !slices.Equal(entries, ids[rankStaleBatch+1:]) || len(named) != 0 {
		t.Fatalf("after the batch: entries %v, named %v; want %v and none", entries, named, ids[rankStaleBatch+1:])
	}
	if !upToDate(t, s) {
		t.Fatal("the index's check wants a catch-up after a batch")
	}
}

// Any id an agent chose round-trips through the list; one too long for it
// takes the list's entries with it at once.
func TestStaleListTakesHostileIDs(t *testing.T) {
	for _, id := range []string{"", "a\nb", `"quoted"`, `back\slash`, "tab\tand\x00nul", "\xff\xfe not UTF-8", "ünï\u202ecode", strings.Repeat("x", 10)} {
		got, err := decodeStale(appendStale(appendStale(appendStale("", "first"), id), "last"))
		if err != nil || !slices.Equal(got, []string{"first", id, "last"}) {
			t.Errorf("%q: round trip gave %q, %v", id, got, err)
		}
	}
	for _, bad := range []string{"plain", `"open`, "\"a\"\n\n\"b\"", "`raw`"} {
		if _, err := decodeStale(bad); err == nil {
			t.Errorf("%q: decoded without error", bad)
		}
	}

	s, c := newStore(t)
	ids := []string{"line\nbreak", `say "hi"`, "ünï\u202ecode", strings.Repeat("long", rankStaleBytes/4)}
	for _, id := range ids {
		mustSubmit(t, s, proposal(id, "rm -rf /srv/x", model.RiskHigh, c.Now(), time.Hour))
	}
	listedIDs(t, s)
	// (Ids like these can only be denied.)
	for _, id := range ids[:3] {
		if _, err := s.Deny(ctx, id, alice, "no"); err != nil {
			t.Fatal(err)
		}
	}
	if _, named := rankEntries(t, s.DSN()); len(named) != 3 {
		t.Fatalf("named %q", named)
	}
	if _, err := s.Deny(ctx, ids[3], alice, "no"); err != nil {
		t.Fatal(err)
	}
	if entries, named := rankEntries(t, s.DSN()); len(entries) != 0 || len(named) != 0 {
		t.Fatalf("after the long id: entries %q, named %q", entries, named)
	}
	if !upToDate(t, s) {
		t.Fatal("the index's check wants a catch-up")
	}
}

// A named stale entry cannot hide a missing one: the check counts entries
// less the named ones, and a row without its entry is listed after the
// catch-up.
func TestStaleEntryDoesNotHideAMissingOne(t *testing.T) {
	s, c := newStore(t)
	ids := submitN(t, s, c, 3, time.Hour)
	if _, err := s.Consume(ctx, ids[0], ids[0], alice); err != nil {
		t.Fatal(err)
	}
	mustExec(t, rawDB(t, s.DSN()), `DELETE FROM approve_tui_rank WHERE approval_id = ?`, ids[1])
	if upToDate(t, s) {
		t.Fatal("the check missed an open row without an entry")
	}
	if got := listedIDs(t, s); !slices.Equal(got, ids[1:]) {
		t.Fatalf("listed %v, want %v", got, ids[1:])
	}
	if entries, named := rankEntries(t, s.DSN()); !slices.Equal(entries, ids[1:]) || len(named) != 0 {
		t.Fatalf("after the reconcile: entries %v, named %v", entries, named)
	}
}

// Expiry deletes due entries wholesale: the named ones go first, so the
// count stays exact. A damaged list found then names nothing for sure: the
// whole index is reconciled instead.
func TestExpiryEmptiesTheStaleList(t *testing.T) {
	for _, damaged := range []bool{false, true} {
		t.Run(fmt.Sprintf("damaged=%v", damaged), func(t *testing.T) {
			s, c := newStore(t)
			long := submitN(t, s, c, 2, time.Hour)
			mustSubmit(t, s, proposal("short", "rm -rf /srv/short", model.RiskHigh, c.Now(), time.Minute))
			listedIDs(t, s)
			if _, err := s.Consume(ctx, long[0], long[0], alice); err != nil {
				t.Fatal(err)
			}
			if damaged {
				mustExec(t, rawDB(t, s.DSN()), `UPDATE approve_tui_meta SET value = 'not a list' WHERE key = 'rank_stale'`)
			}
			c.Advance(2 * time.Minute)
			if got, err := s.ExpireDue(ctx, alice); err != nil || !slices.Equal(got, []string{"short"}) {
				t.Fatalf("expired %v, %v", got, err)
			}
			if entries, named := rankEntries(t, s.DSN()); !slices.Equal(entries, long[1:]) || len(named) != 0 {
				t.Fatalf("entries %v, named %v; want %v and none", entries, named, long[1:])
			}
			if !upToDate(t, s) {
				t.Fatal("the index's check wants a catch-up after expiry")
			}
		})
	}
}

// Another build's reconcile deletes the stale entries without emptying the
// list; a damaged list names nothing it can trust. Either way the counts
// disagree, the catch-up reconciles and empties the list, and decisions go
// on.
func TestStaleListOutOfStepIsReconciled(t *testing.T) {
	for name, damage := range map[string]string{
		"entries deleted elsewhere": `DELETE FROM approve_tui_rank WHERE approval_id IN (SELECT approval_id FROM gateway_approvals WHERE status <> 'pending')`,
		"damaged list":              `UPDATE approve_tui_meta SET value = 'not a list' WHERE key = 'rank_stale'`,
	} {
		t.Run(name, func(t *testing.T) {
			s, c := newStore(t)
			ids := submitN(t, s, c, 4, time.Hour)
			if _, err := s.Consume(ctx, ids[0], ids[0], alice); err != nil {
				t.Fatal(err)
			}
			mustExec(t, rawDB(t, s.DSN()), damage)
			if upToDate(t, s) {
				t.Fatal("the check trusted a list out of step")
			}
			if _, err := s.Consume(ctx, ids[1], ids[1], alice); err != nil {
				t.Fatal(err)
			}
			if got := listedIDs(t, s); !slices.Equal(got, ids[2:]) {
				t.Fatalf("listed %v, want %v", got, ids[2:])
			}
			if !upToDate(t, s) {
				t.Fatal("still out of step after the catch-up")
			}
			entries, named := rankEntries(t, s.DSN())
			if n := len(entries) - len(named); n != 2 {
				t.Fatalf("entries %v less named %v is %d, want the 2 open rows", entries, named, n)
			}
		})
	}
}

// Hermes deciding a row leaves an unnamed stale entry, as before: the
// catch-up reconciles it, and the named ones with it.
func TestHermesDecisionBesideNamedStaleEntries(t *testing.T) {
	sqliteOnly(t, "Hermes' Python store writes SQLite")
	path := tempDB(t)
	py := newPyStore(t, path)
	ids := py.submit(map[string]any{"command": "rm -rf /srv/a"}, map[string]any{"command": "rm -rf /srv/b"}, map[string]any{"command": "rm -rf /srv/c"})
	s := openAt(t, path, nil)
	if got := listedIDs(t, s); len(got) != 3 {
		t.Fatalf("listed %v", got)
	}
	if _, err := s.Consume(context.Background(), ids[0], ids[0], alice); err != nil {
		t.Fatal(err)
	}
	if d := py.decide("deny", ids[1], "hermes:op"); !d.OK {
		t.Fatalf("deny: %+v", d)
	}
	if upToDate(t, s) {
		t.Fatal("the check missed Hermes' decision")
	}
	if got := listedIDs(t, s); !slices.Equal(got, ids[2:]) {
		t.Fatalf("listed %v, want %v", got, ids[2:])
	}
	if entries, named := rankEntries(t, path); !slices.Equal(entries, ids[2:]) || len(named) != 0 {
		t.Fatalf("entries %v, named %v", entries, named)
	}
}

// Processes deciding different rows at once each append a name to the one
// list: none is lost (on PostgreSQL, read committed, the append is one
// upsert that sees the other writers' committed list), so the index's
// count stays exact without a reconcile.
func TestStaleNamesSurviveConcurrentDecisions(t *testing.T) {
	const workers, each = 4, 60
	path := tempDB(t)
	s := openAt(t, path, nil)
	c := newClock()
	c.t = time.Now()
	ids := submitN(t, s, c, workers*each, time.Hour)
	lists := make([][]string, workers)
	for w := range lists {
		lists[w] = ids[w*each : (w+1)*each]
	}
	for w, lines := range startConsumers(t, path, lists)() {
		won := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "won ") {
				won++
			}
		}
		if won != each {
			t.Fatalf("worker %d won %d of %d: %q", w, won, each, lines)
		}
	}
	entries, named := rankEntries(t, path)
	if len(entries) != len(named) {
		t.Fatalf("%d entries, %d named stale, no row open: names were lost", len(entries), len(named))
	}
	if !upToDate(t, s) {
		t.Fatal("the index's check wants a reconcile after concurrent decisions")
	}
}
