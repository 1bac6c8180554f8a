package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	gossh "golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/internal/promtest"
	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/notify"
	"github.com/approve-tui/approve-tui/storage"
)

// statsProc is a long-running command (notify, serve) run in-process.
type statsProc struct {
	t      *testing.T
	cancel context.CancelFunc
	done   chan int
	out    *syncbuf.Buffer
	code   int
}

func startStatsProc(t *testing.T, db string, args ...string) *statsProc {
	t.Helper()
	p := &statsProc{t: t, done: make(chan int, 1), out: &syncbuf.Buffer{}, code: -1}
	a := newApp(strings.NewReader(""), p.out, p.out)
	a.getenv = func(k string) string {
		if k == "APPROVE_TUI_DB" {
			return db
		}
		return ""
	}
	a.isTTY = func() bool { return false }
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() { p.done <- a.execute(ctx, args) }()
	t.Cleanup(func() { p.stop() })
	return p
}

// stop ends the command as SIGTERM would and returns its exit code.
func (p *statsProc) stop() int {
	if p.code >= 0 {
		return p.code
	}
	p.cancel()
	select {
	case p.code = <-p.done:
	case <-time.After(20 * time.Second):
		p.t.Fatalf("the command did not stop; it wrote:\n%s", p.out.String())
	}
	return p.code
}

// statsReceiver is a loopback webhook receiver: it records each body, and
// answers 503 to the first failFirst requests.
type statsReceiver struct {
	mu        sync.Mutex
	secret    string
	failFirst int
	n         int
	got       []notify.WebhookPayload
	bad       []string
	srv       *httptest.Server
}

// initDB makes a store with init in a directory of its own.
func initDB(t *testing.T) (dir, db string) {
	t.Helper()
	dir = t.TempDir()
	db = filepath.Join(dir, "state.db")
	if code, _, errs := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(errs)
	}
	return dir, db
}

func newStatsReceiver(t *testing.T, secret string) *statsReceiver {
	rv := &statsReceiver{secret: secret}
	rv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rv.mu.Lock()
		defer rv.mu.Unlock()
		rv.n++
		if err := notify.VerifyWebhook([]byte(rv.secret), r.Header.Get(notify.WebhookSignatureHeader), body, time.Now(), 0); err != nil {
			rv.bad = append(rv.bad, err.Error())
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if rv.n <= rv.failFirst {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var p notify.WebhookPayload
		if err := json.Unmarshal(body, &p); err != nil {
			rv.bad = append(rv.bad, err.Error())
		}
		rv.got = append(rv.got, p)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rv.srv.Close)
	return rv
}

func (rv *statsReceiver) has(id, event string) bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	for _, p := range rv.got {
		if p.ApprovalID == id && p.Event == event {
			return true
		}
	}
	return false
}

// writeStatsConfig writes a configuration file whose one route pages the
// webhook hook (the receiver) for every high-risk proposal.
func writeStatsConfig(t *testing.T, dir string, rv *statsReceiver, routes bool) string {
	t.Helper()
	secret := filepath.Join(dir, "hook.key")
	if err := os.WriteFile(secret, []byte(rv.secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf("channels:\n  hook: {type: webhook, url: %q, secret_file: %q}\n", rv.srv.URL+"/hook", secret)
	if routes {
		yaml += "routes:\n  - match: {risk: high}\n    steps:\n      - {after: 0s, notify: [hook]}\n"
	}
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// scrapeMetrics GETs http://addr/metrics and parses the text format.
func scrapeMetrics(t *testing.T, addr string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %s", resp.StatusCode, body)
	}
	fams, err := promtest.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse the scrape: %v\n%s", err, body)
	}
	return fams, string(body)
}

// metricValue is the sample of name with exactly labels (name, value
// pairs): a counter's or gauge's value, a histogram's count.
var metricValue = promtest.Value

func wantMetric(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	if got, ok := metricValue(fams, name, labels...); !ok || got != want {
		t.Errorf("%s%v = %v (present: %v), want %v", name, labels, got, ok, want)
	}
}

// metricsUntil scrapes until cond holds of the scrape.
func metricsUntil(t *testing.T, addr, what string, cond func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	var fams map[string]*dto.MetricFamily
	eventually(t, 15*time.Second, what, func() bool {
		fams, _ = scrapeMetrics(t, addr)
		return cond(fams)
	})
	return fams
}

func healthz(addr string) bool {
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == 200 && string(b) == "ok\n"
}

// channelLabelsOnly: the channel label takes configured names (or other)
// only, and the scrape names no proposal, command or session.
func checkScrapeBounded(t *testing.T, fams map[string]*dto.MetricFamily, body string, secrets ...string) {
	t.Helper()
	for name, f := range fams {
		if !strings.HasPrefix(name, "approve_tui_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "channel" && l.GetValue() != "hook" && l.GetValue() != "other" {
					t.Errorf("%s: channel %q", name, l.GetValue())
				}
			}
		}
	}
	for _, s := range secrets {
		if strings.Contains(body, s) {
			t.Errorf("the scrape holds %q", s)
		}
	}
}

func submitID(t *testing.T, db string, args ...string) string {
	t.Helper()
	code, out, errs := run(t, db, false, "", append([]string{"submit"}, args...)...)
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errs)
	}
	return strings.TrimSpace(out)
}

// notify --metrics-listen: scraped over HTTP while it runs, the open
// proposals by risk, the deliveries to the configured webhook (one
// refused by the receiver, then tried again), the decisions other
// processes made since it started (read from the store's audit log, timed
// from their submit; deliveries are not decisions), the version; stopped
// with the command.
func TestMetricsOfNotify(t *testing.T) {
	dir, db := initDB(t)
	// Decided before the notifier starts: history, not counted by it.
	old := submitID(t, db, "--ttl", "1h", "--", "echo", "history")
	if code, _, errs := run(t, db, false, "", "deny", "--reason", "before", "--", old); code != 0 {
		t.Fatalf("deny: %s", errs)
	}
	rv := newStatsReceiver(t, "whsec-metrics-notify")
	rv.failFirst = 1
	cfg := writeStatsConfig(t, dir, rv, true)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startStatsProc(t, db, "notify", "--config", cfg, "--metrics-listen", addr)
	eventually(t, 10*time.Second, "/healthz", func() bool { return healthz(addr) })

	fams, _ := scrapeMetrics(t, addr)
	for _, r := range storage.RiskLevels {
		wantMetric(t, fams, 0, "approve_tui_open_proposals", "risk", string(r))
	}
	wantMetric(t, fams, 0, "approve_tui_oldest_open_seconds")
	wantMetric(t, fams, 0, "approve_tui_delivery_failures_total", "channel", "hook")
	if _, ok := metricValue(fams, "approve_tui_build_info", "version", Build.resolved().Version); !ok {
		t.Error("no approve_tui_build_info of this version")
	}
	if _, ok := fams["approve_tui_ssh_sessions"]; ok {
		t.Error("notify exports SSH sessions")
	}

	id := submitID(t, db, "--ttl", "1h", "--session", "agent:secret-session-key", "--", "rm", "-rf", "/srv/secret-path")
	low := submitID(t, db, "--ttl", "1h", "--", "echo", "hello")
	eventually(t, 15*time.Second, "the page, after one 503", func() bool { return rv.has(id, "page") })
	fams = metricsUntil(t, addr, "the page counted", func(f map[string]*dto.MetricFamily) bool {
		v, _ := metricValue(f, "approve_tui_deliveries_total", "channel", "hook", "kind", "page", "outcome", "delivered")
		return v == 1
	})
	if _, ok := metricValue(fams, "approve_tui_decisions_total", "event", "delivery", "outcome", "ok"); ok {
		t.Error("a delivery counted as a decision")
	}
	wantMetric(t, fams, 1, "approve_tui_open_proposals", "risk", "high")
	wantMetric(t, fams, 1, "approve_tui_open_proposals", "risk", "low")
	wantMetric(t, fams, 0, "approve_tui_open_proposals", "risk", "medium")
	if v, _ := metricValue(fams, "approve_tui_oldest_open_seconds"); v <= 0 || v > 60 {
		t.Errorf("oldest open: %v seconds", v)
	}
	wantMetric(t, fams, 1, "approve_tui_deliveries_total", "channel", "hook", "kind", "page", "outcome", "retry")
	wantMetric(t, fams, 1, "approve_tui_deliveries_total", "channel", "hook", "kind", "page", "outcome", "delivered")
	wantMetric(t, fams, 1, "approve_tui_delivery_failures_total", "channel", "hook")

	// Denied elsewhere: the resolution goes out, the proposal is no
	// longer open.
	if code, _, errs := run(t, db, false, "", "deny", "--reason", "not today", "--", id); code != 0 {
		t.Fatalf("deny: %s", errs)
	}
	eventually(t, 15*time.Second, "the resolution", func() bool { return rv.has(id, "resolved") })
	fams = metricsUntil(t, addr, "the resolution counted", func(f map[string]*dto.MetricFamily) bool {
		v, _ := metricValue(f, "approve_tui_deliveries_total", "channel", "hook", "kind", "resolved", "outcome", "delivered")
		return v == 1
	})
	wantMetric(t, fams, 0, "approve_tui_open_proposals", "risk", "high")
	// The deny was another process's: the notifier counts it from the
	// store, once, timed from its submit.
	wantMetric(t, fams, 1, "approve_tui_decisions_total", "event", "deny", "outcome", "ok")
	wantMetric(t, fams, 0, "approve_tui_decisions_total", "event", "approve", "outcome", "ok")
	if h := fams["approve_tui_decision_seconds"]; h == nil || h.GetMetric()[0].GetHistogram().GetSampleCount() != 1 {
		t.Errorf("decision seconds: %v", h)
	}
	for _, f := range fams["approve_tui_decisions_total"].GetMetric() {
		for _, l := range f.GetLabel() {
			if l.GetName() == "event" && l.GetValue() == "delivery" {
				t.Error("deliveries counted as decisions")
			}
		}
	}
	_, body := scrapeMetrics(t, addr)
	checkScrapeBounded(t, fams, body, id, low, "secret-session-key", "secret-path", "whsec", rv.srv.URL)

	if code := p.stop(); code != 0 {
		t.Fatalf("notify ended %d:\n%s", code, p.out.String())
	}
	if healthz(addr) {
		t.Error("the metrics server outlived the command")
	}
	if !strings.Contains(p.out.String(), "approve-tui: metrics at http://"+addr+"/metrics") {
		t.Errorf("notify did not say where its metrics are:\n%s", p.out.String())
	}
}

// A bad --metrics-listen is a usage error before anything starts; a port
// taken is an error; --once has nothing to serve them with.
func TestMetricsListenRefused(t *testing.T) {
	dir, db := initDB(t)
	rv := newStatsReceiver(t, "whsec-refused")
	cfg := writeStatsConfig(t, dir, rv, true)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"notify", "--config", cfg, "--metrics-listen", "9464"}, ExitUsage, `--metrics-listen "9464" is not HOST:PORT`},
		{[]string{"notify", "--config", cfg, "--metrics-listen", "127.0.0.1:99999"}, ExitUsage, "not a number from 0 to 65535"},
		{[]string{"notify", "--config", cfg, "--once", "--metrics-listen", "127.0.0.1:9464"}, ExitUsage, "not with --once"},
		{[]string{"serve", "--config", cfg, "--metrics-listen", "localhost", "--approvers", cfg}, ExitUsage, "is not HOST:PORT"},
		{[]string{"stats", "--window", "0s"}, ExitUsage, "--window must be longer than 0"},
	} {
		code, _, errs := run(t, db, false, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: %d %q, want %d and %q", c.args, code, errs, c.code, c.msg)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := startStatsProc(t, db, "notify", "--config", cfg, "--metrics-listen", l.Addr().String())
	select {
	case code := <-p.done:
		p.code = code
	case <-time.After(10 * time.Second):
		t.Fatal("notify started on a port taken")
	}
	if p.code != ExitError || !strings.Contains(p.out.String(), "--metrics-listen "+l.Addr().String()) {
		t.Errorf("a port taken: %d %s", p.code, p.out.String())
	}
}

// sshKey makes an ed25519 key and its authorized_keys line.
func sshKey(t *testing.T, name string) (gossh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s, strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey()))) + " " + name + "\n"
}

// serve --notify: the notifier runs in the server's process on the same
// configuration file, and pages for a proposal; a denial over SSH is the
// server's decision (counted, timed from its submit) and resolves the
// page; the SSH sessions are a gauge; all of it scraped from
// --metrics-listen, and all of it stopped with the server.
func TestServeNotifyPagesAndMetrics(t *testing.T) {
	dir, db := initDB(t)
	rv := newStatsReceiver(t, "whsec-serve-notify")
	cfg := writeStatsConfig(t, dir, rv, true)
	key, authorized := sshKey(t, "oncall-alice")
	approvers := filepath.Join(dir, "approvers")
	if err := os.WriteFile(approvers, []byte(authorized), 0o600); err != nil {
		t.Fatal(err)
	}
	sshAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startStatsProc(t, db, "serve", "--config", cfg, "--notify", "--listen", sshAddr, "--host-key", filepath.Join(dir, "host_ed25519"),
		"--approvers", approvers, "--metrics-listen", metricsAddr)
	eventually(t, 10*time.Second, "/healthz", func() bool { return healthz(metricsAddr) })

	id := submitID(t, db, "--ttl", "1h", "--", "rm", "-rf", "/srv/serve-notify")
	eventually(t, 15*time.Second, "the page from serve --notify", func() bool { return rv.has(id, "page") })
	st, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The notifier's row is written at its start and after each pass
	// that changed it: the page can reach the receiver first.
	eventually(t, 10*time.Second, "one notifier running", func() bool {
		ns, err := st.Notifiers(context.Background())
		return err == nil && len(ns) == 1
	})

	dial := func() *gossh.Client {
		c, err := gossh.Dial("tcp", sshAddr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(key)},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("ssh: %v\n%s", err, p.out.String())
		}
		return c
	}
	// A console session holds the gauge at 1.
	c := dial()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 40, 120, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	screen := &syncbuf.Buffer{}
	sess.Stdout, sess.Stderr = screen, screen
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the console over ssh", func() bool { return strings.Contains(screen.String(), "pending") })
	fams := metricsUntil(t, metricsAddr, "one SSH session, the page counted", func(f map[string]*dto.MetricFamily) bool {
		v, _ := metricValue(f, "approve_tui_ssh_sessions")
		p, _ := metricValue(f, "approve_tui_deliveries_total", "channel", "hook", "kind", "page", "outcome", "delivered")
		return v == 1 && p == 1
	})
	wantMetric(t, fams, 1, "approve_tui_open_proposals", "risk", "high")
	wantMetric(t, fams, 1, "approve_tui_deliveries_total", "channel", "hook", "kind", "page", "outcome", "delivered")
	c.Close()
	metricsUntil(t, metricsAddr, "no SSH session", func(f map[string]*dto.MetricFamily) bool {
		v, _ := metricValue(f, "approve_tui_ssh_sessions")
		return v == 0
	})

	// A denial over SSH, without a terminal.
	c = dial()
	sess, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errb
	if err := sess.Run("deny " + id + " --reason 'not from metrics'"); err != nil {
		t.Fatalf("deny over ssh: %v %s", err, errb.String())
	}
	c.Close()
	eventually(t, 15*time.Second, "the resolution from serve --notify", func() bool { return rv.has(id, "resolved") })
	fams = metricsUntil(t, metricsAddr, "the denial timed, its resolution counted", func(f map[string]*dto.MetricFamily) bool {
		v, _ := metricValue(f, "approve_tui_decision_seconds")
		r, _ := metricValue(f, "approve_tui_deliveries_total", "channel", "hook", "kind", "resolved", "outcome", "delivered")
		return v == 1 && r == 1
	})
	wantMetric(t, fams, 1, "approve_tui_decisions_total", "event", "deny", "outcome", "ok")
	wantMetric(t, fams, 0, "approve_tui_decisions_total", "event", "approve", "outcome", "ok")
	wantMetric(t, fams, 0, "approve_tui_open_proposals", "risk", "high")
	wantMetric(t, fams, 1, "approve_tui_deliveries_total", "channel", "hook", "kind", "resolved", "outcome", "delivered")
	if sum := fams["approve_tui_decision_seconds"].GetMetric()[0].GetHistogram().GetSampleSum(); sum <= 0 || sum > 120 {
		t.Errorf("submit to denial: %v seconds", sum)
	}
	_, body := scrapeMetrics(t, metricsAddr)
	checkScrapeBounded(t, fams, body, id, "oncall-alice", "SHA256:", "serve-notify", "whsec")

	if code := p.stop(); code != 0 {
		t.Fatalf("serve ended %d:\n%s", code, p.out.String())
	}
	if healthz(metricsAddr) {
		t.Error("the metrics server outlived serve")
	}
	if ns, _ := st.Notifiers(context.Background()); len(ns) != 0 {
		t.Errorf("the notifier outlived serve: %+v", ns)
	}
	if log := p.out.String(); !strings.Contains(log, "notifier started") || !strings.Contains(log, "page sent via hook") {
		t.Errorf("serve's log does not show the notifier:\n%s", log)
	}
}

// serve --notify refuses a configuration without routes, as notify does,
// before it listens.
func TestServeNotifyRefusesNoRoutes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	rv := newStatsReceiver(t, "whsec-no-routes")
	cfg := writeStatsConfig(t, dir, rv, false)
	for _, args := range [][]string{
		{"serve", "--config", cfg, "--notify", "--listen", "127.0.0.1:0", "--approvers", cfg},
		{"notify", "--config", cfg},
	} {
		code, _, errs := run(t, db, false, "", args...)
		if code != ExitError || !strings.Contains(errs, "has no routes: nothing would be paged") {
			t.Errorf("%v: %d %q", args, code, errs)
		}
	}
}

// stats on a store with decisions, deliveries and a notifier in trouble:
// the text and the JSON say the same, every string from the store
// sanitised.
func TestStatsTextAndJSON(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	code, out, errs := run(t, db, false, "", "init")
	if code != 0 {
		t.Fatal(errs)
	}
	code, out, errs = run(t, db, false, "", "stats")
	if code != 0 {
		t.Fatalf("stats of an empty store: %d %s", code, errs)
	}
	for _, want := range []string{"Open proposals: 0\n", "Decisions in the last 24h: 0\n", "submit to decision: none approved or denied\n",
		"Deliveries in the last 24h: delivered 0, failed 0, cancelled 0; retrying 0\n", "Notifiers running: none\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("empty store: no %q in\n%s", want, out)
		}
	}

	st, err := storage.Open(ctx, db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	agentA := model.Actor{Surface: model.SurfaceRunner, Name: "agent@test", Person: "agent"}
	alice := model.Actor{Surface: model.SurfaceCLI, Name: "alice@test", Person: "alice"}
	now := time.Now()
	sub := func(id, command string, r model.RiskLevel, age, ttl time.Duration) {
		t.Helper()
		created := now.Add(-age)
		p := &model.Proposal{ApprovalID: id, CreatedAt: model.Epoch(created), ExpiresAt: model.F64(model.Epoch(now.Add(ttl))),
			SessionKey: "agent:stats", Requester: "tester", Command: command, Cwd: "/srv", Backend: "local", RiskLevel: r,
			RiskReason: "test", PolicyDecision: model.PolicyNeedsApproval, PolicyVersion: "test/1", RequiresExplicitApproval: true,
			DefaultDecision: model.DefaultDeny}
		if err := st.Submit(ctx, p, agentA); err != nil {
			t.Fatal(err)
		}
	}
	sub("stats-approved-1", "echo a", model.RiskLow, 10*time.Minute, time.Hour)
	sub("stats-denied-1", "echo d", model.RiskLow, 20*time.Minute, time.Hour)
	sub("stats-denied-2", "echo d2", model.RiskLow, 40*time.Minute, time.Hour)
	sub("stats-open-old", "echo waiting", model.RiskMedium, 5*time.Minute, time.Hour)
	sub("stats-open-high", "rm -rf /srv/stats", model.RiskLow, time.Minute, time.Hour)
	sub("stats-expiring", "echo soon", model.RiskLow, time.Minute, 500*time.Millisecond)
	if _, err := st.Consume(ctx, "stats-approved-1", "stats-approved-1", alice); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"stats-denied-1", "stats-denied-2"} {
		if _, err := st.Deny(ctx, id, alice, "no"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Consume(ctx, "stats-approved-1", "stats-approved-1", alice); err == nil {
		t.Fatal("approved twice")
	}
	time.Sleep(600 * time.Millisecond)
	if ids, err := st.ExpireDue(ctx, alice); err != nil || len(ids) != 1 {
		t.Fatalf("expire: %v %v", ids, err)
	}
	notifier := model.Actor{Surface: model.SurfaceNotify, Name: "notifier@test", Person: "notifier"}
	deliver := func(id, ch string, r storage.DeliveryResult) {
		t.Helper()
		k := storage.DeliveryKey{ApprovalID: id, Kind: "page", Channel: ch}
		if _, err := st.AddDeliveries(ctx, []storage.DeliveryKey{k}); err != nil {
			t.Fatal(err)
		}
		if d, err := st.ClaimDelivery(ctx, k, "n1", time.Minute); err != nil || d == nil {
			t.Fatalf("claim: %v %v", d, err)
		}
		if err := st.FinishDelivery(ctx, k, "n1", r, notifier); err != nil {
			t.Fatal(err)
		}
	}
	const hostileCh = "chat\x1b]0;owned\a"
	deliver("stats-open-old", "hook", storage.DeliveryResult{State: storage.DeliveryDelivered})
	deliver("stats-open-high", "hook", storage.DeliveryResult{State: storage.DeliveryDelivered})
	deliver("stats-denied-1", "hook", storage.DeliveryResult{State: storage.DeliveryFailed, Err: "HTTP 400 \x1b[31mbad request\x1b[0m"})
	deliver("stats-open-high", hostileCh, storage.DeliveryResult{State: storage.DeliveryPending, RetryAt: now.Add(time.Minute), Err: "HTTP 503"})
	if err := st.SetNotifier(ctx, storage.Notifier{Notifier: "host:42:abcdef", Host: "host\x1b[2J", PID: 42,
		Trouble: "hook (webhook): HTTP 503 \x1b[5mnow", TroubleSince: model.Epoch(now.Add(-3 * time.Minute))}); err != nil {
		t.Fatal(err)
	}

	code, out, errs = run(t, db, false, "", "stats")
	if code != 0 {
		t.Fatalf("stats: %d %s", code, errs)
	}
	for _, want := range []string{
		"Open proposals: 2\n",
		"  unknown 0, tier2_critical 0, high 1, medium 1, low 0\n",
		"  oldest: stats-open-old, waiting 5m0",
		"Decisions in the last 24h: 4\n",
		"  approved 1, denied 2, expired 1, refused 1\n",
		"  submit to decision: median 20m0", // 10m, 20m, 40m
		", p90 40m0",
		"(3 approved or denied)\n",
		"Deliveries in the last 24h: delivered 2, failed 1, cancelled 0; retrying 1\n",
		"  hook: delivered 2, failed 1, cancelled 0, retrying 0\n",
		"    last error: HTTP 400 ",
		"  chat",
		": delivered 0, failed 0, cancelled 0, retrying 1\n",
		"Notifiers running: 1\n",
		"  host:42:abcdef on host",
		"(pid 42), up ",
		"    trouble for 3m0",
		": hook (webhook): HTTP 503 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if cells(l) > 80 {
			t.Errorf("a line of %d cells: %q", cells(l), l)
		}
	}
	if strings.ContainsAny(out, "\x1b\a") {
		t.Errorf("raw control characters in the text:\n%q", out)
	}

	code, out, errs = run(t, db, false, "", "--json", "stats")
	if code != 0 {
		t.Fatalf("stats --json: %d %s", code, errs)
	}
	if strings.ContainsAny(out, "\x1b\a") || strings.Contains(out, `\u001b`) || strings.Contains(out, `\u0007`) {
		t.Errorf("raw control characters in the JSON:\n%q", out)
	}
	var j struct {
		At            float64 `json:"at"`
		WindowSeconds float64 `json:"window_seconds"`
		Open          struct {
			Total  int            `json:"total"`
			ByRisk map[string]int `json:"by_risk"`
			Oldest *struct {
				ApprovalID string  `json:"approval_id"`
				CreatedAt  float64 `json:"created_at"`
				AgeSeconds float64 `json:"age_seconds"`
			} `json:"oldest"`
		} `json:"open"`
		Decisions struct {
			Total, Approved, Denied, Expired, Refused int
			ByEvent                                   []struct {
				Event, Outcome string
				Count          int
			} `json:"by_event"`
			DecideSeconds struct {
				Count       int
				Median, P90 *float64
			} `json:"decide_seconds"`
		} `json:"decisions"`
		Deliveries struct {
			Delivered, Failed, Cancelled, Retrying int
			ByChannel                              []struct {
				Channel                                string
				Delivered, Failed, Cancelled, Retrying int
				LastError                              string `json:"last_error"`
			} `json:"by_channel"`
		} `json:"deliveries"`
		Notifiers []struct {
			Notifier, Host, Trouble string
			PID                     int
			TroubleSince            *float64 `json:"trouble_since"`
		} `json:"notifiers"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if j.WindowSeconds != 86400 || j.At < model.Epoch(now) || j.Open.Total != 2 || j.Open.ByRisk["high"] != 1 || j.Open.ByRisk["medium"] != 1 ||
		len(j.Open.ByRisk) != 5 || j.Open.Oldest == nil || j.Open.Oldest.ApprovalID != "stats-open-old" ||
		j.Open.Oldest.AgeSeconds < 299 || j.Open.Oldest.AgeSeconds > 330 {
		t.Errorf("open: %+v (%s)", j.Open, out)
	}
	d := j.Decisions
	if d.Total != 4 || d.Approved != 1 || d.Denied != 2 || d.Expired != 1 || d.Refused != 1 || len(d.ByEvent) != 4 ||
		d.DecideSeconds.Count != 3 || d.DecideSeconds.Median == nil || *d.DecideSeconds.Median < 1200 || *d.DecideSeconds.Median > 1230 ||
		*d.DecideSeconds.P90 < 2400 || *d.DecideSeconds.P90 > 2430 {
		t.Errorf("decisions: %+v", d)
	}
	del := j.Deliveries
	if del.Delivered != 2 || del.Failed != 1 || del.Retrying != 1 || len(del.ByChannel) != 2 ||
		del.ByChannel[0].Channel != line(hostileCh) || del.ByChannel[0].Retrying != 1 || del.ByChannel[0].LastError != "HTTP 503" ||
		del.ByChannel[1].Channel != "hook" || del.ByChannel[1].Delivered != 2 || !strings.HasPrefix(del.ByChannel[1].LastError, "HTTP 400 ") {
		t.Errorf("deliveries: %+v", del)
	}
	if len(j.Notifiers) != 1 || j.Notifiers[0].PID != 42 || j.Notifiers[0].TroubleSince == nil ||
		!strings.HasPrefix(j.Notifiers[0].Trouble, "hook (webhook): HTTP 503 ") {
		t.Errorf("notifiers: %+v", j.Notifiers)
	}

	// A window that starts after every decision and delivery.
	time.Sleep(1100 * time.Millisecond)
	code, out, _ = run(t, db, false, "", "stats", "--window", "1s")
	if code != 0 || !strings.Contains(out, "Decisions in the last 1s: 0\n") ||
		!strings.Contains(out, "Deliveries in the last 1s: delivered 0, failed 0, cancelled 0; retrying 1\n") {
		t.Errorf("--window 1s: %d\n%s", code, out)
	}
}

// stats --help says its exit codes; the helps of stats, notify and serve
// keep within 80 columns.
func TestStatsAndMetricsHelp(t *testing.T) {
	if got := exitCodesIn(helpOf(t, "stats")); fmt.Sprint(got) != "[0 1 2 6]" {
		t.Errorf("stats exit codes %v", got)
	}
	for _, cmd := range []string{"stats", "notify", "serve"} {
		help := helpOf(t, cmd)
		for _, l := range strings.Split(help[:strings.Index(help, "\nUsage:")], "\n") {
			if cells(l) > 80 {
				t.Errorf("%s --help: a line of %d cells: %q", cmd, cells(l), l)
			}
		}
		if cmd != "stats" && !strings.Contains(help, "--metrics-listen ADDR") {
			t.Errorf("%s --help does not offer --metrics-listen", cmd)
		}
	}
	if !strings.Contains(helpOf(t, "serve"), "--notify") {
		t.Error("serve --help does not offer --notify")
	}
}

// A proposal past its expiry is expired at every read, whether or not
// `expire` has swept it: stats counts it (saying how many the table still
// calls pending), list, show and their JSON say expired. The sweep only
// marks the row and audits the expiry: the counts stay the same.
func TestStatsCountsAnExpiryBeforeTheSweep(t *testing.T) {
	_, db := initDB(t)
	code, out, errs := run(t, db, false, "", "submit", "--ttl", "300ms", "--", "echo late")
	if code != 0 {
		t.Fatal(errs)
	}
	id := strings.TrimSpace(out)
	time.Sleep(400 * time.Millisecond)

	stats := func(unswept int) {
		t.Helper()
		_, out, _ := run(t, db, false, "", "stats")
		note := "still say pending in the table"
		if !strings.Contains(out, "Decisions in the last 24h: 1\n") || !strings.Contains(out, "  approved 0, denied 0, expired 1, refused 0\n") ||
			strings.Contains(out, note) != (unswept > 0) {
			t.Fatalf("stats (unswept %d):\n%s", unswept, out)
		}
		_, out, _ = run(t, db, false, "", "--json", "stats")
		var j struct {
			Decisions struct {
				Total, Expired int
				Unswept        int `json:"expired_unswept"`
			} `json:"decisions"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil || j.Decisions.Total != 1 || j.Decisions.Expired != 1 || j.Decisions.Unswept != unswept {
			t.Fatalf("stats --json (unswept %d): %+v %v\n%s", unswept, j.Decisions, err, out)
		}
		if _, out, _ = run(t, db, false, "", "list", "--status", "expired"); !strings.Contains(out, id) || !strings.Contains(out, "expired") {
			t.Fatalf("list --status expired:\n%s", out)
		}
		if _, out, _ = run(t, db, false, "", "show", id); !regexp.MustCompile(`(?m)^status:\s+expired`).MatchString(out) {
			t.Fatalf("show:\n%s", out)
		}
		if _, out, _ = run(t, db, false, "", "--json", "show", id); !strings.Contains(out, `"status":"expired"`) && !strings.Contains(out, `"status": "expired"`) {
			t.Fatalf("show --json:\n%s", out)
		}
	}
	stats(1)
	if code, out, errs = run(t, db, false, "", "expire"); code != 0 || strings.TrimSpace(out) != id {
		t.Fatalf("expire: %d %q %s", code, out, errs)
	}
	stats(0)
}
