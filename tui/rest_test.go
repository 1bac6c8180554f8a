package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// A commit on a long list reads the page on screen; the rows below it stay
// as they were read last and are read again restDelay later. A commit
// noticed while they are read stops that read and has its page read first;
// once the rest has been owed for restMaxWait, it finishes first.
func TestRestOfALongListComesBetweenCommits(t *testing.T) {
	path := bulkFile(t, t.TempDir(), 600, 600)
	m, _ := fileConsole(t, path, 120, 40, nil)
	if len(m.rows) != 600 || m.restOwed || m.loading {
		t.Fatalf("first load: %d rows, rest owed %v, loading %v", len(m.rows), m.restOwed, m.loading)
	}
	other, err := storage.Open(context.Background(), path, storage.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	n := 0
	commit := func() {
		t.Helper()
		n++
		p, _, err := risk.Propose(risk.Draft{Command: fmt.Sprintf("rm -rf /srv/rest/%d", n), SessionKey: "agent:rest",
			TTL: time.Duration(n) * time.Minute}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Submit(context.Background(), p, rival); err != nil {
			t.Fatal(err)
		}
	}
	// one runs cmd and hands its only message of the type wanted to the
	// console; it returns the console's next command.
	one := func(cmd tea.Cmd, want func(tea.Msg) bool) tea.Cmd {
		t.Helper()
		var got []tea.Msg
		for _, msg := range runBatch(cmd) {
			if want(msg) {
				got = append(got, msg)
			}
		}
		if len(got) != 1 {
			t.Fatalf("%d messages of the kind wanted: %#v", len(got), got)
		}
		_, next := m.Update(got[0])
		return next
	}
	// listed: the console's list is the store's, row for row (the rows
	// below a page were read before its commit, which added a row above
	// them all).
	listed := func() {
		t.Helper()
		want, err := other.List(context.Background(), storage.ListOptions{Limit: MaxLoaded})
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != len(m.rows) {
			t.Fatalf("%d rows listed, the store has %d", len(m.rows), len(want))
		}
		for i, r := range want {
			if m.rows[i].rec.ApprovalID != r.ApprovalID {
				t.Fatalf("row %d is %s, the store's %s", i, m.rows[i].rec.ApprovalID, r.ApprovalID)
			}
		}
	}
	isPending := func(msg tea.Msg) bool { _, ok := msg.(pendingMsg); return ok }
	isRestDue := func(msg tea.Msg) bool { _, ok := msg.(restDueMsg); return ok }

	// A commit: its page, and the old rows below it.
	commit()
	next := one(m.reload(), isPending)
	if !m.restOwed || m.loading || m.total != 601 || len(m.rows) != 601 {
		t.Fatalf("after the page: rest owed %v, loading %v, %d pending, %d rows", m.restOwed, m.loading, m.total, len(m.rows))
	}
	screenHas(t, m, "601 pending")
	listed()
	if m.resting() {
		t.Fatal("the rest is read with the page")
	}
	// A load starts before the rest is due (a heartbeat's commit, say) and
	// finds nothing changed since the page: the rest still comes after it.
	again := m.reload()
	if cmd := one(next, isRestDue); cmd != nil || m.resting() {
		t.Fatal("the rest was read while a load was on its way")
	}
	var same []tea.Msg
	for _, msg := range runBatch(again) {
		if pm, ok := msg.(pendingMsg); ok {
			if !pm.same {
				t.Fatal("the load after the page read the list again")
			}
			same = append(same, pm)
		}
	}
	if len(same) != 1 {
		t.Fatalf("%d loads", len(same))
	}
	_, next = m.Update(same[0])
	// The rest, restDelay later: its read starts.
	readRest := one(next, isRestDue)
	if !m.resting() || !m.loading || readRest == nil {
		t.Fatalf("the rest's read did not start: resting %v, loading %v", m.resting(), m.loading)
	}

	// Another commit while it runs: the read is stopped, the page read now.
	commit()
	gen := m.gen
	m.loadEnd = time.Now().Add(-time.Second) // past the pause between loads
	_, cmd := m.Update(changedMsg{who: storage.Committers{Others: true}})
	if m.resting() || !m.loading || m.dirty || m.gen != gen+2 {
		t.Fatalf("the commit did not stop the rest: resting %v, loading %v, dirty %v, %d loads", m.resting(), m.loading, m.dirty, m.gen-gen)
	}
	rows := len(m.rows)
	for _, msg := range runBatch(readRest) {
		m.Update(msg) // the stopped read's result, if it still came: dropped
	}
	if len(m.rows) != rows || !m.loading {
		t.Fatal("the stopped read of the rest changed the list")
	}
	next = one(cmd().(tea.BatchMsg)[0], isPending) // the commit's page (not the watcher's next wait)
	if m.total != 602 || !m.restOwed {
		t.Fatalf("the second commit's page: %d pending, rest owed %v", m.total, m.restOwed)
	}
	listed() // the page and the rows below it, in the array of the first page's list

	// Owed for restMaxWait: a commit waits for the rest.
	readRest = one(next, isRestDue)
	m.restSince = time.Now().Add(-restMaxWait)
	commit()
	m.Update(changedMsg{who: storage.Committers{Others: true}})
	if !m.resting() || !m.dirty {
		t.Fatalf("a commit stopped a rest owed for %v: resting %v, dirty %v", restMaxWait, m.resting(), m.dirty)
	}
	next = one(readRest, isPending) // read after the commit: it has the new row
	if m.restOwed || m.resting() || len(m.rows) != 603 {
		t.Fatalf("after the rest: owed %v, resting %v, %d rows", m.restOwed, m.resting(), len(m.rows))
	}
	// ... and the commit's load follows it.
	if !m.loading || next == nil {
		t.Fatal("no load for the commit that waited for the rest")
	}
	Settle(m, next)
	if m.loading || m.restOwed || len(m.rows) != 603 || m.total != 603 {
		t.Fatalf("after the commit that waited: loading %v, rest owed %v, %d rows, %d pending", m.loading, m.restOwed, len(m.rows), m.total)
	}
	listed()
}
