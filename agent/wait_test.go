package agent

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

var operator = model.Actor{Surface: model.SurfaceTUI, Name: "alice@console", Person: "alice"}

// emptyStore opens a fresh store file, and a second store on the same file:
// the operator's side, as another process would have it.
func emptyStore(t *testing.T) (agentSide, operatorSide *storage.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true, BusyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	o, err := storage.Open(context.Background(), path, storage.Options{BusyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return s, o
}

func submitDraft(t *testing.T, s *storage.Store, d risk.Draft) string {
	t.Helper()
	if d.SessionKey == "" {
		d.SessionKey = "test:wait"
	}
	p, _, err := risk.Propose(d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(context.Background(), p, model.Actor{Surface: model.SurfaceRunner, Name: "tester"}); err != nil {
		t.Fatal(err)
	}
	return p.ApprovalID
}

type waitResult struct {
	rec *storage.Record
	err error
}

func waitAsync(ctx context.Context, s *storage.Store, id string) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		rec, err := WaitDecision(ctx, s, id, WaitOptions{Surface: model.SurfaceRunner, Every: 50 * time.Millisecond})
		ch <- waitResult{rec, err}
	}()
	return ch
}

func recv(t *testing.T, ch <-chan waitResult, within time.Duration) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(within):
		t.Fatalf("no result within %v", within)
	}
	return waitResult{}
}

func TestWaitDecisionHeartbeatsUntilApproved(t *testing.T) {
	s, o := emptyStore(t)
	id := submitDraft(t, s, risk.Draft{Command: "rm -rf build", TTL: time.Hour})
	ch := waitAsync(context.Background(), s, id)
	eventually(t, 5*time.Second, "no live waiter", func() bool { return waiterState(t, o, id).State == storage.WaiterLive })
	if w := waiterState(t, o, id).Waiter; w.Surface != "runner" {
		t.Fatalf("waiter %+v", w)
	}
	if _, err := o.Consume(context.Background(), id, id, operator); err != nil {
		t.Fatal(err)
	}
	r := recv(t, ch, 5*time.Second)
	if r.err != nil || r.rec.EffectiveStatus != model.StatusConsumed || r.rec.ConsumedBy != operator.String() {
		t.Fatalf("got %+v, %v", r.rec, r.err)
	}
	noWaiterLeft(t, o, id)
}

// noWaiterLeft fails the test if id still has a waiter row.
func noWaiterLeft(t *testing.T, o *storage.Store, id string) {
	t.Helper()
	if ws := waiterState(t, o, id); ws.State != storage.WaiterNone {
		t.Fatalf("waiter row left behind: %+v", ws)
	}
}

func TestWaitDecisionDenied(t *testing.T) {
	s, o := emptyStore(t)
	id := submitDraft(t, s, risk.Draft{Command: "rm -rf build", TTL: time.Hour})
	ch := waitAsync(context.Background(), s, id)
	eventually(t, 5*time.Second, "no live waiter", func() bool { return waiterState(t, o, id).State == storage.WaiterLive })
	if _, err := o.Deny(context.Background(), id, operator, "no"); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, ch, 5*time.Second); r.err != nil || r.rec.EffectiveStatus != model.StatusDenied {
		t.Fatalf("got %+v, %v", r.rec, r.err)
	}
}

// Expiry needs no write: the waiter wakes for it.
func TestWaitDecisionWakesAtExpiry(t *testing.T) {
	s, _ := emptyStore(t)
	id := submitDraft(t, s, risk.Draft{Command: "rm -rf build", TTL: 300 * time.Millisecond})
	start := time.Now()
	r := recv(t, waitAsync(context.Background(), s, id), 5*time.Second)
	if r.err != nil || r.rec.EffectiveStatus != model.StatusExpired {
		t.Fatalf("got %+v, %v", r.rec, r.err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("expiry noticed after %v", el)
	}
}

func TestWaitDecisionContextEnds(t *testing.T) {
	s, o := emptyStore(t)
	id := submitDraft(t, s, risk.Draft{Command: "rm -rf build", TTL: time.Hour})
	cause := errors.New("gave up")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, cause)
	defer cancel()
	r := recv(t, waitAsync(ctx, s, id), 5*time.Second)
	if !errors.Is(r.err, cause) || r.rec == nil || r.rec.EffectiveStatus != model.StatusPending {
		t.Fatalf("got %+v, %v", r.rec, r.err)
	}
	noWaiterLeft(t, o, id)
}

func TestWaitDecisionAlreadyDecidedAndMissing(t *testing.T) {
	s, o := emptyStore(t)
	id := submitDraft(t, s, risk.Draft{Command: "rm -rf build", TTL: time.Hour})
	if _, err := o.Deny(context.Background(), id, operator, ""); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, waitAsync(context.Background(), s, id), 5*time.Second); r.err != nil || r.rec.EffectiveStatus != model.StatusDenied {
		t.Fatalf("decided: %+v, %v", r.rec, r.err)
	}
	if ws := waiterState(t, o, id); ws.State != storage.WaiterNone {
		t.Fatalf("a decided proposal got a waiter: %+v", ws)
	}
	if r := recv(t, waitAsync(context.Background(), s, "nosuchid"), 5*time.Second); !errors.Is(r.err, storage.ErrNotFound) || r.rec != nil {
		t.Fatalf("missing: %+v, %v", r.rec, r.err)
	}
}
