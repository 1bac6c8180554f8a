package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/config"
)

// ntfyDoc is ntfy's documented JSON publishing body, the fields we may
// send ("Publish as JSON" table).
type ntfyDoc struct {
	Topic    string   `json:"topic"`
	Message  string   `json:"message"`
	Title    string   `json:"title"`
	Tags     []string `json:"tags"`
	Priority int      `json:"priority"`
	Click    string   `json:"click"`
	Actions  []struct {
		Action string `json:"action"`
		Label  string `json:"label"`
		URL    string `json:"url"`
		Clear  bool   `json:"clear"`
	} `json:"actions"`
	Markdown bool `json:"markdown"`
}

func ntfySetup(t *testing.T, path string) (*recorder, Sender) {
	t.Helper()
	srv := newRecorder(t, http.StatusOK)
	srv.set(http.StatusOK, map[string]string{"Content-Type": "application/json"}, `{"id":"xE73Iyuabi","event":"message"}`)
	ch := &config.Channel{Name: "phone", Type: config.TypeNtfy, URL: srv.URL + path, Token: config.Secret{Env: "NTFY_TOKEN"}}
	return srv, mustSender(t, ch, testOptions(map[string]string{"NTFY_TOKEN": secretNtfyToken}))
}

func TestNtfyPublishAsJSON(t *testing.T) {
	srv, s := ntfySetup(t, "/approvals_Xk3")
	if err := s.Send(context.Background(), baseEvent(), Delivery{ID: "hm-abc123/page/0/phone", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	r := srv.last(t)
	if r.Method != http.MethodPost || r.Path != "/" {
		t.Fatalf("%s %s, want POST / (JSON goes to the root URL)", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+secretNtfyToken {
		t.Errorf("Authorization %q", got)
	}
	if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("User-Agent") != "approve-tui/1.2.3" {
		t.Errorf("headers %v", r.Header)
	}
	for _, h := range []string{"X-Title", "Title", "X-Tags", "X-Priority", "X-Template", "Template"} {
		if r.Header.Get(h) != "" {
			t.Errorf("header %s set: the JSON body carries everything", h)
		}
	}
	var m ntfyDoc
	decodeStrict(t, r.Body, &m)
	if m.Topic != "approvals_Xk3" || m.Priority != 5 || m.Title != "HIGH approval waiting: hm-abc123 (agent:prod:web)" {
		t.Errorf("topic %q priority %d title %q", m.Topic, m.Priority, m.Title)
	}
	if strings.Join(m.Tags, ",") != "rotating_light,warning,approve-tui" {
		t.Errorf("tags %v", m.Tags)
	}
	if m.Click != "" || len(m.Actions) != 0 {
		t.Errorf("an ssh hint is not a URL: click %q actions %v", m.Click, m.Actions)
	}
	for _, want := range []string{"open it: ssh -t -p 2222 approvals.example open hm-abc123", "cannot approve", "rm -rf /srv/cache"} {
		if !strings.Contains(m.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, m.Message)
		}
	}
}

func TestNtfyURLHintAndKinds(t *testing.T) {
	srv, s := ntfySetup(t, "/base/path/topic1")
	ev := baseEvent()
	ev.OpenHint = "https://approvals.example/p/hm-abc123"
	ev.Risk = "medium"
	if err := s.Send(context.Background(), ev, Delivery{}); err != nil {
		t.Fatal(err)
	}
	r := srv.last(t)
	if r.Path != "/base/path/" {
		t.Errorf("path %q, want the root /base/path/", r.Path)
	}
	var m ntfyDoc
	decodeStrict(t, r.Body, &m)
	if m.Click != ev.OpenHint || len(m.Actions) != 1 || m.Actions[0].Action != "view" || m.Actions[0].URL != ev.OpenHint || m.Actions[0].Label == "" {
		t.Errorf("click %q actions %+v", m.Click, m.Actions)
	}
	if m.Priority != 3 || strings.Join(m.Tags, ",") != "warning,approve-tui" {
		t.Errorf("medium: priority %d tags %v", m.Priority, m.Tags)
	}
	for _, c := range []struct {
		risk, kind, outcome string
		prio                int
		tag                 string
	}{
		{"low", KindPage, "", 2, "bell"},
		{"unknown", KindEscalation, "", 5, "rotating_light"},
		{"high", KindResolved, "approved", 2, "white_check_mark"},
		{"high", KindResolved, "denied", 2, "x"},
		{"high", KindResolved, "expired", 2, "hourglass"},
	} {
		ev := baseEvent()
		ev.Risk, ev.Kind, ev.Outcome = c.risk, c.kind, c.outcome
		if err := s.Send(context.Background(), ev, Delivery{}); err != nil {
			t.Fatal(err)
		}
		var m ntfyDoc
		decodeStrict(t, srv.last(t).Body, &m)
		if m.Priority != c.prio || m.Tags[0] != c.tag {
			t.Errorf("%+v: priority %d tags %v", c, m.Priority, m.Tags)
		}
	}
}

func TestNtfyHostile(t *testing.T) {
	srv, s := ntfySetup(t, "/t")
	if err := s.Send(context.Background(), hostileEvent(), Delivery{}); err != nil {
		t.Fatal(err)
	}
	r := srv.last(t)
	if !json.Valid(r.Body) {
		t.Fatal("invalid JSON")
	}
	var m ntfyDoc
	decodeStrict(t, r.Body, &m)
	if len(m.Message) >= 4096 || !utf8.ValidString(m.Message) {
		t.Errorf("message %d bytes", len(m.Message))
	}
	if strings.ContainsAny(m.Title, "\n\r\x1b\u202e") || strings.ContainsAny(m.Message, "\r\x1b\x07\u202e") {
		t.Errorf("raw control characters reached ntfy: %q / %q", m.Title, m.Message)
	}
	if strings.Contains(m.Message, strings.Repeat("A", 301)) || !strings.Contains(m.Message, "…") {
		t.Error("command not cut to its bound")
	}
	if !strings.Contains(m.Message, "cannot approve") {
		t.Error("the cannot-approve sentence was lost")
	}
	// Agent text never becomes a header.
	for k := range r.Header {
		if strings.HasPrefix(k, "X-Injected") || strings.HasPrefix(k, "Set-Cookie") {
			t.Errorf("injected header %s", k)
		}
	}
}

func TestNtfyErrors(t *testing.T) {
	srv, s := ntfySetup(t, "/"+"topicSEKRET")
	allSecretsWithTopic := append([]string{"topicSEKRET"}, allSecrets...)
	for _, c := range []struct {
		status    int
		headers   map[string]string
		retryable bool
	}{
		{429, map[string]string{"Retry-After": "4"}, true},
		{500, nil, true},
		{400, nil, false},
		{403, nil, false},
	} {
		srv.set(c.status, c.headers, `{"code":40301,"http":403,"error":"forbidden `+secretNtfyToken+`"}`)
		err := s.Send(context.Background(), baseEvent(), Delivery{})
		se := sendErr(t, err)
		if se.Retryable != c.retryable || se.Status != c.status {
			t.Errorf("%d: %v", c.status, err)
		}
		for _, v := range allSecretsWithTopic {
			if strings.Contains(err.Error(), v) {
				t.Errorf("%d: error holds %q: %v", c.status, v, err)
			}
		}
		if !strings.Contains(err.Error(), "ntfy server 127.0.0.1") {
			t.Errorf("error does not name the server: %v", err)
		}
	}
	if se := sendErr(t, s.Send(context.Background(), baseEvent(), Delivery{})); se.RetryAfter != 0 {
		t.Errorf("retry after %v", se.RetryAfter)
	}
	srv.set(429, map[string]string{"Retry-After": "4"}, "")
	if se := sendErr(t, s.Send(context.Background(), baseEvent(), Delivery{})); se.RetryAfter.Seconds() != 4 {
		t.Errorf("retry after %v", se.RetryAfter)
	}
}

func TestNtfySecretURL(t *testing.T) {
	srv := newRecorder(t, http.StatusUnauthorized)
	srv.set(http.StatusUnauthorized, nil, `{"code":40101,"http":401,"error":"unauthorized"}`)
	ch := &config.Channel{Name: "phone", Type: config.TypeNtfy, URLSecret: config.Secret{Env: "NTFY_URL"}}
	s := mustSender(t, ch, testOptions(map[string]string{"NTFY_URL": srv.URL + "/topicSEKRET?auth=" + secretQueryToken}))
	err := s.Send(context.Background(), baseEvent(), Delivery{})
	if se := sendErr(t, err); se.Retryable || se.Status != 401 {
		t.Errorf("%v", err)
	}
	noSecrets(t, err.Error())
	if strings.Contains(err.Error(), "topicSEKRET") {
		t.Errorf("topic leaked: %v", err)
	}
	r := srv.last(t)
	if r.Path != "/" || r.Query != "auth="+secretQueryToken {
		t.Errorf("%s ? %s: the auth query stays on the root URL", r.Path, r.Query)
	}
	var m ntfyDoc
	decodeStrict(t, r.Body, &m)
	if m.Topic != "topicSEKRET" {
		t.Errorf("topic %q", m.Topic)
	}
	s = mustSender(t, ch, testOptions(map[string]string{"NTFY_URL": "https://ntfy.sh/"}))
	if se := sendErr(t, s.Send(context.Background(), baseEvent(), Delivery{})); se.Retryable {
		t.Error("bad secret URL retryable")
	}
}
