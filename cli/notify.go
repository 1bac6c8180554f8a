package cli

import (
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/metrics"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/notify"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

func (a *app) notifyCmd() *cobra.Command {
	var (
		once        bool
		lease       time.Duration
		metricsAddr string
	)
	cmd := &cobra.Command{
		Use:   "notify [--config FILE] [--once]",
		Short: "Page operators when a proposal waits: pages, escalations, reminders, resolutions",
		Long: `The notifier: it watches the store (SQLite or PostgreSQL) and, for each
open proposal the configuration file's first matching route takes, sends
its steps' pages (after: 0s), escalations (after: 5m...) and a reminder
before expiry (remind_before_expiry), and, once the proposal is decided or
expires, a resolution to every channel a page reached (who approved or
denied, or "expired unanswered").

A page says what waits and how to open it (open_hint, e.g. ssh -t ... open
ID; given only for an id that is a plain token of A-Za-z0-9_-); nothing in
it can approve: the decision is made in the console, by typing the id. The
command text goes out unless a channel sets include_command: false, with
every configured secret (and what has a secret's shape) redacted.

Each channel sends at most its parallel (4) deliveries at once, each within
its timeout (10s): a receiver that hangs delays only its own channel. Every
error and log line is redacted with every channel's secrets, and an exec
channel's command runs without any of them in its environment.

Each delivery is claimed in the store before it is sent, so that two
notifiers on one store (one per host, for availability) send each step
once; a failing service is tried again with back-off (its Retry-After
honoured) for as long as the proposal is open, and each delivery ends
audited as delivered, failed, or cancelled (not sent: the proposal was
decided or expired first). Pages count steps from 1 (the page), as the
console does. A notifier killed mid-send leaves a claim
that runs out after --lease (a minute); the delivery is then sent again,
once, under the same delivery id (PagerDuty's dedup_key is the proposal's
id).

--once runs one pass and exits (for tests and cron). --metrics-listen ADDR
serves Prometheus metrics at http://ADDR/metrics (and /healthz) while it
runs: open proposals by risk, the decisions the store records from when it
started (whoever made them), deliveries by channel.
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if lease < 5*time.Second {
				return usageErrorf("--lease must be at least 5s (longer than one delivery takes)")
			}
			if err := checkMetricsAddr(metricsAddr); err != nil {
				return err
			}
			if once && metricsAddr != "" {
				return usageErrorf("--metrics-listen serves a notifier that keeps running: not with --once")
			}
			ns, err := a.notifyConfig()
			if err != nil {
				return err
			}
			st, err := a.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer st.Close()
			var logMu sync.Mutex // deliveries log from their own goroutines
			n := a.newNotifier(ns, st, lease, func(format string, args ...any) {
				logMu.Lock()
				defer logMu.Unlock()
				fmt.Fprintf(a.err, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
			})
			if once {
				return n.Tick(cmd.Context())
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The notifier decides nothing: its decision metrics are the
			// store's, read from the audit log.
			m := newMetrics(metricsAddr, metrics.Options{Store: st, Channels: ns.channels(), DecisionsFromStore: true})
			defer m.Close()
			stopMetrics, err := a.serveMetrics(metricsAddr, m)
			if err != nil {
				return err
			}
			defer stopMetrics()
			if m != nil {
				n.OnDelivery = m.Delivery
			}
			fmt.Fprintf(a.err, "approve-tui notify: %s on %s, %d route(s), %d channel(s)\n", n.ID, line(st.Path()), len(ns.cfg.Routes), len(ns.cfg.Channels))
			return n.Run(ctx)
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "one pass, then exit")
	cmd.Flags().DurationVar(&lease, "lease", notify.DefaultLease, "how long a claimed delivery is this notifier's before another may send it")
	addMetricsFlag(cmd, &metricsAddr)
	return cmd
}

// notifySetup is what a notifier is made of besides its store: the
// configuration file and a sender per channel.
type notifySetup struct {
	cfg     *config.File
	senders map[string]notify.Sender
	secrets *notify.Secrets
}

// channels are the configured channel names, sorted.
func (ns *notifySetup) channels() []string {
	out := make([]string, 0, len(ns.cfg.Channels))
	for name := range ns.cfg.Channels {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// notifyConfig reads the configuration file for a notifier (notify, and
// serve --notify): a file without routes is refused (nothing would be
// paged), and each channel's sender is made (a secret that cannot be read
// fails here, before the store is opened).
func (a *app) notifyConfig() (*notifySetup, error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, err
	}
	if len(cfg.Routes) == 0 {
		return nil, fmt.Errorf("%s has no routes: nothing would be paged (approve-tui config example shows how)", orDash(line(cfg.Path)))
	}
	// Every channel's errors are redacted with every channel's secrets,
	// and an exec channel's command gets none of them.
	secrets := notify.NewSecrets(cfg, nil)
	senders := map[string]notify.Sender{}
	for name, ch := range cfg.Channels {
		s, err := notify.NewSender(ch, notify.Options{Version: Build.resolved().Version, Secrets: secrets})
		if err != nil {
			return nil, fmt.Errorf("channel %s: %w", line(name), err)
		}
		senders[name] = s
	}
	return &notifySetup{cfg: cfg, senders: senders, secrets: secrets}, nil
}

// newNotifier is the notifier of ns on st, as notifier@HOST, logging
// through logf: the one notify runs, and serve --notify.
func (a *app) newNotifier(ns *notifySetup, st *storage.Store, lease time.Duration, logf func(format string, args ...any)) *notify.Notifier {
	actor := model.LocalActor(model.SurfaceNotify)
	actor.Name = "notifier@" + model.HostName()
	return &notify.Notifier{Store: st, Config: ns.cfg, Senders: ns.senders, Secrets: ns.secrets, Actor: actor, ID: notify.NewID(), Lease: lease, Logf: logf}
}
