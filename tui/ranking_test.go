package tui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/storage"
)

// The first open of a large file the store has never ranked: the first
// frame comes at once with the soonest-expiring proposals and says the
// order is provisional; once the store has ranked every pending row, the
// next load shows the most urgent first, as the list does from then on.
func TestConsoleShowsTheRankingOfALargeFile(t *testing.T) {
	path := bulkFile(t, t.TempDir(), 12_000, 6_000)
	ctx := context.Background()
	s, err := storage.Open(ctx, path, storage.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var kinds []string
	m := New(Options{Store: s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, NoPresence: true, Label: "ranking",
		OnEvent: func(e Event) { kinds = append(kinds, e.Kind) }})
	defer m.Close()
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	Settle(m, m.Init())
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
	if err := s.RankFillError(); err != nil {
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
