package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
)

// Recognisable secret values: no error string may contain any of them.
const (
	secretNtfyToken  = "tk_SEKRETntfyTOKEN0001"
	secretSlackPath  = "/services/T0SEKRET/B0SEKRET/SEKRETslackHOOK0002"
	secretRoutingKey = "R0SEKRETpagerdutyKEY00000000003"
	secretSigning    = "whsec_SEKRETsigning0004"
	secretQueryToken = "SEKRETquery0005"
)

var allSecrets = []string{
	secretNtfyToken, "SEKRETslackHOOK0002", secretRoutingKey, secretSigning, secretQueryToken,
	"T0SEKRET/B0SEKRET",
}

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// secretsResolver resolves the secrets named by env in m.
func secretsResolver(m map[string]string) Resolver {
	return func(s config.Secret) (string, error) {
		if v, ok := m[s.Env]; ok {
			return v, nil
		}
		return "", errors.New("environment variable " + s.Env + " is not set")
	}
}

// baseEvent is a clean page.
func baseEvent() Event {
	return Event{
		Kind:       KindPage,
		ApprovalID: "hm-abc123",
		Risk:       "high",
		SessionKey: "agent:prod:web",
		Requester:  "claude-code@build-7",
		CreatedAt:  testNow.Add(-time.Minute),
		ExpiresAt:  testNow.Add(2*time.Minute + 30*time.Second),
		Command:    "rm -rf /srv/cache && systemctl restart web",
		OpenHint:   "ssh -t -p 2222 approvals.example open hm-abc123",
		At:         testNow,
	}
}

// hostileEvent carries everything a hostile agent might try.
func hostileEvent() Event {
	ev := baseEvent()
	ev.SessionKey = "s\x1b[31mred\x1b[0m\nX-Injected: 1 <!channel> \u202etxt.exe"
	ev.Requester = "</script><script>alert(1)</script> & `whoami` *bold* <@U123>"
	ev.Command = "echo \x1b]0;pwned\x07 `id` ``` <!here> </script> & \u202e\n" + strings.Repeat("A", 10<<10)
	ev.Actor = "mallory\r\nSet-Cookie: x"
	return ev
}

// recorded is one request a test server saw.
type recorded struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// recorder is a loopback HTTP server that records requests and answers
// with status (and headers).
type recorder struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []recorded
	status  int
	headers map[string]string
	body    string
	delay   time.Duration
}

func newRecorder(t *testing.T, status int) *recorder {
	t.Helper()
	r := &recorder{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{req.Method, req.URL.Path, req.URL.RawQuery, req.Header.Clone(), body})
		status, headers, respBody, delay := r.status, r.headers, r.body, r.delay
		r.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-req.Context().Done():
				return
			}
		}
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, respBody)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) set(status int, headers map[string]string, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status, r.headers, r.body = status, headers, body
}

func (r *recorder) last(t *testing.T) recorded {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatal("server saw no request")
	}
	return r.reqs[len(r.reqs)-1]
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// decodeStrict decodes data into v refusing unknown fields and trailing
// data.
func decodeStrict(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("payload does not match the documented shape: %v\n%s", err, data)
	}
	if dec.More() {
		t.Fatalf("trailing data after the JSON object: %s", data)
	}
}

// sendErr asserts err is a *SendError and returns it.
func sendErr(t *testing.T, err error) *SendError {
	t.Helper()
	var se *SendError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *SendError", err, err)
	}
	return se
}

// noSecrets fails when s contains a secret value.
func noSecrets(t *testing.T, s string) {
	t.Helper()
	for _, v := range allSecrets {
		if strings.Contains(s, v) {
			t.Fatalf("error text holds a secret (%q): %s", v, s)
		}
	}
	if strings.Contains(s, "?token=") || strings.Contains(s, "?auth=") {
		t.Fatalf("error text holds a query string: %s", s)
	}
}

func testOptions(m map[string]string) Options {
	return Options{Version: "1.2.3", Resolve: secretsResolver(m), Now: func() time.Time { return testNow }}
}

func mustSender(t *testing.T, ch *config.Channel, opts Options) Sender {
	t.Helper()
	s, err := NewSender(ch, opts)
	if err != nil {
		t.Fatalf("NewSender: %v", err)
	}
	if s.Name() != ch.Name {
		t.Fatalf("Name() = %q, want %q", s.Name(), ch.Name)
	}
	return s
}

func TestNewSenderValidates(t *testing.T) {
	bad := []*config.Channel{
		nil,
		{Name: "x", Type: "carrier-pigeon"},
		{Name: "n", Type: config.TypeNtfy},
		{Name: "n", Type: config.TypeNtfy, URL: "ftp://ntfy.sh/topic"},
		{Name: "n", Type: config.TypeNtfy, URL: "https://ntfy.sh/"},
		{Name: "n", Type: config.TypeNtfy, URL: "https://ntfy.sh/bad.topic"},
		{Name: "s", Type: config.TypeSlack},
		{Name: "p", Type: config.TypePagerDuty},
		{Name: "p", Type: config.TypePagerDuty, RoutingKey: config.Secret{Env: "K"}, EventsURL: "not a url"},
		{Name: "w", Type: config.TypeWebhook},
		{Name: "w", Type: config.TypeWebhook, URL: "::"},
		{Name: "w", Type: config.TypeWebhook, URL: "ftp://example.com/x"},
		{Name: "s", Type: config.TypeSlack, URL: "hooks.slack.com/services/x"},
		{Name: "e", Type: config.TypeExec},
		{Name: "e", Type: config.TypeExec, Command: []string{""}},
	}
	for _, ch := range bad {
		if s, err := NewSender(ch, Options{}); err == nil {
			t.Errorf("NewSender(%+v) = %v, want an error", ch, s)
		}
	}
	good := []*config.Channel{
		{Name: "n", Type: config.TypeNtfy, URL: "https://ntfy.sh/my_topic-1"},
		{Name: "n2", Type: config.TypeNtfy, URLSecret: config.Secret{Env: "U"}},
		{Name: "s", Type: config.TypeSlack, URLSecret: config.Secret{File: "/x"}},
		{Name: "p", Type: config.TypePagerDuty, RoutingKey: config.Secret{Env: "K"}},
		{Name: "w", Type: config.TypeWebhook, URL: "https://example.com/hook"},
		{Name: "e", Type: config.TypeExec, Command: []string{"/bin/true"}},
	}
	for _, ch := range good {
		mustSender(t, ch, Options{})
	}
}

func TestResolveSecret(t *testing.T) {
	t.Setenv("APPROVE_TUI_TEST_SECRET", "value-1")
	if v, err := ResolveSecret(config.Secret{Env: "APPROVE_TUI_TEST_SECRET"}); err != nil || v != "value-1" {
		t.Fatalf("env: %q, %v", v, err)
	}
	if _, err := ResolveSecret(config.Secret{Env: "APPROVE_TUI_TEST_UNSET_XYZ"}); err == nil {
		t.Fatal("unset env: no error")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "s")
	if err := os.WriteFile(f, []byte("file-secret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := ResolveSecret(config.Secret{File: f}); err != nil || v != "file-secret-value" {
		t.Fatalf("file: %q, %v", v, err)
	}
	empty := filepath.Join(dir, "e")
	_ = os.WriteFile(empty, []byte(" \n"), 0o600)
	if _, err := ResolveSecret(config.Secret{File: empty}); err == nil {
		t.Fatal("empty file: no error")
	}
	if _, err := ResolveSecret(config.Secret{File: filepath.Join(dir, "missing")}); err == nil {
		t.Fatal("missing file: no error")
	}
	if _, err := ResolveSecret(config.Secret{}); err == nil {
		t.Fatal("no secret: no error")
	}
}

func TestParseRetryAfter(t *testing.T) {
	cases := map[string]time.Duration{
		"":       0,
		"7":      7 * time.Second,
		" 120 ":  2 * time.Minute,
		"0":      0,
		"-5":     0,
		"soon":   0,
		"999999": 24 * time.Hour,
		testNow.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		testNow.Add(-time.Hour).Format(http.TimeFormat):       0,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, testNow); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestHTTPErrorClasses drives the shared classification through the
// webhook sender: which answers are retryable, Retry-After, redirects,
// network errors and timeouts, and that no error quotes the query token.
func TestHTTPErrorClasses(t *testing.T) {
	srv := newRecorder(t, http.StatusOK)
	ch := &config.Channel{Name: "hook", Type: config.TypeWebhook, URL: srv.URL + "/hook?token=" + secretQueryToken,
		SigningSecret: config.Secret{Env: "SIGN"}, Timeout: 300 * time.Millisecond}
	s := mustSender(t, ch, testOptions(map[string]string{"SIGN": secretSigning}))
	ctx := context.Background()

	if err := s.Send(ctx, baseEvent(), Delivery{ID: "d1", Attempt: 1}); err != nil {
		t.Fatalf("200: %v", err)
	}
	cases := []struct {
		status     int
		headers    map[string]string
		body       string
		retryable  bool
		retryAfter time.Duration
	}{
		{500, nil, "boom", true, 0},
		{502, nil, "", true, 0},
		{503, map[string]string{"Retry-After": "11"}, "", true, 11 * time.Second},
		{429, map[string]string{"Retry-After": "7"}, "slow down", true, 7 * time.Second},
		{429, map[string]string{"Retry-After": testNow.Add(time.Minute).Format(http.TimeFormat)}, "", true, time.Minute},
		{429, nil, "", true, 0},
		{408, nil, "", true, 0},
		{400, nil, "bad request " + secretSigning, false, 0},
		{401, nil, "", false, 0},
		{404, nil, "", false, 0},
		{410, nil, "", false, 0},
		{301, map[string]string{"Location": "http://127.0.0.1:1/elsewhere"}, "", false, 0},
	}
	for _, c := range cases {
		srv.set(c.status, c.headers, c.body)
		err := s.Send(ctx, baseEvent(), Delivery{ID: "d1", Attempt: 2})
		se := sendErr(t, err)
		if se.Status != c.status || se.Retryable != c.retryable || se.RetryAfter != c.retryAfter || se.Channel != "hook" {
			t.Errorf("%d: got status %d retryable %v after %v channel %q; want %v %v", c.status, se.Status, se.Retryable, se.RetryAfter, se.Channel, c.retryable, c.retryAfter)
		}
		noSecrets(t, err.Error())
		if !strings.Contains(err.Error(), "webhook http://127.0.0.1") {
			t.Errorf("%d: error does not say where: %v", c.status, err)
		}
	}

	// A timeout: the server answers after the channel's timeout.
	srv.set(http.StatusOK, nil, "")
	srv.mu.Lock()
	srv.delay = 2 * time.Second
	srv.mu.Unlock()
	start := time.Now()
	err := s.Send(ctx, baseEvent(), Delivery{ID: "d1"})
	se := sendErr(t, err)
	if !se.Retryable || se.Status != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v (retryable %v, status %d)", err, se.Retryable, se.Status)
	}
	if time.Since(start) > 1500*time.Millisecond {
		t.Errorf("timeout took %v", time.Since(start))
	}
	noSecrets(t, err.Error())
	srv.mu.Lock()
	srv.delay = 0
	srv.mu.Unlock()

	// A network error: nothing listens any more.
	srv.Close()
	err = s.Send(ctx, baseEvent(), Delivery{ID: "d1"})
	se = sendErr(t, err)
	if !se.Retryable || se.Status != 0 {
		t.Errorf("network error: %v", err)
	}
	noSecrets(t, err.Error())

	// A missing secret is permanent and names the variable only.
	s2 := mustSender(t, ch, testOptions(nil))
	err = s2.Send(ctx, baseEvent(), Delivery{})
	if se := sendErr(t, err); se.Retryable || !strings.Contains(err.Error(), "SIGN") {
		t.Errorf("missing secret: %v", err)
	}
}

func TestUserAgentAndDefaults(t *testing.T) {
	srv := newRecorder(t, http.StatusNoContent)
	ch := &config.Channel{Name: "hook", Type: config.TypeWebhook, URL: srv.URL}
	s := mustSender(t, ch, Options{Version: "1.2.3"})
	if err := s.Send(context.Background(), baseEvent(), Delivery{}); err != nil {
		t.Fatal(err)
	}
	if ua := srv.last(t).Header.Get("User-Agent"); ua != "approve-tui/1.2.3" {
		t.Errorf("User-Agent %q", ua)
	}
	s = mustSender(t, ch, Options{})
	_ = s.Send(context.Background(), baseEvent(), Delivery{})
	if ua := srv.last(t).Header.Get("User-Agent"); ua != "approve-tui/dev" {
		t.Errorf("User-Agent %q", ua)
	}
	if b := s.(*webhookSender).timeout; b != DefaultTimeout {
		t.Errorf("default timeout %v", b)
	}
}

func TestSendErrorText(t *testing.T) {
	e := &SendError{Channel: "c", Status: 429, Retryable: true, RetryAfter: 3 * time.Second, Err: errors.New("x answered 429")}
	if got := e.Error(); got != `notify: channel "c": x answered 429 (retryable, retry after 3s)` {
		t.Errorf("%q", got)
	}
	e = &SendError{Channel: "c", Err: context.Canceled}
	if !errors.Is(e, context.Canceled) || !strings.HasSuffix(e.Error(), "(permanent)") {
		t.Errorf("%q", e.Error())
	}
}
