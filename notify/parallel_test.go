package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
)

// hangingReceiver is a loopback receiver that holds every request until
// released (or the client gives up), counting those it holds.
type hangingReceiver struct {
	*httptest.Server
	release chan struct{}
	entered chan struct{}
	once    sync.Once
}

func newHangingReceiver(t *testing.T) *hangingReceiver {
	t.Helper()
	h := &hangingReceiver{release: make(chan struct{}), entered: make(chan struct{}, 1000)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		h.entered <- struct{}{}
		select {
		case <-h.release:
		case <-req.Context().Done():
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.Close)
	t.Cleanup(h.free) // runs first: a held request would block Close
	return h
}

func (h *hangingReceiver) free() { h.once.Do(func() { close(h.release) }) }

// arrivals is a loopback receiver that records which proposals reached it,
// and says so on a channel.
type arrivals struct {
	*httptest.Server
	mu  sync.Mutex
	ids []string
	got chan string
}

func newArrivals(t *testing.T) *arrivals {
	t.Helper()
	a := &arrivals{got: make(chan string, 1000)}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var p WebhookPayload
		decodeLoose(body, &p)
		a.mu.Lock()
		a.ids = append(a.ids, p.ApprovalID)
		a.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		a.got <- p.ApprovalID
	}))
	t.Cleanup(a.Close)
	return a
}

// waitFor takes n arrivals, failing after a generous bound (a guard, not
// a measure).
func (a *arrivals) waitFor(t *testing.T, n int, while func() string) {
	t.Helper()
	guard := time.After(60 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case <-a.got:
		case <-guard:
			t.Fatalf("%d of %d pages arrived at the healthy channel; %s", i, n, while())
		}
	}
}

// parallelRig pages every proposal to a channel whose receiver hangs and
// to a healthy one, each a real webhook sender.
func parallelRig(t *testing.T) (*rig, *hangingReceiver, *arrivals) {
	t.Helper()
	r := newRig(t)
	slow := newHangingReceiver(t)
	fast := newArrivals(t)
	r.cfg = &config.File{
		Channels: map[string]*config.Channel{
			// The hung channel's timeout is long: it is still hanging when
			// the healthy channel's pages have all arrived.
			"slow": {Name: "slow", Type: config.TypeWebhook, URL: slow.URL, SigningSecret: config.Secret{Env: "S"}, Timeout: 5 * time.Minute, Parallel: 2},
			"fast": {Name: "fast", Type: config.TypeWebhook, URL: fast.URL, SigningSecret: config.Secret{Env: "S"}, Timeout: 5 * time.Minute},
		},
		Routes: []*config.Route{{Steps: []config.Step{{Notify: []string{"slow", "fast"}}}}},
	}
	senders := map[string]Sender{}
	for name, ch := range r.cfg.Channels {
		senders[name] = mustSender(t, ch, testOptions(map[string]string{"S": "whsec_test_secret"}))
	}
	r.n = &Notifier{Store: r.store, Config: r.cfg, Senders: senders, ID: "n1", Parallel: 8,
		Actor: model.Actor{Surface: model.SurfaceNotify, Name: "notifier@test"}}
	return r, slow, fast
}

// One Tick: the healthy channel's 12 pages all arrive while the hung
// receiver still holds its channel's two slots (and nothing else); Tick
// ends once the hung one is released.
func TestHungReceiverDelaysOnlyItsChannelTick(t *testing.T) {
	r, slow, fast := parallelRig(t)
	for i := 0; i < 12; i++ {
		r.submit(fmt.Sprintf("hm-par%02d", i), "agent:prod:web", "make deploy", time.Hour)
	}
	done := make(chan error, 1)
	go func() { done <- r.n.Tick(context.Background()) }()
	// The hung channel is hanging: both its slots are held.
	<-slow.entered
	<-slow.entered
	fast.waitFor(t, 12, func() string { return "the hung receiver holds them up" })
	select {
	case <-slow.entered:
		t.Fatal("the hung channel sent a third page at once: its parallel is 2")
	case err := <-done:
		t.Fatalf("Tick ended (%v) while the hung receiver still holds two pages", err)
	default:
	}
	slow.free()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Tick did not end after the hung receiver was released")
	}
	ds, err := r.store.DueDeliveries(context.Background(), 100)
	if err != nil || len(ds) != 0 {
		t.Errorf("due after the tick: %d (%v)", len(ds), err)
	}
}

// Run: passes go on while a receiver hangs, so pages for proposals made
// after it started hanging reach the healthy channel too.
func TestHungReceiverDelaysOnlyItsChannelRun(t *testing.T) {
	r, slow, fast := parallelRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.n.Run(ctx) }()
	defer func() {
		slow.free()
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("Run did not end")
		}
	}()
	for i := 0; i < 6; i++ {
		r.submit(fmt.Sprintf("hm-run%02d", i), "agent:prod:web", "make deploy", time.Hour)
	}
	<-slow.entered
	<-slow.entered
	fast.waitFor(t, 6, func() string { return "first batch" })
	for i := 6; i < 12; i++ {
		r.submit(fmt.Sprintf("hm-run%02d", i), "agent:prod:web", "make deploy", time.Hour)
	}
	fast.waitFor(t, 6, func() string { return "second batch, made while the other receiver hangs" })
	select {
	case <-slow.entered:
		t.Fatal("the hung channel holds more than its 2 slots")
	default:
	}
	fast.mu.Lock()
	n := len(fast.ids)
	fast.mu.Unlock()
	if n != 12 {
		t.Errorf("the healthy channel got %d pages, want 12", n)
	}
}

// decodeLoose decodes a webhook body, ignoring what does not fit.
func decodeLoose(data []byte, v any) { _ = json.Unmarshal(data, v) }
