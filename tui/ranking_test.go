package tui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// The first open of a large file the store has never ranked: the first
// frame comes at once with the soonest-expiring proposals and says the
// order is provisional; once the store has ranked every pending row, the
// next load shows the most urgent first, as the list does from then on.
func TestConsoleShowsTheRankingOfALargeFile(t *testing.T) {
	ctx := context.Background()
	var kinds []string
	m, s := fileConsole(t, bulkFile(t, t.TempDir(), 12_000, 6_000), 120, 40, func(o *Options) {
		o.OnEvent = func(e Event) { kinds = append(kinds, e.Kind) }
	})
	first := m.View()
	if head := strings.SplitN(first, "\n", 2)[0]; !strings.Contains(head, "soonest first · 6000 pending") || !strings.Contains(head, "ranking ") {
		t.Fatalf("the first frame does not say the order is provisional:\n%s", first)
	}
	if len(m.rows) == 0 {
		t.Fatalf("no proposals on the first frame:\n%s", first)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, p, err := s.ListUrgent(ctx, storage.ListOptions{Limit: 1}); err != nil || !p.Filling {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ranking did not end")
		}
	}
	if err := s.RankProgress().Err; err != nil {
		t.Fatal(err)
	}
	Settle(m, m.reload()) // what the fill's last commit, waking the console, does

	ranked := m.View()
	if head := strings.SplitN(ranked, "\n", 2)[0]; strings.Contains(head, "ranking") || !strings.Contains(head, "of 6000 pending") {
		t.Fatalf("still provisional after the ranking:\n%s", ranked)
	}
	want, err := s.List(ctx, storage.ListOptions{Limit: len(m.rows)})
	if err != nil {
		t.Fatal(err)
	}
	var got, wantIDs []string
	for i, r := range m.rows {
		got, wantIDs = append(got, r.rec.ApprovalID), append(wantIDs, want[i].ApprovalID)
	}
	if !slices.Equal(got, wantIDs) {
		t.Fatal("the console's rows are not the ranked list")
	}
	if !slices.Contains(kinds, "ranking") || !slices.Contains(kinds, "ranked") {
		t.Fatalf("events %v", kinds)
	}
}

// On a long list, the load after a commit reads the rows on screen first
// (and the rows around the selection), draws, and reads the rest right
// after: a commit shows without waiting for thousands of rows. Meanwhile
// the list keeps its length and the selection its row.
func TestLongListLoadsItsFirstPageFirst(t *testing.T) {
	ctx := context.Background()
	m, s := fileConsole(t, bulkFile(t, t.TempDir(), 1000, 1000), 120, 40, nil)
	if len(m.rows) != 1000 {
		t.Fatalf("%d rows loaded", len(m.rows))
	}
	press(m, "j", "j", "j")
	selected := m.selID
	if m.indexOf(selected) != 3 {
		t.Fatalf("selected %s at %d", selected, m.indexOf(selected))
	}

	// Another process submits the most urgent proposal of all.
	p, _, err := risk.Propose(risk.Draft{Command: "rm -rf /srv/new", SessionKey: "agent:new", ID: "newest000001"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	soon := model.Epoch(t0.Add(2 * time.Minute))
	p.ExpiresAt = &soon
	if err := s.Submit(ctx, p, operator); err != nil {
		t.Fatal(err)
	}
	cmd := m.reload()
	var page pendingMsg
	for _, msg := range runBatch(cmd) {
		if pm, ok := msg.(pendingMsg); ok {
			page = pm
		}
	}
	if page.limit >= MaxLoaded || page.limit < m.listRows() || len(page.rows) != page.limit {
		t.Fatalf("the load after the commit read %d rows (limit %d), want a page", len(page.rows), page.limit)
	}
	_, rest := m.Update(page)
	if len(m.rows) != 1001 || m.rows[0].rec.ApprovalID != "newest000001" || m.selID != selected {
		t.Fatalf("after the first page: %d rows, first %s, selected %s (was %s)", len(m.rows), m.rows[0].rec.ApprovalID, m.selID, selected)
	}
	if head := strings.SplitN(m.View(), "\n", 2)[0]; !strings.Contains(head, "1001 pending") {
		t.Fatalf("header after the first page: %s", head)
	}
	Settle(m, rest)
	want, err := s.List(ctx, storage.ListOptions{Limit: MaxLoaded})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.rows) != len(want) {
		t.Fatalf("%d rows after the rest, want %d", len(m.rows), len(want))
	}
	for i := range want {
		if m.rows[i].rec.ApprovalID != want[i].ApprovalID {
			t.Fatalf("row %d is %s, want %s", i, m.rows[i].rec.ApprovalID, want[i].ApprovalID)
		}
	}
	if m.selID != selected {
		t.Fatalf("selection moved to %s", m.selID)
	}
}

// runBatch runs a command and the commands of its batches, one level deep
// at a time, and returns their messages.
func runBatch(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runBatch(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// A ranking that failed: the header says the order is provisional and why,
// once, in the note.
func TestConsoleSaysTheRankingStopped(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	rows, err := f.s.List(context.Background(), storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m.gen++
	fail := &storage.UnavailableError{Op: "rank", Reason: "disk full"}
	m.Update(pendingMsg{gen: m.gen, limit: MaxLoaded, rows: rows, total: len(rows), at: fixedNow(),
		ranking: storage.RankProgress{Provisional: true, Err: fail}})
	v := m.View()
	if head := strings.SplitN(v, "\n", 2)[0]; !strings.Contains(head, "ranking stopped · soonest first") {
		t.Fatalf("header: %s", head)
	}
	if !strings.Contains(v, "ranking the pending proposals stopped: disk full") {
		t.Fatalf("no note of why:\n%s", v)
	}
}
