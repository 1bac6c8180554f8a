package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/notify"
	"github.com/approve-tui/approve-tui/storage"
)

func (a *app) statsCmd() *cobra.Command {
	var window time.Duration
	cmd := &cobra.Command{
		Use:   "stats [--window 24h] [--json]",
		Short: "A summary: open proposals, decisions, time to decide, deliveries, notifiers",
		Long: `A summary of the store, for a look without a dashboard: the open proposals
by effective risk and the oldest one's wait; the decisions of the last
--window (24h) as the audit log records them (approved, denied, expired,
refused; a proposal past its expiry is expired whether or not "approve-tui
expire" has marked it yet) and the median and 90th percentile of the time
from submit to approval or denial; the deliveries of that window by channel
(delivered, failed, cancelled, and retrying now, with the last error); and
the notifiers running, with their trouble.

--json prints one object: at, window_seconds, open {total, by_risk,
oldest}, decisions {total, approved, denied, expired, expired_unswept,
refused, by_event, decide_seconds {count, median, p90}}, deliveries
{delivered, failed, cancelled, retrying, by_channel}, notifiers.

Every read is bounded: the audit log is read from its end back to the
start of the window only.
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if window <= 0 {
				return usageErrorf("--window must be longer than 0 (e.g. 24h)")
			}
			ctx := cmd.Context()
			s, err := a.open(ctx, false)
			if err != nil {
				return err
			}
			defer s.Close()
			r, err := readStats(cmd, s, window)
			if err != nil {
				return err
			}
			r.secrets = a.statsSecrets()
			if a.json {
				a.printf("%s\n", r.json())
				return nil
			}
			a.printf("%s", r.text())
			return nil
		},
	}
	cmd.Flags().DurationVar(&window, "window", 24*time.Hour, "how far back decisions and deliveries are counted")
	return cmd
}

// statsReport is what stats prints.
type statsReport struct {
	now       time.Time
	window    time.Duration
	open      storage.OpenStats
	oldestID  string
	oldestAt  time.Time
	decisions storage.DecisionStats
	channels  []storage.ChannelDeliveries
	notifiers []storage.Notifier
	// secrets redact the stored errors and troubles once more: the
	// configuration's secrets when its file is readable here, and what
	// looks like a secret (rows an older or another notifier wrote).
	secrets *notify.Secrets
}

// statsSecrets are the configuration's secrets for stats to redact with
// (nil: the file cannot be read here; the shapes of secrets still are).
func (a *app) statsSecrets() *notify.Secrets {
	f, _, found, err := a.readConfig()
	if err != nil || !found {
		return nil
	}
	return notify.NewSecrets(f, nil)
}

// redact is a stored error as stats may print it.
func (r *statsReport) redact(s string) string { return r.secrets.Redact(s) }

func readStats(cmd *cobra.Command, s *storage.Store, window time.Duration) (*statsReport, error) {
	ctx := cmd.Context()
	r := &statsReport{now: s.Now(), window: window}
	var err error
	if r.open, err = s.OpenByRisk(ctx); err != nil {
		return nil, err
	}
	if r.open.Total > 0 {
		var ok bool
		if r.oldestID, r.oldestAt, ok, err = s.OldestOpen(ctx); err != nil {
			return nil, err
		} else if !ok {
			r.oldestID = ""
		}
	}
	since := r.now.Add(-window)
	if r.decisions, err = s.DecisionsSince(ctx, since); err != nil {
		return nil, err
	}
	if r.channels, err = s.DeliveriesSince(ctx, since); err != nil {
		return nil, err
	}
	if r.notifiers, err = s.Notifiers(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// decisionTotals are the window's decisions by what they did (total:
// approved, denied and expired), and the attempts the store refused.
type decisionTotals struct{ approved, denied, expired, refused, total int }

func (r *statsReport) totals() decisionTotals {
	var t decisionTotals
	for _, c := range r.decisions.Counts {
		switch {
		case c.Outcome == storage.OutcomeRefused:
			t.refused += c.N
			continue // not a decision made
		case c.Outcome != storage.OutcomeOK:
			continue
		case c.Event == storage.EventApprove:
			t.approved += c.N
		case c.Event == storage.EventDeny:
			t.denied += c.N
		case c.Event == storage.EventExpire:
			t.expired += c.N
		}
		t.total += c.N
	}
	return t
}

type deliveryTotals struct{ delivered, failed, cancelled, retrying int }

func (r *statsReport) deliveryTotals() deliveryTotals {
	var t deliveryTotals
	for _, c := range r.channels {
		t.delivered += c.Delivered
		t.failed += c.Failed
		t.cancelled += c.Cancelled
		t.retrying += c.Retrying
	}
	return t
}

// statsErrorCells bounds a channel's last error in the text.
const statsErrorCells = 64

// text is the report for a human: a heading per part, its details
// indented under it; every string from the store sanitised to one line.
func (r *statsReport) text() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	win := human.Window(r.window)

	w("Open proposals: %d", r.open.Total)
	risks := make([]string, 0, len(storage.RiskLevels))
	for i := len(storage.RiskLevels) - 1; i >= 0; i-- {
		rl := storage.RiskLevels[i]
		risks = append(risks, fmt.Sprintf("%s %d", rl, r.open.ByRisk[rl]))
	}
	w("  %s", strings.Join(risks, ", "))
	if r.open.Partial {
		w("  (counted over the first %d open rows only)", r.open.Total)
	}
	if r.oldestID != "" {
		age := "?"
		if !r.oldestAt.IsZero() {
			age = human.Duration(max(0, r.now.Sub(r.oldestAt)))
		}
		w("  oldest: %s, waiting %s", cut(line(r.oldestID), 40), age)
	}

	t := r.totals()
	w("Decisions in the last %s: %d", win, t.total)
	w("  approved %d, denied %d, expired %d, refused %d", t.approved, t.denied, t.expired, t.refused)
	if n := r.decisions.Unswept; n > 0 {
		w("  (%d of the expired still say pending in the table: `approve-tui expire` marks them)", n)
	}
	if n := len(r.decisions.Latencies); n > 0 {
		more := ""
		if r.decisions.Partial {
			more = ", the newest only"
		}
		w("  submit to decision: median %s, p90 %s (%d approved or denied%s)",
			statsDur(storage.Quantile(r.decisions.Latencies, 0.5)), statsDur(storage.Quantile(r.decisions.Latencies, 0.9)), n, more)
	} else {
		w("  submit to decision: none approved or denied")
	}

	d := r.deliveryTotals()
	w("Deliveries in the last %s: delivered %d, failed %d, cancelled %d; retrying %d",
		win, d.delivered, d.failed, d.cancelled, d.retrying)
	for _, c := range r.channels {
		w("  %s: delivered %d, failed %d, cancelled %d, retrying %d", cut(line(c.Channel), 30), c.Delivered, c.Failed, c.Cancelled, c.Retrying)
		if c.LastError != "" {
			w("    last error: %s", cut(line(r.redact(c.LastError)), statsErrorCells))
		}
	}

	if len(r.notifiers) == 0 {
		w("Notifiers running: none")
	} else {
		w("Notifiers running: %d", len(r.notifiers))
	}
	for _, n := range r.notifiers {
		w("  %s on %s (pid %d), up %s, heartbeat %s", cut(line(n.Notifier), 40), cut(line(n.Host), 30), n.PID,
			human.Duration(max(0, r.now.Sub(model.FromEpoch(n.StartedAt)))), relTime(n.HeartbeatAt, r.now))
		if n.Trouble != "" {
			since := ""
			if n.TroubleSince > 0 {
				since = " for " + human.Duration(max(0, r.now.Sub(model.FromEpoch(n.TroubleSince))))
			}
			w("    trouble%s: %s", since, cut(line(r.redact(n.Trouble)), statsErrorCells))
		}
	}
	return b.String()
}

// statsDur is a duration of seconds, to the second.
func statsDur(sec float64) string { return human.Duration(time.Duration(sec * float64(time.Second))) }

// json is the report as one JSON object; every string from the store
// sanitised to one line.
func (r *statsReport) json() string {
	byRisk := model.NewJSONObject()
	for _, rl := range storage.RiskLevels {
		byRisk.Int(string(rl), int64(r.open.ByRisk[rl]))
	}
	open := model.NewJSONObject().Int("total", int64(r.open.Total)).Obj("by_risk", byRisk).Bool("partial", r.open.Partial)
	if r.oldestID != "" {
		o := model.NewJSONObject().Str("approval_id", line(r.oldestID))
		if !r.oldestAt.IsZero() {
			o.Num("created_at", model.Epoch(r.oldestAt)).Num("age_seconds", max(0, r.now.Sub(r.oldestAt).Round(time.Millisecond).Seconds()))
		}
		open.Obj("oldest", o)
	} else {
		open.Raw("oldest", "null")
	}

	t := r.totals()
	events := make([]*model.JSONObject, 0, len(r.decisions.Counts))
	for _, c := range r.decisions.Counts {
		events = append(events, model.NewJSONObject().Str("event", line(c.Event)).Str("outcome", line(c.Outcome)).Int("count", int64(c.N)))
	}
	lat := r.decisions.Latencies
	decide := model.NewJSONObject().Int("count", int64(len(lat)))
	if len(lat) > 0 {
		decide.Num("median", storage.Quantile(lat, 0.5)).Num("p90", storage.Quantile(lat, 0.9))
	} else {
		decide.Raw("median", "null").Raw("p90", "null")
	}
	decide.Bool("partial", r.decisions.Partial)
	decisions := model.NewJSONObject().Int("total", int64(t.total)).Int("approved", int64(t.approved)).Int("denied", int64(t.denied)).
		Int("expired", int64(t.expired)).Int("expired_unswept", int64(r.decisions.Unswept)).Int("refused", int64(t.refused)).
		Raw("by_event", model.JSONObjects(events)).Obj("decide_seconds", decide)

	d := r.deliveryTotals()
	chans := make([]*model.JSONObject, 0, len(r.channels))
	for _, c := range r.channels {
		chans = append(chans, model.NewJSONObject().Str("channel", line(c.Channel)).Int("delivered", int64(c.Delivered)).
			Int("failed", int64(c.Failed)).Int("cancelled", int64(c.Cancelled)).Int("retrying", int64(c.Retrying)).
			Str("last_error", line(r.redact(c.LastError))))
	}
	deliveries := model.NewJSONObject().Int("delivered", int64(d.delivered)).Int("failed", int64(d.failed)).
		Int("cancelled", int64(d.cancelled)).Int("retrying", int64(d.retrying)).Raw("by_channel", model.JSONObjects(chans))

	ns := make([]*model.JSONObject, 0, len(r.notifiers))
	for _, n := range r.notifiers {
		o := model.NewJSONObject().Str("notifier", line(n.Notifier)).Str("host", line(n.Host)).Int("pid", int64(n.PID)).
			Num("started_at", n.StartedAt).Num("heartbeat_at", n.HeartbeatAt).Str("trouble", line(r.redact(n.Trouble)))
		if n.TroubleSince > 0 {
			o.Num("trouble_since", n.TroubleSince)
		} else {
			o.Raw("trouble_since", "null")
		}
		ns = append(ns, o)
	}
	return model.NewJSONObject().Num("at", model.Epoch(r.now)).Num("window_seconds", r.window.Seconds()).
		Obj("open", open).Obj("decisions", decisions).Obj("deliveries", deliveries).Raw("notifiers", model.JSONObjects(ns)).String()
}
