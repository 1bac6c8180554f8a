package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/notify"
	"github.com/approve-tui/approve-tui/risk"
)

func (a *app) configCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "The configuration file: check it, print an example",
		Long: `approve-tui's configuration file holds what belongs to an installation:
paging channels and routes, the open hint, and defaults for serve's flags
and approve's tier-2 flags (a flag given on the command line wins).

The file is --config, else $APPROVE_TUI_CONFIG, else
$XDG_CONFIG_HOME/approve-tui/config.yaml (~/.config/approve-tui/config.yaml).
No file at that default place means the defaults; a file named by --config
or $APPROVE_TUI_CONFIG must exist.

  approve-tui config check     load it, resolve every secret, say what it does
  approve-tui config example   print a commented example to start from

Secrets are never in the file: each is named by an environment variable or a
file that holds it, and never printed. A file that holds channels says which
programs the notifier runs: it is refused when its group or others may write
it, or when neither the user running nor root owns it (chmod 600 FILE).`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(a.configCheckCmd(), a.configExampleCmd())
	return c
}

func (a *app) configCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check [--config FILE] [--json]",
		Short: "Check the configuration file: problems, secrets, what it does",
		Long: `Load the configuration file, check everything in it, resolve every secret it
names, and say what it does: each channel with its secrets (whether each is
set or readable, and its length; never its value), each route in words.

Problems are listed as FILE:LINE:COLUMN: what is wrong and what is wanted,
all of them, on stderr. A secret file is a problem unless only its owner
may read or write it, its owner is you or root, and no other user may
write a directory on its way (as for the file itself when it holds
channels, and an exec channel's program). URLs are printed without their
secrets: a query's values, and the path of a URL that is itself the
secret, as …redacted…
(https://hooks.slack.com/services/…redacted…).

The trust: section (signed approvals) is checked too: which mode is in
force and why, the trust file as approve, deny and policy set load it (a
problem when another user may change it) and as run and the hooks would
load it run as you, the ssh-agent at $SSH_AUTH_SOCK and whether the trust
file knows its keys, and policy signers the trust file does not name
(warnings).

The system configuration, where it exists, is
  ` + a.systemPath + `
(its path is fixed when approve-tui is built). Its trust: section is what
run, the hooks, submit and wait use, whatever this file says, and what the
operators' commands use unless this file has its own: check says where
each side's trust settings come from, and that whoever writes this file
can turn trust off when there is no system configuration.

With --json, one object: path, found, ok, problems, warnings, channels,
routes, open_hint, park_window ("1h", "off"), settings and trust (mode,
why, allowed_signers, checks, problems, warnings, agent_keys,
system_config, sources).
` + exitCodesWhere(map[int]string{ExitError: "problems: the file is missing (when named), unreadable or invalid, or a secret does not resolve"},
			ExitOK, ExitError, ExitUsage),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.configCheck() },
	}
}

func (a *app) configExampleCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "example",
		Short: "Print a commented example configuration file",
		Long: `Print a commented example configuration file: every key explained, the five
channel types (ntfy, slack, pagerduty, webhook, exec) and two routes. It
passes "approve-tui config check" once its environment variables are set.

  approve-tui config example > ~/.config/approve-tui/config.yaml
` + exitCodes(ExitOK, ExitUsage),
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			a.printf("%s", config.Example)
			return nil
		},
	}
}

// configPath is the file to read: --config, else $APPROVE_TUI_CONFIG, else
// the default place ("" when there is no home to find it in). named: the
// file was named, and must exist.
func (a *app) configPath() (path string, named bool) {
	if a.config != "" {
		return a.config, true
	}
	return config.DefaultPathFrom(a.getenv)
}

// readConfig loads the file configPath names: the defaults when there is
// no file at the default place (found false).
func (a *app) readConfig() (f *config.File, path string, found bool, err error) {
	if a.as != nil {
		// Another surface's session (SSH) reads no file of this host's.
		if a.config != "" {
			return nil, "", false, usageErrorf("--config is not taken here")
		}
		return config.Defaults(), "", false, nil
	}
	path, named := a.configPath()
	if path == "" {
		return config.Defaults(), "", false, nil
	}
	f, err = config.Load(path)
	if !named && errors.Is(err, fs.ErrNotExist) {
		return config.Defaults(), path, false, nil
	}
	return f, path, err == nil, err
}

// loadConfig is the configuration for a command that uses it: the file's,
// or the defaults when there is none at the default place. A file with
// problems is an error (exit 1) that gives the first and says how to see
// them all.
//
// Where there is a system configuration file it is put under the file
// (config.File.Anchor): its trust settings are in force on the agent side,
// and on the operator side unless the user's file has its own (a warning
// on stderr, once, says when the user's differ). One that cannot be relied
// on or has problems is an error: nothing is let through until it is
// fixed.
func (a *app) loadConfig() (*config.File, error) {
	f, _, _, err := a.readConfig()
	if err == nil {
		var sys *config.System
		if sys, err = a.systemConfig(); err == nil {
			f.Anchor(sys)
			if w := f.TrustWarning(a.trustSide); w != "" && !a.trustWarned {
				a.trustWarned = true
				a.note("approve-tui: warning: %s", line(w))
			}
		}
	}
	var ce *config.Error
	switch {
	case errors.As(err, &ce):
		msg := ce.Format(ce.Problems[0])
		if n := len(ce.Problems) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more)", n)
		}
		return nil, exitf(ExitError, "%s; see approve-tui config check", msg)
	case err != nil:
		var ee *exitError
		if errors.As(err, &ee) {
			return nil, err
		}
		return nil, exitf(ExitError, "%v", err)
	}
	return f, nil
}

// configFlags gives cmd's flags not set on the command line the values
// of the file's sections (serve, tier2): a flag given wins. Commands call
// it at the start of RunE.
func (a *app) configFlags(cmd *cobra.Command, sections ...string) error {
	f, err := a.loadConfig()
	if err != nil {
		return err
	}
	return applyConfigFlags(cmd, f, sections...)
}

// applyConfigFlags is configFlags with the file f, loaded already.
func applyConfigFlags(cmd *cobra.Command, f *config.File, sections ...string) error {
	for _, sec := range sections {
		for _, s := range f.Settings(sec) {
			fl := cmd.Flags().Lookup(s.Flag)
			if fl == nil || fl.Changed {
				continue
			}
			// Value.Set, not Flags().Set: the flag stays "not given".
			if err := fl.Value.Set(s.Value); err != nil {
				return exitf(ExitError, "%s:%d:%d: %s: %s: %v", f.Path, s.Line, s.Column, s.Section, s.Key, err)
			}
		}
	}
	return nil
}

// configCheck is config check.
func (a *app) configCheck() error {
	f, path, found, err := a.readConfig()
	var ce *config.Error
	if err != nil && !errors.As(err, &ce) {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		if a.json {
			a.printf("%s\n", model.NewJSONObject().OptStr("path", line(path)).Bool("found", false).Bool("ok", false).
				Raw("problems", model.JSONObjects([]*model.JSONObject{model.NewJSONObject().Int("line", 0).Int("column", 0).Str("message", line(err.Error()))})).
				Strs("warnings", nil))
			return exitf(ExitError, "")
		}
		return exitf(ExitError, "%v", err)
	}
	if ce != nil {
		probs := make([]*model.JSONObject, len(ce.Problems))
		for i, p := range ce.Problems {
			probs[i] = problemJSON(p)
		}
		if a.json {
			a.printf("%s\n", model.NewJSONObject().Str("path", line(path)).Bool("found", true).Bool("ok", false).
				Raw("problems", model.JSONObjects(probs)).Strs("warnings", nil))
			return exitf(ExitError, "")
		}
		for _, p := range ce.Problems {
			a.note("%s", line(ce.Format(p)))
		}
		return exitf(ExitError, "%s: %s", line(path), human.CountNo(len(ce.Problems), "problem"))
	}
	// The system configuration's trust settings, where there is one, are
	// what the agent side uses (and the operator side, unless this file
	// has its own).
	sys, sysErr := a.systemConfig()
	if !found {
		where := "no config file (no $HOME or $XDG_CONFIG_HOME to look in)"
		if path != "" {
			where = "no config file at " + line(path)
		}
		f = config.Defaults()
		f.Anchor(sys)
		tr := a.checkTrust(f, sysErr)
		if sys == nil && sysErr == nil {
			tr.why = "no configuration file: nothing is signed or checked"
		}
		if a.json {
			probs := make([]*model.JSONObject, len(tr.systemProblems))
			for i, p := range tr.systemProblems {
				probs[i] = problemJSON(config.Problem{Message: p})
			}
			a.printf("%s\n", model.NewJSONObject().OptStr("path", line(path)).Bool("found", false).Bool("ok", len(probs) == 0).
				Raw("problems", model.JSONObjects(probs)).Strs("warnings", tr.warnings).Raw("channels", "[]").Raw("routes", "[]").
				Raw("open_hint", "null").Str("park_window", parkWindowText(f)).Bool("include_command", true).Raw("settings", "[]").
				Obj("trust", tr.json()))
			if len(probs) > 0 {
				return exitf(ExitError, "")
			}
			return nil
		}
		a.printf("%s: the defaults apply (no channels, no routes)\n", where)
		a.printf("start one with: approve-tui config example > %s\n", line(path))
		a.printTrust(tr)
		if n := len(tr.systemProblems); n > 0 {
			for _, p := range tr.systemProblems {
				a.note("%s", p)
			}
			return exitf(ExitError, "%s", human.CountNo(n, "problem"))
		}
		return nil
	}
	f.Anchor(sys)
	return a.configReport(f, sysErr)
}

// printTrust writes the trust report's words.
func (a *app) printTrust(tr *trustReport) {
	a.printf("trust: %s: %s\n", tr.mode, line(tr.why))
	for _, l := range tr.lines {
		a.printf("  %s\n", l)
	}
	for _, w := range tr.warnings {
		a.printf("  warning: %s\n", w)
	}
}

// secretCheck is one secret resolved for check.
type secretCheck struct {
	channel string
	named   config.NamedSecret
	status  config.SecretStatus
	// shown is a secret URL as it may be printed (config.RedactURL):
	// scheme, host and …redacted…; "" for other secrets.
	shown string
}

// configReport says what a loaded file does and resolves its secrets.
func (a *app) configReport(f *config.File, sysErr error) error {
	ferr := &config.Error{Path: f.Path}
	// A secret's value never shows, even where the file's text holds it
	// (an exec command's argument).
	secrets := notify.NewSecrets(f, nil)
	checks := map[string][]secretCheck{}
	for _, name := range f.ChannelNames() {
		for _, ns := range f.Channels[name].Secrets() {
			st := ns.Secret.Status()
			shown := ""
			if ns.Role == "url" && st.OK {
				if v, err := ns.Secret.Resolve(); err == nil {
					shown = config.RedactURL(v, true)
				}
			}
			checks[name] = append(checks[name], secretCheck{name, ns, st, shown})
			if !st.OK {
				ferr.Problems = append(ferr.Problems, config.Problem{Line: ns.Secret.Line, Column: ns.Secret.Column,
					Message: fmt.Sprintf("channel %s: %s (%s): %s", name, ns.Role, ns.Secret.Key, st.Problem)})
			}
		}
	}
	tr := a.checkTrust(f, sysErr)
	for _, p := range tr.problems {
		ferr.Problems = append(ferr.Problems, config.Problem{Line: f.Trust.Line, Column: 1, Message: "trust: " + p})
	}
	if a.json {
		probs := make([]*model.JSONObject, len(ferr.Problems))
		for i, p := range ferr.Problems {
			probs[i] = problemJSON(p)
		}
		for _, p := range tr.systemProblems {
			probs = append(probs, problemJSON(config.Problem{Message: p}))
		}
		var chans, routes, sets []*model.JSONObject
		for _, name := range f.ChannelNames() {
			chans = append(chans, channelJSON(f.Channels[name], checks[name], secrets))
		}
		for _, r := range f.Routes {
			routes = append(routes, routeJSON(r))
		}
		for _, sec := range []string{"serve", "tier2"} {
			for _, s := range f.Settings(sec) {
				sets = append(sets, model.NewJSONObject().Str("section", s.Section).Str("key", s.Key).
					Str("flag", "--"+s.Flag).Str("value", line(s.Value)).Int("line", int64(s.Line)))
			}
		}
		a.printf("%s\n", model.NewJSONObject().Str("path", line(f.Path)).Bool("found", true).Bool("ok", len(probs) == 0).
			Raw("problems", model.JSONObjects(probs)).Strs("warnings", tr.warnings).
			Raw("channels", model.JSONObjects(chans)).Raw("routes", model.JSONObjects(routes)).
			OptStr("open_hint", line(f.OpenHint)).Str("park_window", parkWindowText(f)).Bool("include_command", f.IncludeCommand).Raw("settings", model.JSONObjects(sets)).
			Obj("trust", tr.json()))
		if len(probs) > 0 {
			return exitf(ExitError, "")
		}
		return nil
	}

	a.printf("config %s\n", line(f.Path))
	a.printf("channels (%d):\n", len(f.Channels))
	if len(f.Channels) == 0 {
		a.printf("  none: no page is sent\n")
	}
	for _, name := range f.ChannelNames() {
		a.printf("  %s\n", secrets.RedactConfigured(channelWords(f.Channels[name], checks[name])))
	}
	a.printf("routes (%d):\n", len(f.Routes))
	if len(f.Routes) == 0 {
		a.printf("  none: no proposal is paged\n")
	}
	for i, r := range f.Routes {
		a.printf("  %s\n", routeWords(i+1, r))
	}
	if f.OpenHint != "" {
		a.printf("open hint: %s\n", line(f.OpenHint))
	} else {
		a.printf("open hint: none (pages do not say how to open a proposal)\n")
	}
	a.printf("park window: %s\n", parkWindowWords(f))
	var sets []string
	for _, sec := range []string{"serve", "tier2"} {
		for _, s := range f.Settings(sec) {
			sets = append(sets, fmt.Sprintf("  %s %s: %s (line %d; --%s on the command line wins)", s.Section, s.Key, line(s.Value), s.Line, s.Flag))
		}
	}
	if len(sets) > 0 {
		a.printf("settings (%d):\n%s\n", len(sets), strings.Join(sets, "\n"))
	}
	a.printTrust(tr)
	for _, p := range tr.systemProblems {
		a.note("%s", p)
	}
	if n := len(ferr.Problems) + len(tr.systemProblems); n > 0 {
		for _, p := range ferr.Problems {
			a.note("%s", line(ferr.Format(p)))
		}
		return exitf(ExitError, "%s: %s", line(f.Path), human.CountNo(n, "problem"))
	}
	a.printf("ok\n")
	return nil
}

// parkWindowText is the park window of run and the hooks as the file sets
// it: a duration, or "off".
func parkWindowText(f *config.File) string {
	if w := f.ParkWindow(); w > 0 {
		return human.Written(w)
	}
	return "off"
}

// parkWindowWords says the park window and where it comes from.
func parkWindowWords(f *config.File) string {
	if !f.Park.Set {
		return parkWindowText(f) + " (the default; --park-window on run and the hooks wins)"
	}
	what := parkWindowText(f) + fmt.Sprintf(" (line %d; --park-window on run and the hooks wins)", f.Park.Line)
	if f.ParkWindow() < 0 {
		what += ": a hook or run that stops waiting withdraws its proposal, and an approval given later lets nothing through"
	}
	return what
}

// channelWords is one channel in words, its secrets by their status.
func channelWords(c *config.Channel, secrets []secretCheck) string {
	parts := []string{c.Type}
	switch c.Type {
	case config.TypeExec:
		parts = append(parts, "runs "+line(agent.QuoteArgs(c.Command)))
	case config.TypePagerDuty:
		parts = append(parts, "events to "+line(config.RedactURL(c.EventsURL, false)))
	default:
		if c.URL != "" {
			parts = append(parts, "to "+line(config.RedactURL(c.URL, false)))
		}
	}
	for _, s := range secrets {
		w := s.named.Role + " " + line(s.status.String())
		if s.shown != "" {
			w += " → " + line(s.shown)
		}
		parts = append(parts, w)
	}
	if c.IncludeCommand {
		parts = append(parts, "with the command")
	} else {
		parts = append(parts, "without the command")
	}
	parts = append(parts, "timeout "+human.Written(c.Timeout))
	if c.Parallel > 0 {
		parts = append(parts, fmt.Sprintf("%d at once", c.Parallel))
	}
	return fmt.Sprintf("%s (line %d): %s", c.Name, c.Line, strings.Join(parts, ", "))
}

// routeWords is one route in words: "route 1 (line 7): risk ≥ high,
// session agent:prod:* → 0s push, hook; 5m pager; reminder 2m before
// expiry".
func routeWords(n int, r *config.Route) string {
	var match []string
	if r.Match.Risk != "" {
		match = append(match, "risk ≥ "+string(r.Match.Risk))
	}
	if r.Match.Session != "" {
		match = append(match, "session "+line(r.Match.Session))
	}
	if r.Match.Requester != "" {
		match = append(match, "requester "+line(r.Match.Requester))
	}
	if len(match) == 0 {
		match = []string{"every proposal"}
	}
	steps := make([]string, len(r.Steps))
	for i, s := range r.Steps {
		steps[i] = human.Written(s.After) + " " + strings.Join(s.Notify, ", ")
	}
	out := fmt.Sprintf("route %d (line %d): %s → %s", n, r.Line, strings.Join(match, ", "), strings.Join(steps, "; "))
	if r.RemindBeforeExpiry > 0 {
		out += fmt.Sprintf("; reminder %s before expiry", human.Written(r.RemindBeforeExpiry))
	}
	return out
}

func problemJSON(p config.Problem) *model.JSONObject {
	return model.NewJSONObject().Int("line", int64(p.Line)).Int("column", int64(p.Column)).Str("message", line(p.Message))
}

func channelJSON(c *config.Channel, secrets []secretCheck, sec *notify.Secrets) *model.JSONObject {
	ss := make([]*model.JSONObject, len(secrets))
	for i, s := range secrets {
		o := model.NewJSONObject().Str("role", s.named.Role).Str("key", s.named.Secret.Key).
			OptStr("env", line(s.named.Secret.Env)).OptStr("file", line(s.named.Secret.File)).
			Bool("ok", s.status.OK)
		if s.status.OK {
			o.Int("length", int64(s.status.Length))
		} else {
			o.Raw("length", "null")
		}
		ss[i] = o.OptStr("problem", line(s.status.Problem)).
			OptStr("shown", line(s.shown))
	}
	argv := make([]string, len(c.Command))
	for i, w := range c.Command {
		argv[i] = line(sec.RedactConfigured(w))
	}
	o := model.NewJSONObject().Str("name", c.Name).Str("type", c.Type).Int("line", int64(c.Line)).
		OptStr("url", line(redactOpt(c.URL))).OptStr("events_url", line(redactOpt(c.EventsURL)))
	if c.Type == config.TypeExec {
		o.Strs("command", argv)
	} else {
		o.Raw("command", "null")
	}
	if c.Parallel > 0 {
		o.Int("parallel", int64(c.Parallel))
	} else {
		o.Raw("parallel", "null")
	}
	return o.Bool("include_command", c.IncludeCommand).Str("timeout", human.Written(c.Timeout)).
		Raw("secrets", model.JSONObjects(ss))
}

// redactOpt is a plain URL as config check prints it (config.RedactURL),
// "" when there is none.
func redactOpt(raw string) string {
	if raw == "" {
		return ""
	}
	return config.RedactURL(raw, false)
}

func routeJSON(r *config.Route) *model.JSONObject {
	steps := make([]*model.JSONObject, len(r.Steps))
	for i, s := range r.Steps {
		steps[i] = model.NewJSONObject().Str("after", human.Written(s.After)).
			Int("after_seconds", int64(s.After.Seconds())).Strs("notify", s.Notify).Int("line", int64(s.Line))
	}
	o := model.NewJSONObject().Int("line", int64(r.Line)).OptStr("risk", string(r.Match.Risk)).
		OptStr("session", line(r.Match.Session)).OptStr("requester", line(r.Match.Requester)).
		Raw("steps", model.JSONObjects(steps))
	if r.RemindBeforeExpiry > 0 {
		o.Str("remind_before_expiry", human.Written(r.RemindBeforeExpiry))
	} else {
		o.Raw("remind_before_expiry", "null")
	}
	return o
}

// riskContext is the judgement's context on this surface for a command run
// in cwd: config.(*File).RiskContext of the configuration file with the
// store in use (--db). Every surface that judges builds it here. A file
// with problems is an error: what it adds cannot be known.
func (a *app) riskContext(cwd string) (risk.Context, error) {
	if a.judging != nil {
		c := *a.judging
		c.Cwd = cwd
		return c, nil
	}
	f, err := a.loadConfig()
	if err != nil {
		return risk.Context{}, err
	}
	c := f.RiskContext(cwd, a.db)
	// The configuration file where it would be read, even when there is
	// none yet: an agent that creates it changes what is sensitive.
	if a.as == nil {
		if p, _ := a.configPath(); p != "" {
			if abs, err := filepath.Abs(p); err == nil && !slices.Contains(c.Paths, abs) {
				c.Paths = append(c.Paths, abs)
			}
		}
	}
	return c, nil
}
