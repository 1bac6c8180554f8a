package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/notify"
	"github.com/spf13/cobra"
)

func (a *app) notifyCmd() *cobra.Command {
	var (
		once  bool
		lease time.Duration
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
ID); nothing in it can approve: the decision is made in the console, by
typing the id.

Each delivery is claimed in the store before it is sent, so that two
notifiers on one store (one per host, for availability) send each step
once; a failing service is tried again with back-off (its Retry-After
honoured) for as long as the proposal is open, and each delivery ends
audited as delivered or failed. A notifier killed mid-send leaves a claim
that runs out after --lease (a minute); the delivery is then sent again, once, under
the same delivery id (PagerDuty's dedup_key is the proposal's id).

--once runs one pass and exits (for tests and cron).
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			if len(cfg.Routes) == 0 {
				return fmt.Errorf("%s has no routes: nothing would be paged (approve-tui config example shows how)", orDash(line(cfg.Path)))
			}
			senders := map[string]notify.Sender{}
			for name, ch := range cfg.Channels {
				s, err := notify.NewSender(ch, notify.Options{Version: Build.resolved().Version})
				if err != nil {
					return fmt.Errorf("channel %s: %w", line(name), err)
				}
				senders[name] = s
			}
			st, err := a.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer st.Close()
			actor := model.LocalActor(model.SurfaceNotify)
			actor.Name = "notifier@" + model.HostName()
			if lease < 5*time.Second {
				return usageErrorf("--lease must be at least 5s (longer than one delivery takes)")
			}
			n := &notify.Notifier{Store: st, Config: cfg, Senders: senders, Actor: actor, ID: notify.NewID(), Lease: lease,
				Logf: func(format string, args ...any) {
					fmt.Fprintf(a.err, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
				}}
			if once {
				return n.Tick(cmd.Context())
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(a.err, "approve-tui notify: %s on %s, %d route(s), %d channel(s)\n", n.ID, line(st.Path()), len(cfg.Routes), len(cfg.Channels))
			return n.Run(ctx)
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "one pass, then exit")
	cmd.Flags().DurationVar(&lease, "lease", notify.DefaultLease, "how long a claimed delivery is this notifier's before another may send it")
	return cmd
}
