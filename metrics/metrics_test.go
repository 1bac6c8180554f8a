package metrics

import (
	"context"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/approve-tui/approve-tui/internal/promtest"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var (
	agentActor    = model.Actor{Surface: model.SurfaceRunner, Name: "agent@host", Person: "agent"}
	operatorActor = model.Actor{Surface: model.SurfaceTUI, Name: "alice@host", Person: "alice"}
)

func testStore(t *testing.T) (*storage.Store, *testClock) {
	t.Helper()
	c := &testClock{t: time.Unix(1_780_000_000, 0)}
	s, err := storage.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), storage.Options{Create: true, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

func submit(t *testing.T, s *storage.Store, id, command string, r model.RiskLevel, created time.Time) {
	t.Helper()
	p := &model.Proposal{ApprovalID: id, CreatedAt: model.Epoch(created), ExpiresAt: model.F64(model.Epoch(created.Add(time.Hour))),
		SessionKey: "agent:main:secret-session", Requester: "tester", Command: command, Cwd: "/srv/app", Backend: "local",
		RiskLevel: r, RiskReason: "test", PolicyDecision: model.PolicyNeedsApproval, PolicyVersion: "test/1",
		RequiresExplicitApproval: true, DefaultDecision: model.DefaultDeny}
	if err := s.Submit(context.Background(), p, agentActor); err != nil {
		t.Fatal(err)
	}
}

// scrape GETs url/metrics over HTTP and parses Prometheus's text format.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	fams, status, err := tryScrape(base)
	if err != nil || status != http.StatusOK {
		t.Fatalf("scrape %s: %d %v", base, status, err)
	}
	return fams
}

func tryScrape(base string) (map[string]*dto.MetricFamily, int, error) {
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, nil
	}
	fams, err := promtest.Parse(resp.Body)
	return fams, resp.StatusCode, err
}

// value is the sample of family name whose labels are labels (name=value
// pairs); ok false when there is none.
var value = promtest.Value

func expect(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	got, ok := value(fams, name, labels...)
	if !ok || got != want {
		t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
	}
}

// allowed are the label values a family may carry, by label.
var allowed = map[string]map[string]bool{
	"risk":    set("low", "medium", "high", "tier2_critical", "unknown"),
	"event":   set(append(keys(events), Other)...),
	"outcome": set("ok", "refused", "failed", "delivered", "retry", "cancelled", Other),
	"kind":    set(append(keys(kinds), Other)...),
	// requester is bounded too.
	"requester": set(append(keys(requesters), Other)...),
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkLabels: every approve_tui_ label value is from its bounded set
// (channel: the configured ones, or other); no id, command or session.
func checkLabels(t *testing.T, fams map[string]*dto.MetricFamily, channels ...string) {
	t.Helper()
	chans := set(append(channels, Other)...)
	for name, f := range fams {
		if !strings.HasPrefix(name, "approve_tui_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				v := l.GetValue()
				switch l.GetName() {
				case "channel":
					if !chans[v] {
						t.Errorf("%s: channel %q is not a configured one", name, v)
					}
				case "version":
					if name != BuildInfo {
						t.Errorf("%s has a version label", name)
					}
				default:
					if set := allowed[l.GetName()]; set == nil || !set[v] {
						t.Errorf("%s: label %s=%q is outside its set", name, l.GetName(), v)
					}
				}
			}
		}
	}
}

// listen serves m's handler on a loopback port until the test ends and
// returns its base URL.
func listen(t *testing.T, m *Metrics) string {
	t.Helper()
	srv, err := Listen("127.0.0.1:0", m.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return "http://" + srv.Addr()
}

// Scraped over HTTP: the open proposals by effective risk and the oldest
// one's wait, read at the scrape; the decisions made under the observer
// and their time from submit (a histogram in a human's buckets); the
// deliveries by configured channel; the sessions; the version.
func TestMetricsScrapedOverHTTP(t *testing.T) {
	ctx := context.Background()
	s, c := testStore(t)
	m := New(Options{Store: s, Version: "v1.2.3-test", Channels: []string{"hook", "push"}, SSH: true})
	defer m.Close()
	base := listen(t, m)

	fams := scrape(t, base)
	for _, r := range storage.RiskLevels {
		expect(t, fams, 0, OpenProposals, "risk", string(r))
	}
	expect(t, fams, 0, OldestOpenSeconds)
	expect(t, fams, 1, BuildInfo, "version", "v1.2.3-test")
	expect(t, fams, 0, SSHSessions)
	expect(t, fams, 0, Decisions, "event", "approve", "outcome", "ok")
	expect(t, fams, 0, DeliveryFailures, "channel", "hook")
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}

	start := c.Now()
	submit(t, s, "metrics-low-1", "echo one", model.RiskLow, start)
	c.Advance(30 * time.Second)
	submit(t, s, "metrics-high-1", "echo two", model.RiskHigh, c.Now())
	submit(t, s, "metrics-high-2", "rm -rf /srv/secret-path", model.RiskLow, c.Now()) // high by the classifier
	submit(t, s, "metrics-med-1", "echo three", model.RiskMedium, c.Now())
	c.Advance(90 * time.Second)

	// Decisions under the observer: an approval 2m after its submit, a
	// denial, a refused second approval; one not under it is not counted.
	octx := m.Observe(ctx)
	if _, err := s.Consume(octx, "metrics-low-1", "metrics-low-1", operatorActor); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deny(octx, "metrics-high-1", operatorActor, "no"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(octx, "metrics-low-1", "metrics-low-1", operatorActor); err == nil {
		t.Fatal("approved twice")
	}
	if _, err := s.Deny(ctx, "metrics-med-1", operatorActor, "unobserved"); err != nil {
		t.Fatal(err)
	}
	// What runs the decision path but decides nothing is not a decision.
	m.ObserveDecision(storage.Decision{Event: "rm -rf /", ID: "x", Outcome: "weird"})
	m.ObserveDecision(storage.Decision{Event: storage.EventDelivery, ID: "metrics-high-2", Outcome: storage.OutcomeOK})
	m.ObserveDecision(storage.Decision{Event: storage.EventSubmit, ID: "metrics-high-2", Outcome: storage.OutcomeOK})
	m.ObserveDecision(storage.Decision{Event: storage.EventVote, ID: "metrics-high-2", Outcome: storage.OutcomeOK})

	m.Delivery("hook", "page", "delivered")
	m.Delivery("hook", "escalation", "retry")
	m.Delivery("hook", "escalation", "failed")
	m.Delivery("push", "resolved", "cancelled")
	m.Delivery("https://secret.example/token", "page\x1b[31m", "delivered")
	m.SSHSessions(3)

	deadline := time.Now().Add(5 * time.Second)
	for {
		fams = scrape(t, base)
		if n, _ := value(fams, DecisionSeconds); n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	expect(t, fams, 0, OpenProposals, "risk", "low")
	expect(t, fams, 0, OpenProposals, "risk", "medium")
	expect(t, fams, 1, OpenProposals, "risk", "high")
	expect(t, fams, 0, OpenProposals, "risk", "unknown")
	expect(t, fams, 90, OldestOpenSeconds)
	expect(t, fams, 1, Decisions, "event", "approve", "outcome", "ok")
	expect(t, fams, 1, Decisions, "event", "approve", "outcome", "refused")
	expect(t, fams, 1, Decisions, "event", "deny", "outcome", "ok")
	expect(t, fams, 0, Decisions, "event", "expire", "outcome", "ok")
	expect(t, fams, 1, Decisions, "event", storage.EventVote, "outcome", storage.OutcomeOK)
	for _, f := range fams[Decisions].GetMetric() {
		for _, l := range f.GetLabel() {
			if l.GetName() == "event" && !events[l.GetValue()] {
				t.Errorf("%s counts event %q", Decisions, l.GetValue())
			}
		}
	}
	expect(t, fams, 2, DecisionSeconds)
	h := fams[DecisionSeconds].GetMetric()[0].GetHistogram()
	if h.GetSampleSum() != 120+90 {
		t.Errorf("decision seconds sum %v, want 210 (2m and 1m30s)", h.GetSampleSum())
	}
	var bounds []float64
	for _, b := range h.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
		if b.GetUpperBound() == 60 && b.GetCumulativeCount() != 0 || b.GetUpperBound() == 120 && b.GetCumulativeCount() != 2 {
			t.Errorf("bucket le=%v: %d", b.GetUpperBound(), b.GetCumulativeCount())
		}
	}
	if len(bounds) != len(DecisionBuckets)+1 || bounds[0] != 5 || bounds[len(DecisionBuckets)-1] != 3600 || !math.IsInf(bounds[len(bounds)-1], 1) {
		t.Errorf("buckets %v", bounds)
	}
	expect(t, fams, 1, Deliveries, "channel", "hook", "kind", "page", "outcome", "delivered")
	expect(t, fams, 1, Deliveries, "channel", "hook", "kind", "escalation", "outcome", "retry")
	expect(t, fams, 1, Deliveries, "channel", "hook", "kind", "escalation", "outcome", "failed")
	expect(t, fams, 1, Deliveries, "channel", "push", "kind", "resolved", "outcome", "cancelled")
	expect(t, fams, 1, Deliveries, "channel", Other, "kind", Other, "outcome", "delivered")
	expect(t, fams, 2, DeliveryFailures, "channel", "hook")
	expect(t, fams, 0, DeliveryFailures, "channel", "push")
	expect(t, fams, 3, SSHSessions)
	checkLabels(t, fams, "hook", "push")

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, secret := range []string{"metrics-low-1", "secret-session", "secret-path", "secret.example", "alice", "\x1b"} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the scrape holds %q", secret)
		}
	}

	resp, err = http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, body)
	}

	// A store that cannot be read fails the scrape (Prometheus's up says
	// so) rather than serve a stale count.
	s.Close()
	if _, status, _ := tryScrape(base); status != http.StatusInternalServerError {
		t.Errorf("scrape of a closed store: %d", status)
	}
}

// Without a store or serve's sessions, those metrics are absent; a nil
// *Metrics (no --metrics-listen) takes every call.
func TestMetricsOptional(t *testing.T) {
	m := New(Options{Version: "dev"})
	defer m.Close()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		switch f.GetName() {
		case OpenProposals, OldestOpenSeconds, SSHSessions:
			t.Errorf("%s without its source", f.GetName())
		}
	}
	m.ObserveDecision(storage.Decision{Event: storage.EventApprove, ID: "x", Outcome: storage.OutcomeOK}) // no store: untimed
	var none *Metrics
	none.ObserveDecision(storage.Decision{})
	none.Delivery("a", "b", "c")
	none.SSHSessions(1)
	none.Close()
}

func TestMetricsCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:9464": true, ":9464": true, "localhost:0": true, "[::1]:9464": true,
		"9464": false, "127.0.0.1": false, "127.0.0.1:99999": false, "127.0.0.1:http": false,
		"host name:1": false, "": false, "a:b:c": false,
	} {
		if err := CheckAddr(addr); (err == nil) != ok {
			t.Errorf("CheckAddr(%q) = %v", addr, err)
		}
	}
	if _, err := Listen("127.0.0.1:99999", http.NotFoundHandler()); err == nil {
		t.Error("listened on port 99999")
	}
}

// A notifier's metrics (DecisionsFromStore): the decisions the store's
// audit log records, made through another handle on the file (as another
// process makes them), each counted once by event and outcome and timed
// from its submit; what came before the metrics started is not counted
// (a restart is a reset, never a burst of history); deliveries are not
// decisions.
func TestMetricsDecisionsFromStore(t *testing.T) {
	ctx := context.Background()
	s, c := testStore(t)
	other, err := storage.Open(ctx, s.Path(), storage.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	// History: decided before the notifier started.
	submit(t, other, "tail-old-x1", "echo old", model.RiskLow, c.Now())
	c.Advance(time.Minute)
	if _, err := other.Deny(ctx, "tail-old-x1", operatorActor, "old"); err != nil {
		t.Fatal(err)
	}

	m := New(Options{Store: s, Version: "test", Channels: []string{"hook"}, DecisionsFromStore: true})
	defer m.Close()
	base := listen(t, m)
	fams := scrape(t, base)
	expect(t, fams, 0, Decisions, "event", "deny", "outcome", "ok")
	expect(t, fams, 0, DecisionSeconds)

	start := c.Now()
	submit(t, other, "tail-new-1", "echo one", model.RiskLow, start)
	submit(t, other, "tail-new-2", "echo two", model.RiskMedium, start)
	submit(t, other, "tail-new-3", "rm -rf /srv/secret-path", model.RiskHigh, start)
	c.Advance(2 * time.Minute)
	if _, err := other.Consume(ctx, "tail-new-1", "tail-new-1", operatorActor); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Consume(ctx, "tail-new-1", "tail-new-1", operatorActor); err == nil {
		t.Fatal("approved twice")
	}
	c.Advance(time.Minute)
	if _, err := other.Deny(ctx, "tail-new-2", operatorActor, "no"); err != nil {
		t.Fatal(err)
	}
	// A delivery is audited on the same path: not a decision.
	k := storage.DeliveryKey{ApprovalID: "tail-new-3", Kind: "page", Channel: "hook"}
	if _, err := other.AddDeliveries(ctx, []storage.DeliveryKey{k}); err != nil {
		t.Fatal(err)
	}
	if d, err := other.ClaimDelivery(ctx, k, "n1", time.Minute); err != nil || d == nil {
		t.Fatalf("claim: %v %v", d, err)
	}
	notifier := model.Actor{Surface: model.SurfaceNotify, Name: "notifier@test"}
	if err := other.FinishDelivery(ctx, k, "n1", storage.DeliveryResult{State: storage.DeliveryDelivered}, notifier); err != nil {
		t.Fatal(err)
	}
	// Observed in this process: not counted twice.
	m.ObserveDecision(storage.Decision{Event: storage.EventApprove, ID: "tail-new-1", Outcome: storage.OutcomeOK})

	for range 2 { // a second scrape counts nothing again
		fams = scrape(t, base)
		expect(t, fams, 1, Decisions, "event", "approve", "outcome", "ok")
		expect(t, fams, 1, Decisions, "event", "approve", "outcome", "refused")
		expect(t, fams, 1, Decisions, "event", "deny", "outcome", "ok")
		expect(t, fams, 0, Decisions, "event", "expire", "outcome", "ok")
		expect(t, fams, 2, DecisionSeconds)
		if sum := fams[DecisionSeconds].GetMetric()[0].GetHistogram().GetSampleSum(); sum != 120+180 {
			t.Errorf("decision seconds sum %v, want 300 (2m and 3m)", sum)
		}
		for _, f := range fams[Decisions].GetMetric() {
			for _, l := range f.GetLabel() {
				if l.GetName() == "event" && !events[l.GetValue()] {
					t.Errorf("%s counts event %q", Decisions, l.GetValue())
				}
			}
		}
		checkLabels(t, fams, "hook")
	}

	// Expired by `expire` in another process: counted.
	c.Advance(2 * time.Hour)
	if ids, err := other.ExpireDue(ctx, operatorActor); err != nil || len(ids) == 0 {
		t.Fatalf("expire: %v %v", ids, err)
	}
	fams = scrape(t, base)
	expect(t, fams, 1, Decisions, "event", "expire", "outcome", "ok")

	// A restart starts from the log's end: nothing counted at once.
	m2 := New(Options{Store: s, Version: "test", DecisionsFromStore: true})
	defer m2.Close()
	fams2, err := m2.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range fams2 {
		byName[f.GetName()] = f
	}
	expect(t, byName, 0, Decisions, "event", "approve", "outcome", "ok")
	expect(t, byName, 0, Decisions, "event", "expire", "outcome", "ok")
	expect(t, byName, 0, DecisionSeconds)

	// A log that cannot be read fails the scrape.
	other.Close()
	s.Close()
	if _, status, _ := tryScrape(base); status != http.StatusInternalServerError {
		t.Errorf("scrape of a closed store: %d", status)
	}
}
