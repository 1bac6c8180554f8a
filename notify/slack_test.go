package notify

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/config"
)

// slackDocText is a Block Kit text object.
type slackDocText struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Emoji    bool   `json:"emoji"`
	Verbatim bool   `json:"verbatim"`
}

// slackDoc is an incoming webhook payload with header, section and
// context blocks (the documented fields of each).
type slackDoc struct {
	Text   string `json:"text"`
	Blocks []struct {
		Type     string         `json:"type"`
		BlockID  string         `json:"block_id"`
		Text     *slackDocText  `json:"text"`
		Fields   []slackDocText `json:"fields"`
		Elements []slackDocText `json:"elements"`
	} `json:"blocks"`
}

func slackSetup(t *testing.T) (*recorder, Sender) {
	t.Helper()
	srv := newRecorder(t, http.StatusOK)
	srv.set(http.StatusOK, nil, "ok")
	ch := &config.Channel{Name: "ops", Type: config.TypeSlack, URLSecret: config.Secret{Env: "SLACK_URL"}}
	return srv, mustSender(t, ch, testOptions(map[string]string{"SLACK_URL": srv.URL + secretSlackPath}))
}

func TestSlackBlockKit(t *testing.T) {
	srv, s := slackSetup(t)
	if err := s.Send(context.Background(), baseEvent(), Delivery{}); err != nil {
		t.Fatal(err)
	}
	r := srv.last(t)
	if r.Method != http.MethodPost || r.Path != secretSlackPath || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %s %v", r.Method, r.Path, r.Header)
	}
	var m slackDoc
	decodeStrict(t, r.Body, &m)
	if m.Text != "HIGH approval waiting: hm-abc123 (agent:prod:web)" {
		t.Errorf("fallback text %q", m.Text)
	}
	var types []string
	for _, b := range m.Blocks {
		types = append(types, b.Type)
	}
	if strings.Join(types, ",") != "header,section,section,context" {
		t.Fatalf("blocks %v", types)
	}
	h := m.Blocks[0]
	if h.Text == nil || h.Text.Type != "plain_text" || h.Text.Text != m.Text {
		t.Errorf("header %+v", h.Text)
	}
	f := m.Blocks[1].Fields
	if len(f) < 4 || len(f) > 10 || f[0].Type != "mrkdwn" || f[0].Text != "*Risk*\nHIGH" || !f[0].Verbatim {
		t.Errorf("fields %+v", f)
	}
	code := m.Blocks[2].Text
	if code == nil || code.Type != "mrkdwn" || code.Text != "```\nrm -rf /srv/cache &amp;&amp; systemctl restart web\n```" {
		t.Errorf("code block %+v", code)
	}
	ctx := m.Blocks[3].Elements
	if len(ctx) != 2 || ctx[0].Text != "`open it: ssh -t -p 2222 approvals.example open hm-abc123`" ||
		!strings.Contains(ctx[1].Text, "This message cannot approve") {
		t.Errorf("context %+v", ctx)
	}

	// An open hint that is a URL becomes a link; a resolution has no
	// command block; an omitted command says so.
	ev := baseEvent()
	ev.OpenHint = "https://approvals.example/p?id=hm-abc123&x=1"
	ev.CommandOmitted = true
	_ = s.Send(context.Background(), ev, Delivery{})
	m = slackDoc{}
	decodeStrict(t, srv.last(t).Body, &m)
	if got := m.Blocks[2].Text.Text; got != "_(command left out by configuration)_" {
		t.Errorf("omitted: %q", got)
	}
	if got := m.Blocks[3].Elements[0].Text; got != "<https://approvals.example/p?id=hm-abc123&amp;x=1|open it in the console>" {
		t.Errorf("link: %q", got)
	}
	ev = baseEvent()
	ev.Kind, ev.Outcome, ev.Actor = KindResolved, "approved", "alice@laptop via tui"
	_ = s.Send(context.Background(), ev, Delivery{})
	m = slackDoc{}
	decodeStrict(t, srv.last(t).Body, &m)
	if len(m.Blocks) != 3 || m.Blocks[0].Text.Text != "resolved: approved by alice@laptop via tui: hm-abc123 (agent:prod:web)" {
		t.Errorf("resolved: %+v", m.Blocks)
	}
}

func TestSlackHostile(t *testing.T) {
	srv, s := slackSetup(t)
	if err := s.Send(context.Background(), hostileEvent(), Delivery{}); err != nil {
		t.Fatal(err)
	}
	var m slackDoc
	decodeStrict(t, srv.last(t).Body, &m)
	var all []string
	all = append(all, m.Text)
	for _, b := range m.Blocks {
		if b.Text != nil {
			all = append(all, b.Text.Text)
		}
		for _, x := range append(b.Fields, b.Elements...) {
			all = append(all, x.Text)
			if utf8.RuneCountInString(x.Text) > 2000 {
				t.Errorf("field over 2000 characters")
			}
		}
	}
	if n := utf8.RuneCountInString(m.Blocks[0].Text.Text); n > 150 {
		t.Errorf("header has %d characters", n)
	}
	joined := strings.Join(all, "\n")
	for _, bad := range []string{"<!channel>", "<!here>", "<@U123>", "</script>", "\x1b", "\u202e", "\r"} {
		if strings.Contains(joined, bad) {
			t.Errorf("%q reached Slack unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;!channel&gt;", "&lt;/script&gt;", "&amp;", "\u02cbwhoami\u02cb"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing escaped form %q", want)
		}
	}
	code := m.Blocks[2].Text.Text
	if !strings.HasPrefix(code, "```\n") || !strings.HasSuffix(code, "\n```") || strings.Count(code, "`") != 6 {
		t.Errorf("the command escaped its code block: %q", code)
	}
	if utf8.RuneCountInString(code) > 3000 || strings.Contains(code, strings.Repeat("A", 301)) {
		t.Error("command not cut")
	}
	for _, x := range m.Blocks[1].Fields {
		if strings.Contains(x.Text, "`") {
			t.Errorf("backtick in a field: %q", x.Text)
		}
	}
}

func TestSlackErrors(t *testing.T) {
	srv, s := slackSetup(t)
	for _, c := range []struct {
		status    int
		body      string
		headers   map[string]string
		retryable bool
	}{
		{400, "invalid_payload", nil, false},
		{403, "action_prohibited", nil, false},
		{404, "channel_not_found", nil, false},
		{410, "channel_is_archived", nil, false},
		{500, "rollup_error", nil, true},
		{429, "rate_limited", map[string]string{"Retry-After": "3"}, true},
	} {
		srv.set(c.status, c.headers, c.body)
		err := s.Send(context.Background(), baseEvent(), Delivery{})
		se := sendErr(t, err)
		if se.Retryable != c.retryable || se.Status != c.status {
			t.Errorf("%d: %v", c.status, err)
		}
		if !strings.Contains(err.Error(), "Slack webhook answered") || !strings.Contains(err.Error(), c.body) {
			t.Errorf("%d: %v", c.status, err)
		}
		noSecrets(t, err.Error())
		if strings.Contains(err.Error(), "/services/") || strings.Contains(err.Error(), srv.URL) {
			t.Errorf("%d: the webhook URL leaked: %v", c.status, err)
		}
		if c.status == 429 && se.RetryAfter.Seconds() != 3 {
			t.Errorf("retry after %v", se.RetryAfter)
		}
	}
	srv.Close()
	err := s.Send(context.Background(), baseEvent(), Delivery{})
	if se := sendErr(t, err); !se.Retryable {
		t.Errorf("network: %v", err)
	}
	noSecrets(t, err.Error())
	if strings.Contains(err.Error(), "/services/") {
		t.Errorf("the webhook URL leaked: %v", err)
	}
	// A secret URL that does not parse says nothing of itself.
	ch := &config.Channel{Name: "ops", Type: config.TypeSlack, URLSecret: config.Secret{Env: "SLACK_URL"}}
	s2 := mustSender(t, ch, testOptions(map[string]string{"SLACK_URL": "http://[::1" + secretSlackPath}))
	err = s2.Send(context.Background(), baseEvent(), Delivery{})
	if se := sendErr(t, err); se.Retryable {
		t.Errorf("bad URL: %v", err)
	}
	noSecrets(t, err.Error())
}

func TestSlackFitEscaped(t *testing.T) {
	got := fitEscaped(strings.Repeat("&", 140), slackHeaderMax, slackEntities)
	if n := utf8.RuneCountInString(got); n > slackHeaderMax || !strings.HasSuffix(got, "…") || strings.Contains(got, "&&") {
		t.Errorf("%d runes: %q", n, got)
	}
	if got := fitEscaped("a<b", 150, slackEscape); got != "a&lt;b" {
		t.Errorf("%q", got)
	}
	if got := fitEscaped(strings.Repeat("<", 10), 1, slackEscape); utf8.RuneCountInString(got) > 4 {
		t.Errorf("%q", got)
	}
}
