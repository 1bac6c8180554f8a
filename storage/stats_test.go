package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// OpenByRisk counts what is open by effective risk (the classifier's
// verdict raises a low pin), leaves out what is decided or past its
// expiry, counts a row another program wrote, and finds the oldest; the
// scan it falls back on (a read-only view) says the same.
func TestStatsOpenByRisk(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(t)
	o, err := s.OpenByRisk(ctx)
	if err != nil || o.Total != 0 || !o.Oldest.IsZero() || len(o.ByRisk) != len(RiskLevels) {
		t.Fatalf("empty store: %+v %v", o, err)
	}
	if _, _, ok, err := s.OldestOpen(ctx); ok || err != nil {
		t.Fatalf("oldest of none: %v %v", ok, err)
	}
	start := c.Now()
	mustSubmit(t, s, proposal("stats-open-low-1", "echo hello", model.RiskLow, start, time.Hour))
	c.Advance(time.Minute)
	mustSubmit(t, s, proposal("stats-open-med-1", "echo medium", model.RiskMedium, c.Now(), time.Hour))
	mustSubmit(t, s, proposal("stats-open-raised", "rm -rf /srv/app", model.RiskLow, c.Now(), time.Hour)) // the classifier: high
	mustSubmit(t, s, proposal("stats-open-never", "echo forever", model.RiskMedium, c.Now(), 0))
	mustSubmit(t, s, proposal("stats-open-short", "echo short", model.RiskHigh, c.Now(), 2*time.Minute))
	mustSubmit(t, s, proposal("stats-open-denied", "echo no", model.RiskHigh, c.Now(), time.Hour))
	if _, err := s.Deny(ctx, "stats-open-denied", alice, "no"); err != nil {
		t.Fatal(err)
	}
	// Hermes' own insert: no rank entry until the store catches up.
	insertRaw(t, rawDB(t, s.DSN()), proposal("stats-open-hermes", "echo from hermes", model.RiskLow, c.Now(), time.Hour))
	c.Advance(3 * time.Minute) // stats-open-short is past its expiry now

	want := map[model.RiskLevel]int{model.RiskLow: 2, model.RiskMedium: 2, model.RiskHigh: 1, model.RiskTier2: 0, model.RiskUnknown: 0}
	check := func(what string, st *Store) {
		t.Helper()
		o, err := st.OpenByRisk(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for r, n := range want {
			if o.ByRisk[r] != n {
				t.Errorf("%s: %s: %d open, want %d (%+v)", what, r, o.ByRisk[r], n, o.ByRisk)
			}
		}
		if o.Total != 5 || o.Partial || !o.Oldest.Equal(model.FromEpoch(model.Epoch(start))) {
			t.Errorf("%s: total %d, partial %v, oldest %v (want %v)", what, o.Total, o.Partial, o.Oldest, start)
		}
		id, at, ok, err := st.OldestOpen(ctx)
		if err != nil || !ok || id != "stats-open-low-1" || !at.Equal(o.Oldest) {
			t.Errorf("%s: oldest %q %v %v %v", what, id, at, ok, err)
		}
	}
	check("rank index", s)
	ro, err := Open(ctx, s.DSN(), Options{ReadOnly: true, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	check("read-only scan", ro)
}

// DecisionsSince counts the window's approvals, denials, expiries and
// refusals from the audit log, times each decision from its submit, and
// leaves out what came before the window.
func TestStatsDecisionsSince(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(t)
	if d, err := s.DecisionsSince(ctx, c.Now().Add(-time.Hour)); err != nil || len(d.Counts) != 0 || len(d.Latencies) != 0 {
		t.Fatalf("empty: %+v %v", d, err)
	}
	// Before the window: submitted and approved two hours ago.
	mustSubmit(t, s, proposal("stats-dec-old-1", "echo old", model.RiskLow, c.Now(), 10*time.Hour))
	if _, err := s.Consume(ctx, "stats-dec-old-1", "stats-dec-old-1", alice); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Hour)
	windowStart := c.Now()
	for _, id := range []string{"stats-dec-a-1", "stats-dec-a-2", "stats-dec-d-1", "stats-dec-e-1"} {
		ttl := 10 * time.Hour
		if id == "stats-dec-e-1" {
			ttl = time.Minute
		}
		mustSubmit(t, s, proposal(id, "echo "+id, model.RiskLow, c.Now(), ttl))
	}
	c.Advance(30 * time.Second)
	if _, err := s.Consume(ctx, "stats-dec-a-1", "stats-dec-a-1", alice); err != nil {
		t.Fatal(err)
	}
	c.Advance(90 * time.Second)
	if _, err := s.Deny(ctx, "stats-dec-d-1", bob, "no"); err != nil {
		t.Fatal(err)
	}
	c.Advance(8 * time.Minute)
	if _, err := s.Consume(ctx, "stats-dec-a-2", "stats-dec-a-2", alice); err != nil {
		t.Fatal(err)
	}
	// Refusals: a second approval, a watcher's denial.
	var np *NotPendingError
	if _, err := s.Consume(ctx, "stats-dec-a-1", "stats-dec-a-1", bob); !errors.As(err, &np) {
		t.Fatalf("second approval: %v", err)
	}
	if _, err := s.Deny(ctx, "stats-dec-a-2", watcher, "no"); err == nil {
		t.Fatal("a watcher denied")
	}
	if ids, err := s.ExpireDue(ctx, alice); err != nil || len(ids) != 1 {
		t.Fatalf("expire: %v %v", ids, err)
	}

	d, err := s.DecisionsSince(ctx, windowStart)
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]string]int{}
	for _, c := range d.Counts {
		got[[2]string{c.Event, c.Outcome}] = c.N
	}
	want := map[[2]string]int{
		{EventApprove, OutcomeOK}: 2, {EventApprove, OutcomeRefused}: 1,
		{EventDeny, OutcomeOK}: 1, {EventDeny, OutcomeRefused}: 1, {EventExpire, OutcomeOK}: 1,
	}
	if len(got) != len(want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%v: %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
	// 30s, 2m, 10m: approvals and the denial, not the expiry.
	wantLat := []float64{30, 120, 600}
	if len(d.Latencies) != len(wantLat) || d.Partial {
		t.Fatalf("latencies %v", d.Latencies)
	}
	for i, w := range wantLat {
		if d.Latencies[i] < w-0.01 || d.Latencies[i] > w+0.01 {
			t.Errorf("latency %d: %v, want %v", i, d.Latencies[i], w)
		}
	}
	if m, p := Quantile(d.Latencies, 0.5), Quantile(d.Latencies, 0.9); m != d.Latencies[1] || p != d.Latencies[2] {
		t.Errorf("median %v p90 %v", m, p)
	}
	// A window that starts after everything: nothing.
	c.Advance(time.Minute)
	if d, err := s.DecisionsSince(ctx, c.Now()); err != nil || len(d.Counts) != 0 || len(d.Latencies) != 0 {
		t.Fatalf("late window: %+v %v", d, err)
	}
	// A window that takes in everything: the old approval too.
	d, err = s.DecisionsSince(ctx, windowStart.Add(-3*time.Hour))
	if err != nil || len(d.Latencies) != 4 {
		t.Fatalf("whole log: %+v %v", d, err)
	}
}

func TestStatsQuantile(t *testing.T) {
	if Quantile(nil, 0.5) != 0 {
		t.Fatal("empty")
	}
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for q, want := range map[float64]float64{0.5: 5, 0.9: 9, 1: 10, 0.01: 1, 0.95: 10} {
		if got := Quantile(v, q); got != want {
			t.Errorf("q%v: %v, want %v", q, got, want)
		}
	}
	if Quantile([]float64{7}, 0.9) != 7 {
		t.Fatal("one value")
	}
}

// DeliveriesSince counts each channel's finished deliveries of the window
// and those retrying now, with the last error (a retrying one's first).
func TestStatsDeliveriesSince(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(t)
	if ds, err := s.DeliveriesSince(ctx, c.Now().Add(-time.Hour)); err != nil || len(ds) != 0 {
		t.Fatalf("empty: %v %v", ds, err)
	}
	for _, id := range []string{"stats-del-1", "stats-del-2", "stats-del-3", "stats-del-4"} {
		mustSubmit(t, s, proposal(id, "echo "+id, model.RiskHigh, c.Now(), 10*time.Hour))
	}
	finish := func(id, kind, ch string, r DeliveryResult) {
		t.Helper()
		k := DeliveryKey{ApprovalID: id, Kind: kind, Channel: ch}
		if _, err := s.AddDeliveries(ctx, []DeliveryKey{k}); err != nil {
			t.Fatal(err)
		}
		d, err := s.ClaimDelivery(ctx, k, "n1", time.Minute)
		if err != nil || d == nil {
			t.Fatalf("claim %v: %v %v", k, d, err)
		}
		if err := s.FinishDelivery(ctx, k, "n1", r, notifierActor); err != nil {
			t.Fatal(err)
		}
	}
	// Before the window.
	finish("stats-del-1", "page", "hook", DeliveryResult{State: DeliveryDelivered})
	c.Advance(2 * time.Hour)
	since := c.Now()
	finish("stats-del-2", "page", "hook", DeliveryResult{State: DeliveryDelivered})
	finish("stats-del-3", "page", "hook", DeliveryResult{State: DeliveryFailed, Err: "HTTP 400 from the receiver"})
	finish("stats-del-4", "page", "hook", DeliveryResult{State: DeliveryCancelled, Err: "the proposal was denied first"})
	finish("stats-del-2", "page", "push", DeliveryResult{State: DeliveryDelivered})
	finish("stats-del-3", "page", "push", DeliveryResult{State: DeliveryFailed, Err: "HTTP 401 old"})
	c.Advance(time.Second)
	finish("stats-del-4", "page", "push", DeliveryResult{State: DeliveryFailed, Err: "HTTP 401 newer"})
	finish("stats-del-2", "page", "pager", DeliveryResult{State: DeliveryPending, RetryAt: c.Now().Add(time.Minute), Err: "HTTP 503 now"})
	finish("stats-del-3", "page", "pager", DeliveryResult{State: DeliveryFailed, Err: "HTTP 400 given up"})
	// Added, never tried: not counted.
	if _, err := s.AddDeliveries(ctx, []DeliveryKey{{ApprovalID: "stats-del-4", Kind: "page", Channel: "pager"}}); err != nil {
		t.Fatal(err)
	}

	ds, err := s.DeliveriesSince(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	want := []ChannelDeliveries{
		{Channel: "hook", Delivered: 1, Failed: 1, Cancelled: 1, LastError: "HTTP 400 from the receiver"},
		{Channel: "pager", Failed: 1, Retrying: 1, LastError: "HTTP 503 now"},
		{Channel: "push", Delivered: 1, Failed: 2, LastError: "HTTP 401 newer"},
	}
	if len(ds) != len(want) {
		t.Fatalf("%+v", ds)
	}
	for i := range want {
		if ds[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, ds[i], want[i])
		}
	}
}

// A proposal past its expiry within the window counts as expired before
// any sweep (Unswept), and once swept by its audit event alone: the same
// count either way. One that expired before the window does not count.
func TestStatsCountsExpiriesBeforeTheSweep(t *testing.T) {
	s, c := newStore(t)
	start := c.Now()
	mustSubmit(t, s, proposal("unswept-old", "ls /a", model.RiskLow, c.Now(), time.Minute))
	c.Advance(2 * time.Hour)
	since := c.Now()
	mustSubmit(t, s, proposal("unswept-new", "ls /b", model.RiskLow, c.Now(), time.Minute))
	mustSubmit(t, s, proposal("unswept-open", "ls /c", model.RiskLow, c.Now(), time.Hour))
	c.Advance(2 * time.Minute)
	expired := func(d DecisionStats) int {
		n := 0
		for _, e := range d.Counts {
			if e.Event == EventExpire && e.Outcome == OutcomeOK {
				n += e.N
			}
		}
		return n
	}
	d, err := s.DecisionsSince(ctx, since)
	if err != nil || expired(d) != 1 || d.Unswept != 1 {
		t.Fatalf("before the sweep: %+v %v", d, err)
	}
	if d, err = s.DecisionsSince(ctx, start); err != nil || expired(d) != 2 || d.Unswept != 2 {
		t.Fatalf("since the start: %+v %v", d, err)
	}
	if ids, err := s.ExpireDue(ctx, alice); err != nil || len(ids) != 2 {
		t.Fatalf("expire: %v %v", ids, err)
	}
	if d, err = s.DecisionsSince(ctx, since); err != nil || expired(d) != 2 || d.Unswept != 0 {
		// The sweep's events are at its own time, inside the window: both.
		t.Fatalf("after the sweep: %+v %v", d, err)
	}
}
