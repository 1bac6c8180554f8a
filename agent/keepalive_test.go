package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// newStore opens a fresh store file holding one pending proposal.
func newStore(t *testing.T) (*storage.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p, _, err := risk.Propose(risk.Draft{Command: "ls -la", SessionKey: "test:keepalive", TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(context.Background(), p, model.Actor{Surface: model.SurfaceCLI, Name: "tester"}); err != nil {
		t.Fatal(err)
	}
	return s, p.ApprovalID
}

func waiterState(t *testing.T, s *storage.Store, id string) storage.WaiterStatus {
	t.Helper()
	ws, err := s.WaiterState(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// eventually polls cond for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLocalWaiter(t *testing.T) {
	w := LocalWaiter("abc", model.SurfaceRunner)
	host, _ := os.Hostname()
	if w.ApprovalID != "abc" || w.Host != host || w.PID != os.Getpid() || w.Surface != "runner" {
		t.Fatalf("LocalWaiter = %+v", w)
	}
}

func TestKeepAliveBeatsAndStops(t *testing.T) {
	s, id := newStore(t)
	var mu sync.Mutex
	var errs []error
	stop := KeepAlive(context.Background(), s, LocalWaiter(id, model.SurfaceRunner), 20*time.Millisecond, func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	})
	// The first beat is written before KeepAlive returns.
	ws := waiterState(t, s, id)
	if ws.State != storage.WaiterLive || ws.Waiter.PID != os.Getpid() || ws.Waiter.Surface != "runner" {
		t.Fatalf("after KeepAlive: %+v", ws)
	}
	first := ws.Waiter.HeartbeatAt
	started := ws.Waiter.StartedAt
	eventually(t, 2*time.Second, "heartbeat never advanced", func() bool {
		return waiterState(t, s, id).Waiter.HeartbeatAt > first
	})
	if got := waiterState(t, s, id).Waiter.StartedAt; got != started {
		t.Errorf("started_at moved from %v to %v", started, got)
	}
	stop()
	if ws := waiterState(t, s, id); ws.State != storage.WaiterNone {
		t.Fatalf("after stop: %+v", ws)
	}
	stop() // idempotent
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
}

func TestKeepAliveEndsWithContext(t *testing.T) {
	s, id := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	stop := KeepAlive(ctx, s, LocalWaiter(id, model.SurfaceCLI), 0, nil)
	defer stop()
	if ws := waiterState(t, s, id); ws.State != storage.WaiterLive {
		t.Fatalf("after KeepAlive: %+v", ws)
	}
	cancel()
	eventually(t, 2*time.Second, "waiter row not removed after ctx ended", func() bool {
		return waiterState(t, s, id).State == storage.WaiterNone
	})
}

func TestKeepAliveDoneContext(t *testing.T) {
	s, id := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	stop := KeepAlive(ctx, s, LocalWaiter(id, model.SurfaceCLI), 0, func(error) { called = true })
	stop()
	if ws := waiterState(t, s, id); ws.State != storage.WaiterNone {
		t.Fatalf("a cancelled KeepAlive left %+v", ws)
	}
	if called {
		t.Fatal("cancellation was reported as an error")
	}
}

func TestKeepAliveReadOnly(t *testing.T) {
	s, id := newStore(t)
	ro, err := storage.Open(context.Background(), s.Path(), storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var got error
	stop := KeepAlive(context.Background(), ro, LocalWaiter(id, model.SurfaceCLI), 0, func(err error) { got = err })
	stop()
	var roErr *storage.ReadOnlyError
	if !errors.As(got, &roErr) {
		t.Fatalf("onErr got %v, want a *storage.ReadOnlyError", got)
	}
	if ws := waiterState(t, s, id); ws.State != storage.WaiterNone {
		t.Fatalf("read-only KeepAlive wrote %+v", ws)
	}
}

// Two waiters on one proposal (two processes, here two pids) are
// independent: stopping one leaves the other live.
func TestKeepAliveIndependentWaiters(t *testing.T) {
	s, id := newStore(t)
	a := LocalWaiter(id, model.SurfaceCLI)
	b := a
	b.Host = "other-host"
	stopA := KeepAlive(context.Background(), s, a, 20*time.Millisecond, nil)
	stopB := KeepAlive(context.Background(), s, b, 20*time.Millisecond, nil)
	stopA()
	ws, err := s.Waiters(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].Host != "other-host" {
		t.Fatalf("after stopping a: %+v", ws)
	}
	stopB()
	if ws := waiterState(t, s, id); ws.State != storage.WaiterNone {
		t.Fatalf("after stopping both: %+v", ws)
	}
}
