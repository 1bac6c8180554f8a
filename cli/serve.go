package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/metrics"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/notify"
	"github.com/approve-tui/approve-tui/serve"
)

func (a *app) serveCmd() *cobra.Command {
	var (
		cfg         serve.Config
		withNotify  bool
		metricsAddr string
		bellFlag    string
	)
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR] [--host-key PATH] [--approvers FILE] [--watchers FILE]",
		Short: "Serve the console over SSH, to the keys of two authorized_keys files",
		Long: `Serve the console over SSH (public keys only). Each person is a key in one of
two files in OpenSSH authorized_keys format, named by the key's comment:
--approvers may decide, --watchers may only look (the store refuses and
audits their attempts). An unknown key is refused; password and
keyboard-interactive authentication are not offered. The files are re-read
when they change: a removed key's sessions end within a second or two, and
a session whose role changed ends (reconnecting gives the new role).

Every decision is made as "NAME (SHA256:fingerprint) via ssh"; sessions are
recorded in the audit log (start, end). A session with a terminal gets the
console, with its own colour profile and size: ssh -t host for the list,
ssh -t host open ID to start on one proposal (the form a page gives), ssh -t
host follow NAME to follow someone's console. Without one (ssh host list
--json), it may run list, show, audit, lockouts, and deny for approvers:
ssh sends the command as one string, which the server splits as a shell
would, so a reason of several words needs quotes that reach it (ssh host
'deny ID --reason "no piping to sh"'). approve needs the console's typed-id
gate and is refused there; open and follow need a terminal (ssh -t).

The host key is ed25519, made on first start (mode 0600) at --host-key,
by default ` + "`$XDG_DATA_HOME/approve-tui/ssh_host_ed25519`" + `; its
fingerprint is logged at start, for clients to pin. SIGTERM or SIGINT stop
accepting, tell every session, and wait up to --shutdown-grace.

--notify runs the notifier of approve-tui notify in the server's process,
on the same configuration file (one without routes is refused), until the
server stops. --metrics-listen ADDR serves Prometheus metrics at
http://ADDR/metrics (and /healthz): sessions, decisions, open proposals.
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable, ExitInterrupted),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.configFlags(cmd, "serve"); err != nil { // the file's serve: for flags not given
				return err
			}
			if err := checkMetricsAddr(metricsAddr); err != nil {
				return err
			}
			bell, err := bellLevel(bellFlag)
			if err != nil {
				return err
			}
			cfg.Bell = bell
			// The sessions' consoles keep the newest signed policy seen in
			// this process's user's own state directory.
			cfg.PolicyMemory, _ = a.policyMemory()
			var ns *notifySetup
			if withNotify {
				var err error
				if ns, err = a.notifyConfig(); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Every session reads: a pool to match (PostgreSQL).
			a.readers = min(max(cfg.MaxSessions/4, 4), 32)
			s, err := a.open(ctx, false)
			if err != nil {
				return err
			}
			defer s.Close()
			cfg.Store = s
			db := a.db
			// Sessions judge as this process does (its configuration's
			// sensitive paths and programs), not with the defaults, and
			// decide under its trust configuration.
			judging, err := a.riskContext("")
			if err != nil {
				return err
			}
			trusting := s.Trust()
			cfg.Run = func(ctx context.Context, args []string, actor model.Actor, stdin io.Reader, stdout, stderr io.Writer) int {
				// A deny signs with the agent the session's client
				// forwarded (ssh -A), never with this process's.
				return executeSession(ctx, args, db, actor, session{Judging: &judging, Trust: trusting, Agent: serve.ForwardedAgent(ctx)}, stdin, stdout, stderr)
			}
			cfg.Log = a.serveLog()
			mo := metrics.Options{Store: s, SSH: true}
			if ns != nil {
				mo.Channels = ns.channels()
			}
			m := newMetrics(metricsAddr, mo)
			defer m.Close()
			if m != nil {
				cfg.OnSessions, cfg.OnDecision = m.SSHSessions, m.ObserveDecision
			}
			srv, err := serve.New(cfg)
			if err != nil {
				return usageErrorf("%v", err)
			}
			l, err := net.Listen("tcp", cfg.Listen)
			if err != nil {
				return exitf(ExitError, "listen %s: %v", cfg.Listen, err)
			}
			stopMetrics, err := a.serveMetrics(metricsAddr, m)
			if err != nil {
				l.Close()
				return err
			}
			defer stopMetrics()
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			var notifierDone chan error
			if ns != nil {
				lg := cfg.Log.WithPrefix("approve-tui serve notify")
				n := a.newNotifier(ns, s, notify.DefaultLease, func(format string, args ...any) {
					lg.Info(line(fmt.Sprintf(format, args...)))
				})
				nctx := sctx
				if m != nil {
					n.OnDelivery = m.Delivery
					nctx = m.Observe(nctx)
				}
				lg.Info("notifier started", "id", n.ID, "routes", len(ns.cfg.Routes), "channels", len(ns.cfg.Channels))
				notifierDone = make(chan error, 1)
				go func() {
					err := n.Run(nctx)
					if err != nil {
						cancel() // the server stops with it
					}
					notifierDone <- err
				}()
			}
			err = srv.Serve(sctx, l)
			cancel()
			if notifierDone != nil {
				if nerr := <-notifierDone; nerr != nil && !errors.Is(nerr, context.Canceled) {
					return fmt.Errorf("the notifier stopped: %w", nerr)
				}
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", ":2222", "`address` to listen on")
	f.StringVar(&cfg.HostKeyPath, "host-key", serve.DefaultHostKeyPath(), "ed25519 host key `path` (made on first start)")
	f.StringVar(&cfg.Approvers, "approvers", "", "authorized_keys `file` of the people who may decide")
	f.StringVar(&cfg.Watchers, "watchers", "", "authorized_keys `file` of the people who may only look")
	f.IntVar(&cfg.MaxSessions, "max-sessions", 64, "sessions at once, in all")
	f.IntVar(&cfg.MaxSessionsPerKey, "max-sessions-per-key", 8, "sessions at once, per key")
	f.DurationVar(&cfg.IdleTimeout, "idle-timeout", 30*time.Minute, "end a connection with no traffic for this long")
	f.DurationVar(&cfg.LoginGrace, "login-grace", 30*time.Second, "time to authenticate before the connection is closed")
	f.IntVar(&cfg.AuthFailures, "auth-failures", 20, "refused keys from one address within --auth-backoff before it is refused outright")
	f.DurationVar(&cfg.AuthBackoff, "auth-backoff", time.Minute, "how long an address that failed too often is refused")
	f.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", 10*time.Second, "on SIGTERM/SIGINT, how long sessions get to end")
	f.StringVar(&bellFlag, "bell", "", "ring each session's terminal when a proposal at or above this `risk` arrives (--bell alone: high)")
	f.Lookup("bell").NoOptDefVal = string(model.RiskHigh)
	f.BoolVar(&withNotify, "notify", false, "run the notifier (approve-tui notify) in the server, on the configuration file's routes")
	addMetricsFlag(cmd, &metricsAddr)
	return cmd
}

// serveLog is serve's logger, on stderr. charmbracelet/log makes its
// renderer with termenv's colour cache, which asks a terminal for its
// colours and waits up to 5 s for each answer that a terminal held by a
// script or a service manager never sends; the log's colours do not
// depend on them. It gets stderr without its file descriptor, so that
// nothing is asked, and the colour profile stderr's terminal has
// (colorProfile).
func (a *app) serveLog() *log.Logger {
	l := log.NewWithOptions(struct{ io.Writer }{a.rawErr}, log.Options{ReportTimestamp: true, Prefix: "approve-tui serve"})
	l.SetColorProfile(a.colorProfile(a.rawErr))
	return l
}
