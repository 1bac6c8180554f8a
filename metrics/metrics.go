// Package metrics is approve-tui's Prometheus metrics (notify and serve
// --metrics-listen): a registry of its own, never the global one, served
// at /metrics beside a plain /healthz.
//
// Every label takes its value from a bounded set: risk levels, the store's
// event names and outcomes, delivery kinds and outcomes, and the channel
// names of the configuration file. A value outside its set reads "other";
// no approval id, command, session key, actor or secret is ever a label.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Metric names.
const (
	OpenProposals     = "approve_tui_open_proposals"
	OldestOpenSeconds = "approve_tui_oldest_open_seconds"
	Decisions         = "approve_tui_decisions_total"
	DecisionSeconds   = "approve_tui_decision_seconds"
	Deliveries        = "approve_tui_deliveries_total"
	DeliveryFailures  = "approve_tui_delivery_failures_total"
	SSHSessions       = "approve_tui_ssh_sessions"
	BuildInfo         = "approve_tui_build_info"
	// RanWithoutApproval counts the calls run without approval (notify:
	// from the store's audit log).
	RanWithoutApproval = "approve_tui_ran_without_approval_total"
)

// Other is the label value of anything outside a label's set.
const Other = "other"

// DecisionBuckets are approve_tui_decision_seconds' buckets: a human's
// pace, from 5 seconds to an hour.
var DecisionBuckets = []float64{5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// The label sets.
var (
	// events are the decisions: the store's other events (submit,
	// delivery, execution, session, ...) are not counted as decisions.
	events           = set(storage.EventApprove, storage.EventDeny, storage.EventExpire, storage.EventVote)
	outcomes         = set(storage.OutcomeOK, storage.OutcomeRefused, storage.OutcomeFailed)
	kinds            = set("page", "escalation", "reminder", "resolved", "vote", "refused", "ran_without_approval")
	deliveryOutcomes = set("delivered", "retry", "failed", "cancelled")
)

func set(vs ...string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

func bounded(v string, in map[string]bool) string {
	if in[v] {
		return v
	}
	return Other
}

// Options are what New exports.
type Options struct {
	// Store is read at each scrape for the open proposals (nil: those
	// two metrics are not exported), and for the submit time of the
	// proposals this process decides.
	Store *storage.Store
	// Version is approve_tui_build_info's version label.
	Version string
	// Channels are the configured channel names: the only values of the
	// channel label (a delivery to another reads "other").
	Channels []string
	// SSH exports approve_tui_ssh_sessions (serve).
	SSH bool
	// ReadTimeout bounds a scrape's read of the store (5s when zero).
	ReadTimeout time.Duration
	// DecisionsFromStore (notify) counts the decisions the store's audit
	// log records, whichever process made them, instead of the decisions
	// made under Observe in this process (serve), and the calls it records
	// as run without approval (approve_tui_ran_without_approval_total). Like a log tailer, it
	// starts at the log's end when the metrics are made: decisions made
	// before are not counted, so that a restart is a counter reset, never
	// a burst of old decisions. Needs Store.
	DecisionsFromStore bool
}

// Metrics is one process's metrics.
type Metrics struct {
	reg      *prometheus.Registry
	store    *storage.Store
	channels map[string]bool

	decisions        *prometheus.CounterVec
	decisionSeconds  prometheus.Histogram
	deliveries       *prometheus.CounterVec
	deliveryFailures *prometheus.CounterVec
	sessions         prometheus.Gauge

	// decided carries the ids of the proposals this process approved or
	// denied to the goroutine that reads their submit time: the observer
	// is on the decision's own path and must not wait for a read.
	decided   chan string
	tail      *auditTail
	closeOnce sync.Once
	done      chan struct{}
	stop      context.CancelFunc
}

// decidedQueue bounds the decisions waiting for their submit time; past
// it one is left out of the histogram rather than wait.
const decidedQueue = 256

// New makes the metrics and their registry.
func New(o Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), store: o.Store, channels: set(o.Channels...)}
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: Decisions,
		Help: decisionsHelp(o.DecisionsFromStore)},
		[]string{"event", "outcome"})
	m.decisionSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: DecisionSeconds,
		Help:    decisionSecondsHelp(o.DecisionsFromStore),
		Buckets: DecisionBuckets})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: Deliveries,
		Help: "Deliveries this process's notifier finished or put back, by channel, kind (page, escalation, reminder, resolved, vote, refused, ran_without_approval) and outcome (delivered, retry, failed, cancelled)."},
		[]string{"channel", "kind", "outcome"})
	m.deliveryFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: DeliveryFailures,
		Help: "Delivery attempts that failed (tried again later, or given up), by channel."},
		[]string{"channel"})
	decisionMetrics := []prometheus.Collector{m.decisions, m.decisionSeconds}
	if o.DecisionsFromStore && o.Store != nil {
		m.tail = newDecisionTail(o.Store, m.decisions, m.decisionSeconds, o.ReadTimeout)
		decisionMetrics = []prometheus.Collector{m.tail, newRanTail(o.Store, o.ReadTimeout)}
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: BuildInfo, Help: "approve-tui's version: 1."}, []string{"version"})
	build.WithLabelValues(o.Version).Set(1)
	m.reg.MustRegister(decisionMetrics...)
	m.reg.MustRegister(m.deliveries, m.deliveryFailures, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, ev := range []string{storage.EventApprove, storage.EventDeny, storage.EventExpire} {
		for _, out := range []string{storage.OutcomeOK, storage.OutcomeRefused, storage.OutcomeFailed} {
			m.decisions.WithLabelValues(ev, out)
		}
	}
	for _, ch := range o.Channels {
		m.deliveryFailures.WithLabelValues(ch)
	}
	if o.SSH {
		m.sessions = prometheus.NewGauge(prometheus.GaugeOpts{Name: SSHSessions, Help: "SSH sessions open now."})
		m.reg.MustRegister(m.sessions)
	}
	if o.Store != nil {
		m.registerOpen(o)
	}
	if o.Store != nil && m.tail == nil {
		ctx, stop := context.WithCancel(context.Background())
		m.decided, m.done, m.stop = make(chan string, decidedQueue), make(chan struct{}), stop
		go m.timeDecisions(ctx)
	}
	return m
}

// registerOpen registers the open proposals' collector.
func (m *Metrics) registerOpen(o Options) {
	timeout := o.ReadTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	m.reg.MustRegister(&openCollector{store: o.Store, timeout: timeout,
		open: prometheus.NewDesc(OpenProposals, "Open proposals (pending, or awaiting a tier-2 phrase, and not expired) by effective risk.",
			[]string{"risk"}, nil),
		oldest: prometheus.NewDesc(OldestOpenSeconds, "Seconds the oldest open proposal has waited (0 when none is open).", nil, nil)})
}

func decisionsHelp(fromStore bool) string {
	if fromStore {
		return "Decisions the store's audit log recorded since this process started, made by any process, by event (approve, deny, expire, vote) and outcome (ok, refused)."
	}
	return "Runs of the store's decision path in this process, by event (approve, deny, expire, vote) and outcome (ok, refused, failed)."
}

func decisionSecondsHelp(fromStore bool) string {
	if fromStore {
		return "Seconds from submit to decision of the proposals approved or denied since this process started, by any process."
	}
	return "Seconds from submit to decision of the proposals approved or denied in this process."
}

// Registry is the metrics' own registry.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Observe returns ctx with m as the store's decision observer: every
// decision made under it is counted.
func (m *Metrics) Observe(ctx context.Context) context.Context {
	return storage.WithDecisionObserver(ctx, m.ObserveDecision)
}

// ObserveDecision counts one run of the decision path (an observer of
// storage.WithDecisionObserver); an approval or denial is also timed from
// its submit, by a read that does not hold up the caller.
func (m *Metrics) ObserveDecision(d storage.Decision) {
	// Only decisions: a delivery, a submit, an execution report... also
	// run the store's one path, but decide nothing. With decisions read
	// from the store, the log counts them (once).
	if m == nil || m.tail != nil || !events[d.Event] {
		return
	}
	m.decisions.WithLabelValues(bounded(d.Event, events), bounded(d.Outcome, outcomes)).Inc()
	if m.decided == nil || d.Outcome != storage.OutcomeOK || (d.Event != storage.EventApprove && d.Event != storage.EventDeny) || d.ID == "" {
		return
	}
	select {
	case m.decided <- d.ID:
	default: // the reader is behind: this one goes untimed
	}
}

// timeDecisions reads each decided proposal's row and observes the time
// from its submit to its decision.
func (m *Metrics) timeDecisions(ctx context.Context) {
	defer close(m.done)
	for {
		var id string
		select {
		case <-ctx.Done():
			return
		case id = <-m.decided:
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rec, err := m.store.Get(rctx, id)
		cancel()
		// A tier-2 approval's first step only arms it: still open.
		if err != nil || rec.EffectiveStatus.Open() || rec.CreatedAt <= 0 {
			continue
		}
		at := m.store.Now()
		if rec.ConsumedAt != nil {
			at = model.FromEpoch(*rec.ConsumedAt)
		}
		if d := at.Sub(model.FromEpoch(rec.CreatedAt)); d >= 0 {
			m.decisionSeconds.Observe(d.Seconds())
		}
	}
}

// Delivery counts how one delivery ended (the notifier's OnDelivery).
func (m *Metrics) Delivery(channel, kind, outcome string) {
	if m == nil {
		return
	}
	ch := Other
	if m.channels[channel] {
		ch = channel
	}
	outcome = bounded(outcome, deliveryOutcomes)
	m.deliveries.WithLabelValues(ch, bounded(kind, kinds), outcome).Inc()
	if outcome == "retry" || outcome == "failed" {
		m.deliveryFailures.WithLabelValues(ch).Inc()
	}
}

// SSHSessions sets the sessions open now (serve's OnSessions).
func (m *Metrics) SSHSessions(open int) {
	if m == nil || m.sessions == nil {
		return
	}
	m.sessions.Set(float64(open))
}

// Close stops the reads of decided proposals; call it before the store
// is closed.
func (m *Metrics) Close() {
	if m == nil || m.stop == nil {
		return
	}
	m.closeOnce.Do(func() {
		m.stop()
		<-m.done
	})
}

// openCollector reads the open proposals at each scrape: one grouped
// statement (storage.OpenByRisk). A failed read fails the scrape, so that
// Prometheus's up says so rather than a stale count.
type openCollector struct {
	store        *storage.Store
	timeout      time.Duration
	open, oldest *prometheus.Desc
}

func (c *openCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.open
	ch <- c.oldest
}

func (c *openCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	o, err := c.store.OpenByRisk(ctx)
	if err != nil {
		err = errors.New(model.Sanitize(err.Error(), model.Line))
		ch <- prometheus.NewInvalidMetric(c.open, err)
		ch <- prometheus.NewInvalidMetric(c.oldest, err)
		return
	}
	for _, r := range storage.RiskLevels {
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(o.ByRisk[r]), string(r))
	}
	age := 0.0
	if !o.Oldest.IsZero() {
		age = max(0, c.store.Now().Sub(o.Oldest).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
}

// Handler serves /metrics (the registry, in Prometheus's text or
// OpenMetrics format as asked) and /healthz ("ok").
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		MaxRequestsInFlight: 4, Timeout: 10 * time.Second}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// CheckAddr refuses what cannot be an address to listen on: HOST:PORT
// (HOST may be empty: every interface), PORT a number.
func CheckAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT (for example 127.0.0.1:9464)", addr)
	}
	if strings.ContainsAny(host, " \t/") {
		return fmt.Errorf("%q: %q is not a host name or address", addr, host)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: the port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}

// Server is the metrics' HTTP server.
type Server struct {
	srv  *http.Server
	l    net.Listener
	done chan struct{}
}

// Listen starts serving h on addr (checked by CheckAddr first).
func Listen(addr string, h http.Handler) (*Server, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{l: l, done: make(chan struct{}), srv: &http.Server{Handler: h,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10}}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(l)
	}()
	return s, nil
}

// Addr is the address the server listens on (the port chosen, for :0).
func (s *Server) Addr() string { return s.l.Addr().String() }

// Close stops the server: requests in flight get up to a couple of
// seconds.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	return err
}
