package cli

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// A real notifier process's /metrics, scraped over HTTP: the decisions
// other processes (the CLI) make on its store are counted once each, by
// event and outcome, and timed from their submit; the history before it
// started is not counted; its deliveries are deliveries, not decisions;
// a restarted notifier starts from zero, not with the history at once.
func TestNotifyE2EMetricsCountTheStoresDecisions(t *testing.T) {
	r := newNotifyRig(t, "")
	hook := newReceiver(t, "webhook", "hook")
	hook.secret = "whsec-test-metrics"
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret}
	r.writeConfig(fmt.Sprintf(notifyBenchConfig, hook.url()))
	old := r.submit("--", "rm", "-rf", "/srv/history")
	r.run("deny", old, "--reason", "before the notifier")

	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	n := r.startNotifier("--metrics-listen", addr)
	eventually(t, 10*time.Second, "/healthz", func() bool { return healthz(addr) })
	fams, _ := scrapeMetrics(t, addr)
	wantMetric(t, fams, 0, "approve_tui_decisions_total", "event", "deny", "outcome", "ok")

	a := r.submit("--", "rm", "-rf", "/srv/approve-me")
	d := r.submit("--", "rm", "-rf", "/srv/deny-me")
	hook.waitFor("both pages", 10*time.Second, func([]nhit) bool { return hook.has(a, "page") && hook.has(d, "page") })
	r.run("approve", a, "--confirm", a)
	r.run("deny", d, "--reason", "no")
	hook.waitFor("both resolutions", 15*time.Second, func([]nhit) bool { return hook.has(a, "resolved") && hook.has(d, "resolved") })
	fams = metricsUntil(t, addr, "the resolutions counted", func(f map[string]*dto.MetricFamily) bool {
		v, _ := metricValue(f, "approve_tui_deliveries_total", "channel", "hook", "kind", "resolved", "outcome", "delivered")
		return v == 2
	})
	wantMetric(t, fams, 1, "approve_tui_decisions_total", "event", "approve", "outcome", "ok")
	wantMetric(t, fams, 1, "approve_tui_decisions_total", "event", "deny", "outcome", "ok")
	wantMetric(t, fams, 2, "approve_tui_deliveries_total", "channel", "hook", "kind", "page", "outcome", "delivered")
	h := fams["approve_tui_decision_seconds"]
	if h == nil || h.GetMetric()[0].GetHistogram().GetSampleCount() != 2 || h.GetMetric()[0].GetHistogram().GetSampleSum() <= 0 ||
		h.GetMetric()[0].GetHistogram().GetSampleSum() > 120 {
		t.Errorf("decision seconds: %v", h)
	}
	for _, m := range fams["approve_tui_decisions_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "event" && l.GetValue() != "approve" && l.GetValue() != "deny" && l.GetValue() != "expire" && l.GetValue() != "vote" {
				t.Errorf("decisions_total counts event %q", l.GetValue())
			}
		}
	}
	// Scraped again: nothing counted twice.
	fams, _ = scrapeMetrics(t, addr)
	wantMetric(t, fams, 1, "approve_tui_decisions_total", "event", "deny", "outcome", "ok")

	// Restarted: from zero, not with the history.
	n.stop()
	eventually(t, 10*time.Second, "the old metrics server gone", func() bool { return !healthz(addr) })
	r.startNotifier("--metrics-listen", addr)
	eventually(t, 10*time.Second, "/healthz again", func() bool { return healthz(addr) })
	fams, _ = scrapeMetrics(t, addr)
	wantMetric(t, fams, 0, "approve_tui_decisions_total", "event", "approve", "outcome", "ok")
	wantMetric(t, fams, 0, "approve_tui_decisions_total", "event", "deny", "outcome", "ok")
}
