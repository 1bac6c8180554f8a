package storage

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/latency"
	"github.com/approve-tui/approve-tui/model"
)

// Benchmarks behind BENCHMARKS.md. Latency percentiles are reported as
// extra metrics (p50-µs, p99-µs) from per-operation timings.

// The storage package's tests and benchmarks run once per backend (see
// runBothBackends): the consume benchmarks measure SQLite (sub-benchmarks
// sync=NORMAL and sync=FULL) and then PostgreSQL (sync=server: the server's
// own durability, synchronous_commit on) in one `go test -bench` run.

// benchSyncModes are the sync modes measured on the backend of this pass.
func benchSyncModes() []string {
	if testBackend == "postgres" {
		return []string{"server"}
	}
	return []string{"NORMAL", "FULL"}
}

func benchStore(b *testing.B, sync string) *Store {
	path := tempDB(b)
	if testBackend == "postgres" {
		sync = ""
	}
	s, err := Open(context.Background(), path,
		Options{Create: true, Synchronous: sync, BusyTimeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func benchProposal(i int, now time.Time) *model.Proposal {
	p := proposal(fmt.Sprintf("b%07d-%s", i, model.NewID()), fmt.Sprintf("rm -rf /srv/build/%d", i), model.RiskHigh, now, time.Hour)
	p.DiffText = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old line\n+new line\n"
	return p
}

// submitBench submits n bench proposals through s and returns their ids.
func submitBench(b testing.TB, s *Store, n int) []string {
	now := time.Now()
	ids := make([]string, n)
	for i := range ids {
		p := benchProposal(i, now)
		ids[i] = p.ApprovalID
		if err := s.Submit(ctx, p, agent); err != nil {
			b.Fatal(err)
		}
	}
	return ids
}

// benchConsumer consumes an id on s's file as impl does: the store's
// Consume ("store", "store-warm"), or the same transaction as bare SQL
// ("bare-sql") or Hermes' compare-and-set alone ("hermes-minimal") on a
// connection of their own (bareConsumer).
func benchConsumer(b *testing.B, s *Store, impl, syncMode string, pragmas ...string) func(string) error {
	if !strings.HasPrefix(impl, "store") {
		return bareConsumer(b, s.DSN(), syncMode, impl == "hermes-minimal", strings.Join(pragmas, ""))
	}
	return func(id string) error {
		_, err := s.Consume(ctx, id, id, alice)
		return err
	}
}

func BenchmarkSubmit(b *testing.B) {
	for _, syncMode := range benchSyncModes() {
		b.Run(testBackend+"/sync="+syncMode, func(b *testing.B) {
			s := benchStore(b, syncMode)
			now := time.Now()
			ps := make([]*model.Proposal, b.N)
			for i := range ps {
				ps[i] = benchProposal(i, now)
			}
			latency.Each(b, func(i int) {
				if err := s.Submit(ctx, ps[i], agent); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkConsume compares the store's Consume with the same transaction
// written as bare SQL on a bare connection: the same statements (read the
// row, compare-and-set, audit insert, head update, the rank entry named
// stale, see bareConsumer) without the
// store's decoding, validation, classification and hashing. Hermes is the
// minimal compare-and-set alone, for reference.
func BenchmarkConsume(b *testing.B) {
	for _, syncMode := range benchSyncModes() {
		for _, impl := range []string{"store", "store-warm", "bare-sql", "hermes-minimal"} {
			b.Run(testBackend+"/sync="+syncMode+"/"+impl, func(b *testing.B) {
				s := benchStore(b, syncMode)
				ids := submitBench(b, s, b.N)
				if impl == "store-warm" {
					// As in the console: the row was read (listed, shown) first.
					for _, id := range ids {
						if _, err := s.Get(ctx, id); err != nil {
							b.Fatal(err)
						}
					}
				}
				consume := benchConsumer(b, s, impl, syncMode)
				latency.Each(b, func(i int) {
					if err := consume(ids[i]); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// bareConsumer is Consume's transaction as approve-tui runs it on the
// backend at path, written by hand on a bare connection through the same
// driver, with prepared statements and none of the store's logic: the row
// read (FOR UPDATE on PostgreSQL), the compare-and-set, the chain's head
// read (FOR UPDATE on PostgreSQL), the audit insert, the head update, the
// rank entry named stale (and, past the list's bound, the named entries
// deleted). minimal: the compare-and-set alone (Hermes' transaction).
// pragmas: more of SQLite's DSN parameters.
func bareConsumer(b *testing.B, path, sync string, minimal bool, pragmas string) func(string) error {
	e, driver, dsn := sqliteDialect, "sqlite", "file:"+path+"?_busy_timeout=60000&_pragma=synchronous("+sync+")"+pragmas
	if IsPostgresURL(path) {
		e, driver, dsn = postgresDialect, "pgx", path
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	raw, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	c := &conn{Conn: raw, e: e}
	prep := func(q string) *sql.Stmt {
		st, err := c.PrepareContext(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	sel := prep(`SELECT payload_json FROM gateway_approvals WHERE approval_id = ?` + e.lockRow())
	upd := prep(`UPDATE gateway_approvals SET status = 'consumed', consumed_at = ?, consumed_by = ?
		WHERE approval_id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?) RETURNING consumed_at`)
	head := prep(`SELECT value FROM approve_tui_meta WHERE key = 'audit_head'` + e.lockHead())
	ins := prep(`INSERT INTO approve_tui_audit (seq, at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash)
		VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM approve_tui_audit), ?, ?, 'approve', 'ok', '', 'alice@host', 'cli', '{}', ?, ?)`)
	meta := prep(`UPDATE approve_tui_meta SET value = ? WHERE key = 'audit_head'`)
	indexed := prep(`SELECT EXISTS (SELECT 1 FROM approve_tui_rank WHERE approval_id = ?)`)
	name := prep(`INSERT INTO approve_tui_meta (key, value) VALUES ('rank_stale', ?)
		ON CONFLICT (key) DO UPDATE SET value = CASE WHEN approve_tui_meta.value = '' THEN excluded.value
		ELSE approve_tui_meta.value || '` + "\n" + `' || excluded.value END RETURNING value`)
	clear := prep(`UPDATE approve_tui_meta SET value = '' WHERE key = 'rank_stale'`)
	rankDel := prep(`DELETE FROM approve_tui_rank WHERE approval_id = ? AND NOT EXISTS
		(SELECT 1 FROM gateway_approvals g WHERE g.approval_id = approve_tui_rank.approval_id
		AND g.status IN ('pending', 'pending_confirm'))`)
	var named []string // as listed in rank_stale (the bench ids need no quoting)
	return func(id string) error {
		if _, err := c.ExecContext(ctx, e.beginWrite()); err != nil {
			return err
		}
		now := model.Epoch(time.Now())
		var at float64
		var payload, h string
		if !minimal {
			if err := sel.QueryRowContext(ctx, id).Scan(&payload); err != nil {
				return err
			}
		}
		if err := upd.QueryRowContext(ctx, now, "alice@host via cli", id, now).Scan(&at); err != nil {
			return err
		}
		if !minimal {
			if err := head.QueryRowContext(ctx).Scan(&h); err != nil {
				return err
			}
			if _, err := ins.ExecContext(ctx, now, id, h, h); err != nil {
				return err
			}
			if _, err := meta.ExecContext(ctx, h); err != nil {
				return err
			}
			var has bool
			if err := indexed.QueryRowContext(ctx, id).Scan(&has); err != nil {
				return err
			}
			if has {
				var list string
				if err := name.QueryRowContext(ctx, `"`+id+`"`).Scan(&list); err != nil {
					return err
				}
				if named = append(named, id); len(named) > rankStaleBatch || len(list) > rankStaleBytes {
					for _, n := range named {
						if _, err := rankDel.ExecContext(ctx, n); err != nil {
							return err
						}
					}
					if _, err := clear.ExecContext(ctx); err != nil {
						return err
					}
					named = named[:0]
				}
			}
		}
		_, err := c.ExecContext(ctx, `COMMIT`)
		return err
	}
}

// BenchmarkConsumeRace8Processes: 8 OS processes race to consume the same
// ids (each id once per process). ns/op is wall time per id decided;
// attempts/s counts every attempt, won or lost.
func BenchmarkConsumeRace8Processes(b *testing.B) {
	const workers = 8
	for _, syncMode := range benchSyncModes() {
		b.Run(testBackend+"/sync="+syncMode, func(b *testing.B) {
			s := benchStore(b, syncMode)
			ids := submitBench(b, s, b.N)
			lists := make([][]string, workers)
			for w := range lists {
				lists[w] = ids
			}
			release := startConsumers(b, s.DSN(), lists, "STORAGE_TEST_SYNC="+strings.TrimPrefix(syncMode, "server"))
			time.Sleep(200 * time.Millisecond) // let every worker open the store
			b.ResetTimer()
			t0 := time.Now()
			release()
			el := time.Since(t0)
			b.StopTimer()
			b.ReportMetric(float64(b.N*workers)/el.Seconds(), "attempts/s")
			var consumed int
			rawDB(b, s.DSN()).QueryRow(`SELECT count(*) FROM gateway_approvals WHERE status = 'consumed'`).Scan(&consumed)
			if consumed != b.N {
				b.Fatalf("%d consumed of %d", consumed, b.N)
			}
		})
	}
}

// benchRows is the number of rows a benchmark builds: APPROVE_TUI_BENCH_ROWS
// where it is set, def otherwise.
func benchRows(def int) int {
	if v := os.Getenv("APPROVE_TUI_BENCH_ROWS"); v != "" {
		fmt.Sscan(v, &def)
	}
	return def
}

// BenchmarkListTop200 lists the 200 most urgent of 100k pending rows in a
// 1M-row table (set APPROVE_TUI_BENCH_ROWS to scale down).
func BenchmarkListTop200(b *testing.B) {
	sqliteOnly(b, "a 1M-row SQLite file")
	total := benchRows(1_000_000)
	pending := total / 10
	path := filepath.Join(b.TempDir(), "big.db")
	buildBigFile(b, path, total, pending)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.List(ctx, ListOptions{Limit: 200}); err != nil { // first sight builds the rank index
		b.Fatal(err)
	}
	for _, cache := range []string{"warm", "cold"} {
		b.Run("decode-cache="+cache, func(b *testing.B) {
			lat := make(latency.Latencies, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if cache == "cold" {
					s.bind().decoded.reset() // every payload decoded again
				}
				t0 := time.Now()
				l, err := s.List(ctx, ListOptions{Limit: 200})
				if err != nil || len(l) != 200 {
					b.Fatalf("%d rows, %v", len(l), err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			lat.Report(b)
		})
	}
}

// buildBigFile writes total rows, pending of them pending, the way a busy
// Hermes install accumulates them.
func buildBigFile(b *testing.B, path string, total, pending int) {
	b.Helper()
	s, err := Open(ctx, path, Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	db := rawDB(b, path)
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	st, err := tx.Prepare(`INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, consumed_at, consumed_by, payload_json)
		VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	levels := []model.RiskLevel{model.RiskLow, model.RiskMedium, model.RiskHigh}
	cmds := []string{"ls -la /srv", "git push --force origin main", "rm -rf /srv/cache"}
	every := total / pending
	for i := 0; i < total; i++ {
		k := i % 3
		p := proposal(fmt.Sprintf("big%08d", i), cmds[k], levels[k], now.Add(-time.Duration(total-i)*time.Second), 0)
		p.ExpiresAt = model.F64(model.Epoch(now.Add(time.Duration(i%7200) * time.Second)))
		status, consAt, consBy := "consumed", any(p.CreatedAt+5), any("hermes:alice")
		if i%every == 0 {
			status, consAt, consBy = "pending", nil, nil
			p.ExpiresAt = model.F64(model.Epoch(now.Add(time.Hour + time.Duration(i%7200)*time.Second)))
		}
		if _, err := st.Exec(p.ApprovalID, p.CreatedAt, *p.ExpiresAt, status, consAt, consBy, string(model.EncodePayload(p))); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	db.Close()
}

// BenchmarkWatchLatency: another connection commits; how long until a
// Watcher's Wait returns. Also reports the watcher's idle CPU share
// (process CPU time over wall time while Wait sits with nothing committed).
func BenchmarkWatchLatency(b *testing.B) {
	sqliteOnly(b, "data_version and file notification (BenchmarkCommitToScreen in tui/ covers NOTIFY)")
	s := benchStore(b, "NORMAL")
	w := mustWatch(b, s)
	other := rawDB(b, s.Path())
	if _, err := other.Exec(`CREATE TABLE IF NOT EXISTS bench_ping (n INTEGER)`); err != nil {
		b.Fatal(err)
	}
	w.Changed(ctx)
	lat := make(latency.Latencies, 0, b.N)
	// A wake-up that comes before the commit (SQLite's automatic
	// checkpoint after a commit can move data_version again, once every
	// ~1,000 pages) is not the commit's: the waiter looks whether the row
	// is there and waits again if not, and such wakes are counted.
	reader := rawDB(b, s.Path())
	spurious := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		done := make(chan time.Time, 1)
		go func() {
			for {
				w.Wait(ctx)
				at := time.Now()
				var n sql.NullInt64
				if err := reader.QueryRow(`SELECT max(n) FROM bench_ping`).Scan(&n); err == nil && n.Valid && n.Int64 >= int64(i) {
					done <- at
					return
				}
				spurious++
			}
		}()
		time.Sleep(2 * time.Millisecond) // the watcher is idle when the commit comes
		t0 := time.Now()
		if _, err := other.Exec(`INSERT INTO bench_ping VALUES (?)`, i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-done).Sub(t0))
	}
	b.StopTimer()
	lat.Report(b)
	b.ReportMetric(float64(spurious), "early-wakes")

	// Idle: nothing commits for 3 s.
	w.Changed(ctx)
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	idleCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	w.Wait(idleCtx)
	cancel()
	wall := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "idle-cpu-%")
}

// BenchmarkIntegrityCheck: the quick_check Consume runs (at most every
// HealthMaxAge) and the console runs at start, over approve-tui's tables
// of a file with APPROVE_TUI_BENCH_ROWS rows (1M by default).
func BenchmarkIntegrityCheck(b *testing.B) {
	sqliteOnly(b, "quick_check")
	total := benchRows(1_000_000)
	path := filepath.Join(b.TempDir(), "big.db")
	buildBigFile(b, path, total, total/10)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, err := s.CheckIntegrity(ctx)
		if err != nil || d != "" {
			b.Fatalf("%q %v", d, err)
		}
	}
	b.StopTimer()
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
	}
}

// BenchmarkCheckMoved: what every commit adds to make sure the file it
// writes is still the file at the path (stat of the database, its -wal and
// its -shm).
func BenchmarkCheckMoved(b *testing.B) {
	sqliteOnly(b, "the file identity check")
	s := benchStore(b, "NORMAL")
	f := s.bind().dbfile
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := f.checkMoved(); r != "" {
			b.Fatal(r)
		}
	}
}

// BenchmarkExpire: ExpireDue of N due pending rows (100k; set
// APPROVE_TUI_BENCH_ROWS to scale), each expired with its audit event and
// its rank entry removed, against the bare UPDATE Hermes would run on a copy
// of the same file, and against that UPDATE plus the same number of audit
// rows written by bare SQL in its transaction (what the guarantee "every
// transition appends its audit event" costs at the least). The time of
// each is reported (store-ms, bare-ms, bare-audit-ms) and the ratios.
func BenchmarkExpire(b *testing.B) {
	sqliteOnly(b, "a file copied for the bare UPDATE")
	n := benchRows(100_000)
	dir := b.TempDir()
	golden := filepath.Join(dir, "golden.db")
	buildBigFile(b, golden, n, n) // every row pending, expiring within 3 h
	c := newClock()
	c.t = time.Now()
	s, err := Open(ctx, golden, Options{Now: c.Now})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.List(ctx, ListOptions{Limit: 1}); err != nil { // builds the rank index
		b.Fatal(err)
	}
	s.Close()
	data, err := os.ReadFile(golden)
	if err != nil {
		b.Fatal(err)
	}
	var storeT, bareT, bareAuditT time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sp, bp, ap := filepath.Join(dir, fmt.Sprintf("s%d.db", i)), filepath.Join(dir, fmt.Sprintf("b%d.db", i)), filepath.Join(dir, fmt.Sprintf("a%d.db", i))
		for _, p := range []string{sp, bp, ap} {
			if err := os.WriteFile(p, data, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		later := newClock()
		later.t = time.Now().Add(4 * time.Hour)
		st, err := Open(ctx, sp, Options{Now: later.Now})
		if err != nil {
			b.Fatal(err)
		}
		db := rawDB(b, bp)
		mustExec(b, db, `SELECT count(*) FROM gateway_approvals`) // open before timing
		b.StartTimer()
		t0 := time.Now()
		ids, err := st.ExpireDue(ctx, alice)
		storeT += time.Since(t0)
		if err != nil || len(ids) != n {
			b.Fatalf("expired %d of %d: %v", len(ids), n, err)
		}
		t0 = time.Now()
		res, err := db.Exec(`UPDATE gateway_approvals SET status = 'expired'
			WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ?`, model.Epoch(later.t))
		bareT += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if k, _ := res.RowsAffected(); k != int64(n) {
			b.Fatalf("bare UPDATE expired %d of %d", k, n)
		}
		bareAuditT += bareExpireWithAudit(b, ap, model.Epoch(later.t), n)
		b.StopTimer()
		if v, err := st.VerifyAudit(ctx); err != nil || !v.OK {
			b.Fatalf("chain after expire: %+v %v", v, err)
		}
		st.Close()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(storeT.Milliseconds())/float64(b.N), "store-ms")
	b.ReportMetric(float64(bareT.Milliseconds())/float64(b.N), "bare-ms")
	b.ReportMetric(float64(bareAuditT.Milliseconds())/float64(b.N), "bare-audit-ms")
	b.ReportMetric(float64(storeT)/float64(bareT), "store/bare")
	b.ReportMetric(float64(storeT)/float64(bareAuditT), "store/bare-audit")
}

// bareExpireWithAudit runs, on the file at path, the expiring UPDATE and
// inserts one audit row per expired row (no hashing, constant hashes) in a
// batch per statement, in one transaction, and returns how long it took.
func bareExpireWithAudit(b *testing.B, path string, now float64, n int) time.Duration {
	db := rawDB(b, path)
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	t0 := time.Now()
	if _, err := c.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		b.Fatal(err)
	}
	rows, err := c.QueryContext(ctx, `UPDATE gateway_approvals SET status = 'expired'
		WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? RETURNING approval_id, expires_at`, now)
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		var exp float64
		if err := rows.Scan(&id, &exp); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	one := "(?, ?, ?, 'expire', 'ok', '', 'alice', 'cli', '{}', ?, ?)"
	st, err := c.PrepareContext(ctx, `INSERT INTO approve_tui_audit (seq, at, approval_id, event, outcome, reason, actor,
		surface, detail, prev_hash, hash) VALUES `+strings.TrimSuffix(strings.Repeat(one+", ", 100), ", "))
	if err != nil {
		b.Fatal(err)
	}
	h := strings.Repeat("0", 64)
	args := make([]any, 0, 500)
	for i, id := range ids {
		args = append(args, i+1, now, id, h, h)
		if len(args) == 500 || i == len(ids)-1 {
			if len(args) < 500 {
				for j, id := range ids[len(ids)-len(args)/5:] {
					if _, err := c.ExecContext(ctx, `INSERT INTO approve_tui_audit (seq, at, approval_id, event, outcome, reason, actor,
						surface, detail, prev_hash, hash) VALUES `+one, len(ids)-len(args)/5+j+1, now, id, h, h); err != nil {
						b.Fatal(err)
					}
				}
			} else if _, err := st.ExecContext(ctx, args...); err != nil {
				b.Fatal(err)
			}
			args = args[:0]
		}
	}
	st.Close()
	if _, err := c.ExecContext(ctx, `COMMIT`); err != nil {
		b.Fatal(err)
	}
	if len(ids) != n {
		b.Fatalf("bare expire: %d of %d", len(ids), n)
	}
	return time.Since(t0)
}

// BenchmarkConsumeWALFrames: how many pages (WAL frames) one consume
// writes, for the store's transaction, the same transaction as bare SQL,
// and Hermes' compare-and-set alone: the WAL is emptied, 200 proposals are
// consumed (with SQLite's automatic checkpoint off on the deciding
// connection, which would start the WAL over at 1,000 frames), and the
// WAL's size says how many frames they wrote. The log lists, per consume,
// the frames of each table and index (each frame's page number, read from
// the WAL's frame headers, named through SQLite's dbstat).
func BenchmarkConsumeWALFrames(b *testing.B) {
	sqliteOnly(b, "the WAL file")
	// Decisions per run: three full lists of named stale rank entries
	// deleted, and some named. On 10,000 pending rows, either the 200 most
	// urgent (a console's decisions, from the top of its list) or every
	// 50th (spread over the rank index's pages).
	const n = 200
	for _, load := range []struct {
		name       string
		size, step int
	}{{"pending=200", n, 1}, {"pending=10000/top", 10_000, 1}, {"pending=10000/spread", 10_000, 10_000 / n}} {
		dir := b.TempDir()
		data, all := peerFile(b, dir, "FULL", load.size)
		var ids []string
		for i := 0; len(ids) < n; i += load.step {
			ids = append(ids, all[i]) // submitted in urgency order: same rank and expiry, ids ascending
		}
		for _, impl := range []string{"store", "bare-sql", "hermes-minimal"} {
			b.Run(load.name+"/"+impl, func(b *testing.B) {
				var frames float64
				perTree := map[string]int{}
				for i := 0; i < b.N; i++ {
					s, err := Open(ctx, copier(b, dir, data)("wal"), Options{Synchronous: "FULL", BusyTimeout: time.Minute})
					if err != nil {
						b.Fatal(err)
					}
					consume := benchConsumer(b, s, impl, "FULL", "&_pragma=wal_autocheckpoint(0)")
					var pageSize int64
					bd := s.bind()
					bd.wmu.Lock()
					_, err = bd.w.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`)
					if err == nil {
						_, err = bd.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
					}
					if err == nil {
						err = bd.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize)
					}
					bd.wmu.Unlock()
					if err != nil {
						b.Fatal(err)
					}
					for _, id := range ids {
						if err := consume(id); err != nil {
							b.Fatal(err)
						}
					}
					fi, err := os.Stat(s.Path() + "-wal")
					if err != nil {
						b.Fatal(err)
					}
					frames += float64(fi.Size()-32) / float64(pageSize+24) / n
					for tree, k := range walFramesByTree(b, s.Path(), int(pageSize)) {
						perTree[tree] += k
					}
					s.Close()
				}
				b.ReportMetric(frames/float64(b.N), "frames/consume")
				trees := slices.Sorted(maps.Keys(perTree))
				sort.SliceStable(trees, func(i, j int) bool { return perTree[trees[i]] > perTree[trees[j]] })
				for _, t := range trees {
					if b.N == 1 {
						break // the first run, a warm-up (the figures come with the next)
					}
					b.Logf("%-40s %.2f frames/consume", t, float64(perTree[t])/float64(b.N*n))
				}
			})
		}
	}
}

// peerFile is a SQLite file (its bytes) of n pending proposals submitted
// through the store, and their ids, for the consume benchmarks' peers to
// work on copies of.
func peerFile(b *testing.B, dir, syncMode string, n int) ([]byte, []string) {
	src := filepath.Join(dir, "src-"+syncMode+".db")
	s, err := Open(ctx, src, Options{Create: true, Synchronous: syncMode})
	if err != nil {
		b.Fatal(err)
	}
	ids := submitBench(b, s, n)
	s.Close()
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	return data, ids
}

// copier makes a directory for one iteration and returns what writes a
// copy of data there, under a name, and says its path.
func copier(b *testing.B, dir string, data []byte) func(name string) string {
	iterDir, err := os.MkdirTemp(dir, "run")
	if err != nil {
		b.Fatal(err)
	}
	return func(name string) string {
		p := filepath.Join(iterDir, name+".db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			b.Fatal(err)
		}
		return p
	}
}

// BenchmarkConsumePeers: the store's Consume against its peers on copies of
// one file of N pending proposals (2,000; APPROVE_TUI_BENCH_ROWS), per
// sync mode, interleaved once per iteration: Hermes' Python transaction (a
// connection per operation, testdata/peers/hermes_consume.py) and the
// store's own statements in C against the system SQLite
// (testdata/peers/consume.c; skipped without cc and sqlite3.h). Reported:
// each one's throughput, the store's throughput over Python's (goal ≥ 1),
// and the store's CPU per consume over C's (goal ≤ 1.3).
func BenchmarkConsumePeers(b *testing.B) {
	sqliteOnly(b, "Python and C against a SQLite file")
	n := benchRows(2000)
	dir := b.TempDir()
	cbin := filepath.Join(dir, "consume")
	haveC := exec.Command("cc", "-O2", "-o", cbin, "testdata/peers/consume.c", "-lsqlite3").Run() == nil
	for _, syncMode := range []string{"NORMAL", "FULL"} {
		b.Run("sync="+syncMode, func(b *testing.B) {
			data, ids := peerFile(b, dir, syncMode, n)
			idsFile := filepath.Join(dir, "ids")
			if err := os.WriteFile(idsFile, []byte(strings.Join(ids, "\n")+"\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			var storeWall, storeCPU, bareWall, bareCPU, pyWall, cWall, cCPU float64
			for i := 0; i < b.N; i++ {
				copyOf := copier(b, dir, data)
				// The store.
				st, err := Open(ctx, copyOf("store"), Options{Synchronous: syncMode})
				if err != nil {
					b.Fatal(err)
				}
				cpu0, w0 := processCPU(), time.Now()
				for _, id := range ids {
					if _, err := st.Consume(ctx, id, id, alice); err != nil {
						b.Fatal(err)
					}
				}
				storeWall += time.Since(w0).Seconds()
				storeCPU += processCPU() - cpu0
				st.Close()
				// The same statements as bare SQL in Go (modernc): the
				// driver's floor.
				bare := bareConsumer(b, copyOf("bare"), syncMode, false, "")
				cpu0, w0 = processCPU(), time.Now()
				for _, id := range ids {
					if err := bare(id); err != nil {
						b.Fatal(err)
					}
				}
				bareWall += time.Since(w0).Seconds()
				bareCPU += processCPU() - cpu0
				// Hermes' Python, and C, each with another connection holding
				// the file open as a console would: without one, every Python
				// close is the last, which checkpoints and deletes the WAL.
				peer := func(name string, run func(path string)) {
					path := copyOf(name)
					watcher := rawDB(b, path)
					mustExec(b, watcher, `SELECT count(*) FROM gateway_approvals`)
					run(path)
					watcher.Close()
				}
				peer("python", func(path string) {
					w, _ := runPeer(b, "python3", "testdata/peers/hermes_consume.py", path, idsFile, syncMode)
					pyWall += w
				})
				if haveC {
					peer("c", func(path string) {
						w, c := runPeer(b, cbin, path, idsFile, syncMode)
						cWall += w
						cCPU += c
					})
				}
			}
			ops := float64(n * b.N)
			b.ReportMetric(ops/storeWall, "store-ops/s")
			b.ReportMetric(ops/pyWall, "python-ops/s")
			b.ReportMetric(pyWall/storeWall, "store/python")
			b.ReportMetric(storeCPU/ops*1e6, "store-cpu-µs/op")
			b.ReportMetric(bareCPU/ops*1e6, "bare-go-cpu-µs/op")
			b.ReportMetric(ops/bareWall, "bare-go-ops/s")
			if haveC {
				b.ReportMetric(ops/cWall, "c-ops/s")
				b.ReportMetric(cCPU/ops*1e6, "c-cpu-µs/op")
				b.ReportMetric(storeCPU/cCPU, "store-cpu/c-cpu")
				b.ReportMetric(bareCPU/cCPU, "bare-go-cpu/c-cpu")
			}
		})
	}
}

// processCPU is this process's user and system CPU time, in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// runPeer runs a peer program that prints "<wall s> <cpu s> <count>".
func runPeer(b *testing.B, name string, args ...string) (wall, cpu float64) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		b.Fatalf("%s %v: %v\n%q", name, args, err, out)
	}
	var count int
	if _, err := fmt.Sscan(string(out), &wall, &cpu, &count); err != nil {
		b.Fatalf("%s: %q: %v", name, out, err)
	}
	return wall, cpu
}

// walFramesByTree counts the frames in the WAL of the SQLite file at path
// by the table or index their page belongs to (pages the file no longer
// uses: "free").
func walFramesByTree(b *testing.B, path string, pageSize int) map[string]int {
	// The WAL, read as a file: SQLite holds its locks on the database and
	// the -shm file, so closing this descriptor drops none of them.
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		b.Fatal(err)
	}
	db := rawDB(b, path)
	rows, err := db.QueryContext(ctx, `SELECT name, pageno FROM dbstat`)
	if err != nil {
		b.Fatal(err)
	}
	owner := map[uint32]string{}
	for rows.Next() {
		var name string
		var page uint32
		if err := rows.Scan(&name, &page); err != nil {
			b.Fatal(err)
		}
		owner[page] = name
	}
	if err := rows.Close(); err != nil {
		b.Fatal(err)
	}
	out := map[string]int{}
	// A 32-byte WAL header, then frames: a 24-byte header (the page
	// number first, big-endian) and the page.
	for off := 32; off+24+pageSize <= len(wal); off += 24 + pageSize {
		tree := owner[binary.BigEndian.Uint32(wal[off:off+4])]
		if tree == "" {
			tree = "free"
		}
		out[tree]++
	}
	return out
}
