package approvals

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// A parked proposal, read from a real store, through its life: parked,
// approved and waiting to be taken, taken; then one whose window ended
// and one whose call ran without approval. Every surface's words come
// from here.
func TestParkWordsThroughItsLife(t *testing.T) {
	s, now := rigWith(t, true)
	// 2026-05-28 20:26:40 UTC: parked at 20:26, until 21:26 (the expiry).
	if _, err := s.Park(ctx, "quorum-1", now.Add(2*time.Hour), "hook timeout\x1b[31m", agent); err != nil {
		t.Fatal(err)
	}
	p, err := Get(ctx, s, "quorum-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := ParkStateOf(p.Record, &p.Waiter, *now); got != ParkParked {
		t.Fatalf("state %q", got)
	}
	want := `the agent stopped waiting at 20:26 UTC (hook timeout\x1b[31m); approving lets this exact call through when it is asked again, until 21:26 UTC`
	if got := ParkWords(p.Record, &p.Waiter, *now); got != want {
		t.Fatalf("parked:\n got %q\nwant %q", got, want)
	}
	if got := ParkJSON(p.Record, &p.Waiter, *now).String(); !strings.Contains(got, `"state": "parked"`) || !strings.Contains(got, `"until": 1780003600`) ||
		!strings.Contains(got, `"taken_by": null`) || !strings.Contains(got, `"stopped_at": 1780000000`) {
		t.Fatalf("json: %s", got)
	}
	if _, words := WaiterWords(p.Record, &p.Waiter, *now, Text); words != "none: no process is waiting on this id; "+parkedRuns {
		t.Fatalf("waiter words: %q", words)
	}
	if got := StatusParkWords(p.Record, false, ParkParked); got != "pending (parked)" {
		t.Fatalf("status: %q", got)
	}
	if ParkMark(ParkParked) != "P" || ParkMark(ParkTaken) != "" {
		t.Fatal("marks")
	}

	*now = now.Add(10 * time.Minute)
	if _, err := s.Consume(ctx, "quorum-1", "quorum-1", person("bob")); err != nil {
		t.Fatal(err)
	}
	p, _ = Get(ctx, s, "quorum-1")
	if got := ParkWords(p.Record, &p.Waiter, *now); !strings.HasSuffix(got, "; approved: this exact call goes through when it is asked again, until 21:26 UTC") {
		t.Fatalf("approved: %q", got)
	}
	m := model.MatchOf(&p.Proposal)
	if _, err := s.Take(ctx, "quorum-1", m, model.Actor{Surface: model.SurfaceRunner, Name: "hook\x07@host"}); err != nil {
		t.Fatal(err)
	}
	p, _ = Get(ctx, s, "quorum-1")
	if got := ParkStateOf(p.Record, &p.Waiter, *now); got != ParkTaken {
		t.Fatalf("state %q", got)
	}
	if got := ParkWords(p.Record, &p.Waiter, *now); got != `taken by hook\x07@host via runner at 20:36 UTC; no run is recorded` {
		t.Fatalf("taken: %q", got)
	}
}

func TestParkWindowOverAndRanWithoutApproval(t *testing.T) {
	s, now := rig(t)
	if _, err := s.Park(ctx, "quorum-1", now.Add(15*time.Minute), "", agent); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(20 * time.Minute)
	p, _ := Get(ctx, s, "quorum-1")
	if got := ParkStateOf(p.Record, &p.Waiter, *now); got != ParkWindowOver {
		t.Fatalf("state %q", got)
	}
	if got := ParkWords(p.Record, &p.Waiter, *now); got != "the agent stopped waiting at 20:26 UTC (its waiter stopped waiting); park window ended at 20:41 UTC: an approval is refused" {
		t.Fatalf("window over: %q", got)
	}
	if got := StatusParkWords(p.Record, false, ParkWindowOver); got != "pending (park over)" {
		t.Fatalf("status: %q", got)
	}
	if _, err := s.RecordRanWithoutApproval(ctx, "quorum-1", "PostToolUse\x1b]0;x\x07 reported it", agent); err != nil {
		t.Fatal(err)
	}
	p, _ = Get(ctx, s, "quorum-1")
	if got := ParkStateOf(p.Record, &p.Waiter, *now); got != ParkClosed {
		t.Fatalf("state %q", got)
	}
	if got := ParkWords(p.Record, &p.Waiter, *now); !strings.HasSuffix(got, "; its agent ran the command without approval before anyone took an approval: the park is closed") {
		t.Fatalf("closed: %q", got)
	}
	want := `ran without approval (PostToolUse\x1b]0;x\x07 reported it)`
	if got := RanWithoutApprovalWords(p.Record); got != want {
		t.Fatalf("ran: %q", got)
	}
	if got := ExecutionWords(p.Record, nil, *now); !strings.HasPrefix(got, want+" ") {
		t.Fatalf("execution: %q", got)
	}
	if ExecWords(model.ExecExecuted) != "executed" {
		t.Fatal("other statuses keep their name")
	}
}

// A reservation says nothing while its waiter lives or is not read; once
// the waiter is gone without parking it, it is as good as parked, at its
// last heartbeat.
func TestParkReserved(t *testing.T) {
	now := t0
	rec := &storage.Record{Proposal: model.Proposal{ApprovalID: "r-1", Status: model.StatusPending},
		EffectiveStatus: model.StatusPending,
		Park:            &storage.Park{ApprovalID: "r-1", Until: model.Epoch(now.Add(time.Hour))}}
	w := &storage.Waiter{PID: 7, Host: "h", HeartbeatAt: model.Epoch(now.Add(-time.Minute)), Surface: "hook"}
	live := &storage.WaiterStatus{State: storage.WaiterLive, Waiter: w}
	dead := &storage.WaiterStatus{State: storage.WaiterDead, Waiter: w}
	for _, ws := range []*storage.WaiterStatus{nil, live} {
		if st := ParkStateOf(rec, ws, now); st != ParkNone || ParkWords(rec, ws, now) != "" || ParkJSON(rec, ws, now) != nil {
			t.Fatalf("reserved, waiter %v: %q", ws, st)
		}
	}
	want := "its hook stopped without a word at 20:25 UTC (killed?); approving lets this exact call through when it is asked again, until 21:26 UTC"
	if got := ParkWords(rec, dead, now); got != want {
		t.Fatalf("gone:\n got %q\nwant %q", got, want)
	}
	// The surface is the waiter's own word: a runner is named, anything
	// else is "its waiter".
	for surface, who := range map[string]string{"runner": "its runner ", "x\x1b[31m": "its waiter ", "": "its waiter "} {
		w2 := *w
		w2.Surface = surface
		if got := ParkWords(rec, &storage.WaiterStatus{State: storage.WaiterDead, Waiter: &w2}, now); !strings.HasPrefix(got, who+"stopped without a word") {
			t.Fatalf("surface %q: %q", surface, got)
		}
	}
	if got := ParkJSON(rec, dead, now).String(); !strings.Contains(got, `"state": "reserved"`) || !strings.Contains(got, `"stopped_at": null`) || !strings.Contains(got, `"gone_at": 1779999940`) {
		t.Fatalf("json: %s", got)
	}
	if _, words := WaiterWords(rec, dead, now, Console); !strings.HasSuffix(words, ": "+parkedRuns) {
		t.Fatalf("console waiter: %q", words)
	}
	// Its waiter saw the end: a closed reservation says nothing.
	rec.EffectiveStatus, rec.Status = model.StatusDenied, model.StatusDenied
	if st := ParkStateOf(rec, dead, now); st != ParkNone {
		t.Fatalf("closed reservation: %q", st)
	}
	// Another day: the date is said.
	if got := clock(model.Epoch(now.Add(30*time.Hour)), now); got != "2026-05-30 02:26 UTC" {
		t.Fatalf("clock: %q", got)
	}
}

// A parks row that says taken, of a proposal nobody approved (written
// outside approve-tui): the words do not say an approval let anything
// through.
func TestParkWordsForgedTakenOfPending(t *testing.T) {
	s, now := rig(t)
	if _, err := s.Park(ctx, "quorum-1", now.Add(30*time.Minute), "hook timeout", agent); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+s.Path()+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE approve_tui_parks SET taken_by = 'agent', taken_at = ? WHERE approval_id = 'quorum-1'`, model.Epoch(*now)); err != nil {
		t.Fatal(err)
	}
	p, err := Get(ctx, s, "quorum-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := ParkWords(p.Record, &p.Waiter, *now); got != "its parks row says taken by agent at 20:26 UTC, but it was never approved: nothing lets it through" {
		t.Fatalf("forged taken: %q", got)
	}
}
