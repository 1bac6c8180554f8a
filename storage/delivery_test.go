package storage

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

var notifierActor = model.Actor{Surface: model.SurfaceNotify, Name: "notifier@test"}

// A delivery is added once whoever adds it, claimed by exactly one
// notifier, and finished (audited) only by the one holding the claim.
func TestDeliveryClaimedOnce(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(t)
	mustSubmit(t, s, proposal("deliver-one-1", "rm -rf /srv/x", model.RiskHigh, c.Now(), time.Hour))
	k := DeliveryKey{ApprovalID: "deliver-one-1", Kind: "page", Step: 0, Channel: "push"}
	if n, err := s.AddDeliveries(ctx, []DeliveryKey{k, k}); err != nil || n != 1 {
		t.Fatalf("added %d, %v", n, err)
	}
	if n, _ := s.AddDeliveries(ctx, []DeliveryKey{k}); n != 0 {
		t.Fatal("added twice")
	}
	// Two notifiers race for it: one wins.
	other := openAt(t, s.DSN(), c)
	var wins int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, st := range []*Store{s, other, s, other} {
		wg.Add(1)
		go func(i int, st *Store) {
			defer wg.Done()
			d, err := st.ClaimDelivery(ctx, k, []string{"a", "b", "c", "d"}[i], time.Minute)
			if err != nil {
				t.Error(err)
			}
			if d != nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}(i, st)
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d claims won", wins)
	}
	ds, _ := s.DeliveriesOf(ctx, "deliver-one-1")
	holder := ds[0].ClaimedBy
	if ds[0].State != DeliverySending || ds[0].Attempts != 1 {
		t.Fatalf("%+v", ds[0])
	}
	if err := s.FinishDelivery(ctx, k, "nobody", DeliveryResult{State: DeliveryDelivered}, notifierActor); !errors.Is(err, ErrNotClaimed) {
		t.Fatalf("finished by a non-holder: %v", err)
	}
	if err := s.FinishDelivery(ctx, k, holder, DeliveryResult{State: DeliveryDelivered}, notifierActor); err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Audit(ctx, AuditQuery{ApprovalID: "deliver-one-1"})
	if len(evs) < 1 || evs[0].Event != EventDelivery || evs[0].Outcome != OutcomeOK || evs[0].Reason != "page via push" {
		t.Fatalf("audit %+v", evs)
	}
	if d, _ := s.ClaimDelivery(ctx, k, "e", time.Minute); d != nil {
		t.Fatal("a delivered one claimed again")
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("%+v %v", res, err)
	}
}

// A claim whose notifier died is claimed again once its lease runs out;
// the dead one can no longer finish it. A failure puts it back for later.
func TestDeliveryLeaseAndRetry(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(t)
	mustSubmit(t, s, proposal("deliver-lease-1", "rm -rf /srv/x", model.RiskHigh, c.Now(), time.Hour))
	k := DeliveryKey{ApprovalID: "deliver-lease-1", Kind: "escalation", Step: 1, Channel: "pager"}
	s.AddDeliveries(ctx, []DeliveryKey{k})
	if d, _ := s.ClaimDelivery(ctx, k, "dead", time.Minute); d == nil {
		t.Fatal("not claimed")
	}
	if d, _ := s.ClaimDelivery(ctx, k, "alive", time.Minute); d != nil {
		t.Fatal("claimed while the lease holds")
	}
	if due, _ := s.DueDeliveries(ctx, 10); len(due) != 0 {
		t.Fatalf("due while claimed: %+v", due)
	}
	c.Advance(61 * time.Second)
	if due, _ := s.DueDeliveries(ctx, 10); len(due) != 1 {
		t.Fatal("not due after the lease")
	}
	d, _ := s.ClaimDelivery(ctx, k, "alive", time.Minute)
	if d == nil || d.Attempts != 2 {
		t.Fatalf("%+v", d)
	}
	if err := s.FinishDelivery(ctx, k, "dead", DeliveryResult{State: DeliveryDelivered}, notifierActor); !errors.Is(err, ErrNotClaimed) {
		t.Fatal(err)
	}
	retry := c.Now().Add(30 * time.Second)
	if err := s.FinishDelivery(ctx, k, "alive", DeliveryResult{State: DeliveryPending, RetryAt: retry, Err: "HTTP 503"}, notifierActor); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.ClaimDelivery(ctx, k, "alive", time.Minute); d != nil {
		t.Fatal("claimed before its retry time")
	}
	if at, ok, _ := s.NextDeliveryAt(ctx); !ok || !at.Equal(model.FromEpoch(model.Epoch(retry))) {
		t.Fatalf("next %v %v", at, ok)
	}
	c.Advance(31 * time.Second)
	if d, _ := s.ClaimDelivery(ctx, k, "alive", time.Minute); d == nil || d.LastError != "HTTP 503" {
		t.Fatalf("%+v", d)
	}
	if err := s.FinishDelivery(ctx, k, "alive", DeliveryResult{State: DeliveryFailed, Err: "HTTP 400"}, notifierActor); err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Audit(ctx, AuditQuery{ApprovalID: "deliver-lease-1"})
	if evs[0].Event != EventDelivery || evs[0].Outcome != OutcomeFailed || evs[0].Detail["error"] != "HTTP 400" {
		t.Fatalf("%+v", evs[0])
	}
	// Open, and nothing delivered: no resolution is due.
	if ids, _ := s.UnresolvedPaged(ctx, 10); len(ids) != 0 {
		t.Fatalf("unresolved %v", ids)
	}
	// A delivered page: due once the proposal is decided, not before.
	p := DeliveryKey{ApprovalID: "deliver-lease-1", Kind: "page", Channel: "push"}
	s.AddDeliveries(ctx, []DeliveryKey{p})
	if d, _ := s.ClaimDelivery(ctx, p, "alive", time.Minute); d == nil {
		t.Fatal("page not claimed")
	}
	if err := s.FinishDelivery(ctx, p, "alive", DeliveryResult{State: DeliveryDelivered}, notifierActor); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.UnresolvedPaged(ctx, 10); len(ids) != 0 {
		t.Fatalf("unresolved while open %v", ids)
	}
	if _, err := s.Deny(ctx, "deliver-lease-1", model.Actor{Surface: model.SurfaceCLI, Name: "bob@laptop"}, ""); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.UnresolvedPaged(ctx, 10); len(ids) != 1 || ids[0] != "deliver-lease-1" {
		t.Fatalf("unresolved %v", ids)
	}
}

func TestNotifierRows(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(t)
	if err := s.SetNotifier(ctx, Notifier{Notifier: "n1", Host: "h", PID: 1, Trouble: "push (ntfy): HTTP 503", TroubleSince: model.Epoch(c.Now())}); err != nil {
		t.Fatal(err)
	}
	ns, _ := s.Notifiers(ctx)
	if len(ns) != 1 || ns[0].Trouble != "push (ntfy): HTTP 503" {
		t.Fatalf("%+v", ns)
	}
	c.Advance(NotifierStaleAfter + time.Second)
	if ns, _ := s.Notifiers(ctx); len(ns) != 0 {
		t.Fatal("a stale notifier listed")
	}
	if err := s.RemoveNotifier(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
}

// A delivery not sent because its proposal closed first ends as an audit
// event too (outcome cancelled, in the same transaction as the row), so
// the log shows every delivery that fell due and how it ended: delivered,
// failed or cancelled. A retry put back is not an end: not audited.
func TestDeliveryCancelledAudited(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(t)
	mustSubmit(t, s, proposal("deliver-cancel-1", "rm -rf /srv/x", model.RiskHigh, c.Now(), time.Hour))
	k := DeliveryKey{ApprovalID: "deliver-cancel-1", Kind: "escalation", Step: 1, Channel: "pager"}
	if _, err := s.AddDeliveries(ctx, []DeliveryKey{k}); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.ClaimDelivery(ctx, k, "n1", time.Minute); d == nil {
		t.Fatal("not claimed")
	}
	if err := s.FinishDelivery(ctx, k, "n1", DeliveryResult{State: DeliveryPending, RetryAt: c.Now().Add(time.Second), Err: "HTTP 503"}, notifierActor); err != nil {
		t.Fatal(err)
	}
	if evs, _ := s.Audit(ctx, AuditQuery{ApprovalID: "deliver-cancel-1"}); evs[0].Event != EventSubmit {
		t.Fatalf("a retry audited: %+v", evs[0])
	}
	if _, err := s.Deny(ctx, "deliver-cancel-1", model.Actor{Surface: model.SurfaceCLI, Name: "bob@laptop"}, ""); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Second)
	if d, _ := s.ClaimDelivery(ctx, k, "n1", time.Minute); d == nil {
		t.Fatal("not claimed again")
	}
	if err := s.FinishDelivery(ctx, k, "other", DeliveryResult{State: DeliveryCancelled, Err: "the proposal was denied first"}, notifierActor); !errors.Is(err, ErrNotClaimed) {
		t.Fatalf("cancelled by a non-holder: %v", err)
	}
	if err := s.FinishDelivery(ctx, k, "n1", DeliveryResult{State: DeliveryCancelled, Err: "the proposal was denied first"}, notifierActor); err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Audit(ctx, AuditQuery{ApprovalID: "deliver-cancel-1"})
	e := evs[0]
	if e.Event != EventDelivery || e.Outcome != OutcomeCancelled || e.Reason != "escalation via pager" ||
		e.Detail["state"] != DeliveryCancelled || e.Detail["why"] != "the proposal was denied first" ||
		e.Detail["delivery_id"] != k.ID() || e.Detail["step"] != float64(1) || e.Detail["attempts"] != float64(2) ||
		e.Surface != string(model.SurfaceNotify) {
		t.Fatalf("audit %+v", e)
	}
	n := 0
	for _, e := range evs {
		if e.Event == EventDelivery {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d delivery events: %+v", n, evs)
	}
	ds, _ := s.DeliveriesOf(ctx, "deliver-cancel-1")
	if len(ds) != 1 || ds[0].State != DeliveryCancelled || ds[0].DoneAt == nil {
		t.Fatalf("%+v", ds)
	}
	if d, _ := s.ClaimDelivery(ctx, k, "n2", time.Minute); d != nil {
		t.Fatal("a cancelled one claimed again")
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("%+v %v", res, err)
	}
}

// DecisionsAfter reads the decisions the log records after a seq, oldest
// first, with each proposal's submit time; AuditSeq is the log's end, so
// a reader that starts there counts only what comes next.
func TestDecisionsAfter(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(t)
	if seq, err := s.AuditSeq(ctx); err != nil || seq != 0 {
		t.Fatalf("empty log: %d %v", seq, err)
	}
	created := c.Now()
	mustSubmit(t, s, proposal("decisions-after-old", "echo old", model.RiskLow, created, time.Hour))
	if _, err := s.Deny(ctx, "decisions-after-old", alice, ""); err != nil {
		t.Fatal(err)
	}
	end, err := s.AuditSeq(ctx)
	if err != nil || end < 2 {
		t.Fatalf("end %d %v", end, err)
	}
	mustSubmit(t, s, proposal("decisions-after-1", "echo one", model.RiskLow, created, time.Hour))
	c.Advance(90 * time.Second)
	if _, err := s.Consume(ctx, "decisions-after-1", "decisions-after-1", alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, "decisions-after-1", "decisions-after-1", alice); err == nil {
		t.Fatal("approved twice")
	}
	evs, err := s.DecisionsAfter(ctx, end, 10)
	if err != nil || len(evs) != 2 {
		t.Fatalf("%+v %v", evs, err)
	}
	if e := evs[0]; e.Event != EventApprove || e.Outcome != OutcomeOK || e.At.Sub(e.Created).Round(time.Second) != 90*time.Second || e.Seq <= end {
		t.Fatalf("%+v", e)
	}
	if e := evs[1]; e.Event != EventApprove || e.Outcome != OutcomeRefused || e.Seq <= evs[0].Seq {
		t.Fatalf("%+v", e)
	}
	if evs, _ := s.DecisionsAfter(ctx, end, 1); len(evs) != 1 || evs[0].Outcome != OutcomeOK {
		t.Fatalf("limit: %+v", evs)
	}
	if evs, _ := s.DecisionsAfter(ctx, 0, 10); len(evs) != 3 || evs[0].Event != EventDeny {
		t.Fatalf("from the start: %+v", evs)
	}
}
