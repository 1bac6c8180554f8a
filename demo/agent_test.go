package demo

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

var operator = model.Actor{Surface: model.SurfaceCLI, Name: "alice@test", Person: "alice"}

// runAgent starts RunAgent and returns a function that stops it and waits
// for it to return, and the errors it reported.
func runAgent(t *testing.T, s *storage.Store, opt AgentOptions) (stop func() []error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var errs []error
	opt.OnError = func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	done := make(chan error, 1)
	go func() { done <- RunAgent(ctx, s, opt) }()
	var once sync.Once
	stop = func() []error {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("RunAgent returned %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("RunAgent did not return after its context ended")
			}
		})
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), errs...)
	}
	t.Cleanup(func() { stop() })
	return stop
}

func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pendingIDs(t *testing.T, s *storage.Store) []string {
	t.Helper()
	recs, err := s.List(context.Background(), storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ApprovalID
	}
	return ids
}

func waiterOf(t *testing.T, s *storage.Store, id string) storage.Liveness {
	t.Helper()
	ws, err := s.WaiterState(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ws.State
}

func get(t *testing.T, s *storage.Store, id string) *storage.Record {
	t.Helper()
	rec, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// outcomeWithin bounds how long an approval takes to reach the agent. It
// should be well under a second; it is 2 s because storage.Watcher
// currently checks PRAGMA data_version as soon as the WAL write is notified,
// before the commit is visible, and so often falls back to its 1 s poll.
const outcomeWithin = 2 * time.Second

func TestRunAgent(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	stop := runAgent(t, s, AgentOptions{Seed: 1, Every: 50 * time.Millisecond, MaxPending: 6})

	eventually(t, 3*time.Second, "the agent submitted fewer than 3 proposals", func() bool { return len(pendingIDs(t, s)) >= 3 })
	ids := pendingIDs(t, s)
	for _, id := range ids[:3] {
		// The agent submits, then its waiter's first heartbeat follows
		// (batched per interval): live within a moment, not at once.
		eventually(t, outcomeWithin, id+": no live waiter", func() bool { return waiterOf(t, s, id) == storage.WaiterLive })
		evs, err := s.Audit(ctx, storage.AuditQuery{ApprovalID: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Surface != string(model.SurfaceDemo) {
			t.Fatalf("%s: audit %+v", id, evs)
		}
	}

	approved, denied := ids[0], ids[1]
	if _, err := s.Consume(ctx, approved, approved, operator); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deny(ctx, denied, operator, "not today"); err != nil {
		t.Fatal(err)
	}
	eventually(t, outcomeWithin, "no execution outcome recorded for the approved proposal", func() bool {
		return get(t, s, approved).ExecutionStatus != model.ExecNotStarted
	})
	rec := get(t, s, approved)
	if rec.ExecutionStatus != model.ExecExecuted || !strings.HasPrefix(rec.ExecutionReason, "exit code ") {
		t.Errorf("approved: %s %q", rec.ExecutionStatus, rec.ExecutionReason)
	}
	eventually(t, outcomeWithin, "the agent still waits on decided proposals", func() bool {
		return waiterOf(t, s, approved) == storage.WaiterNone && waiterOf(t, s, denied) == storage.WaiterNone
	})
	time.Sleep(300 * time.Millisecond)
	if rec := get(t, s, denied); rec.ExecutionStatus != model.ExecNotStarted {
		t.Errorf("denied proposal got an outcome: %s %q", rec.ExecutionStatus, rec.ExecutionReason)
	}

	// The cap holds however long it runs.
	time.Sleep(500 * time.Millisecond)
	if n := len(pendingIDs(t, s)); n > 6 {
		t.Errorf("%d pending, cap is 6", n)
	}

	errs := stop()
	if len(errs) != 0 {
		t.Errorf("the agent reported: %v", errs)
	}
	all, err := s.List(ctx, storage.ListOptions{Status: storage.ListAll})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if ws, err := s.Waiters(ctx, r.ApprovalID); err != nil || len(ws) != 0 {
			t.Errorf("%s: waiters left after stop: %+v %v", r.ApprovalID, ws, err)
		}
	}
}

// With the seed Seed used, the agent waits on the seeded proposals it
// stands behind, and its runtime guard blocks the one pinned too low.
func TestRunAgentAdoptsSeeded(t *testing.T) {
	ctx := context.Background()
	s, _ := seedStore(t, 7, time.Now())
	recs := byName(t, s, 7)
	stop := runAgent(t, s, AgentOptions{Seed: 7, Every: time.Hour})

	want := map[string]storage.Liveness{
		"diff": storage.WaiterLive, "downgraded": storage.WaiterLive, "escapes": storage.WaiterLive,
		"hermes": storage.WaiterNone, "corrupt": storage.WaiterNone, "expired": storage.WaiterNone,
		"dead-waiter": storage.WaiterDead,
	}
	eventually(t, 3*time.Second, "the agent did not adopt the seeded proposals", func() bool {
		return waiterOf(t, s, recs["downgraded"].ApprovalID) == storage.WaiterLive
	})
	for name, st := range want {
		if got := waiterOf(t, s, recs[name].ApprovalID); got != st {
			t.Errorf("%s: waiter %s, want %s", name, got, st)
		}
	}

	dg := recs["downgraded"].ApprovalID
	if _, err := s.Consume(ctx, dg, dg, operator); err != nil {
		t.Fatal(err)
	}
	eventually(t, outcomeWithin, "no outcome for the downgraded proposal", func() bool {
		return get(t, s, dg).ExecutionStatus != model.ExecNotStarted
	})
	if rec := get(t, s, dg); rec.ExecutionStatus != model.ExecBlockedAfterConsume || !strings.Contains(rec.ExecutionReason, "risk guard") {
		t.Errorf("downgraded: %s %q", rec.ExecutionStatus, rec.ExecutionReason)
	}

	// Approving the Hermes row records nothing: no approve-tui agent waits on it.
	h := recs["hermes"].ApprovalID
	if _, err := s.Consume(ctx, h, h, operator); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if rec := get(t, s, h); rec.ExecutionStatus != model.ExecNotStarted {
		t.Errorf("hermes row got an outcome: %s", rec.ExecutionStatus)
	}
	if errs := stop(); len(errs) != 0 {
		t.Errorf("the agent reported: %v", errs)
	}
	if got := waiterOf(t, s, recs["diff"].ApprovalID); got != storage.WaiterNone {
		t.Errorf("diff: waiter %s after stop", got)
	}
}

// The gaps between submissions come from the seed.
func TestAgentGapsDeterministic(t *testing.T) {
	gaps := func(seed int64) []time.Duration {
		a := &sim{opt: AgentOptions{Seed: seed, Every: time.Second}, r: newRand(seed, streamAgent)}
		var out []time.Duration
		for range 5 {
			g := a.gap()
			if g < 500*time.Millisecond || g >= 1500*time.Millisecond {
				t.Fatalf("gap %v outside [0.5s, 1.5s)", g)
			}
			out = append(out, g)
		}
		return out
	}
	a, b, c := gaps(3), gaps(3), gaps(4)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different gaps: %v %v", a, b)
		}
	}
	same := true
	for i := range a {
		same = same && a[i] == c[i]
	}
	if same {
		t.Fatalf("seeds 3 and 4 give the same gaps %v", a)
	}
}
