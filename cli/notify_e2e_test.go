package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/internal/pgtest"
	"github.com/approve-tui/approve-tui/notify"
)

// The notifier end to end: the real binary (`approve-tui notify`) as its
// own process, proposals submitted and decided by other processes of it,
// and real HTTP servers on 127.0.0.1 standing in for the services. Each
// stand-in checks the payload its service documents: the webhook's body
// decoded strictly and its signature verified with notify.VerifyWebhook,
// ntfy's JSON publishing body, PagerDuty's Events API v2 event (dedup_key
// the approval id, event_action trigger or resolve), a Slack incoming
// webhook's Block Kit message.

// nhit is one request a stand-in received.
type nhit struct {
	kind   string // webhook, ntfy, pagerduty, slack
	at     time.Time
	status int // what the stand-in answered; -1: the client went away first
	body   []byte
	header http.Header
	// deliveryID is the webhook's X-Approve-TUI-Delivery.
	deliveryID string
	// event: page, escalation, reminder or resolved; approvalID: whose.
	event, approvalID string
	wh                *notify.WebhookPayload
	pd                *pdEventBody
	ntfy              *ntfyPublish
	slack             *slackPost
}

// key identifies the delivery a hit is: the webhook's delivery id, else
// the approval id and the event (the other services carry no delivery id).
func (h nhit) key() string {
	if h.deliveryID != "" {
		return h.deliveryID
	}
	return h.approvalID + "/" + h.event
}

func (h nhit) ok() bool { return h.status >= 200 && h.status < 300 }

// pdEventBody is a PagerDuty Events API v2 alert event
// (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/);
// custom_details is any object there.
type pdEventBody struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"`
	DedupKey    string `json:"dedup_key"`
	Payload     *struct {
		Summary       string         `json:"summary"`
		Source        string         `json:"source"`
		Severity      string         `json:"severity"`
		Timestamp     string         `json:"timestamp"`
		Component     string         `json:"component"`
		Group         string         `json:"group"`
		Class         string         `json:"class"`
		CustomDetails map[string]any `json:"custom_details"`
	} `json:"payload"`
	Client string `json:"client"`
	Links  []struct {
		Href string `json:"href"`
		Text string `json:"text"`
	} `json:"links"`
}

// ntfyPublish is ntfy's "publish as JSON" body (https://docs.ntfy.sh/publish/).
type ntfyPublish struct {
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
	} `json:"actions"`
}

// slackPost is an incoming webhook's payload with Block Kit blocks.
type slackPost struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type     string        `json:"type"`
	Text     *slackObject  `json:"text"`
	Fields   []slackObject `json:"fields"`
	Elements []slackObject `json:"elements"`
}

type slackObject struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Verbatim bool   `json:"verbatim"`
}

// nreceiver is one stand-in service.
type nreceiver struct {
	t       testing.TB
	kind    string
	channel string // the channel's name in the configuration
	srv     *httptest.Server
	path    string
	// secret: the webhook's signing key, PagerDuty's routing key, ntfy's
	// token ("" none).
	secret string
	topic  string // ntfy

	mu   sync.Mutex
	hits []nhit
	// answer decides request n's (from 1) status and body; nil: success.
	answer func(n int, h nhit) (int, string)
	// hold, when set, is called before answering request n; true: the
	// client went away, nothing is answered.
	hold    func(n int, h nhit, r *http.Request) bool
	arrived chan struct{}
}

func newReceiver(t testing.TB, kind, channel string) *nreceiver {
	t.Helper()
	rv := &nreceiver{t: t, kind: kind, channel: channel, arrived: make(chan struct{}, 1)}
	switch kind {
	case "webhook":
		rv.path = "/hook/" + channel
	case "pagerduty":
		rv.path = "/v2/enqueue"
	case "ntfy":
		rv.path, rv.topic = "/", "approvals"
	case "slack":
		rv.path = "/services/T0TEST/B0TEST/" + channel
	}
	rv.srv = httptest.NewServer(rv)
	t.Cleanup(rv.srv.Close)
	return rv
}

// url is what the configuration points the channel at.
func (rv *nreceiver) url() string {
	if rv.kind == "ntfy" {
		return rv.srv.URL + "/" + rv.topic
	}
	return rv.srv.URL + rv.path
}

func (rv *nreceiver) snapshot() []nhit {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]nhit(nil), rv.hits...)
}

// delivered is the hits answered 2xx.
func (rv *nreceiver) delivered() []nhit {
	var out []nhit
	for _, h := range rv.snapshot() {
		if h.ok() {
			out = append(out, h)
		}
	}
	return out
}

// has reports whether a delivered hit of approval id with event arrived.
func (rv *nreceiver) has(id, event string) bool {
	_, ok := rv.find(id, event)
	return ok
}

func (rv *nreceiver) find(id, event string) (nhit, bool) {
	for _, h := range rv.delivered() {
		if h.approvalID == id && h.event == event {
			return h, true
		}
	}
	return nhit{}, false
}

// waitFor waits until cond holds of the stand-in's hits.
func (rv *nreceiver) waitFor(what string, within time.Duration, cond func([]nhit) bool) {
	rv.t.Helper()
	deadline := time.After(within)
	for {
		if cond(rv.snapshot()) {
			return
		}
		select {
		case <-rv.arrived:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			rv.t.Fatalf("%s (%s) within %v: not yet; received:\n%s", what, rv.channel, within, describeHits(rv.snapshot()))
		}
	}
}

func describeHits(hs []nhit) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "  %s %d %s\n", h.at.Format("15:04:05.000"), h.status, h.key())
	}
	return b.String()
}

func (rv *nreceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	h := nhit{kind: rv.kind, at: time.Now(), body: body, header: r.Header.Clone()}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if err != nil {
		bad("reading the body: %v", err)
	}
	if r.Method != http.MethodPost {
		bad("method %s, want POST", r.Method)
	}
	if r.URL.Path != rv.path {
		bad("path %q, want %q", r.URL.Path, rv.path)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		bad("Content-Type %q", ct)
	}
	if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "approve-tui/") {
		bad("User-Agent %q", ua)
	}
	for i, c := range body {
		if c < 0x20 || c == 0x7f {
			bad("raw control byte 0x%02x at %d of the body", c, i)
			break
		}
	}
	switch rv.kind {
	case "webhook":
		rv.checkWebhook(&h, r, bad)
	case "pagerduty":
		rv.checkPagerDuty(&h, bad)
	case "ntfy":
		rv.checkNtfy(&h, r, bad)
	case "slack":
		rv.checkSlack(&h, bad)
	}
	for _, p := range problems {
		rv.t.Errorf("%s receiver %s: %s\nbody: %s", rv.kind, rv.channel, p, body)
	}
	rv.mu.Lock()
	n := len(rv.hits) + 1
	rv.hits = append(rv.hits, h)
	rv.mu.Unlock()
	if rv.hold != nil && rv.hold(n, h, r) {
		rv.setStatus(n, -1)
		return
	}
	status, text := rv.success(h)
	if rv.answer != nil {
		if s, t := rv.answer(n, h); s != 0 {
			status, text = s, t
		}
	}
	rv.setStatus(n, status)
	w.WriteHeader(status)
	io.WriteString(w, text)
}

func (rv *nreceiver) setStatus(n, status int) {
	rv.mu.Lock()
	rv.hits[n-1].status = status
	rv.mu.Unlock()
	select {
	case rv.arrived <- struct{}{}:
	default:
	}
}

// success is what the service answers when it takes the request.
func (rv *nreceiver) success(h nhit) (int, string) {
	switch rv.kind {
	case "pagerduty":
		b, _ := json.Marshal(map[string]string{"status": "success", "message": "Event processed", "dedup_key": h.approvalID})
		return http.StatusAccepted, string(b)
	case "slack":
		return http.StatusOK, "ok"
	case "ntfy":
		return http.StatusOK, `{"id":"x1","event":"message","topic":"` + rv.topic + `"}`
	}
	return http.StatusOK, ""
}

// strictJSON decodes body into v refusing unknown fields and trailing data.
func strictJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the object")
	}
	return nil
}

// topKeys is the body's top-level keys, sorted.
func topKeys(body []byte) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var notifyEvents = map[string]bool{"page": true, "escalation": true, "reminder": true, "resolved": true, "ran_without_approval": true}

func (rv *nreceiver) checkWebhook(h *nhit, r *http.Request, bad func(string, ...any)) {
	var p notify.WebhookPayload
	if err := strictJSON(h.body, &p); err != nil {
		bad("webhook body: %v", err)
		return
	}
	h.wh, h.event, h.approvalID = &p, p.Event, p.ApprovalID
	h.deliveryID = r.Header.Get(notify.WebhookDeliveryHeader)
	want := []string{"approval_id", "at", "command_omitted", "created_at", "delivery_id", "event", "expires_at", "note", "open_hint", "requester", "risk", "session_key", "step", "summary"}
	if !p.CommandOmitted {
		want = append(want, "command")
	}
	if p.Event == "resolved" || p.Event == "ran_without_approval" {
		want = append(want, "actor", "outcome")
	}
	if p.Park != nil {
		// A page of a proposal whose waiter stopped (or is judged gone,
		// as a slow machine may judge a hook that has not heartbeated
		// yet) says so; never in a resolution.
		want = append(want, "park")
		if p.Event == "resolved" || p.Park.State == "" || p.Park.Words == "" {
			bad("park %+v in a %s", *p.Park, p.Event)
		}
	}
	sort.Strings(want)
	if got := topKeys(h.body); strings.Join(got, " ") != strings.Join(want, " ") {
		bad("keys %v, want %v", got, want)
	}
	if err := notify.VerifyWebhook([]byte(rv.secret), r.Header.Get(notify.WebhookSignatureHeader), h.body, time.Now(), 0); err != nil {
		bad("signature: %v", err)
	}
	if notify.VerifyWebhook([]byte(rv.secret), r.Header.Get(notify.WebhookSignatureHeader), append(append([]byte{}, h.body...), ' '), time.Now(), 0) == nil {
		bad("the signature verifies an altered body too")
	}
	if h.deliveryID == "" || h.deliveryID != p.DeliveryID {
		bad("delivery header %q, body %q", h.deliveryID, p.DeliveryID)
	}
	if wantID := fmt.Sprintf("%s/%s/%d/%s", p.ApprovalID, p.Event, p.Step, rv.channel); p.DeliveryID != wantID {
		bad("delivery_id %q, want %q", p.DeliveryID, wantID)
	}
	if ev := r.Header.Get(notify.WebhookEventHeader); ev != p.Event || !notifyEvents[ev] {
		bad("event header %q, body %q", ev, p.Event)
	}
	for name, ts := range map[string]*string{"created_at": p.CreatedAt, "at": p.At, "expires_at": p.ExpiresAt} {
		if ts == nil {
			if name != "expires_at" {
				bad("%s is null", name)
			}
			continue
		}
		if _, err := time.Parse(time.RFC3339, *ts); err != nil {
			bad("%s: %v", name, err)
		}
	}
	if p.Summary == "" || !strings.Contains(p.Note, "cannot approve") {
		bad("summary %q, note %q", p.Summary, p.Note)
	}
	if p.Event == "resolved" {
		switch {
		case p.Outcome == nil || p.Actor == nil:
			bad("a resolution without outcome or actor")
		case *p.Outcome != "approved" && *p.Outcome != "denied" && *p.Outcome != "expired":
			bad("outcome %q", *p.Outcome)
		case *p.Outcome == "expired" && *p.Actor != "":
			bad("an expiry with actor %q", *p.Actor)
		case *p.Outcome != "expired" && *p.Actor == "":
			bad("a decision without its actor")
		}
	}
}

func (rv *nreceiver) checkPagerDuty(h *nhit, bad func(string, ...any)) {
	var e pdEventBody
	if err := strictJSON(h.body, &e); err != nil {
		bad("PagerDuty event: %v", err)
		return
	}
	h.pd, h.approvalID = &e, e.DedupKey
	if e.RoutingKey != rv.secret {
		bad("routing_key is not the configured key")
	}
	if e.DedupKey == "" || len(e.DedupKey) > 255 {
		bad("dedup_key %q", e.DedupKey)
	}
	switch e.EventAction {
	case "resolve":
		h.event = "resolved"
		if got := strings.Join(topKeys(h.body), " "); got != "dedup_key event_action routing_key" {
			bad("a resolve carries %s", got)
		}
	case "trigger":
		if e.Payload == nil {
			bad("trigger without payload")
			return
		}
		p := e.Payload
		if p.Summary == "" || utf8.RuneCountInString(p.Summary) > 1024 || p.Source == "" {
			bad("summary %q, source %q", p.Summary, p.Source)
		}
		switch p.Severity {
		case "critical", "error", "warning", "info":
		default:
			bad("severity %q", p.Severity)
		}
		if p.Timestamp != "" {
			if _, err := time.Parse(time.RFC3339, p.Timestamp); err != nil {
				bad("timestamp: %v", err)
			}
		}
		if p.CustomDetails["approval_id"] != e.DedupKey {
			bad("custom_details.approval_id %v, dedup_key %q", p.CustomDetails["approval_id"], e.DedupKey)
		}
		h.event, _ = p.CustomDetails["event"].(string)
		if !notifyEvents[h.event] || h.event == "resolved" {
			bad("custom_details.event %q", h.event)
		}
	default:
		bad("event_action %q", e.EventAction)
	}
}

// titleEvent is the event a page's title says it is.
func titleEvent(title string) string {
	switch {
	case strings.HasPrefix(title, "resolved:"), strings.HasPrefix(title, "expired unanswered:"):
		return "resolved"
	case strings.HasPrefix(title, "ESCALATION"):
		return "escalation"
	case strings.HasPrefix(title, "reminder:"):
		return "reminder"
	}
	return "page"
}

func (rv *nreceiver) checkNtfy(h *nhit, r *http.Request, bad func(string, ...any)) {
	var m ntfyPublish
	if err := strictJSON(h.body, &m); err != nil {
		bad("ntfy message: %v", err)
		return
	}
	h.ntfy = &m
	if m.Topic != rv.topic {
		bad("topic %q", m.Topic)
	}
	if rv.secret != "" && r.Header.Get("Authorization") != "Bearer "+rv.secret {
		bad("Authorization is not the bearer token")
	}
	if m.Priority < 1 || m.Priority > 5 || m.Title == "" || m.Message == "" || len(m.Message) >= 4096 {
		bad("priority %d, title %q, message of %d bytes", m.Priority, m.Title, len(m.Message))
	}
	if len(m.Tags) == 0 || m.Tags[len(m.Tags)-1] != "approve-tui" {
		bad("tags %v", m.Tags)
	}
	for _, l := range strings.Split(m.Message, "\n") {
		if id, ok := strings.CutPrefix(l, "Approval: "); ok {
			h.approvalID = id
		}
	}
	h.event = titleEvent(m.Title)
}

func (rv *nreceiver) checkSlack(h *nhit, bad func(string, ...any)) {
	var m slackPost
	if err := strictJSON(h.body, &m); err != nil {
		bad("Slack message: %v", err)
		return
	}
	h.slack = &m
	if m.Text == "" || len(m.Blocks) < 2 {
		bad("text %q, %d blocks", m.Text, len(m.Blocks))
		return
	}
	if b := m.Blocks[0]; b.Type != "header" || b.Text == nil || b.Text.Type != "plain_text" || utf8.RuneCountInString(b.Text.Text) > 150 {
		bad("first block %+v: want a plain_text header of at most 150 characters", b)
	} else {
		h.event = titleEvent(b.Text.Text)
	}
	obj := func(o slackObject, max int) {
		if o.Type != "plain_text" && o.Type != "mrkdwn" {
			bad("text object type %q", o.Type)
		}
		if utf8.RuneCountInString(o.Text) > max {
			bad("text of %d characters", utf8.RuneCountInString(o.Text))
		}
	}
	for _, b := range m.Blocks {
		switch b.Type {
		case "header", "section", "context":
		default:
			bad("block type %q", b.Type)
		}
		if b.Text != nil {
			obj(*b.Text, 3000)
		}
		if len(b.Fields) > 10 {
			bad("%d fields", len(b.Fields))
		}
		for _, f := range b.Fields {
			obj(f, 2000)
			if id, ok := strings.CutPrefix(f.Text, "*Approval*\n"); ok {
				h.approvalID = id
			}
		}
		for _, e := range b.Elements {
			obj(e, 3000)
		}
	}
}

// notifyRig is a store, the binary and a configuration file.
type notifyRig struct {
	t       testing.TB
	bin     string
	dir     string
	db      string
	cfg     string
	env     []string
	outputs []string // every command's output, for the secrets test
}

// newNotifyRig builds the binary and makes the store: db, or a SQLite
// file of the test's when "".
func newNotifyRig(t testing.TB, db string) *notifyRig {
	t.Helper()
	dir := t.TempDir()
	r := &notifyRig{t: t, bin: buildBinaryTB(t, dir), dir: dir, db: db}
	if r.db == "" {
		r.db = filepath.Join(dir, "state.db")
	}
	r.run("init")
	return r
}

func (r *notifyRig) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "APPROVE_TUI_DB=") && !strings.HasPrefix(kv, "APPROVE_TUI_CONFIG=") && !strings.HasPrefix(kv, "HERMES_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, r.env...)
}

func (r *notifyRig) command(args ...string) *exec.Cmd {
	c := exec.Command(r.bin, append([]string{"--db", r.db}, args...)...)
	c.Env = r.environ()
	c.Dir = r.dir
	return c
}

// run runs the binary and returns its standard output; it fails the test
// when the command fails.
func (r *notifyRig) run(args ...string) string {
	r.t.Helper()
	out, errOut, err := r.try(args...)
	if err != nil {
		r.t.Fatalf("approve-tui %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func (r *notifyRig) try(args ...string) (string, string, error) {
	c := r.command(args...)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	r.outputs = append(r.outputs, out.String(), errOut.String())
	return out.String(), errOut.String(), err
}

func (r *notifyRig) submit(args ...string) string {
	r.t.Helper()
	return strings.TrimSpace(r.run(append([]string{"submit"}, args...)...))
}

// writeConfig writes the configuration file.
func (r *notifyRig) writeConfig(yaml string) {
	r.t.Helper()
	r.cfg = filepath.Join(r.dir, "config.yaml")
	if err := os.WriteFile(r.cfg, []byte(yaml), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// writeSecret writes a secret file (mode 0600) and returns its path.
func (r *notifyRig) writeSecret(name, value string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// notifyRecord is a proposal as show --json gives it.
type notifyRecord struct {
	ID         string   `json:"approval_id"`
	CreatedAt  float64  `json:"created_at"`
	ExpiresAt  *float64 `json:"expires_at"`
	ConsumedBy *string  `json:"consumed_by"`
}

func (r *notifyRig) show(id string) notifyRecord {
	r.t.Helper()
	var rec notifyRecord
	if err := json.Unmarshal([]byte(r.run("show", id, "--json")), &rec); err != nil {
		r.t.Fatal(err)
	}
	return rec
}

func epochTime(f float64) time.Time { return time.Unix(0, int64(f*1e9)) }

// notifyAuditEvent is one event of audit --json.
type notifyAuditEvent struct {
	Event      string         `json:"event"`
	Outcome    string         `json:"outcome"`
	ApprovalID string         `json:"approval_id"`
	Actor      string         `json:"actor"`
	Surface    string         `json:"surface"`
	Detail     map[string]any `json:"detail"`
}

// deliveryEvents is the audit log's delivery events.
func (r *notifyRig) deliveryEvents() []notifyAuditEvent {
	r.t.Helper()
	var evs []notifyAuditEvent
	if err := json.Unmarshal([]byte(r.run("audit", "--json", "--limit", "100000")), &evs); err != nil {
		r.t.Fatal(err)
	}
	var out []notifyAuditEvent
	for _, e := range evs {
		if e.Event == "delivery" {
			out = append(out, e)
		}
	}
	return out
}

// notifierProc is a running `approve-tui notify`.
type notifierProc struct {
	t    testing.TB
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder
	done chan struct{}
	err  error
}

// startNotifier starts `approve-tui notify --config FILE args...` and
// waits until it says it runs; it is stopped (SIGTERM) when the test ends.
func (r *notifyRig) startNotifier(args ...string) *notifierProc {
	r.t.Helper()
	p := &notifierProc{t: r.t, done: make(chan struct{})}
	p.cmd = r.command(append([]string{"notify", "--config", r.cfg}, args...)...)
	w := &lockedWriter{w: &p.log, mu: &p.mu}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	r.t.Cleanup(p.stop)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(p.text(), "approve-tui notify: ") {
		select {
		case <-p.done:
			r.t.Fatalf("the notifier exited: %v\n%s", p.err, p.text())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the notifier did not start:\n%s", p.text())
		}
	}
	return p
}

func (p *notifierProc) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// stop ends the notifier with SIGTERM (SIGKILL after 10 s).
func (p *notifierProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Errorf("the notifier did not stop on SIGTERM:\n%s", p.text())
		p.cmd.Process.Kill()
		<-p.done
	}
}

// kill9 ends the notifier with SIGKILL and waits for it.
func (p *notifierProc) kill9() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	<-p.done
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		p.t.Fatalf("the notifier ended with %v, not SIGKILL", p.err)
	}
}

// hitsByKey groups hits by delivery.
func hitsByKey(hs []nhit) map[string][]nhit {
	m := map[string][]nhit{}
	for _, h := range hs {
		m[h.key()] = append(m[h.key()], h)
	}
	return m
}

// exactlyOnce fails t unless every hit of rv is a 2xx and no delivery came
// twice; it returns the deliveries' keys.
func exactlyOnce(t testing.TB, rv *nreceiver) map[string]nhit {
	t.Helper()
	out := map[string]nhit{}
	for k, hs := range hitsByKey(rv.snapshot()) {
		if len(hs) != 1 || !hs[0].ok() {
			t.Errorf("%s: %s received %d times:\n%s", rv.channel, k, len(hs), describeHits(hs))
			continue
		}
		out[k] = hs[0]
	}
	return out
}

// 1. Submit → page at every receiver, in each service's documented shape;
// approve, deny and expiry → the resolution, with outcome and actor.
func TestNotifyE2ESubmitPageAndResolutions(t *testing.T) {
	r := newNotifyRig(t, "")
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = "whsec-test-1"
	push := newReceiver(t, "ntfy", "push")
	push.secret = "tk_ntfy_test_1"
	pager := newReceiver(t, "pagerduty", "pager")
	pager.secret = "R0UT1NGKEYTEST000000000000000001"
	chat := newReceiver(t, "slack", "chat")
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret, "NT_PD_KEY=" + pager.secret, "NT_SLACK_URL=" + chat.url()}
	r.writeSecret("ntfy-token", push.secret)
	r.writeConfig(fmt.Sprintf(`channels:
  hook:  {type: webhook, url: %q, secret_env: NT_HOOK_SECRET}
  push:  {type: ntfy, url: %q, token_file: ntfy-token}
  pager: {type: pagerduty, routing_key_env: NT_PD_KEY, events_url: %q}
  chat:  {type: slack, url_env: NT_SLACK_URL}
routes:
  - match: {risk: high, session: "agent:prod:*"}
    steps:
      - {after: 0s, notify: [hook, push, pager, chat]}
open_hint: "ssh -t -p 2222 approvals.example open {id}"
`, hook.url(), push.url(), pager.url()))
	r.startNotifier()
	all := []*nreceiver{hook, push, pager, chat}

	// A low-risk proposal and one of another session match no route.
	quiet1 := r.submit("--session", "agent:prod:web", "--", "ls", "-la", "/srv")
	quiet2 := r.submit("--session", "agent:dev:web", "--", "rm", "-rf", "/srv/dev")
	a := r.submit("--session", "agent:prod:web", "--", "rm", "-rf", "/srv/approve-me")
	d := r.submit("--session", "agent:prod:db", "--requester", "ops-bot", "--", "rm", "-rf", "/srv/deny-me")
	e := r.submit("--session", "agent:prod:cache", "--ttl", "4s", "--", "rm", "-rf", "/srv/expire-me")
	for _, rv := range all {
		rv.waitFor("the three pages", 10*time.Second, func([]nhit) bool {
			return rv.has(a, "page") && rv.has(d, "page") && rv.has(e, "page")
		})
	}

	// The pages' shapes, service by service.
	h, _ := hook.find(d, "page")
	p := h.wh
	if p.Risk != "high" || p.Step != 0 || p.SessionKey != "agent:prod:db" || p.Requester != "ops-bot" ||
		p.Command == nil || *p.Command != "rm -rf /srv/deny-me" || p.CommandOmitted ||
		p.OpenHint != "ssh -t -p 2222 approvals.example open "+d || p.ExpiresAt == nil ||
		!strings.Contains(p.Summary, "HIGH approval waiting: "+d) || p.Outcome != nil || p.Actor != nil {
		t.Errorf("webhook page: %s", h.body)
	}
	if h.deliveryID != d+"/page/0/hook" {
		t.Errorf("delivery id %q", h.deliveryID)
	}
	h, _ = pager.find(d, "page")
	if ev := h.pd; ev.EventAction != "trigger" || ev.DedupKey != d || ev.Payload.Severity != "error" || ev.Payload.Source != "approve-tui" ||
		ev.Payload.CustomDetails["command"] != "rm -rf /srv/deny-me" || ev.Payload.CustomDetails["risk"] != "high" ||
		ev.Payload.Component != "agent:prod:db" || ev.Payload.Group != "ops-bot" {
		t.Errorf("PagerDuty trigger: %s", h.body)
	}
	h, _ = push.find(d, "page")
	if m := h.ntfy; m.Priority != 5 || !strings.Contains(strings.Join(m.Tags, ","), "rotating_light") ||
		!strings.Contains(m.Message, "rm -rf /srv/deny-me") || !strings.Contains(m.Message, "open it: ssh -t -p 2222 approvals.example open "+d) ||
		m.Click != "" || len(m.Actions) != 0 {
		t.Errorf("ntfy page: %s", h.body)
	}
	h, _ = chat.find(d, "page")
	if !strings.Contains(string(h.body), "rm -rf /srv/deny-me") || !strings.HasPrefix(h.slack.Blocks[0].Text.Text, "HIGH approval waiting: "+d) {
		t.Errorf("Slack page: %s", h.body)
	}

	r.run("approve", a, "--confirm", a)
	r.run("deny", d, "--reason", "not on prod")
	actorA, actorD := r.show(a).ConsumedBy, r.show(d).ConsumedBy
	if actorA == nil || actorD == nil || *actorA == "" {
		t.Fatalf("consumed_by %v %v", actorA, actorD)
	}
	for _, rv := range all {
		rv.waitFor("the three resolutions", 15*time.Second, func([]nhit) bool {
			return rv.has(a, "resolved") && rv.has(d, "resolved") && rv.has(e, "resolved")
		})
	}
	for id, want := range map[string][2]string{a: {"approved", *actorA}, d: {"denied", *actorD}, e: {"expired", ""}} {
		h, _ := hook.find(id, "resolved")
		if p := h.wh; p.Outcome == nil || *p.Outcome != want[0] || *p.Actor != want[1] || h.deliveryID != id+"/resolved/0/hook" {
			t.Errorf("webhook resolution of %s: %s", id, h.body)
		}
		h, _ = pager.find(id, "resolved")
		if h.pd.EventAction != "resolve" || h.pd.DedupKey != id || h.pd.Payload != nil {
			t.Errorf("PagerDuty resolution of %s: %s", id, h.body)
		}
		h, _ = push.find(id, "resolved")
		tag := map[string]string{"approved": "white_check_mark", "denied": "x", "expired": "hourglass"}[want[0]]
		if h.ntfy.Priority != 2 || h.ntfy.Tags[0] != tag {
			t.Errorf("ntfy resolution of %s: %s", id, h.body)
		}
		h, _ = chat.find(id, "resolved")
		title := h.slack.Blocks[0].Text.Text
		if want[0] == "expired" && !strings.HasPrefix(title, "expired unanswered: "+id) ||
			want[0] != "expired" && !strings.HasPrefix(title, "resolved: "+want[0]+" by "+want[1]) {
			t.Errorf("Slack resolution of %s: %q", id, title)
		}
	}

	// Nothing more: each page and resolution once, none for the quiet ones.
	time.Sleep(1500 * time.Millisecond)
	ids := map[string]bool{}
	for _, rv := range all {
		got := exactlyOnce(t, rv)
		if len(got) != 6 {
			t.Errorf("%s received %d deliveries, want 6:\n%s", rv.channel, len(got), describeHits(rv.snapshot()))
		}
		for _, h := range got {
			if h.approvalID == quiet1 || h.approvalID == quiet2 {
				t.Errorf("%s paged for %s, which no route matches", rv.channel, h.approvalID)
			}
		}
	}
	// One delivery event per delivery, each ok.
	evs := r.deliveryEvents()
	for _, ev := range evs {
		id, _ := ev.Detail["delivery_id"].(string)
		if ev.Outcome != "ok" || ids[id] || ev.Surface != "notify" || !strings.HasPrefix(ev.Actor, "notifier@") {
			t.Errorf("delivery event %+v", ev)
		}
		ids[id] = true
	}
	if len(evs) != 24 {
		t.Errorf("%d delivery events, want 24", len(evs))
	}
}

// 2. A receiver that answers 503 for a while: each delivery arrives once
// when it is back, under the same delivery id as its failed attempts, and
// the audit log has one delivery event for each; a page of a proposal
// denied meanwhile is not sent at all.
func TestNotifyE2EReceiverDownThenBack(t *testing.T) {
	r := newNotifyRig(t, "")
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = "whsec-test-2"
	var up sync.Mutex
	down := true
	hook.answer = func(int, nhit) (int, string) {
		up.Lock()
		defer up.Unlock()
		if down {
			return http.StatusServiceUnavailable, "down for maintenance"
		}
		return 0, ""
	}
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret}
	r.writeConfig(fmt.Sprintf(notifyBenchConfig, hook.url()))
	n := r.startNotifier()
	start := time.Now()
	ids := []string{r.submit("--", "rm", "-rf", "/srv/a"), r.submit("--", "rm", "-rf", "/srv/b"), r.submit("--", "rm", "-rf", "/srv/c")}
	gone := r.submit("--", "rm", "-rf", "/srv/gone")
	failures := func(hs []nhit, id string) int {
		n := 0
		for _, h := range hs {
			if h.approvalID == id && h.status == http.StatusServiceUnavailable {
				n++
			}
		}
		return n
	}
	hook.waitFor("a failed attempt of the page to be denied", 5*time.Second, func(hs []nhit) bool { return failures(hs, gone) >= 1 })
	r.run("deny", gone)
	// Every page tried twice (at once, and 2 s later), then it is back.
	hook.waitFor("two failed attempts of each page", 10*time.Second, func(hs []nhit) bool {
		for _, id := range ids {
			if failures(hs, id) < 2 {
				return false
			}
		}
		return true
	})
	up.Lock()
	down = false
	up.Unlock()
	hook.waitFor("each page once it is back", 12*time.Second, func([]nhit) bool {
		return hook.has(ids[0], "page") && hook.has(ids[1], "page") && hook.has(ids[2], "page")
	})
	time.Sleep(2500 * time.Millisecond) // longer than the first back-off: nothing more comes
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("took %v", el)
	}

	byKey := hitsByKey(hook.snapshot())
	attempts := map[string]int{}
	for k, hs := range byKey {
		okN := 0
		for _, h := range hs {
			if h.ok() {
				okN++
			}
		}
		attempts[k] = len(hs)
		switch {
		case strings.HasPrefix(k, gone+"/"):
			if okN != 0 {
				t.Errorf("the page of %s, denied while the receiver was down, was delivered", gone)
			}
		case okN != 1 || !hs[len(hs)-1].ok():
			t.Errorf("%s delivered %d times:\n%s", k, okN, describeHits(hs))
		}
	}
	if len(byKey) != 4 {
		t.Errorf("%d delivery ids, want 4 (the pages): %v", len(byKey), byKey)
	}
	// Every page that fell due ends audited: the three delivered, and the
	// denied one's as cancelled (not sent).
	var evs []notifyAuditEvent
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if evs = r.deliveryEvents(); len(evs) >= 4 || time.Now().After(deadline) {
			break
		}
	}
	if len(evs) != 4 {
		t.Errorf("%d delivery events, want 4: %+v", len(evs), evs)
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		id, _ := ev.Detail["delivery_id"].(string)
		att, _ := ev.Detail["attempts"].(float64)
		if strings.HasPrefix(id, gone+"/") {
			if ev.Outcome != "cancelled" || ev.Detail["state"] != "cancelled" || ev.Detail["why"] != "the proposal was denied first" || seen[id] {
				t.Errorf("the denied proposal's page: %+v", ev)
			}
			seen[id] = true
			continue
		}
		if ev.Outcome != "ok" || seen[id] || int(att) != attempts[id] || att < 3 {
			t.Errorf("delivery event %+v (the receiver saw %d attempts)", ev, attempts[id])
		}
		seen[id] = true
	}
	if log := n.text(); !strings.Contains(log, "page via hook failed (attempt 1), again in 2s") || !strings.Contains(log, "answered 503 Service Unavailable: down for maintenance") {
		t.Errorf("the notifier's log:\n%s", log)
	}
}

// 3. Two notifiers on one store: 30 proposals submitted at once, every
// delivery (pages to two channels, and an escalation step) received
// exactly once.
func TestNotifyE2ETwoNotifiersOneStore(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { twoNotifiers(t, "") })
	t.Run("postgres", func(t *testing.T) {
		pgtest.Require(t)
		twoNotifiers(t, pgtest.Schema(t))
	})
}

func twoNotifiers(t *testing.T, db string) {
	r := newNotifyRig(t, db)
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = "whsec-test-3"
	pager := newReceiver(t, "pagerduty", "pager")
	pager.secret = "R0UT1NGKEYTEST000000000000000003"
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret, "NT_PD_KEY=" + pager.secret}
	r.writeConfig(fmt.Sprintf(`channels:
  hook:  {type: webhook, url: %q, secret_env: NT_HOOK_SECRET}
  pager: {type: pagerduty, routing_key_env: NT_PD_KEY, events_url: %q}
routes:
  - match: {risk: high}
    steps:
      - {after: 0s, notify: [hook, pager]}
      - {after: 3s, notify: [hook]}
`, hook.url(), pager.url()))
	n1, n2 := r.startNotifier(), r.startNotifier()

	const total = 30
	ids := make([]string, total)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < total; i += 6 {
				out, err := r.command("submit", "--session", fmt.Sprintf("agent:fleet:%d", i), "--", "rm", "-rf", fmt.Sprintf("/srv/app%d", i)).Output()
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Sprint(err))
					mu.Unlock()
				}
				ids[i] = strings.TrimSpace(string(out))
			}
		}(w)
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("submit: %v", errs)
	}
	all := func(rv *nreceiver, events ...string) func([]nhit) bool {
		return func([]nhit) bool {
			for _, id := range ids {
				for _, ev := range events {
					if !rv.has(id, ev) {
						return false
					}
				}
			}
			return true
		}
	}
	hook.waitFor("30 pages and 30 escalations", 30*time.Second, all(hook, "page", "escalation"))
	pager.waitFor("30 triggers", 10*time.Second, all(pager, "page"))
	time.Sleep(2 * time.Second)
	if got := exactlyOnce(t, hook); len(got) != 2*total {
		t.Errorf("webhook: %d deliveries, want %d", len(got), 2*total)
	}
	if got := exactlyOnce(t, pager); len(got) != total {
		t.Errorf("PagerDuty: %d deliveries, want %d", len(got), total)
	}
	sent := func(p *notifierProc) int { return strings.Count(p.text(), " sent via ") }
	if s1, s2 := sent(n1), sent(n2); s1+s2 != 3*total {
		t.Errorf("the notifiers say they sent %d + %d, want %d in all", s1, s2, 3*total)
	} else {
		t.Logf("notifier 1 sent %d, notifier 2 sent %d", s1, s2)
	}
	if evs := r.deliveryEvents(); len(evs) != 3*total {
		t.Errorf("%d delivery events, want %d", len(evs), 3*total)
	}
}

// 4. kill -9 mid-send: the receiver holds the first request while the
// notifier is killed; a new notifier sends that delivery again, under the
// same delivery id, once its claim's lease runs out; nothing else twice.
func TestNotifyE2EKilledMidSend(t *testing.T) {
	r := newNotifyRig(t, "")
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = "whsec-test-4"
	held := make(chan string, 1)
	hook.hold = func(n int, h nhit, req *http.Request) bool {
		if n != 1 {
			return false
		}
		held <- h.deliveryID
		select {
		case <-req.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return true
	}
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret}
	r.writeConfig(fmt.Sprintf(`channels:
  hook: {type: webhook, url: %q, secret_env: NT_HOOK_SECRET, timeout: 4s}
routes:
  - match: {risk: high}
    steps: [{after: 0s, notify: [hook]}]
`, hook.url()))
	n1 := r.startNotifier("--lease", "5s")
	first := r.submit("--", "rm", "-rf", "/srv/first")
	var heldID string
	select {
	case heldID = <-held:
	case <-time.After(10 * time.Second):
		t.Fatalf("no request came:\n%s", n1.text())
	}
	if heldID != first+"/page/0/hook" {
		t.Fatalf("held %q", heldID)
	}
	// Two more while the first is held: the notifier is busy with it.
	second := r.submit("--", "rm", "-rf", "/srv/second")
	third := r.submit("--", "rm", "-rf", "/srv/third")
	n1.kill9()
	killed := time.Now()
	r.startNotifier("--lease", "5s")
	hook.waitFor("every page after the restart", 15*time.Second, func([]nhit) bool {
		return hook.has(first, "page") && hook.has(second, "page") && hook.has(third, "page")
	})
	time.Sleep(2 * time.Second)
	byKey := hitsByKey(hook.snapshot())
	if len(byKey) != 3 {
		t.Errorf("%d delivery ids, want 3:\n%s", len(byKey), describeHits(hook.snapshot()))
	}
	for k, hs := range byKey {
		if len(hs) > 2 {
			t.Errorf("%s received %d times", k, len(hs))
		}
		if k != heldID && len(hs) != 1 {
			t.Errorf("%s, not the one killed mid-send, received %d times:\n%s", k, len(hs), describeHits(hs))
		}
	}
	again := byKey[heldID]
	if len(again) != 2 || again[0].status != -1 || !again[1].ok() || !again[1].at.After(killed) {
		t.Errorf("the delivery killed mid-send:\n%s", describeHits(again))
	} else {
		t.Logf("sent again %v after the kill", again[1].at.Sub(killed).Round(time.Millisecond))
	}
	evs := r.deliveryEvents()
	if len(evs) != 3 {
		t.Errorf("%d delivery events, want 3: %+v", len(evs), evs)
	}
	for _, ev := range evs {
		id, _ := ev.Detail["delivery_id"].(string)
		att, _ := ev.Detail["attempts"].(float64)
		if want := map[bool]float64{true: 2, false: 1}[id == heldID]; ev.Outcome != "ok" || att != want {
			t.Errorf("delivery event %+v: want attempts %v", ev, want)
		}
	}
}

// 5. Escalation timing: a step after 3s arrives no sooner than 3 s after
// the proposal opened (and soon after); a reminder before expiry on a
// proposal with a short --ttl, then its expiry.
func TestNotifyE2EEscalationAndReminder(t *testing.T) {
	r := newNotifyRig(t, "")
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = "whsec-test-5"
	pager := newReceiver(t, "pagerduty", "pager")
	pager.secret = "R0UT1NGKEYTEST000000000000000005"
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret, "NT_PD_KEY=" + pager.secret}
	r.writeConfig(fmt.Sprintf(`channels:
  hook:  {type: webhook, url: %q, secret_env: NT_HOOK_SECRET}
  pager: {type: pagerduty, routing_key_env: NT_PD_KEY, events_url: %q}
routes:
  - match: {risk: high}
    steps:
      - {after: 0s, notify: [hook]}
      - {after: 3s, notify: [pager]}
    remind_before_expiry: 4s
`, hook.url(), pager.url()))
	r.startNotifier()
	long := r.submit("--ttl", "10m", "--", "rm", "-rf", "/srv/long")
	short := r.submit("--ttl", "9s", "--", "rm", "-rf", "/srv/short")
	recL, recS := r.show(long), r.show(short)
	createdL, createdS, expiresS := epochTime(recL.CreatedAt), epochTime(recS.CreatedAt), epochTime(*recS.ExpiresAt)

	pager.waitFor("the escalations", 10*time.Second, func([]nhit) bool { return pager.has(long, "escalation") && pager.has(short, "escalation") })
	for id, created := range map[string]time.Time{long: createdL, short: createdS} {
		h, _ := pager.find(id, "escalation")
		after := h.at.Sub(created)
		if after < 3*time.Second || after > 6*time.Second {
			t.Errorf("escalation of %s arrived %v after it opened, want 3s (and within a tick or two)", id, after)
		}
		t.Logf("escalation of %s: %v after it opened", id, after.Round(time.Millisecond))
		// The route's second step: "step 2", as the console counts it.
		if h.pd.EventAction != "trigger" || h.pd.Payload.CustomDetails["step"] != float64(2) || !strings.HasPrefix(h.pd.Payload.Summary, "ESCALATION (step 2): ") {
			t.Errorf("escalation: %s", h.body)
		}
	}
	for _, h := range pager.snapshot() {
		if h.event == "escalation" && h.at.Before(createdL.Add(3*time.Second)) {
			t.Errorf("an escalation at %v", h.at)
		}
	}
	// The reminder goes to every channel paged so far (both, by now), once
	// the window before expiry starts; then the expiry.
	hook.waitFor("the reminder and the expiry", 15*time.Second, func([]nhit) bool { return hook.has(short, "reminder") && hook.has(short, "resolved") })
	pager.waitFor("the reminder and the resolve", 5*time.Second, func([]nhit) bool { return pager.has(short, "reminder") && pager.has(short, "resolved") })
	rem, _ := hook.find(short, "reminder")
	if rem.at.Before(expiresS.Add(-4*time.Second)) || !rem.at.Before(expiresS) {
		t.Errorf("reminder at %v, want in the 4 s before expiry at %v", rem.at, expiresS)
	}
	if !strings.HasPrefix(rem.wh.Summary, "reminder: expires in ") || rem.deliveryID != short+"/reminder/0/hook" {
		t.Errorf("reminder: %s", rem.body)
	}
	res, _ := hook.find(short, "resolved")
	if res.at.Before(expiresS) || *res.wh.Outcome != "expired" {
		t.Errorf("expiry at %v (expires %v): %s", res.at, expiresS, res.body)
	}
	time.Sleep(1500 * time.Millisecond)
	exactlyOnce(t, hook)
	exactlyOnce(t, pager)
	if hook.has(long, "reminder") || pager.has(long, "reminder") {
		t.Errorf("a reminder for %s, 10 minutes from expiry", long)
	}
	if got := len(hook.delivered()); got != 4 { // page long, page short, reminder, expiry
		t.Errorf("webhook: %d deliveries, want 4:\n%s", got, describeHits(hook.snapshot()))
	}
	if got := len(pager.delivered()); got != 4 { // escalation long, escalation short, reminder, resolve
		t.Errorf("PagerDuty: %d deliveries, want 4:\n%s", got, describeHits(pager.snapshot()))
	}
}

// hiddenRune reports whether c is a control, bidirectional or invisible
// format character that must never reach a receiver raw.
func hiddenRune(c rune) bool {
	switch {
	case c < 0x20 && c != '\n', c == 0x7f, c >= 0x80 && c <= 0x9f:
		return true
	case c >= 0x200b && c <= 0x200f, c >= 0x202a && c <= 0x202e, c >= 0x2066 && c <= 0x2069,
		c == 0x061c, c == 0xfeff, c == 0x2028, c == 0x2029, c == utf8.RuneError:
		return true
	}
	return false
}

// hiddenIn walks a decoded JSON value and names every string that holds a
// hidden character (or a newline, unless newlineOK says that field is
// multi-line by design).
func hiddenIn(v any, path string, newlineOK func(string) bool) []string {
	var out []string
	switch x := v.(type) {
	case string:
		for _, c := range x {
			if hiddenRune(c) || c == '\n' && !newlineOK(path) {
				out = append(out, fmt.Sprintf("%s: %q", path, x))
				break
			}
		}
	case map[string]any:
		for k, e := range x {
			out = append(out, hiddenIn(e, path+"."+k, newlineOK)...)
		}
	case []any:
		for i, e := range x {
			out = append(out, hiddenIn(e, fmt.Sprintf("%s[%d]", path, i), newlineOK)...)
		}
	}
	return out
}

// 6. A hostile command, session and requester (ESC, CSI, OSC, C1, U+202E,
// newlines, a Slack mention and backticks): every receiver gets them
// escaped and visible, never raw; include_command: false leaves the
// command out entirely.
func TestNotifyE2EHostileText(t *testing.T) {
	r := newNotifyRig(t, "")
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = "whsec-test-6"
	quiet := newReceiver(t, "webhook", "quiet")
	quiet.secret = "whsec-test-6q"
	push := newReceiver(t, "ntfy", "push")
	pager := newReceiver(t, "pagerduty", "pager")
	pager.secret = "R0UT1NGKEYTEST000000000000000006"
	chat := newReceiver(t, "slack", "chat")
	mute := newReceiver(t, "slack", "mute")
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret, "NT_QUIET_SECRET=" + quiet.secret, "NT_PD_KEY=" + pager.secret,
		"NT_SLACK_URL=" + chat.url(), "NT_MUTE_URL=" + mute.url()}
	r.writeConfig(fmt.Sprintf(`channels:
  hook:  {type: webhook, url: %q, secret_env: NT_HOOK_SECRET}
  quiet: {type: webhook, url: %q, secret_env: NT_QUIET_SECRET, include_command: false}
  push:  {type: ntfy, url: %q}
  pager: {type: pagerduty, routing_key_env: NT_PD_KEY, events_url: %q}
  chat:  {type: slack, url_env: NT_SLACK_URL}
  mute:  {type: slack, url_env: NT_MUTE_URL, include_command: false}
routes:
  - match: {risk: high}
    steps: [{after: 0s, notify: [hook, quiet, push, pager, chat, mute]}]
`, hook.url(), quiet.url(), push.url(), pager.url()))
	r.startNotifier()
	session := "agent:prod:\x1b[31mred\u202etxt.\ninjected: yes"
	requester := "ev\x1b]0;pwned\x07il\u200b-bot"
	command := "rm -rf /srv/\x1b[2J\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\ \u202eexe.sh\nSECRET-CMD-77 \u009b31m <!channel> `id` \r done"
	id := r.submit("--session", session, "--requester", requester, "--", command)
	all := []*nreceiver{hook, quiet, push, pager, chat, mute}
	for _, rv := range all {
		rv.waitFor("the page", 10*time.Second, func([]nhit) bool { return rv.has(id, "page") })
	}
	for _, rv := range all {
		for _, h := range rv.snapshot() {
			var v any
			if err := json.Unmarshal(h.body, &v); err != nil {
				t.Fatal(err)
			}
			newlineOK := func(path string) bool {
				// ntfy's message and Slack's block texts are multi-line by
				// design (a line per field); nothing else is.
				return rv.kind == "ntfy" && path == ".message" || rv.kind == "slack" && strings.HasPrefix(path, ".blocks")
			}
			for _, p := range hiddenIn(v, "", newlineOK) {
				t.Errorf("%s: a raw hidden character in %s", rv.channel, p)
			}
			for _, esc := range []string{`\u001b`, `\u009b`, `\u202e`, `\u0007`, `\u200b`} {
				if bytes.Contains(h.body, []byte(esc)) {
					t.Errorf("%s: the body carries %s, a hidden character once decoded", rv.channel, esc)
				}
			}
		}
	}
	h, _ := hook.find(id, "page")
	p := h.wh
	for _, want := range []string{`\x1b[2J`, `\x1b]8;;http://evil.example\x1b\click`, `<U+202E>exe.sh`, `\nSECRET-CMD-77`, `<U+009B>31m`, `\x0d done`} {
		if p.Command == nil || !strings.Contains(*p.Command, want) {
			t.Errorf("webhook command lacks %q: %v", want, p.Command)
		}
	}
	if p.SessionKey != `agent:prod:\x1b[31mred<U+202E>txt.\ninjected: yes` || p.Requester != `ev\x1b]0;pwned\x07il<U+200B>-bot` {
		t.Errorf("webhook session %q, requester %q", p.SessionKey, p.Requester)
	}
	h, _ = pager.find(id, "page")
	if c, _ := h.pd.Payload.CustomDetails["command"].(string); !strings.Contains(c, `\x1b[2J`) || !strings.Contains(c, `\nSECRET-CMD-77`) {
		t.Errorf("PagerDuty command %q", c)
	}
	h, _ = push.find(id, "page")
	for _, l := range strings.Split(h.ntfy.Message, "\n") {
		if strings.Contains(l, "SECRET-CMD-77") && !strings.Contains(l, "rm -rf /srv/") {
			t.Errorf("the command's newline broke ntfy's message into lines:\n%s", h.ntfy.Message)
		}
		if strings.HasPrefix(l, "injected: ") {
			t.Errorf("the session's newline made a line of its own in ntfy's message:\n%s", h.ntfy.Message)
		}
	}
	h, _ = chat.find(id, "page")
	var slackText strings.Builder
	for _, b := range h.slack.Blocks {
		if b.Text != nil {
			slackText.WriteString(b.Text.Text + "\n")
		}
	}
	if st := slackText.String(); strings.Contains(st, "<!channel>") || !strings.Contains(st, "&lt;!channel&gt;") || strings.Contains(st, "`id`") || !strings.Contains(st, "\u02cbid\u02cb") {
		t.Errorf("Slack: the mention or the backticks went through: %s", h.body)
	}
	// include_command: false: not a word of the command.
	for _, rv := range []*nreceiver{quiet, mute} {
		h, _ := rv.find(id, "page")
		for _, part := range []string{"SECRET-CMD-77", "rm -rf", "evil.example", "exe.sh"} {
			if bytes.Contains(h.body, []byte(part)) {
				t.Errorf("%s (include_command: false) carries %q: %s", rv.channel, part, h.body)
			}
		}
		if rv.kind == "webhook" && (h.wh.Command != nil || !h.wh.CommandOmitted || bytes.Contains(h.body, []byte(`"command":`))) {
			t.Errorf("%s: %s", rv.channel, h.body)
		}
		if rv.kind == "slack" && !bytes.Contains(h.body, []byte("command left out by configuration")) {
			t.Errorf("%s: %s", rv.channel, h.body)
		}
	}
}

// 7. Secrets never appear in the notifier's log, the audit log or config
// check's output, even when every service fails and quotes them back.
func TestNotifyE2ESecretsStayOut(t *testing.T) {
	const mark = "s3cr3t-VALUE-42"
	r := newNotifyRig(t, "")
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = mark + "-webhook"
	push := newReceiver(t, "ntfy", "push")
	push.secret = mark + "-ntfy"
	pager := newReceiver(t, "pagerduty", "pager")
	pager.secret = mark + "-pagerduty"
	chat := newReceiver(t, "slack", mark+"-slack")
	chat.channel = "chat"
	// Each service fails first and quotes the secret it was given.
	hook.answer = func(n int, h nhit) (int, string) {
		if n == 1 {
			return http.StatusServiceUnavailable, "signature with " + hook.secret + " refused"
		}
		return 0, ""
	}
	push.answer = func(n int, h nhit) (int, string) {
		return http.StatusForbidden, `{"code":40301,"error":"forbidden: ` + h.header.Get("Authorization") + `"}`
	}
	pager.answer = func(n int, h nhit) (int, string) {
		return http.StatusBadRequest, `{"status":"invalid event","message":"Event object is invalid","errors":["routing_key ` + pager.secret + ` unknown"]}`
	}
	chat.answer = func(n int, h nhit) (int, string) {
		return http.StatusNotFound, "channel_not_found for " + chat.path
	}
	deadURL := "http://127.0.0.1:1/hook?token=" + mark + "-url"
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret, "NT_SLACK_URL=" + chat.url(), "NT_DEAD_URL=" + deadURL}
	r.writeSecret("ntfy-token", push.secret)
	r.writeSecret("pd-key", pager.secret)
	r.writeSecret("dead-secret", mark+"-deadsig")
	r.writeConfig(fmt.Sprintf(`channels:
  hook:  {type: webhook, url: %q, secret_env: NT_HOOK_SECRET}
  push:  {type: ntfy, url: %q, token_file: ntfy-token}
  pager: {type: pagerduty, routing_key_file: pd-key, events_url: %q}
  chat:  {type: slack, url_env: NT_SLACK_URL}
  dead:  {type: webhook, url_env: NT_DEAD_URL, secret_file: dead-secret, timeout: 2s}
routes:
  - match: {risk: high}
    steps: [{after: 0s, notify: [hook, push, pager, chat, dead]}]
`, hook.url(), push.url(), pager.url()))

	check := r.run("config", "check", "--config", r.cfg)
	checkJSON := r.run("config", "check", "--config", r.cfg, "--json")
	for _, want := range []string{"$NT_HOOK_SECRET (set, 23 characters)", "token file " + filepath.Join(r.dir, "ntfy-token") + " (readable, 20 characters)",
		"routing key file " + filepath.Join(r.dir, "pd-key") + " (readable, 25 characters)", "$NT_SLACK_URL (set,", "$NT_DEAD_URL (set,"} {
		if !strings.Contains(check, want) {
			t.Errorf("config check does not say %q:\n%s", want, check)
		}
	}
	n := r.startNotifier()
	id := r.submit("--", "rm", "-rf", "/srv/secret-test")
	hook.waitFor("the page, on the second attempt", 10*time.Second, func([]nhit) bool { return hook.has(id, "page") })
	for _, rv := range []*nreceiver{push, pager, chat} {
		rv.waitFor("the refused page", 5*time.Second, func(hs []nhit) bool { return len(hs) == 1 && hs[0].status >= 400 })
	}
	waitLog := func(what string) {
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(n.text(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("the notifier's log does not say %q:\n%s", what, n.text())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitLog("page via dead failed (attempt 2)")
	r.run("approve", id, "--confirm", id)
	hook.waitFor("the resolution", 10*time.Second, func([]nhit) bool { return hook.has(id, "resolved") })
	n.stop()
	_, _, _ = r.try("notify", "--config", r.cfg, "--once")

	log := n.text()
	for _, want := range []string{"answered 503 Service Unavailable", "answered 403 Forbidden", "answered 400 Bad Request", "Slack webhook answered 404 Not Found",
		"page via push failed for good", "page via pager failed for good", "page via chat failed for good", "connection refused", "[redacted]"} {
		if !strings.Contains(log, want) {
			t.Errorf("the notifier's log does not say %q (the failures must be logged for this test to mean anything):\n%s", want, log)
		}
	}
	audit := r.run("audit", "--json", "--limit", "1000")
	auditTable := r.run("audit", "--limit", "1000")
	failed := 0
	for _, ev := range r.deliveryEvents() {
		if ev.Outcome == "failed" {
			failed++
		}
	}
	if failed != 3 {
		t.Errorf("%d failed delivery events, want 3 (push, pager, chat):\n%s", failed, audit)
	}
	outputs := map[string]string{"notify's log": log, "audit --json": audit, "audit": auditTable, "config check": check, "config check --json": checkJSON}
	for i, o := range r.outputs {
		outputs["command output "+strconv.Itoa(i)] = o
	}
	for name, o := range outputs {
		for _, leak := range []string{mark, "VALUE-42", strings.ToLower(mark)} {
			if strings.Contains(o, leak) {
				t.Errorf("%s shows a secret (%q):\n%s", name, leak, o)
			}
		}
	}
	// The services did get them.
	if h := pager.snapshot()[0]; h.pd == nil || h.pd.RoutingKey != pager.secret {
		t.Errorf("PagerDuty got %s", h.body)
	}
	if h := push.snapshot()[0]; h.header.Get("Authorization") != "Bearer "+push.secret {
		t.Errorf("ntfy got no token")
	}
}

// A resolution is not held up by open proposals: with more than a
// thousand paged proposals open (each with an id that sorts before it),
// the one decided still has its resolution sent.
func TestNotifyE2EResolutionBehindAThousandOpenPages(t *testing.T) {
	r := newNotifyRig(t, "")
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = "whsec-test-8"
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret}
	r.writeConfig(fmt.Sprintf(notifyBenchConfig, hook.url()))
	st := openBenchStore(t, r.db)
	const open = 1001
	seedNotify(t, st, open, func(i int) string { return fmt.Sprintf("open%05d", i) },
		func(i int) string { return fmt.Sprintf("rm -rf /srv/app%d", i) }, time.Hour)
	if err := submitHigh(st, "zzz-decided"); err != nil {
		t.Fatal(err)
	}
	r.startNotifier()
	hook.waitFor("every page", 60*time.Second, func(hs []nhit) bool { return len(hs) >= open+1 })
	r.run("deny", "zzz-decided")
	hook.waitFor("the resolution", 10*time.Second, func([]nhit) bool { return hook.has("zzz-decided", "resolved") })
	time.Sleep(time.Second)
	if got := exactlyOnce(t, hook); len(got) != open+2 {
		t.Errorf("%d deliveries, want %d", len(got), open+2)
	}
}
