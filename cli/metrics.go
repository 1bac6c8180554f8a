package cli

import (
	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/metrics"
)

// addMetricsFlag adds --metrics-listen ADDR (notify, serve).
func addMetricsFlag(cmd *cobra.Command, addr *string) {
	cmd.Flags().StringVar(addr, "metrics-listen", "", "serve Prometheus metrics at http://`ADDR`/metrics, e.g. 127.0.0.1:9464")
}

// checkMetricsAddr refuses a --metrics-listen that is not HOST:PORT: a
// usage error, before anything is opened.
func checkMetricsAddr(addr string) error {
	if addr == "" {
		return nil
	}
	if err := metrics.CheckAddr(addr); err != nil {
		return usageErrorf("--metrics-listen %v", err)
	}
	return nil
}

// newMetrics makes the metrics of o (its Version this build's) when
// --metrics-listen is given; nil when not (every method of a nil
// *metrics.Metrics does nothing).
func newMetrics(addr string, o metrics.Options) *metrics.Metrics {
	if addr == "" {
		return nil
	}
	o.Version = Build.resolved().Version
	return metrics.New(o)
}

// serveMetrics serves m on addr until stop is called; with no m it does
// nothing. An address that cannot be listened on is an error (exit 1), as
// serve's --listen; one that is not HOST:PORT a usage error.
func (a *app) serveMetrics(addr string, m *metrics.Metrics) (stop func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	if err := checkMetricsAddr(addr); err != nil {
		return nil, err
	}
	srv, err := metrics.Listen(addr, m.Handler())
	if err != nil {
		return nil, exitf(ExitError, "--metrics-listen %s: %v", line(addr), err)
	}
	a.note("approve-tui: metrics at http://%s/metrics", srv.Addr())
	return func() { _ = srv.Close() }, nil
}
