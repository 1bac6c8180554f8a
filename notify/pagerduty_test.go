package notify

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/config"
)

// pdTriggerDoc is the documented alert event (Send an Alert Event).
type pdTriggerDoc struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"`
	DedupKey    string `json:"dedup_key"`
	Payload     struct {
		Summary       string         `json:"summary"`
		Source        string         `json:"source"`
		Severity      string         `json:"severity"`
		Timestamp     string         `json:"timestamp"`
		Component     string         `json:"component"`
		Group         string         `json:"group"`
		Class         string         `json:"class"`
		CustomDetails map[string]any `json:"custom_details"`
	} `json:"payload"`
	Images    []map[string]string `json:"images"`
	Links     []map[string]string `json:"links"`
	Client    string              `json:"client"`
	ClientURL string              `json:"client_url"`
}

// pdResolveDoc is the documented resolve: only these three fields.
type pdResolveDoc struct {
	RoutingKey  string `json:"routing_key"`
	DedupKey    string `json:"dedup_key"`
	EventAction string `json:"event_action"`
}

func pdSetup(t *testing.T) (*recorder, Sender) {
	t.Helper()
	srv := newRecorder(t, http.StatusAccepted)
	srv.set(http.StatusAccepted, map[string]string{"Content-Type": "application/json"},
		`{"status":"success","message":"Event processed","dedup_key":"hm-abc123"}`)
	ch := &config.Channel{Name: "pd", Type: config.TypePagerDuty, RoutingKey: config.Secret{Env: "PD_KEY"},
		EventsURL: srv.URL + "/v2/enqueue"}
	return srv, mustSender(t, ch, testOptions(map[string]string{"PD_KEY": secretRoutingKey}))
}

func TestPagerDutyTrigger(t *testing.T) {
	srv, s := pdSetup(t)
	if err := s.Send(context.Background(), baseEvent(), Delivery{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	r := srv.last(t)
	if r.Method != http.MethodPost || r.Path != "/v2/enqueue" || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %s %v", r.Method, r.Path, r.Header)
	}
	var e pdTriggerDoc
	decodeStrict(t, r.Body, &e)
	p := e.Payload
	if e.RoutingKey != secretRoutingKey || e.EventAction != "trigger" || e.DedupKey != "hm-abc123" || e.Client != "approve-tui" {
		t.Errorf("envelope %+v", e)
	}
	if p.Summary != "HIGH approval waiting: hm-abc123 (agent:prod:web)" || p.Source != "approve-tui" || p.Severity != "error" {
		t.Errorf("payload %+v", p)
	}
	if ts, err := time.Parse(time.RFC3339, p.Timestamp); err != nil || !ts.Equal(testNow) {
		t.Errorf("timestamp %q", p.Timestamp)
	}
	if p.Component != "agent:prod:web" || p.Group != "claude-code@build-7" || p.Class != "approval page" {
		t.Errorf("component %q group %q class %q", p.Component, p.Group, p.Class)
	}
	d := p.CustomDetails
	for k, want := range map[string]any{
		"approval_id": "hm-abc123", "session": "agent:prod:web", "requester": "claude-code@build-7",
		"expires_at": "2026-03-04T12:02:30Z", "open_hint": "open it: ssh -t -p 2222 approvals.example open hm-abc123",
		"command": "rm -rf /srv/cache && systemctl restart web", "risk": "high", "event": "page", "step": float64(1),
		"time_left": "2m30s (expires 2026-03-04T12:02:30Z)",
	} {
		if d[k] != want {
			t.Errorf("custom_details[%s] = %#v, want %#v", k, d[k], want)
		}
	}
	if n, _ := d["note"].(string); !strings.Contains(n, "cannot approve") {
		t.Errorf("note %q", n)
	}
	if len(e.Links) != 0 {
		t.Errorf("links for an ssh hint: %v", e.Links)
	}

	ev := baseEvent()
	ev.CommandOmitted, ev.ExpiresAt, ev.OpenHint = true, time.Time{}, "https://approvals.example/p/hm-abc123"
	ev.Kind, ev.Step = KindEscalation, 1
	_ = s.Send(context.Background(), ev, Delivery{})
	e = pdTriggerDoc{}
	decodeStrict(t, srv.last(t).Body, &e)
	d = e.Payload.CustomDetails
	// The route's second step: "step 2" in the summary and the details,
	// as the console counts it.
	if _, ok := d["command"]; ok || d["command_omitted"] != true || d["expires_at"] != "never" || d["step"] != float64(2) ||
		!strings.HasPrefix(e.Payload.Summary, "ESCALATION (step 2): ") {
		t.Errorf("omitted/never: %v %q", d, e.Payload.Summary)
	}
	if len(e.Links) != 1 || e.Links[0]["href"] != ev.OpenHint || e.Payload.Class != "approval escalation" {
		t.Errorf("links %v class %q", e.Links, e.Payload.Class)
	}
}

func TestPagerDutyResolve(t *testing.T) {
	srv, s := pdSetup(t)
	ev := baseEvent()
	ev.Kind, ev.Outcome, ev.Actor = KindResolved, "denied", "bob"
	if err := s.Send(context.Background(), ev, Delivery{}); err != nil {
		t.Fatal(err)
	}
	var e pdResolveDoc
	decodeStrict(t, srv.last(t).Body, &e) // unknown fields (payload, client) refused
	if e.RoutingKey != secretRoutingKey || e.EventAction != "resolve" || e.DedupKey != "hm-abc123" {
		t.Errorf("%+v", e)
	}
}

func TestPagerDutySeverity(t *testing.T) {
	for risk, want := range map[string]string{
		"tier2_critical": "critical", "high": "error", "unknown": "error", "bogus": "error",
		"medium": "warning", "low": "warning",
	} {
		if got := pdSeverity(risk); got != want {
			t.Errorf("pdSeverity(%q) = %q, want %q", risk, got, want)
		}
	}
}

func TestPagerDutyErrors(t *testing.T) {
	srv, s := pdSetup(t)
	for _, c := range []struct {
		status     int
		headers    map[string]string
		retryable  bool
		retryAfter time.Duration
	}{
		{400, nil, false, 0},
		{429, nil, true, 30 * time.Second},
		{429, map[string]string{"Retry-After": "5"}, true, 5 * time.Second},
		{500, nil, true, 0},
		{502, nil, true, 0},
		{403, nil, false, 0},
	} {
		srv.set(c.status, c.headers, `{"status":"invalid event","message":"Event object is invalid","errors":["routing_key `+secretRoutingKey+` unknown"]}`)
		err := s.Send(context.Background(), baseEvent(), Delivery{})
		se := sendErr(t, err)
		if se.Retryable != c.retryable || se.Status != c.status || se.RetryAfter != c.retryAfter {
			t.Errorf("%d: %v (after %v)", c.status, err, se.RetryAfter)
		}
		noSecrets(t, err.Error())
		if !strings.Contains(err.Error(), "PagerDuty Events API at http://127.0.0.1") {
			t.Errorf("%d: %v", c.status, err)
		}
	}
	// No approval id: nothing to dedup or resolve on.
	srv.set(http.StatusAccepted, nil, "")
	ev := baseEvent()
	ev.ApprovalID = ""
	if se := sendErr(t, s.Send(context.Background(), ev, Delivery{})); se.Retryable {
		t.Error("no id: retryable")
	}
}

func TestPagerDutyHostile(t *testing.T) {
	srv, s := pdSetup(t)
	ev := hostileEvent()
	ev.ApprovalID = strings.Repeat("é", 300)
	if err := s.Send(context.Background(), ev, Delivery{}); err != nil {
		t.Fatal(err)
	}
	var e pdTriggerDoc
	decodeStrict(t, srv.last(t).Body, &e)
	if len(e.DedupKey) > 255 || !utf8.ValidString(e.DedupKey) {
		t.Errorf("dedup_key %d bytes", len(e.DedupKey))
	}
	if n := utf8.RuneCountInString(e.Payload.Summary); n > 1024 {
		t.Errorf("summary %d characters", n)
	}
	cmd, _ := e.Payload.CustomDetails["command"].(string)
	if utf8.RuneCountInString(cmd) > 300 || !strings.HasSuffix(cmd, "…") {
		t.Errorf("command %d runes", utf8.RuneCountInString(cmd))
	}
	if strings.ContainsAny(e.Payload.Summary+e.Payload.Component+e.Payload.Group+cmd, "\x1b\x07\u202e\r") {
		t.Error("raw control characters reached PagerDuty")
	}
}
