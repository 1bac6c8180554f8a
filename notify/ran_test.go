package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

var hookSide = model.Actor{Surface: model.SurfaceHook, Name: "agent@test"}

// The kinds a route's events may name are the notifier's.
func TestRouteEventKindsAreTheNotifiers(t *testing.T) {
	if !slices.Equal(Kinds, config.EventKinds) {
		t.Fatalf("notify kinds %v, config's %v", Kinds, config.EventKinds)
	}
}

// A call its agent ran without approval is paged once, to the channels
// paged so far and the route's first step, after its proposal was closed;
// a second notifier sends it nobody again, and no later step pages it.
func TestNotifierPagesRanWithoutApproval(t *testing.T) {
	r := newRig(t)
	r.submit("ran-1", "agent:prod:web", "rm -rf /srv/app/releases/old TOKEN=hunter2hunter2", 10*time.Minute)
	r.tick()
	ctx := context.Background()
	if _, err := r.store.RecordRanWithoutApproval(ctx, "ran-1", "Codex reported the call as run (executed: ran in Codex (PostToolUse)) while its proposal was pending, not approved", hookSide); err != nil {
		t.Fatal(err)
	}
	r.tick()
	r.tclock.Advance(6 * time.Minute) // past the escalation's step
	r.tick()
	if err := r.notifier(r.store, "n2").Tick(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"push", "hook"} {
		if got := r.chans[name].kinds(); strings.Count(got, "ran_without_approval:ran-1") != 1 {
			t.Fatalf("%s: %q, want one ran_without_approval page", name, got)
		}
	}
	if got := r.chans["pager"].kinds(); got != "" {
		t.Fatalf("pager (a later step, never paged): %q", got)
	}
	var ev Event
	for _, e := range r.chans["push"].events() {
		if e.Kind == KindRanWithoutApproval {
			ev = e
		}
	}
	if ev.Outcome != "ran without approval (the proposal is expired)" || ev.Requester != "claude-code" || ev.SessionKey != "agent:prod:web" {
		t.Fatalf("event: %+v", ev)
	}
	title, body := Title(ev), Body(ev, time.Now())
	if !strings.HasPrefix(title, "RAN WITHOUT APPROVAL: ran-1 (agent:prod:web)") || !strings.Contains(body, "its agent did not wait for a decision") ||
		!strings.Contains(body, "rm -rf /srv/app/releases/old") || !strings.Contains(body, "This message cannot approve") {
		t.Fatalf("title %q\nbody:\n%s", title, body)
	}
	if pd := pdBody("k", ev, renderText(cleanEvent(ev), time.Now), time.Now()); pd.EventAction != "trigger" || pd.DedupKey != "ran-1/ran_without_approval" {
		t.Fatalf("pagerduty: %+v", pd)
	}
	if p := ntfyPriority(ev); p != 5 {
		t.Fatalf("ntfy priority %d", p)
	}
}

// A route whose events are [ran_without_approval] pages only those: put
// first, it takes them for every proposal it matches, and the route after
// it still pages the rest; a proposal only it matches pages nobody while
// it waits.
func TestRouteEventsSelectKinds(t *testing.T) {
	r := newRig(t)
	r.cfg.Channels["desk"] = &config.Channel{Name: "desk", Type: config.TypeExec, IncludeCommand: true}
	r.chans["desk"] = &fakeChannel{name: "desk"}
	r.cfg.Routes = append([]*config.Route{{Events: []string{KindRanWithoutApproval},
		Steps: []config.Step{{After: 0, Notify: []string{"desk"}}}}}, r.cfg.Routes...)
	r.n = r.notifier(r.store, "n1")
	r.submit("prod-1", "agent:prod:web", "rm -rf /srv/app/releases/old", 10*time.Minute)
	r.submit("dev-1", "agent:dev:web", "ls -la", 10*time.Minute)
	r.tick()
	if got := r.chans["desk"].kinds(); got != "" {
		t.Fatalf("desk paged for a waiting proposal: %q", got)
	}
	if got := r.chans["push"].kinds(); got != "page:prod-1" {
		t.Fatalf("push: %q", got)
	}
	ctx := context.Background()
	for _, id := range []string{"prod-1", "dev-1"} {
		if _, err := r.store.RecordRanWithoutApproval(ctx, id, "ran", hookSide); err != nil {
			t.Fatal(err)
		}
	}
	r.tick()
	r.tick()
	if got := r.chans["desk"].kinds(); got != "ran_without_approval:prod-1 ran_without_approval:dev-1" && got != "ran_without_approval:dev-1 ran_without_approval:prod-1" {
		t.Fatalf("desk: %q", got)
	}
	// prod-1's channels paged so far hear it too; its resolution follows
	// the route that paged it.
	if got := r.chans["push"].kinds(); !strings.Contains(got, "ran_without_approval:prod-1") || !strings.Contains(got, "resolved:prod-1") {
		t.Fatalf("push: %q", got)
	}

	// A route that sends pages only: no ran_without_approval page, nor a
	// resolution, for what it matches.
	r2 := newRig(t)
	r2.cfg.Routes[0].Events = []string{KindPage, KindEscalation}
	r2.submit("prod-2", "agent:prod:web", "rm -rf /srv/app/releases/old", 10*time.Minute)
	r2.tick()
	if _, err := r2.store.RecordRanWithoutApproval(ctx, "prod-2", "ran", hookSide); err != nil {
		t.Fatal(err)
	}
	r2.tick()
	r2.tick()
	if got := r2.chans["push"].kinds(); got != "page:prod-2" {
		t.Fatalf("push: %q", got)
	}
}

// End to end with a real receiver on loopback: the webhook body of a call
// run without approval, signed, saying what happened, never the secret.
func TestRanWithoutApprovalWebhookOnLoopback(t *testing.T) {
	r := newRig(t)
	srv := newRecorder(t, http.StatusOK)
	ch := &config.Channel{Name: "hook", Type: config.TypeWebhook, URL: srv.URL + "/approve-tui/events",
		SigningSecret: config.Secret{Env: "SIGN"}, Timeout: 5 * time.Second}
	r.cfg.Channels["hook"] = ch
	r.cfg.Channels["hook"].IncludeCommand = true
	n := r.notifier(r.store, "n1")
	n.Senders["hook"] = mustSender(t, ch, testOptions(map[string]string{"SIGN": secretSigning}))
	r.submit("ran-wh-1", "agent:prod:web", "rm -rf /srv/app/releases/old", 10*time.Minute)
	ctx := context.Background()
	if err := n.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.RecordRanWithoutApproval(ctx, "ran-wh-1", "ran", hookSide); err != nil {
		t.Fatal(err)
	}
	if err := n.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	var found *webhookDoc
	srv.mu.Lock()
	reqs := append([]recorded(nil), srv.reqs...)
	srv.mu.Unlock()
	for _, req := range reqs {
		var doc webhookDoc
		if err := json.Unmarshal(req.Body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Event == KindRanWithoutApproval {
			if found != nil {
				t.Fatal("sent twice")
			}
			found = &doc
			if err := VerifyWebhook([]byte(secretSigning), req.Header.Get("X-Approve-TUI-Signature"), req.Body, testNow, time.Minute); err != nil {
				t.Fatalf("signature: %v", err)
			}
		}
	}
	if found == nil {
		t.Fatalf("no ran_without_approval delivery among %d", len(reqs))
	}
	if found.ApprovalID != "ran-wh-1" || found.Outcome == nil || *found.Outcome != "ran without approval (the proposal is expired)" ||
		found.Command == nil || *found.Command != "rm -rf /srv/app/releases/old" || !strings.Contains(found.Summary, "RAN WITHOUT APPROVAL") {
		t.Fatalf("body: %+v", found)
	}
	// The delivery is recorded as sent, once.
	ds, err := r.store.DeliveriesOf(ctx, "ran-wh-1")
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, d := range ds {
		if d.Kind == KindRanWithoutApproval && d.Channel == "hook" && d.State == storage.DeliveryDelivered {
			sent++
		}
	}
	if sent != 1 {
		t.Fatalf("deliveries %+v", ds)
	}
}
