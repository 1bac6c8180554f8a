package tui

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// Flows run the console as a real Bubble Tea program (teatest), live: the
// store watcher and the clock run, and other connections change the file
// underneath it.

func liveConsole(t *testing.T, f *fixture, actor model.Actor) *teatest.TestModel {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := New(Options{Store: f.s, Actor: actor, Renderer: asciiRenderer(), Now: fixedNow, Context: ctx, Label: "flow"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	t.Cleanup(func() { _ = tm.Quit() })
	return tm
}

func waitScreen(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range want {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func send(tm *teatest.TestModel, keys ...string) {
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
}

// filterTo narrows the list to one id (the filter matches ids), closes the
// filter (enter) and sends keys.
func filterTo(tm *teatest.TestModel, id string, keys ...string) {
	send(tm, "/")
	tm.Type(id)
	send(tm, append([]string{"enter"}, keys...)...)
}

// liveOnDrop is a live console for actor on a new fixture, once its list
// shows ready; id is the fixture's "drop" proposal.
func liveOnDrop(t *testing.T, actor model.Actor, ready string) (f *fixture, id string, tm *teatest.TestModel) {
	t.Helper()
	f = newFixture(t)
	tm = liveConsole(t, f, actor)
	waitScreen(t, tm, ready)
	return f, f.ids["drop"], tm
}

// openApprove narrows the list to id, reads the proposal to the end and
// opens the approve prompt.
func openApprove(t *testing.T, tm *teatest.TestModel, id string) {
	t.Helper()
	filterTo(tm, id, "enter")
	// As an operator does, read once the proposal stands whole: its why
	// and its waiter's state have arrived (before, nothing drawn counts).
	waitScreen(t, tm, "why HIGH", "approving will not run anything")
	send(tm, "end", "a")
	waitScreen(t, tm, "Type the approval id")
}

func status(t *testing.T, f *fixture, id string) *storage.Record { return golden.Record(t, f.s, id) }

func auditCount(t *testing.T, f *fixture, id, event, outcome, reason string) int {
	return golden.AuditCount(t, f.s, id, event, outcome, reason)
}

func TestFlowApproveAfterTypingTheID(t *testing.T) {
	f, id, tm := liveOnDrop(t, operator, "15 pending")
	openApprove(t, tm, id)
	tm.Type(id)
	waitScreen(t, tm, "approve: press enter")
	send(tm, "enter")
	waitScreen(t, tm, "approved "+id)
	rec := status(t, f, id)
	if rec.Status != model.StatusConsumed || rec.ConsumedBy != operator.String() {
		t.Fatalf("after approve: %s by %q", rec.Status, rec.ConsumedBy)
	}
}

func TestFlowWrongIDKeepsApproveDisabled(t *testing.T) {
	f, id, tm := liveOnDrop(t, operator, "15 pending")
	openApprove(t, tm, id)
	tm.Type(strings.ToLower(id))
	send(tm, "enter")
	waitScreen(t, tm, "not approved: the typed text does not match "+id)
	if rec := status(t, f, id); rec.Status != model.StatusPending {
		t.Fatalf("a wrong id changed the row: %s", rec.Status)
	}
	// The attempt went through the decision path, which refused and recorded it.
	if n := auditCount(t, f, id, storage.EventApprove, storage.OutcomeRefused, "confirmation_mismatch"); n != 1 {
		t.Fatalf("wrong-id refusals audited: %d, want 1", n)
	}
	// Correcting the text enables it.
	for range id {
		send(tm, "backspace")
	}
	tm.Type(id)
	waitScreen(t, tm, "approve: press enter")
}

func TestFlowPasteIsRefused(t *testing.T) {
	f, id, tm := liveOnDrop(t, operator, "15 pending")
	openApprove(t, tm, id)
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(id), Paste: true})
	waitScreen(t, tm, "pasted text refused")
	// Without bracketed paste, a paste is one long chunk of runes: refused
	// too. Enter then says that the id was pasted, not mistyped.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(id)})
	send(tm, "enter")
	waitScreen(t, tm, "not approved: the id was pasted")
	if rec := status(t, f, id); rec.Status != model.StatusPending {
		t.Fatalf("a pasted id approved: %s", rec.Status)
	}
	// Typing clears it: a wrong typed id is a wrong id again.
	tm.Type("x")
	send(tm, "enter")
	waitScreen(t, tm, "approve stays disabled until", "the typed text does not match")
}

func TestFlowAnotherProcessConsumesFirst(t *testing.T) {
	f, id, tm := liveOnDrop(t, operator, "15 pending")
	openApprove(t, tm, id)
	tm.Type(id)
	waitScreen(t, tm, "approve: press enter")

	// Another process (its own connections to the file) approves first.
	other, err := storage.Open(context.Background(), f.path, storage.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Consume(context.Background(), id, id, rival); err != nil {
		t.Fatal(err)
	}
	// The console notices, closes the prompt and says by whom.
	waitScreen(t, tm, id+" was approved elsewhere by alice@laptop via cli")
	send(tm, "enter") // the prompt is gone: enter no longer approves anything
	time.Sleep(100 * time.Millisecond)
	if n := auditCount(t, f, id, storage.EventApprove, storage.OutcomeOK, ""); n != 1 {
		t.Fatalf("%d successful approvals of %s", n, id)
	}
	if rec := status(t, f, id); rec.ConsumedBy != rival.String() {
		t.Fatalf("consumed by %q", rec.ConsumedBy)
	}
}

func TestFlowLostRaceAtEnter(t *testing.T) {
	f := newFixture(t)
	id := f.ids["drop"]
	m := console(t, f, operator, 100, 30)
	typedApproval(t, m, id)
	if _, err := f.s.Consume(context.Background(), id, id, rival); err != nil {
		t.Fatal(err)
	}
	press(m, "enter")
	screenHas(t, m, "lost: "+id+" was already approved by alice@laptop via cli")
	if n := auditCount(t, f, id, storage.EventApprove, storage.OutcomeOK, ""); n != 1 {
		t.Fatalf("%d successful approvals", n)
	}
	if n := auditCount(t, f, id, storage.EventApprove, storage.OutcomeRefused, "not_pending"); n != 1 {
		t.Fatalf("the lost attempt was not audited (%d)", n)
	}
}

func TestFlowDenyWithReason(t *testing.T) {
	f, id, tm := liveOnDrop(t, operator, "15 pending")
	filterTo(tm, id, "d")
	waitScreen(t, tm, "Deny "+id+"?")
	tm.Type("archive not verified")
	send(tm, "enter")
	waitScreen(t, tm, "denied "+id)
	if rec := status(t, f, id); rec.Status != model.StatusDenied {
		t.Fatalf("status %s", rec.Status)
	}
	if r, _ := f.s.DenyReason(context.Background(), id); r != "archive not verified" {
		t.Fatalf("deny reason %q", r)
	}
}

func TestFlowReadOnlyIsRefusedByTheDecisionPath(t *testing.T) {
	f, id, tm := liveOnDrop(t, watcher, "15 pending · pairing-guest [read-only]")
	filterTo(tm, id, "enter", "end", "a")
	waitScreen(t, tm, "refused: pairing-guest via ssh is a watcher")
	send(tm, "d")
	waitScreen(t, tm, "cannot deny")
	if rec := status(t, f, id); rec.Status != model.StatusPending {
		t.Fatalf("a watcher changed the row: %s", rec.Status)
	}
	if n := auditCount(t, f, id, storage.EventApprove, storage.OutcomeRefused, "read_only") +
		auditCount(t, f, id, storage.EventDeny, storage.OutcomeRefused, "read_only"); n != 2 {
		t.Fatalf("refusals audited: %d, want 2", n)
	}
}

func TestFlowLiveRowsAppearAndVanish(t *testing.T) {
	f := newFixture(t)
	tm := liveConsole(t, f, operator)
	waitScreen(t, tm, "15 pending")
	other, err := storage.Open(context.Background(), f.path, storage.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	p, _, err := risk.Propose(risk.Draft{Command: "zfs destroy -r tank/scratch", SessionKey: "agent:live:test", TTL: time.Hour}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Submit(context.Background(), p, rival); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, tm, "16 pending", "zfs destroy -r tank/scratch")
	if _, err := other.Deny(context.Background(), p.ApprovalID, rival, "no"); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, tm, "15 pending")
}

// Invariant 8 on a narrow screen: the list shows one line of the command,
// so approve first opens the whole proposal, even a short one.
func TestApproveNeedsTheProposalShownFirst(t *testing.T) {
	f := newFixture(t)
	// Short enough to fit the page of an 80-column screen 30 rows high
	// (with its explanation it no longer fits 24 rows).
	id := f.ids["low"]
	m := console(t, f, operator, 80, 30)
	selectThenPress(t, m, id, "a")
	if m.prompt != nil {
		t.Fatal("the approve prompt opened from the list, before the proposal was shown")
	}
	if !m.pageOpen {
		t.Fatal("approve did not open the proposal")
	}
	// It fits: the note says it is on screen now, not "0 lines" unread.
	if !strings.Contains(m.note.text, "all of "+id+" is on screen now; approve again (a)") || strings.Contains(m.note.text, "0 lines") {
		t.Fatalf("note after approve opened a short proposal: %q", m.note.text)
	}
	press(m, "a") // the refusal holds the keys until dismissed
	if m.prompt != nil {
		t.Fatal("a key after a refused approve opened the prompt")
	}
	press(m, "esc", "a") // now it has been on screen whole (it fits)
	if m.prompt == nil {
		t.Fatalf("prompt did not open after the proposal was shown:\n%s", m.View())
	}
	// A long one must be scrolled through: End reads nothing it skips (at
	// 80x24, where its body is more than two pages).
	press(m, "esc", "esc")
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	selectThenPress(t, m, f.ids["heredoc"], "a", "esc", "a", "esc")
	if m.prompt != nil {
		t.Fatal("the prompt opened before the long proposal was read")
	}
	press(m, "end", "a")
	if m.prompt != nil {
		t.Fatal("End opened the gate")
	}
	screenHas(t, m, "lines of the command and diff have not been on screen")
	press(m, "esc", "home")
	for i := 0; i < 200 && !m.detail.SeenAll(); i++ {
		press(m, "down")
	}
	press(m, "a")
	if m.prompt == nil {
		t.Fatalf("the prompt did not open after every line was on screen:\n%s", m.View())
	}
}

// watchedConsole is the demo console at 100x30 with a live watcher on its
// store (its commits are not run: the tests send changedMsg themselves).
func watchedConsole(t *testing.T) *Model {
	t.Helper()
	f := newFixture(t)
	m := console(t, f, operator, 100, 30)
	w, err := f.s.Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	m.Update(watchReadyMsg{w: w})
	return m
}

// Commits noticed while a load is out (many waiters heartbeating, say)
// coalesce: one load at a time, and one more after it.
func TestReloadsCoalesce(t *testing.T) {
	m := watchedConsole(t)
	before := m.inflight
	_, first := m.Update(changedMsg{})
	if m.inflight != before+1 || !m.loading {
		t.Fatalf("the first change did not start a load (%d in flight)", m.inflight)
	}
	for i := 0; i < 5; i++ {
		m.Update(changedMsg{})
	}
	if m.inflight != before+1 || !m.dirty {
		t.Fatalf("changes during a load started more loads (%d in flight)", m.inflight)
	}
	// The load comes back (or, right after the console's first load, the
	// pause before it ends); exactly one more follows for the changes it
	// missed.
	var reload tea.Cmd
	for _, c := range first().(tea.BatchMsg) {
		if c != nil {
			reload = c
			break
		}
	}
	gen := m.gen
	_, next := m.Update(reload())
	if !m.loading || m.inflight != before+1 {
		t.Fatalf("after the first load: loading %v dirty %v, %d in flight", m.loading, m.dirty, m.inflight)
	}
	Settle(m, next)
	if m.loading || m.Busy() {
		t.Fatalf("still loading after the follow-up (%d in flight)", m.inflight)
	}
	if m.gen != gen+1 {
		t.Fatalf("%d loads after the first, want 1", m.gen-gen)
	}
}

// After another process's commit the console reads the pending list again
// only when the set of pending rows changed (a heartbeat changes nothing on
// screen), and in full at least every fullReloadEvery regardless, when
// another process may have committed: its own commits alone (its presence
// refresh) change nothing the signature does not see.
func TestReloadSkipsCommitsThatLeavePendingAsItWas(t *testing.T) {
	f := newFixture(t)
	m := console(t, f, operator, 120, 40)
	first := m.rows[0].rec
	host, _ := os.Hostname()
	if err := f.s.Heartbeat(context.Background(), storage.Waiter{ApprovalID: first.ApprovalID, Host: host, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	Settle(m, m.reload())
	if m.rows[0].rec != first {
		t.Fatal("a heartbeat made the console read its list again")
	}
	m.fullAt = m.fullAt.Add(-fullReloadEvery)
	Settle(m, m.reload())
	if m.rows[0].rec != first {
		t.Fatal("a commit of this process only made the console read its list in full")
	}
	m.foreign++ // a wake-up for a commit another process may have made (changedMsg.others)
	Settle(m, m.reload())
	if m.rows[0].rec == first || m.rows[0].rec.ApprovalID != first.ApprovalID {
		t.Fatal("no full read after fullReloadEvery")
	}
	second := m.rows[0].rec
	m.fullAt = m.fullAt.Add(-fullReloadEvery)
	Settle(m, m.reload())
	if m.rows[0].rec != second {
		t.Fatal("read in full again, with no other process's commit since the last full read")
	}
	p, _, err := risk.Propose(risk.Draft{Command: "rm -rf /srv/new", SessionKey: "agent:new", TTL: time.Minute}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Submit(context.Background(), p, rival); err != nil {
		t.Fatal(err)
	}
	Settle(m, m.reload())
	if m.indexOf(p.ApprovalID) < 0 {
		t.Fatal("a new proposal did not appear")
	}
}

// restoreCopy puts a copy of the file back over its path, as restoring a
// backup does, from another process (python3's sqlite3).
func restoreCopy(t *testing.T, path string) {
	t.Helper()
	py := `import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("VACUUM INTO ?", (sys.argv[1] + ".copy",)); c.close()`
	if out, err := exec.Command("python3", "-c", py, path).CombinedOutput(); err != nil {
		t.Skipf("python3: %v %s", err, out)
	}
	if err := os.Rename(path+".copy", path); err != nil {
		t.Fatal(err)
	}
}

// The file replaced under the console: its watcher says so at once, an
// approval typed on the old screen is refused as NOT approved (nothing is
// written to either file), and the console reads the file now at the path.
func TestFileReplacedUnderTheConsole(t *testing.T) {
	f := newFixture(t)
	id := f.ids["drop"]
	m := console(t, f, operator, 100, 30)
	ready := startWatch(context.Background(), f.s)().(watchReadyMsg)
	_, waitCmd := m.Update(ready)
	typedApproval(t, m, id)

	restoreCopy(t, f.path)
	press(m, "enter")
	screenHas(t, m, "NOT approved", "replaced")
	rec, err := f.s.Get(context.Background(), id)
	if err != nil || rec.Status != model.StatusPending {
		t.Fatalf("the file now at the path: %v %v", rec, err)
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- waitCmd() }()
	select {
	case msg := <-got:
		_, cmd := m.Update(msg)
		settleSome(m, cmd, time.Second)
		screenHas(t, m, "database file changed")
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher did not notice the replaced file")
	}
	// Deciding again works, on the file now at the path.
	typedApproval(t, m, id)
	press(m, "enter")
	screenHas(t, m, "approved "+id)
}

// settleSome is Settle for a console with a live watcher: each command runs
// in its own goroutine, and those that have not answered within limit (the
// watcher's next wait) are left behind.
func settleSome(m *Model, cmd tea.Cmd, limit time.Duration) {
	msgs := make(chan tea.Msg, 64)
	var run func(c tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() { msgs <- c() }()
	}
	run(cmd)
	deadline := time.After(limit)
	for {
		select {
		case msg := <-msgs:
			switch msg := msg.(type) {
			case nil:
			case tea.BatchMsg:
				for _, c := range msg {
					run(c)
				}
			default:
				_, next := m.Update(msg)
				run(next)
			}
		case <-deadline:
			return
		}
	}
}

// A commit right after a lone load is read at once (one commit can wake the
// console twice, a millisecond apart); after two loads in a row the pause
// between loads applies again, so a storm of commits is still paced.
func TestReloadAfterALoneLoadIsImmediate(t *testing.T) {
	m := watchedConsole(t)
	m.loadStarts = [2]time.Time{time.Now().Add(-time.Second), time.Now().Add(-time.Minute)} // a lone load
	commit := func() {
		t.Helper()
		_, cmd := m.Update(changedMsg{})
		if m.dirty {
			return // paced
		}
		// The batch: the load, and the wait for the next commit (not run).
		for _, msg := range runBatch(cmd().(tea.BatchMsg)[0]) {
			if pm, ok := msg.(pendingMsg); ok {
				m.Update(pm)
			}
		}
		if m.loading {
			t.Fatal("the load did not end")
		}
	}
	gen := m.gen
	m.loadEnd = time.Now() // ... that just ended: the pause would apply
	commit()
	if m.gen != gen+1 {
		t.Fatal("a commit after a lone load waited")
	}
	commit() // the second wake-up of the same commit
	if m.gen != gen+2 {
		t.Fatal("the second load right after a lone one waited")
	}
	commit()
	if m.gen != gen+2 || !m.loading || !m.dirty {
		t.Fatalf("a third load in a row was not paced (%d loads)", m.gen-gen)
	}
}
