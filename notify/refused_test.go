package notify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/model"
)

// The reason paged is the one run and the hooks record.
func TestRefusedReasonIsTheAgentSides(t *testing.T) {
	if RefusedReason != agent.ReasonSignatureInvalid {
		t.Fatalf("RefusedReason %q, agent records %q", RefusedReason, agent.ReasonSignatureInvalid)
	}
}

// An approval refused where it runs because its signatures do not hold
// is paged once, to the channels paged so far and the route's first step,
// after the proposal left pending; other refusals are not.
func TestNotifierPagesRefusedSignatures(t *testing.T) {
	r := newRig(t)
	r.submit("refused-sig-1", "agent:prod:web", "rm -rf /srv/app/releases/old", 10*time.Minute)
	r.submit("refused-grew-1", "agent:prod:web", "rm -rf /srv/app/releases/older", 10*time.Minute)
	r.tick()
	r.tick()
	ctx := context.Background()
	for _, c := range []struct{ id, reason string }{{"refused-sig-1", RefusedReason}, {"refused-grew-1", "impact_grew"}} {
		if _, err := r.store.Consume(ctx, c.id, c.id, model.Actor{Surface: model.SurfaceTUI, Name: "hermes", Person: "hermes"}); err != nil {
			t.Fatal(err)
		}
		if err := r.store.RecordExecution(ctx, c.id, model.ExecBlockedAfterConsume, c.reason, model.Actor{Surface: model.SurfaceRunner, Name: "agent@test"}); err != nil {
			t.Fatal(err)
		}
	}
	r.tick()
	r.tick()
	second := r.notifier(r.store, "n2")
	if err := second.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"push", "hook"} {
		got := r.chans[name].kinds()
		if strings.Count(got, "refused:refused-sig-1") != 1 || strings.Contains(got, "refused:refused-grew-1") {
			t.Fatalf("%s: %q, want one refused page for refused-sig-1 only", name, got)
		}
	}
	if got := r.chans["pager"].kinds(); got != "" {
		t.Fatalf("pager (a later step, never paged): %q", got)
	}
	var ev Event
	for _, e := range r.chans["push"].events() {
		if e.Kind == KindRefused {
			ev = e
		}
	}
	if ev.Outcome != "refused at execution: signature_invalid" || ev.Actor != "hermes via tui" {
		t.Fatalf("refused event: %+v", ev)
	}
	title, body := Title(ev), Body(ev, time.Now())
	if !strings.HasPrefix(title, "REFUSED AT EXECUTION: refused-sig-1") || !strings.Contains(body, "which no valid signature backs") ||
		!strings.Contains(body, "rm -rf /srv/app/releases/old") || !strings.Contains(body, "This message cannot approve") {
		t.Fatalf("title %q\nbody:\n%s", title, body)
	}
	if pd := pdBody("k", ev, renderText(cleanEvent(ev), time.Now), time.Now()); pd.EventAction != "trigger" || pd.DedupKey != "refused-sig-1/refused" {
		t.Fatalf("pagerduty: %+v", pd)
	}
}
