package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/config"
)

// webhookDoc is the webhook body as documented, written out here apart
// from WebhookPayload so the test checks the wire format.
type webhookDoc struct {
	DeliveryID     string  `json:"delivery_id"`
	Event          string  `json:"event"`
	Step           int     `json:"step"`
	ApprovalID     string  `json:"approval_id"`
	Risk           string  `json:"risk"`
	SessionKey     string  `json:"session_key"`
	Requester      string  `json:"requester"`
	CreatedAt      *string `json:"created_at"`
	ExpiresAt      *string `json:"expires_at"`
	At             *string `json:"at"`
	OpenHint       string  `json:"open_hint"`
	Command        *string `json:"command"`
	CommandOmitted bool    `json:"command_omitted"`
	Outcome        *string `json:"outcome"`
	Actor          *string `json:"actor"`
	Summary        string  `json:"summary"`
	Note           string  `json:"note"`
}

func webhookSetup(t *testing.T) (*recorder, Sender) {
	t.Helper()
	srv := newRecorder(t, http.StatusOK)
	ch := &config.Channel{Name: "hook", Type: config.TypeWebhook, URL: srv.URL + "/approve-tui/events",
		SigningSecret: config.Secret{Env: "SIGN"}}
	return srv, mustSender(t, ch, testOptions(map[string]string{"SIGN": secretSigning}))
}

// independentSignature computes the header value without the package's
// code.
func independentSignature(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.", ts)
	m.Write(body)
	return fmt.Sprintf("t=%d,v1=%s", ts, hex.EncodeToString(m.Sum(nil)))
}

func TestWebhookDelivery(t *testing.T) {
	srv, s := webhookSetup(t)
	d := Delivery{ID: "hm-abc123:page:0:hook", Attempt: 1}
	if err := s.Send(context.Background(), baseEvent(), d); err != nil {
		t.Fatal(err)
	}
	r := srv.last(t)
	if r.Method != http.MethodPost || r.Path != "/approve-tui/events" {
		t.Fatalf("%s %s", r.Method, r.Path)
	}
	for k, want := range map[string]string{
		"Content-Type":           "application/json",
		"User-Agent":             "approve-tui/1.2.3",
		"X-Approve-TUI-Delivery": d.ID,
		"X-Approve-TUI-Event":    "page",
	} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	sig := r.Header.Get(WebhookSignatureHeader)
	if want := independentSignature(secretSigning, testNow.Unix(), r.Body); sig != want {
		t.Errorf("signature %q\n want %q", sig, want)
	}
	if err := VerifyWebhook([]byte(secretSigning), sig, r.Body, testNow.Add(time.Minute), time.Minute*5); err != nil {
		t.Errorf("VerifyWebhook: %v", err)
	}
	var w webhookDoc
	decodeStrict(t, r.Body, &w)
	if w.DeliveryID != d.ID || w.Event != "page" || w.Step != 0 || w.ApprovalID != "hm-abc123" || w.Risk != "high" ||
		w.SessionKey != "agent:prod:web" || w.Requester != "claude-code@build-7" ||
		w.OpenHint != "ssh -t -p 2222 approvals.example open hm-abc123" || w.CommandOmitted ||
		w.Command == nil || *w.Command != "rm -rf /srv/cache && systemctl restart web" ||
		w.Outcome != nil || w.Actor != nil || !strings.Contains(w.Note, "cannot approve") ||
		w.Summary != "HIGH approval waiting: hm-abc123 (agent:prod:web)" {
		t.Errorf("%+v", w)
	}
	if w.CreatedAt == nil || *w.CreatedAt != "2026-03-04T11:59:00Z" || w.ExpiresAt == nil || *w.ExpiresAt != "2026-03-04T12:02:30Z" {
		t.Errorf("times %v %v", w.CreatedAt, w.ExpiresAt)
	}

	// Omitted command, no expiry, a resolution.
	ev := baseEvent()
	ev.Kind, ev.Outcome, ev.Actor, ev.Step = KindResolved, "expired", "", 2
	ev.CommandOmitted, ev.ExpiresAt = true, time.Time{}
	if err := s.Send(context.Background(), ev, Delivery{}); err != nil {
		t.Fatal(err)
	}
	r = srv.last(t)
	if bytes.Contains(r.Body, []byte(`"command":`)) || !bytes.Contains(r.Body, []byte(`"expires_at":null`)) {
		t.Errorf("body %s", r.Body)
	}
	w = webhookDoc{}
	decodeStrict(t, r.Body, &w)
	if !w.CommandOmitted || w.Command != nil || w.ExpiresAt != nil || w.Outcome == nil || *w.Outcome != "expired" ||
		w.Actor == nil || *w.Actor != "" || w.Event != "resolved" || w.Step != 2 {
		t.Errorf("%+v", w)
	}
	if r.Header.Get(WebhookDeliveryHeader) != "" {
		t.Error("delivery header without a delivery id")
	}
}

func TestVerifyWebhook(t *testing.T) {
	secret := []byte(secretSigning)
	body := []byte(`{"event":"page"}`)
	ts := testNow.Unix()
	good := independentSignature(secretSigning, ts, body)
	if err := VerifyWebhook(secret, good, body, testNow, 0); err != nil {
		t.Fatalf("good: %v", err)
	}
	if got := SignWebhook(secret, testNow, body); got != good {
		t.Errorf("SignWebhook %q", got)
	}
	other := independentSignature("old-secret", ts, body)
	rotated := good + "," + strings.Split(other, ",")[1]
	if err := VerifyWebhook(secret, rotated, body, testNow, 0); err != nil {
		t.Errorf("two v1 (rotation): %v", err)
	}
	if err := VerifyWebhook(secret, " t="+strconv.FormatInt(ts, 10)+" , "+strings.Split(good, ",")[1], body, testNow, 0); err != nil {
		t.Errorf("spaces: %v", err)
	}
	cases := []struct {
		name   string
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"tampered body", good, []byte(`{"event":"resolved"}`), testNow, ErrWebhookBadSignature},
		{"wrong secret", other, body, testNow, ErrWebhookBadSignature},
		{"replay", good, body, testNow.Add(6 * time.Minute), ErrWebhookStale},
		{"future", good, body, testNow.Add(-6 * time.Minute), ErrWebhookStale},
		{"no header", "", body, testNow, ErrWebhookNoSignature},
		{"no v1", "t=" + strconv.FormatInt(ts, 10), body, testNow, ErrWebhookNoSignature},
		{"no t", strings.Split(good, ",")[1], body, testNow, ErrWebhookNoSignature},
		{"bad hex", "t=" + strconv.FormatInt(ts, 10) + ",v1=zz", body, testNow, ErrWebhookNoSignature},
		{"bad t", "t=abc," + strings.Split(good, ",")[1], body, testNow, ErrWebhookBadSignature},
		{"two t", good + ",t=1", body, testNow, ErrWebhookBadSignature},
		{"changed t", independentSignature(secretSigning, ts, body)[:2] + strconv.FormatInt(ts+1, 10) + "," + strings.Split(good, ",")[1], body, testNow, ErrWebhookBadSignature},
	}
	for _, c := range cases {
		if err := VerifyWebhook(secret, c.header, c.body, c.now, 5*time.Minute); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := VerifyWebhook(nil, good, body, testNow, 0); err == nil {
		t.Error("empty secret accepted")
	}
	if err := VerifyWebhook(secret, good, body, testNow.Add(30*time.Second), 10*time.Second); !errors.Is(err, ErrWebhookStale) {
		t.Errorf("tolerance: %v", err)
	}
}

func TestWebhookHostile(t *testing.T) {
	srv, s := webhookSetup(t)
	ev := hostileEvent()
	ev.Kind, ev.Outcome = KindResolved, "denied"
	if err := s.Send(context.Background(), ev, Delivery{ID: "id\r\nX-Evil: 1"}); err != nil {
		t.Fatal(err)
	}
	r := srv.last(t)
	if r.Header.Get("X-Evil") != "" || strings.ContainsAny(r.Header.Get(WebhookDeliveryHeader), "\r\n ") {
		t.Errorf("header injection: %v", r.Header)
	}
	if bytes.Contains(r.Body, []byte("</script>")) || bytes.Contains(r.Body, []byte("<!channel>")) {
		t.Error("markup reached the body unescaped (json must encode <, >, &)")
	}
	if err := VerifyWebhook([]byte(secretSigning), r.Header.Get(WebhookSignatureHeader), r.Body, testNow, 0); err != nil {
		t.Errorf("verify: %v", err)
	}
	var w webhookDoc
	decodeStrict(t, r.Body, &w)
	for _, s := range []string{w.SessionKey, w.Requester, *w.Actor, w.Summary} {
		if strings.ContainsAny(s, "\n\r\x1b\u202e") {
			t.Errorf("raw control characters: %q", s)
		}
	}
	if w.Command == nil || utf8.RuneCountInString(*w.Command) > maxMachineCommandRunes || !strings.HasSuffix(*w.Command, "…") {
		t.Error("command not bounded")
	}
	if strings.ContainsAny(*w.Command, "\x1b\x07\u202e") || !strings.Contains(*w.Command, `\x1b]0;pwned\x07`) {
		t.Errorf("command not made visible: %.80q", *w.Command)
	}
	if !strings.Contains(*w.Actor, `\x0d\nSet-Cookie`) {
		t.Errorf("actor %q", *w.Actor)
	}
}

func TestWebhookSecretURL(t *testing.T) {
	srv := newRecorder(t, http.StatusBadRequest)
	ch := &config.Channel{Name: "hook", Type: config.TypeWebhook, URLSecret: config.Secret{Env: "HOOK_URL"}}
	s := mustSender(t, ch, testOptions(map[string]string{"HOOK_URL": srv.URL + "/in/" + secretQueryToken + "?k=" + secretQueryToken}))
	err := s.Send(context.Background(), baseEvent(), Delivery{})
	if se := sendErr(t, err); se.Retryable || se.Status != 400 {
		t.Errorf("%v", err)
	}
	noSecrets(t, err.Error())
	if !strings.Contains(err.Error(), "webhook (URL from secret)") || strings.Contains(err.Error(), srv.URL) {
		t.Errorf("%v", err)
	}
	if r := srv.last(t); r.Header.Get(WebhookSignatureHeader) != "" || r.Path != "/in/"+secretQueryToken {
		t.Errorf("unsigned channel: %v %s", r.Header, r.Path)
	}
}
