package notify

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// One paging step has one number wherever people read it: the route's
// second step (index 1, its first escalation) is "step 2" in the titles
// and fields of ntfy, Slack and PagerDuty (summary and details) and in
// the webhook's summary, as the console and config check count it; the
// webhook's machine field step keeps the index (1), as documented. The
// time left (1m39s) is said as it is, never cut to "1m".
func TestStepAndTimeLeftAgreeOnEveryChannel(t *testing.T) {
	ev := baseEvent()
	ev.Kind, ev.Step = KindEscalation, 1
	ev.ExpiresAt = ev.At.Add(time.Minute + 39*time.Second)
	const title = "ESCALATION (step 2): HIGH approval waiting: hm-abc123 (agent:prod:web)"
	send := func(s Sender) {
		t.Helper()
		if err := s.Send(context.Background(), ev, Delivery{ID: "hm-abc123/escalation/1/x", Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	noStepOne := func(where, body string) {
		t.Helper()
		if strings.Contains(strings.ToLower(body), "step 1") || strings.Contains(body, "Step*\\n1") || strings.Contains(body, "Step: 1") {
			t.Errorf("%s says step 1: %s", where, body)
		}
		if strings.Contains(body, "1m (") || strings.Contains(body, "in 1m:") {
			t.Errorf("%s rounds 1m39s down: %s", where, body)
		}
	}

	// ntfy: title and body.
	nsrv, ns := ntfySetup(t, "/approvals_Xk3")
	send(ns)
	var nm struct {
		Title   string `json:"title"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(nsrv.last(t).Body, &nm); err != nil {
		t.Fatal(err)
	}
	if nm.Title != title || !strings.Contains(nm.Message, "Step: 2\n") || !strings.Contains(nm.Message, "Time left: 1m39s (") {
		t.Errorf("ntfy: %q\n%s", nm.Title, nm.Message)
	}
	noStepOne("ntfy", string(nsrv.last(t).Body))

	// Slack: the header and the Step field.
	ssrv, ss := slackSetup(t)
	send(ss)
	sbody := string(ssrv.last(t).Body)
	var sd slackDoc
	if err := json.Unmarshal([]byte(sbody), &sd); err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, b := range sd.Blocks {
		for _, f := range b.Fields {
			fields = append(fields, f.Text)
		}
	}
	if sd.Blocks[0].Text == nil || sd.Blocks[0].Text.Text != title || !strings.Contains(strings.Join(fields, "|"), "*Step*\n2") ||
		!strings.Contains(strings.Join(fields, "|"), "1m39s (expires") {
		t.Errorf("slack: %s", sbody)
	}
	noStepOne("slack", sbody)

	// PagerDuty: the summary and the details beside it.
	psrv, ps := pdSetup(t)
	send(ps)
	var pd pdTriggerDoc
	decodeStrict(t, psrv.last(t).Body, &pd)
	d := pd.Payload.CustomDetails
	if pd.Payload.Summary != title || d["step"] != float64(2) || d["time_left"] != "1m39s (expires "+ev.ExpiresAt.UTC().Format(time.RFC3339)+")" {
		t.Errorf("pagerduty: %q %v", pd.Payload.Summary, d)
	}
	noStepOne("pagerduty", string(psrv.last(t).Body))

	// The webhook: the summary in words, step as the route's index.
	wsrv, ws := webhookSetup(t)
	send(ws)
	var w WebhookPayload
	if err := json.Unmarshal(wsrv.last(t).Body, &w); err != nil {
		t.Fatal(err)
	}
	if w.Summary != title || w.Step != 1 || w.Event != KindEscalation {
		t.Errorf("webhook: %+v", w)
	}

	// The first page: step 1 in words, 0 as the webhook's index.
	ev.Kind, ev.Step = KindPage, 0
	send(ps)
	decodeStrict(t, psrv.last(t).Body, &pd)
	if pd.Payload.CustomDetails["step"] != float64(1) {
		t.Errorf("pagerduty page: %v", pd.Payload.CustomDetails)
	}
	send(ws)
	w = WebhookPayload{}
	if err := json.Unmarshal(wsrv.last(t).Body, &w); err != nil || w.Step != 0 {
		t.Errorf("webhook page: %+v %v", w, err)
	}
	// A reminder has no step of its own: PagerDuty's details leave it out.
	ev.Kind = KindReminder
	send(ps)
	pd = pdTriggerDoc{}
	decodeStrict(t, psrv.last(t).Body, &pd)
	if _, ok := pd.Payload.CustomDetails["step"]; ok || !strings.HasPrefix(pd.Payload.Summary, "reminder: expires in 1m39s: ") {
		t.Errorf("pagerduty reminder: %q %v", pd.Payload.Summary, pd.Payload.CustomDetails)
	}
}
