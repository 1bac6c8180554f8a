package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
)

// A proposal parked after its first page (its agent stopped waiting): the
// escalation says so, in every body a channel sends, received by loopback
// servers and a script; a why another program wrote arrives sanitised.
func TestParkedPageBodies(t *testing.T) {
	r := newRig(t)
	r.submit("park-page-1", "agent:prod:web", "rm -rf /srv/app/releases/old", 30*time.Minute)
	r.tick()
	for _, name := range []string{"push", "hook"} {
		if got := r.chans[name].events(); len(got) != 1 || got[0].ParkState != "" || got[0].Park != "" {
			t.Fatalf("%s: the first page, before the park: %+v", name, got)
		}
	}
	ctx := context.Background()
	hook := model.Actor{Surface: model.SurfaceRunner, Name: "hook@agent-host"}
	if _, err := r.store.Park(ctx, "park-page-1", r.tclock.Now().Add(20*time.Minute), "hook timeout\x1b]0;pwn\x07\n<!channel>", hook); err != nil {
		t.Fatal(err)
	}
	r.tclock.Advance(5 * time.Minute)
	r.tick()
	evs := r.chans["pager"].events()
	if len(evs) != 1 || evs[0].Kind != KindEscalation {
		t.Fatalf("pager: %+v", evs)
	}
	ev := evs[0]
	if ev.ParkState != "parked" || !strings.Contains(ev.Park, "the agent stopped waiting at ") ||
		!strings.Contains(ev.Park, "; approving lets this exact call through when it is asked again, until ") {
		t.Fatalf("escalation of a parked proposal: %q %q", ev.ParkState, ev.Park)
	}
	if strings.ContainsAny(ev.Park, "\x1b\x07\n") {
		t.Fatalf("raw control in the park words: %q", ev.Park)
	}
	if !strings.HasPrefix(Title(ev), "ESCALATION (step 2): HIGH approval parked: park-page-1") {
		t.Fatalf("title %q", Title(ev))
	}
	if body := Body(ev, time.Now()); !strings.Contains(body, "Parked: "+ev.Park+"\n") {
		t.Fatalf("body:\n%s", body)
	}

	// ntfy
	ntfy := newRecorder(t, http.StatusOK)
	s := mustSender(t, &config.Channel{Name: "push", Type: config.TypeNtfy, URL: ntfy.URL + "/approvals", IncludeCommand: true}, testOptions(nil))
	if err := s.Send(ctx, ev, Delivery{ID: "park-page-1:escalation:1:push", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	var nm struct{ Title, Message string }
	if err := json.Unmarshal(ntfy.last(t).Body, &nm); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(nm.Message, "Parked: the agent stopped waiting at ") || !strings.Contains(nm.Title, "approval parked") {
		t.Fatalf("ntfy: %+v", nm)
	}

	// webhook
	wh := newRecorder(t, http.StatusOK)
	s = mustSender(t, &config.Channel{Name: "hook", Type: config.TypeWebhook, URL: wh.URL + "/events"}, testOptions(nil))
	if err := s.Send(ctx, ev, Delivery{ID: "park-page-1:escalation:1:hook", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	var w struct {
		Park *WebhookPark `json:"park"`
	}
	if err := json.Unmarshal(wh.last(t).Body, &w); err != nil || w.Park == nil || w.Park.State != "parked" || w.Park.Words != ev.Park {
		t.Fatalf("webhook: %+v %v\n%s", w.Park, err, wh.last(t).Body)
	}

	// PagerDuty
	pd := newRecorder(t, http.StatusAccepted)
	s = mustSender(t, &config.Channel{Name: "pager", Type: config.TypePagerDuty, RoutingKey: config.Secret{Env: "PDKEY"}, EventsURL: pd.URL + "/v2/enqueue", IncludeCommand: true},
		testOptions(map[string]string{"PDKEY": "routing-key-123"}))
	if err := s.Send(ctx, ev, Delivery{ID: "park-page-1:escalation:1:pager", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	var pe struct {
		Payload struct {
			CustomDetails struct {
				Parked string `json:"parked"`
			} `json:"custom_details"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(pd.last(t).Body, &pe); err != nil || pe.Payload.CustomDetails.Parked != ev.Park {
		t.Fatalf("pagerduty: %+v %v\n%s", pe, err, pd.last(t).Body)
	}

	// exec
	dir := t.TempDir()
	out := filepath.Join(dir, "stdin.json")
	p := script(t, dir, "page.sh", `cat > "$1"`+"\n")
	s = mustSender(t, &config.Channel{Name: "script", Type: config.TypeExec, Command: []string{p, out}}, testOptions(nil))
	if err := s.Send(ctx, ev, Delivery{ID: "park-page-1:escalation:1:script", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	w.Park = nil
	if err := json.Unmarshal(data, &w); err != nil || w.Park == nil || w.Park.Words != ev.Park {
		t.Fatalf("exec: %+v %v\n%s", w.Park, err, data)
	}

	// A resolution says nothing of the park: it is over.
	res := ev
	res.Kind, res.Outcome = KindResolved, "approved"
	if body, _ := webhookBody(res, Delivery{ID: "x"}); strings.Contains(string(body), `"park"`) {
		t.Fatalf("resolution with a park: %s", body)
	}
}
