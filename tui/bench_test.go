package tui

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/internal/pgtest"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// Benchmarks behind BENCHMARKS.md (console).

// bulkFile writes total rows, pending of them pending, the way a busy
// Hermes install accumulates them, and returns the path.
func bulkFile(b testing.TB, dir string, total, pending int) string {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("bulk-%d-%d.db", total, pending))
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	st, err := tx.Prepare(`INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, consumed_at, consumed_by, payload_json)
		VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	cmds := []string{"ls -la /srv", "git push --force origin main", "rm -rf /srv/cache"}
	every := max(total/pending, 1)
	for i := 0; i < total; i++ {
		p, _, err := risk.Propose(risk.Draft{Command: cmds[i%3] + fmt.Sprintf(" # %d", i), SessionKey: "agent:bench",
			ID: fmt.Sprintf("bulk%08d", i), DiffText: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n"}, t0.Add(-time.Hour))
		if err != nil {
			b.Fatal(err)
		}
		status, consAt, consBy := "consumed", any(p.CreatedAt+5), any("hermes:alice")
		exp := model.Epoch(t0.Add(time.Duration(i%7200) * time.Second))
		if i%every == 0 {
			status, consAt, consBy = "pending", nil, nil
			exp = model.Epoch(t0.Add(time.Hour + time.Duration(i%7200)*time.Second))
		}
		p.ExpiresAt = &exp
		if _, err := st.Exec(p.ApprovalID, p.CreatedAt, exp, status, consAt, consBy, string(model.EncodePayload(p))); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return path
}

// fileConsole opens the store at path and a console on it at w x h,
// loaded and settled (no watcher, no presence; edit changes the options
// first when not nil); both are closed when the test ends.
func fileConsole(tb testing.TB, path string, w, h int, edit func(*Options)) (*Model, *storage.Store) {
	tb.Helper()
	s, err := storage.Open(context.Background(), path, storage.Options{Now: fixedNow})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	o := Options{Store: s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, NoPresence: true, Label: "file"}
	if edit != nil {
		edit(&o)
	}
	m := New(o)
	tb.Cleanup(func() { m.Close() })
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	Settle(m, m.Init())
	return m, s
}

// BenchmarkKeystroke: one cursor move (Update) and the frame after it
// (View), with 10, 1,000 and 100,000 proposals pending. Commands the key
// returns (the waiter lookup) are not run: they are I/O off the UI path.
func BenchmarkKeystroke(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{10, 1000, 100000} {
		path := bulkFile(b, dir, n, n)
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			m, _ := fileConsole(b, path, 120, 40, nil)
			down, up := keyMsg("j"), keyMsg("k")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := down
				if i%16 >= 8 {
					k = up
				}
				m.Update(k)
				_ = m.View()
			}
		})
	}
}

// BenchmarkClockTick: one tick of the console's clock and the frame after
// it, what an idle console does once a second while its screen shows a
// countdown to the second: 120x40, 256 colours, the first proposal
// selected, every visible row in its last hour (its countdown, and the
// detail's, change every second; the ages, over an hour, once a minute),
// 10 and 10,000 pending.
func BenchmarkClockTick(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{10, 10000} {
		path := bulkFile(b, dir, n, n)
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			// The rows are an hour and a half old (ages to the minute) and
			// expire in half an hour or more (countdowns to the second);
			// the clock goes round ten minutes.
			start := t0.Add(30 * time.Minute)
			now := start
			m, _ := fileConsole(b, path, 120, 40, func(o *Options) {
				o.Renderer, o.Now = colourRenderer(), func() time.Time { return now }
			})
			before := m.View()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now = start.Add(time.Duration(1+i%600) * time.Second)
				m.Update(tickMsg{at: now})
				_ = m.View()
			}
			b.StopTimer()
			if m.View() == before {
				b.Fatal("the frame did not change with the clock")
			}
		})
	}
}

// BenchmarkFirstFrame: from opening a 1M-row file (100k pending) to the
// first frame that shows proposals, on a file whose rank index is built
// (every start but the first: "ranked"), and on a file approve-tui has
// never ranked ("first-open-ever": its rank index and mark are emptied
// before each iteration). The first open shows the soonest-expiring page
// at once and ranks in the background: ranked-ms is the time from opening
// until the store has ranked every pending row.
func BenchmarkFirstFrame(b *testing.B) {
	total := 1_000_000
	if v := os.Getenv("APPROVE_TUI_BENCH_ROWS"); v != "" {
		fmt.Sscan(v, &total)
	}
	path := bulkFile(b, b.TempDir(), total, total/10)
	b.Run("ranked", func(b *testing.B) {
		s := firstFrame(b, path, true) // ranks it, if it was not
		waitRanked(b, s)
		s.Close()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s := firstFrame(b, path, false)
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
	})
	b.Run("first-open-ever", func(b *testing.B) {
		var ranked time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			unrank(b, path)
			b.StartTimer()
			start := time.Now()
			s := firstFrame(b, path, true)
			b.StopTimer()
			waitRanked(b, s)
			ranked += time.Since(start)
			s.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(ranked.Milliseconds())/float64(b.N), "ranked-ms")
	})
}

// firstFrame opens path and draws the console's first frame: Init's first
// load (one page), then View. provisional: the frame must say the order is
// provisional (the store is ranking), or must not.
func firstFrame(b *testing.B, path string, provisional bool) *storage.Store {
	s, err := storage.Open(context.Background(), path, storage.Options{Now: fixedNow})
	if err != nil {
		b.Fatal(err)
	}
	m := New(Options{Store: s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, NoPresence: true, Label: "bench"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	cmd := m.Init()
	msg := cmd()
	if batch, ok := msg.(tea.BatchMsg); ok {
		msg = batch[0]()
	}
	m.Update(msg)
	v := m.View()
	if !strings.Contains(v, "pending") || len(m.rows) == 0 {
		b.Fatalf("no proposals on the first frame:\n%s", v)
	}
	if head := strings.SplitN(v, "\n", 2)[0]; strings.Contains(head, "ranking") != provisional && !(provisional && !m.ranking.Filling) {
		b.Fatalf("provisional=%v, the first frame says:\n%s", provisional, head)
	}
	return s
}

// waitRanked waits until the store has ranked every pending row.
func waitRanked(b *testing.B, s *storage.Store) {
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		_, p, err := s.ListUrgent(context.Background(), storage.ListOptions{Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if !p.Filling {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the ranking did not end")
		}
	}
	if err := s.RankProgress().Err; err != nil {
		b.Fatal(err)
	}
}

// unrank empties the rank index and its mark: the file is as a file
// approve-tui never ranked.
func unrank(b *testing.B, path string) {
	db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`DELETE FROM approve_tui_rank`, `DELETE FROM approve_tui_meta WHERE key LIKE 'rank_%'`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitToScreen: another connection submits a proposal; time
// until the console's frame shows it (watcher wake, reload, View), with the
// 15 demo proposals loaded, and with 10,000 pending (sqlite-10k: the load
// reads the page on screen first; the rest, read after it as the console
// does, is not timed). The commits are minReloadGap apart, as isolated
// commits are: closer ones are paced (see BenchmarkWaiterLoad in cli/).
//
// On PostgreSQL (when APPROVE_TUI_TEST_POSTGRES names a server) the demo
// store is copied into a schema of its own and the other writer has
// connections of its own: its commit reaches the console through the
// server's NOTIFY.
func BenchmarkCommitToScreen(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		f := newFixture(b)
		other, err := storage.Open(context.Background(), f.path, storage.Options{Now: fixedNow})
		if err != nil {
			b.Fatal(err)
		}
		defer other.Close()
		commitToScreen(b, f.s, other, 15)
	})
	// A long list: the console holds MaxLoaded of 10,000 pending rows,
	// and a commit's load reads the page on screen first.
	b.Run("sqlite-10k", func(b *testing.B) {
		path := bulkFile(b, b.TempDir(), 10_000, 10_000)
		s, err := storage.Open(context.Background(), path, storage.Options{Now: fixedNow})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		other, err := storage.Open(context.Background(), path, storage.Options{Now: fixedNow})
		if err != nil {
			b.Fatal(err)
		}
		defer other.Close()
		commitToScreen(b, s, other, 10_000)
	})
	b.Run("postgres", func(b *testing.B) {
		pgtest.Require(b)
		f := newFixture(b)
		url := pgtest.Schema(b)
		s, err := storage.Open(context.Background(), url, storage.Options{Create: true, Now: fixedNow})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if _, err := storage.Copy(context.Background(), f.s, s, storage.CopyOptions{}, operator); err != nil {
			b.Fatal(err)
		}
		other, err := storage.Open(context.Background(), pgtest.WithParam(url, "application_name", "bench-other"), storage.Options{Now: fixedNow})
		if err != nil {
			b.Fatal(err)
		}
		defer other.Close()
		commitToScreen(b, s, other, 15)
	})
}

func commitToScreen(b *testing.B, s, other *storage.Store, pending int) {
	m := New(Options{Store: s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, Label: "bench"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	Settle(m, m.Init())
	// The console's own watcher (startWatch), driven here: its wake-up, the
	// reload it triggers and the frame.
	ready := startWatch(context.Background(), s)().(watchReadyMsg)
	if ready.err != nil {
		b.Fatal(ready.err)
	}
	w := ready.w
	defer w.Close()
	lat := make([]time.Duration, 0, b.N)        // from the submit's start (its own transaction included)
	fromCommit := make([]time.Duration, 0, b.N) // from the submit's return
	woke := make([]time.Duration, 0, b.N)       // from the submit's return to the watcher's wake-up
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Isolated commits: past the pause the console keeps between two
		// loads of its list (commits closer together are paced).
		time.Sleep(minReloadGap + 10*time.Millisecond)
		for changed, _ := w.Changed(context.Background()); changed; changed, _ = w.Changed(context.Background()) {
		}
		p, _, _ := risk.Propose(risk.Draft{Command: fmt.Sprintf("rm -rf /srv/tmp/%d", i), SessionKey: "agent:bench", TTL: time.Hour}, t0)
		start := time.Now()
		if err := other.Submit(context.Background(), p, rival); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		if err := w.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		woke = append(woke, time.Since(committed))
		msg := m.reload()()
		if bm, ok := msg.(tea.BatchMsg); ok {
			msg = bm[0]()
		}
		_, rest := m.Update(msg)
		if !strings.Contains(m.View(), fmt.Sprintf("%d pending", pending+1+i)) {
			b.Fatalf("frame lacks the new proposal")
		}
		lat = append(lat, time.Since(start))
		fromCommit = append(fromCommit, time.Since(committed))
		// What the console does next, untimed: a long list's rest.
		b.StopTimer()
		Settle(m, rest)
		b.StartTimer()
	}
	b.StopTimer()
	for _, l := range []struct {
		name string
		d    []time.Duration
	}{{"", lat}, {"commit-", fromCommit}, {"wake-", woke}} {
		sort.Slice(l.d, func(i, j int) bool { return l.d[i] < l.d[j] })
		b.ReportMetric(float64(l.d[len(l.d)/2].Microseconds()), l.name+"p50-µs")
		b.ReportMetric(float64(l.d[len(l.d)*99/100].Microseconds()), l.name+"p99-µs")
	}
}
