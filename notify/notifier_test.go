package notify

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// tclock is the store's tclock in these tests: moved by hand.
type tclock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tclock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *tclock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeChannel is a channel that keeps what it was sent; fail makes it fail
// (retryably) while set.
type fakeChannel struct {
	name string
	mu   sync.Mutex
	got  []Event
	ids  []string
	fail error
}

func (r *fakeChannel) Name() string { return r.name }
func (r *fakeChannel) Send(_ context.Context, ev Event, d Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.got = append(r.got, ev)
	r.ids = append(r.ids, d.ID)
	return nil
}

func (r *fakeChannel) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.got...)
}

func (r *fakeChannel) kinds() string {
	var ks []string
	for _, e := range r.events() {
		ks = append(ks, e.Kind+":"+e.ApprovalID)
	}
	return strings.Join(ks, " ")
}

type rig struct {
	t      *testing.T
	path   string
	tclock *tclock
	store  *storage.Store
	cfg    *config.File
	chans  map[string]*fakeChannel
	n      *Notifier
	opStor *storage.Store
}

func newRig(t *testing.T) *rig {
	t.Helper()
	c := &tclock{t: time.Unix(1_790_000_000, 0)}
	path := filepath.Join(t.TempDir(), "state.db")
	open := func() *storage.Store {
		s, err := storage.Open(context.Background(), path, storage.Options{Create: true, Now: c.Now, BusyTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	r := &rig{t: t, path: path, tclock: c, store: open(), chans: map[string]*fakeChannel{}}
	r.opStor = r.store
	r.cfg = &config.File{
		Channels: map[string]*config.Channel{
			"push":  {Name: "push", Type: config.TypeNtfy, IncludeCommand: true},
			"hook":  {Name: "hook", Type: config.TypeWebhook, IncludeCommand: false},
			"pager": {Name: "pager", Type: config.TypePagerDuty, IncludeCommand: true},
		},
		Routes: []*config.Route{{
			Match:              config.Match{Risk: model.RiskHigh, Session: "agent:prod:*"},
			Steps:              []config.Step{{After: 0, Notify: []string{"push", "hook"}}, {After: 5 * time.Minute, Notify: []string{"pager"}}},
			RemindBeforeExpiry: 2 * time.Minute,
		}},
		OpenHint: "ssh -t -p 2222 approvals.example open {id}",
	}
	for name := range r.cfg.Channels {
		r.chans[name] = &fakeChannel{name: name}
	}
	r.n = r.notifier(r.store, "n1")
	return r
}

func (r *rig) notifier(s *storage.Store, id string) *Notifier {
	senders := map[string]Sender{}
	for name, rec := range r.chans {
		senders[name] = rec
	}
	return &Notifier{Store: s, Config: r.cfg, Senders: senders, ID: id,
		Actor: model.Actor{Surface: model.SurfaceNotify, Name: "notifier@test", Person: "notifier"}}
}

func (r *rig) submit(id, session, command string, ttl time.Duration) {
	r.t.Helper()
	p, _, err := risk.Propose(risk.Draft{ID: id, Command: command, SessionKey: session, Requester: "claude-code", TTL: ttl}, r.tclock.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.store.Submit(context.Background(), p, model.Actor{Surface: model.SurfaceCLI, Name: "agent@test", Person: "agent"}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) tick() {
	r.t.Helper()
	if err := r.n.Tick(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

// Page at once, escalation at 5m, reminder 2m before expiry, resolution to
// every channel paged after the approval; nothing twice.
func TestNotifierSteps(t *testing.T) {
	r := newRig(t)
	r.submit("page-steps-1", "agent:prod:web", "rm -rf /srv/app/releases/old", 10*time.Minute)
	r.submit("low-risk-1", "agent:prod:web", "ls -la", 10*time.Minute)
	r.submit("other-session-1", "agent:dev:web", "rm -rf /tmp/x", 10*time.Minute)
	r.tick()
	r.tick()
	if got := r.chans["push"].kinds(); got != "page:page-steps-1" {
		t.Fatalf("push: %q", got)
	}
	if got := r.chans["hook"].kinds(); got != "page:page-steps-1" {
		t.Fatalf("hook: %q", got)
	}
	if got := r.chans["pager"].kinds(); got != "" {
		t.Fatalf("pager before 5m: %q", got)
	}
	ev := r.chans["push"].events()[0]
	if ev.Risk != "high" || ev.SessionKey != "agent:prod:web" || ev.Command != "rm -rf /srv/app/releases/old" ||
		ev.OpenHint != "ssh -t -p 2222 approvals.example open page-steps-1" || ev.ExpiresAt.IsZero() {
		t.Fatalf("%+v", ev)
	}
	if hook := r.chans["hook"].events()[0]; hook.Command != "" || !hook.CommandOmitted {
		t.Fatalf("include_command false: %+v", hook)
	}
	r.tclock.Advance(5 * time.Minute)
	r.tick()
	if got := r.chans["pager"].kinds(); got != "escalation:page-steps-1" {
		t.Fatalf("pager at 5m: %q", got)
	}
	r.tclock.Advance(3*time.Minute + time.Second) // 1m59s left
	r.tick()
	r.tick()
	for name, want := range map[string]string{"push": "page:page-steps-1 reminder:page-steps-1", "hook": "page:page-steps-1 reminder:page-steps-1",
		"pager": "escalation:page-steps-1 reminder:page-steps-1"} {
		if got := r.chans[name].kinds(); got != want {
			t.Fatalf("%s: %q, want %q", name, got, want)
		}
	}
	if _, err := r.store.Consume(context.Background(), "page-steps-1", "page-steps-1", model.Actor{Surface: model.SurfaceTUI, Name: "alice@laptop", Person: "alice"}); err != nil {
		t.Fatal(err)
	}
	r.tick()
	r.tick()
	for _, name := range []string{"push", "hook", "pager"} {
		evs := r.chans[name].events()
		last := evs[len(evs)-1]
		if last.Kind != KindResolved || last.Outcome != "approved" || last.Actor != "alice@laptop via tui" {
			t.Fatalf("%s: %+v", name, last)
		}
	}
	evs, _ := r.store.Audit(context.Background(), storage.AuditQuery{ApprovalID: "page-steps-1"})
	deliveries := 0
	for _, e := range evs {
		if e.Event == storage.EventDelivery && e.Outcome == storage.OutcomeOK {
			deliveries++
		}
	}
	if deliveries != 9 { // 2 pages, 1 escalation, 3 reminders, 3 resolutions
		t.Fatalf("%d deliveries audited", deliveries)
	}
}

// Expired unanswered: the resolution says so, with no actor.
func TestNotifierExpiry(t *testing.T) {
	r := newRig(t)
	r.submit("expire-me-1", "agent:prod:db", "psql -c 'DROP TABLE users'", time.Minute)
	r.tick()
	r.tclock.Advance(2 * time.Minute)
	r.tick()
	r.tick()
	evs := r.chans["push"].events()
	if len(evs) != 2 || evs[1].Kind != KindResolved || evs[1].Outcome != "expired" || evs[1].Actor != "" {
		t.Fatalf("%+v", evs)
	}
}

// A receiver down for a while: the page is tried again with back-off and
// arrives once when it is back; a page for a proposal decided meanwhile
// is not sent at all, nor is its resolution.
func TestNotifierRetriesUntilTheReceiverIsBack(t *testing.T) {
	r := newRig(t)
	r.chans["push"].fail = &SendError{Channel: "push", Status: 503, Retryable: true, Err: errors.New("HTTP 503")}
	r.submit("retry-page-1", "agent:prod:web", "rm -rf /srv/a", time.Hour)
	r.submit("retry-page-2", "agent:prod:web", "rm -rf /srv/b", time.Hour)
	for i := 0; i < 3; i++ {
		r.tick()
		r.tclock.Advance(BackoffMin * 8)
	}
	ns, _ := r.store.Notifiers(context.Background())
	if len(ns) != 1 || !strings.HasPrefix(ns[0].Trouble, "push (ntfy): ") || !strings.Contains(ns[0].Trouble, "HTTP 503") {
		t.Fatalf("trouble %+v", ns)
	}
	if _, err := r.store.Deny(context.Background(), "retry-page-2", model.Actor{Surface: model.SurfaceTUI, Name: "bob@laptop", Person: "bob"}, "no"); err != nil {
		t.Fatal(err)
	}
	r.chans["push"].mu.Lock()
	r.chans["push"].fail = nil
	r.chans["push"].mu.Unlock()
	r.tclock.Advance(BackoffMax)
	r.tick()
	r.tick()
	if got := r.chans["push"].kinds(); got != "page:retry-page-1" {
		t.Fatalf("push after recovery: %q", got)
	}
	ds, _ := r.store.DeliveriesOf(context.Background(), "retry-page-2")
	for _, d := range ds {
		if d.Channel == "push" && d.State != storage.DeliveryCancelled {
			t.Fatalf("%+v", d)
		}
	}
	// The audit shows how each delivery that fell due ended: the one not
	// sent as cancelled, and why; the one sent as delivered.
	for id, want := range map[string]string{"retry-page-2": storage.OutcomeCancelled, "retry-page-1": storage.OutcomeOK} {
		evs, _ := r.store.Audit(context.Background(), storage.AuditQuery{ApprovalID: id})
		var got []storage.AuditEvent
		for _, e := range evs {
			if e.Event == storage.EventDelivery && e.Detail["channel"] == "push" {
				got = append(got, e)
			}
		}
		if len(got) != 1 || got[0].Outcome != want || got[0].Reason != "page via push" {
			t.Fatalf("%s: delivery events %+v", id, got)
		}
		if want == storage.OutcomeCancelled && got[0].Detail["why"] != "the proposal was denied first" {
			t.Fatalf("%s: %+v", id, got[0].Detail)
		}
	}
	if ns, _ := r.store.Notifiers(context.Background()); len(ns) != 1 || ns[0].Trouble != "" {
		t.Fatalf("trouble not cleared: %+v", ns)
	}
}

// Two notifiers on one store, ticking at once: each delivery once.
func TestTwoNotifiersSendEachOnce(t *testing.T) {
	r := newRig(t)
	s2, err := storage.Open(context.Background(), r.path, storage.Options{Now: r.tclock.Now, BusyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	n2 := r.notifier(s2, "n2")
	for i := 0; i < 20; i++ {
		r.submit("twice-"+string(rune('a'+i))+"-page", "agent:prod:web", "rm -rf /srv/"+string(rune('a'+i)), time.Hour)
	}
	var wg sync.WaitGroup
	for _, n := range []*Notifier{r.n, n2, r.n, n2} {
		wg.Add(1)
		go func(n *Notifier) {
			defer wg.Done()
			for i := 0; i < 3; i++ {
				if err := n.Tick(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}(n)
	}
	wg.Wait()
	ids := map[string]int{}
	for _, id := range r.chans["push"].ids {
		ids[id]++
	}
	if len(ids) != 20 {
		t.Fatalf("%d pages", len(ids))
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("%s sent %d times", id, n)
		}
	}
}

// A hostile command and session reach a page inert and cut.
func TestNotifierEventIsInert(t *testing.T) {
	r := newRig(t)
	r.cfg.Routes[0].Match.Session = ""
	cmd := "rm -rf /srv/x\x1b[2J\u202e" + strings.Repeat("y", 1000)
	r.submit("hostile-page-1", "agent:prod:\x1b]0;pwn\x07", cmd, time.Hour)
	r.tick()
	ev := r.chans["push"].events()[0]
	for _, s := range []string{ev.Command, ev.SessionKey, ev.OpenHint} {
		if strings.ContainsAny(s, "\x1b\x07\u202e") {
			t.Fatalf("raw control in %q", s)
		}
	}
	if n := len([]rune(ev.Command)); n > commandBound || !strings.HasSuffix(ev.Command, "…") {
		t.Fatalf("not cut: %d", n)
	}
}
