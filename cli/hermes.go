package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/integrations/hermes"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"
)

// hermesOperatorMin is the least time approvals.timeout must leave an
// operator once `hook hermes` has taken agent.HermesMargin off it.
const hermesOperatorMin = 30 * time.Second

// hermesDefaultTimeout is Hermes' approvals.timeout when config.yaml has
// none, in seconds.
const hermesDefaultTimeout = 300

// hermesVersionWait bounds `BINARY --version` in hermes doctor.
const hermesVersionWait = 10 * time.Second

func (a *app) hermesCmd() *cobra.Command {
	h := &cobra.Command{
		Use:   "hermes",
		Short: "Hermes: install approve-tui's approval transport plugin, check the setup",
		Long: `Make approve-tui Hermes' approval transport: Hermes hands each approval
prompt to approve-tui's plugin, which waits for an operator's decision in
approve-tui ("approve-tui hook hermes") and answers Hermes before its
approvals.timeout runs out.

  approve-tui hermes install   copy the plugin into DIR/plugins/approve-tui,
                               make the store ready, print the config lines
  approve-tui hermes doctor    check the plugin, config.yaml, the binary and
                               the store; say how to fix each problem

DIR is --hermes-home, else $HERMES_HOME, else ~/.hermes. Neither command
edits Hermes' config.yaml.`,
		Args: cobra.NoArgs,
	}
	h.AddCommand(a.hermesInstallCmd(), a.hermesDoctorCmd())
	return h
}

// hermesHome is --hermes-home, else $HERMES_HOME, else ~/.hermes, made
// absolute.
func (a *app) hermesHome(flag string) (string, error) {
	dir := flag
	if dir == "" {
		dir = a.getenv("HERMES_HOME")
	}
	if dir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", usageErrorf("no home directory to find ~/.hermes in (%v): pass --hermes-home", err)
		}
		dir = filepath.Join(h, ".hermes")
	}
	return filepath.Abs(dir)
}

// hermesHomeFlag adds --hermes-home to cmd.
func hermesHomeFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "hermes-home", "", "Hermes' home `directory` (default $HERMES_HOME, else ~/.hermes)")
	_ = cmd.MarkFlagDirname("hermes-home")
}

// hermesFix is the command that fixes something in home: cmd, with
// --hermes-home when it was given, sanitised for printing.
func hermesFix(homeFlag, home string, argv ...string) string {
	if homeFlag != "" {
		argv = append(argv, "--hermes-home", home)
	}
	return line(agent.QuoteArgs(argv))
}

func (a *app) hermesInstallCmd() *cobra.Command {
	var homeFlag string
	cmd := &cobra.Command{
		Use:   "install [--hermes-home DIR]",
		Short: "Install approve-tui's Hermes plugin, make its store ready, print the config lines",
		Long: `Install approve-tui's Hermes plugin and make its store ready:

  1. Copy the plugin built into this binary (plugin.yaml, __init__.py,
     README.md) into DIR/plugins/approve-tui/, each file written to a
     temporary file and renamed over the old one; files already current are
     left alone. It says whether it installed, updated or found it current.
  2. Make the store ready as "approve-tui init" does. The store is --db,
     else $APPROVE_TUI_DB, else DIR/state.db: Hermes' own SQLite file, to
     which init adds the approval table gateway_approvals and approve-tui's
     own tables, nothing else (it creates the file when missing).
  3. Print what DIR/config.yaml needs, as YAML to merge into it, or say
     that it has it already:

       plugins:
         enabled:
           - approve-tui
       security:
         approval:
           transport: approve-tui

     with, for a store other than DIR/state.db, the plugin's setting:

       plugins:
         entries:
           approve-tui:
             settings:
               db: PATH

It never edits config.yaml. DIR is --hermes-home, else $HERMES_HOME, else
~/.hermes. Hermes loads plugins when it starts: restart it, then run
"approve-tui hermes doctor".
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.hermesInstall(cmd, homeFlag)
		},
	}
	hermesHomeFlag(cmd, &homeFlag)
	return cmd
}

func (a *app) hermesInstall(cmd *cobra.Command, homeFlag string) error {
	if a.readOnly {
		return usageErrorf("hermes install makes the store ready: it cannot run with --read-only")
	}
	home, err := a.hermesHome(homeFlag)
	if err != nil {
		return err
	}
	if f := cmd.Flag("db"); (f == nil || !f.Changed) && a.getenv("APPROVE_TUI_DB") == "" {
		a.db = filepath.Join(home, "state.db")
	}
	pdir := filepath.Join(home, "plugins", hermes.PluginName)
	res, err := hermes.Install(pdir)
	if err != nil {
		return exitf(ExitError, "installing the plugin in %s: %v", pdir, err)
	}
	s, err := a.initStore(cmd.Context())
	if err != nil {
		return err
	}
	defer s.Close()
	cfg := loadHermesConfig(filepath.Join(home, "config.yaml"))
	adv := hermesAdvice(cfg, home, s)

	if a.json {
		o := model.NewJSONObject().Str("hermes_home", home).Str("plugin_dir", pdir).
			Str("plugin", res.Summary()).Strs("written", res.Written()).
			Obj("store", initJSON(s)).
			Str("config", cfg.path).Str("config_state", adv.state).OptStr("config_problem", cfg.problem).
			OptStr("config_snippet", adv.snippet).Strs("notes", adv.notes)
		a.printf("%s\n", o)
		return nil
	}
	switch res.Summary() {
	case "installed":
		a.printf("installed the Hermes plugin %s in %s (%s)\n", hermes.PluginName, line(pdir), strings.Join(res.Written(), ", "))
	case "updated":
		a.printf("updated the Hermes plugin %s in %s (rewrote %s)\n", hermes.PluginName, line(pdir), strings.Join(res.Written(), ", "))
	default:
		a.printf("the Hermes plugin %s in %s is current\n", hermes.PluginName, line(pdir))
	}
	a.printInit(s)
	cpath := line(cfg.path)
	switch adv.state {
	case "configured":
		a.printf("%s already enables %s and selects it as the approval transport\n", cpath, hermes.PluginName)
	case "missing":
		a.printf("%s does not exist yet: create it with these lines (approve-tui never edits it):\n\n%s\n", cpath, adv.snippet)
	case "unreadable":
		a.printf("%s cannot be read (%s): once it is fixed, merge these lines into it\n(approve-tui never edits it):\n\n%s\n", cpath, cfg.problem, adv.snippet)
	default:
		if adv.snippet != "" {
			a.printf("add to %s, merged into the keys it has (approve-tui never edits it):\n\n%s\n", cpath, adv.snippet)
		}
	}
	for _, n := range adv.notes {
		a.printf("%s\n", n)
	}
	a.printf("Hermes loads plugins when it starts: restart it, then check with\n  %s\n", hermesFix(homeFlag, home, "approve-tui", "hermes", "doctor"))
	return nil
}

// configAdvice is what config.yaml lacks for the plugin and the store
// install made ready.
type configAdvice struct {
	// state: configured (nothing to add), incomplete, missing (no file) or
	// unreadable (it does not parse, or cannot be read).
	state string
	// snippet is the YAML to merge in ("" when configured).
	snippet string
	notes   []string
}

// hermesAdvice compares cfg with what the plugin needs to use the store s.
func hermesAdvice(cfg *hermesConfig, home string, s *storage.Store) configAdvice {
	var adv configAdvice
	readable := !cfg.missing && cfg.problem == ""

	// settings.db: the store s, unless it is the plugin's default and the
	// config names no other.
	defaultDB := filepath.Join(home, "state.db")
	want := s.Path()
	cfgDB, hasDB, _ := setting(cfg, pluginSettings, "db")
	needDB := want != defaultDB
	if readable && hasDB {
		needDB = !sameStore(cfgDB, want)
	}
	needEnabled, needTransport := true, true
	if readable {
		needEnabled = !cfg.listHas(hermes.PluginName, "plugins", "enabled")
		t, ok := cfg.str("security", "approval", "transport")
		needTransport = !ok || t != hermes.TransportName
		if v, has := cfg.get("security", "approval", "transport"); has && v != nil && needTransport {
			adv.notes = append(adv.notes, "security.approval.transport is "+yamlValue(v)+" now: replace it with "+hermes.TransportName)
		}
		if cfg.listHas(hermes.PluginName, "plugins", "disabled") {
			adv.notes = append(adv.notes, "remove "+hermes.PluginName+" from plugins.disabled in "+line(cfg.path))
		}
		if hasDB && needDB {
			adv.notes = append(adv.notes, "settings.db is "+yamlValue(cfgDB)+" now: replace it, or the plugin uses that store")
		}
	}
	if needDB && s.Backend() == "postgres" && s.Path() != s.DSN() {
		adv.notes = append(adv.notes, "the URL's password is shown as xxxxx: put it there, or leave it out and give it to Hermes' service in ~/.pgpass or PGPASSWORD")
	}
	var b strings.Builder
	if needEnabled || needDB {
		b.WriteString("plugins:\n")
		if needEnabled {
			b.WriteString("  enabled:\n    - " + hermes.PluginName + "\n")
		}
		if needDB {
			b.WriteString("  entries:\n    " + hermes.PluginName + ":\n      settings:\n        db: " + yamlScalar(want) + "\n")
		}
	}
	if needTransport {
		b.WriteString("security:\n  approval:\n    transport: " + hermes.TransportName + "\n")
	}
	adv.snippet = b.String()
	switch {
	case cfg.missing:
		adv.state = "missing"
	case cfg.problem != "":
		adv.state = "unreadable"
	case adv.snippet == "" && len(adv.notes) == 0:
		adv.state = "configured"
	default:
		adv.state = "incomplete"
	}
	return adv
}

// sameStore reports whether the setting cfgDB names the store at path (a
// SQLite file's absolute path, or a redacted URL).
func sameStore(cfgDB, path string) bool {
	if storage.IsPostgresURL(cfgDB) {
		return storage.RedactURL(cfgDB) == path
	}
	p := strings.TrimPrefix(strings.TrimPrefix(cfgDB, "sqlite://"), "sqlite:")
	abs, err := filepath.Abs(p)
	return err == nil && abs == path
}

// yamlScalar writes s as a YAML scalar: plain when that reads back as the
// same string, else double-quoted.
func yamlScalar(s string) string {
	plain := s != ""
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == '~' || c == ',' || c == '=':
			plain = i > 0 || c == '/' || c == '.' || c == '_' || c == '~'
		case c == ':' || c == '@' || c == '%' || c == '?' || c == '&':
			plain = i > 0 && !(c == ':' && (i+1 == len(s) || s[i+1] == ' '))
		default:
			plain = false
		}
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}

// hermesConfig is Hermes' config.yaml as read.
type hermesConfig struct {
	path    string
	missing bool
	// problem: why it could not be read or parsed, sanitised ("" when it
	// was read); a parse error starts with path:line:column.
	problem string
	root    map[string]any
}

func loadHermesConfig(path string) *hermesConfig {
	c := &hermesConfig{path: path, root: map[string]any{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.missing = true
		return c
	case err != nil:
		c.problem = line(err.Error())
		return c
	}
	var v any
	// Hermes reads it with PyYAML, which lets a later duplicate key win.
	if err := yaml.UnmarshalWithOptions(data, &v, yaml.AllowDuplicateMapKey()); err != nil {
		c.problem = yamlProblem(path, err)
		return c
	}
	switch m := v.(type) {
	case nil:
	case map[string]any:
		c.root = m
	default:
		c.problem = line(path) + ": the document is not a mapping of keys"
	}
	return c
}

// yamlProblem is a parse error as path:line:column: message, sanitised.
func yamlProblem(path string, err error) string {
	var ye yaml.Error
	if errors.As(err, &ye) {
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return line(fmt.Sprintf("%s:%d:%d: %s", path, tk.Position.Line, tk.Position.Column, ye.GetMessage()))
		}
		return line(path + ": " + ye.GetMessage())
	}
	return line(path + ": " + err.Error())
}

// get is the value at keys (has: every key is there).
func (c *hermesConfig) get(keys ...string) (v any, has bool) {
	v = any(c.root)
	for _, k := range keys {
		switch m := v.(type) {
		case map[string]any:
			v, has = m[k]
		case map[any]any:
			v, has = m[k]
		default:
			return nil, false
		}
		if !has {
			return nil, false
		}
	}
	return v, true
}

// str is the string at keys (ok: it is there and a string).
func (c *hermesConfig) str(keys ...string) (string, bool) {
	v, _ := c.get(keys...)
	s, ok := v.(string)
	return s, ok
}

// listHas reports whether the list at keys holds the string want.
func (c *hermesConfig) listHas(want string, keys ...string) bool {
	v, _ := c.get(keys...)
	l, _ := v.([]any)
	for _, e := range l {
		if s, ok := e.(string); ok && s == want {
			return true
		}
	}
	return false
}

// yamlValue shows a config value for a message: a string quoted, anything
// else as Go prints it, sanitised either way (config values are foreign
// text).
func yamlValue(v any) string {
	if s, ok := v.(string); ok {
		return `"` + line(s) + `"`
	}
	if v == nil {
		return "null"
	}
	return line(fmt.Sprint(v))
}

// The statuses of a doctor check.
const (
	checkOK      = "ok"
	checkWarning = "warning"
	checkProblem = "problem"
)

// reportChecks prints a doctor's checks: a line each (status, name in a
// column as wide as the longest, message) and the count of problems and
// warnings, or with --json one object, head's fields first, then "ok",
// the counts and "checks". Any problem exits 1.
func (a *app) reportChecks(checks []doctorCheck, head *model.JSONObject) error {
	problems, warnings, width := 0, 0, 10
	for _, c := range checks {
		switch c.status {
		case checkProblem:
			problems++
		case checkWarning:
			warnings++
		}
		width = max(width, len(c.name))
	}
	if a.json {
		elems := make([]string, len(checks))
		for i, c := range checks {
			elems[i] = model.NewJSONObject().Str("name", c.name).Str("status", c.status).Str("message", c.message).String()
		}
		a.printf("%s\n", head.Bool("ok", problems == 0).
			Int("problems", int64(problems)).Int("warnings", int64(warnings)).Raw("checks", jsonArray(elems)))
	} else {
		for _, c := range checks {
			a.printf("%-8s %-*s %s\n", c.status, width, c.name, c.message)
		}
		a.printf("%s, %s\n", human.CountNo(problems, "problem"), human.CountNo(warnings, "warning"))
	}
	if problems > 0 {
		return &exitError{code: ExitError}
	}
	return nil
}

// doctorCheck is one line of a doctor's report.
type doctorCheck struct {
	name, status, message string
}

func (a *app) hermesDoctorCmd() *cobra.Command {
	var homeFlag string
	margin := human.Duration(agent.HermesMargin)
	cmd := &cobra.Command{
		Use:   "doctor [--hermes-home DIR]",
		Short: "Check that Hermes will ask approve-tui, and say how to fix what is missing",
		Long: `Check what Hermes needs to hand its approval prompts to approve-tui: one line
per check, each ok, warning or problem, every problem with its fix.

  plugin     DIR/plugins/approve-tui holds this binary's copy of the plugin
  config     DIR/config.yaml exists and parses (errors say line:column)
  enabled    approve-tui is in plugins.enabled, and not in plugins.disabled
  transport  security.approval.transport is approve-tui
  fallback   security.approval.transport_fallback is deny or unset; builtin
             is a warning: when approve-tui fails, Hermes then shows its own
             prompt instead of denying
  mode       approvals.mode is not off (off: Hermes asks nobody)
  timeout    approvals.timeout (default ` + strconv.Itoa(hermesDefaultTimeout) + `) leaves an operator at least
             ` + human.Duration(hermesOperatorMin) + ` once approve-tui's margin (` + margin + `: it answers that long
             before Hermes' deadline) is taken
  binary     the approve-tui the plugin runs (settings.binary, else
             $APPROVE_TUI_BIN, else approve-tui on PATH) is executable and
             prints approve-tui's version with --version; found on PATH
             only is a warning: a service's PATH may differ from this shell's
  store      the store the plugin uses (settings.db, else $APPROVE_TUI_DB,
             else DIR/state.db) exists, has the gateway_approvals table, and
             this user may write it

Settings are plugins.entries.approve-tui.settings in config.yaml; DIR is
--hermes-home, else $HERMES_HOME, else ~/.hermes. The checks run as this
user in this shell's environment: run it as the user Hermes runs as. It
changes nothing: the store is opened read-only (never created or migrated)
and whether it can be written is asked of the kernel; the global --db is
not used.
` + exitCodesWhere(map[int]string{
			ExitOK:    "no problems (warnings allowed)",
			ExitError: "a check found a problem, or an error",
		}, ExitOK, ExitError, ExitUsage),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := a.hermesHome(homeFlag)
			if err != nil {
				return err
			}
			checks := a.hermesDoctor(cmd.Context(), home, homeFlag)
			return a.reportChecks(checks, model.NewJSONObject().Str("hermes_home", home))
		},
	}
	hermesHomeFlag(cmd, &homeFlag)
	return cmd
}

// hermesDoctor runs every check, in order.
func (a *app) hermesDoctor(ctx context.Context, home, homeFlag string) []doctorCheck {
	var checks []doctorCheck
	add := func(name, status, msg string) { checks = append(checks, doctorCheck{name, status, msg}) }
	install := "run " + hermesFix(homeFlag, home, "approve-tui", "hermes", "install")

	// plugin
	pdir := filepath.Join(home, "plugins", hermes.PluginName)
	switch cmp, err := hermes.Compare(pdir); {
	case err != nil:
		add("plugin", checkProblem, "cannot read the plugin: "+line(err.Error())+"; fix that, then "+install)
	case cmp.DirMissing:
		add("plugin", checkProblem, "not installed ("+line(pdir)+" does not exist): "+install)
	case !cmp.Current():
		var what []string
		if len(cmp.Missing) > 0 {
			what = append(what, "missing "+strings.Join(cmp.Missing, ", "))
		}
		if len(cmp.Differ) > 0 {
			what = append(what, "different "+strings.Join(cmp.Differ, ", "))
		}
		add("plugin", checkProblem, line(pdir)+" is not this approve-tui's copy ("+strings.Join(what, "; ")+"): "+install)
	default:
		add("plugin", checkOK, line(pdir)+" is installed and current")
	}

	// config
	cfg := loadHermesConfig(filepath.Join(home, "config.yaml"))
	cpath := line(cfg.path)
	switch {
	case cfg.missing:
		add("config", checkProblem, cpath+" does not exist: create it with the lines "+hermesFix(homeFlag, home, "approve-tui", "hermes", "install")+" prints")
	case cfg.problem != "":
		add("config", checkProblem, cfg.problem+": fix the YAML (Hermes cannot read it either)")
	default:
		add("config", checkOK, cpath+" parses")
	}
	unread := cfg.problem != ""
	notChecked := "not checked: " + cpath + " cannot be read"

	// enabled
	if unread {
		add("enabled", checkProblem, notChecked)
	} else {
		var bad []string
		switch v, has := cfg.get("plugins", "enabled"); {
		case !has || v == nil:
			bad = append(bad, "plugins.enabled is not set (Hermes loads only the plugins listed there): add "+hermes.PluginName+" to it")
		case !isList(v):
			bad = append(bad, "plugins.enabled is "+yamlValue(v)+", not a list: make it a list that holds "+hermes.PluginName)
		case !cfg.listHas(hermes.PluginName, "plugins", "enabled"):
			bad = append(bad, hermes.PluginName+" is not in plugins.enabled (Hermes loads only the plugins listed there): add it")
		}
		if cfg.listHas(hermes.PluginName, "plugins", "disabled") {
			bad = append(bad, hermes.PluginName+" is in plugins.disabled: remove it from there")
		}
		if len(bad) > 0 {
			add("enabled", checkProblem, strings.Join(bad, "; "))
		} else {
			add("enabled", checkOK, hermes.PluginName+" is in plugins.enabled")
		}
	}

	// transport
	switch v, has := cfg.get("security", "approval", "transport"); {
	case unread:
		add("transport", checkProblem, notChecked)
	case !has || v == nil:
		add("transport", checkProblem, "security.approval.transport is not set, so Hermes asks with its own prompt: set it to "+hermes.TransportName)
	case v == hermes.TransportName:
		add("transport", checkOK, "security.approval.transport is "+hermes.TransportName)
	default:
		add("transport", checkProblem, "security.approval.transport is "+yamlValue(v)+": set it to "+hermes.TransportName)
	}

	// fallback
	switch v, has := cfg.get("security", "approval", "transport_fallback"); {
	case unread:
		add("fallback", checkProblem, notChecked)
	case !has || v == nil:
		add("fallback", checkOK, "security.approval.transport_fallback is not set (deny: when approve-tui fails, Hermes denies)")
	case v == "deny":
		add("fallback", checkOK, "security.approval.transport_fallback is deny (when approve-tui fails, Hermes denies)")
	case v == "builtin":
		add("fallback", checkWarning, "security.approval.transport_fallback is builtin: when approve-tui fails (binary missing, store locked, a crash), Hermes shows its own prompt instead of denying; set it to deny to fail closed")
	default:
		add("fallback", checkProblem, "security.approval.transport_fallback is "+yamlValue(v)+": want deny (or builtin)")
	}

	// mode
	switch v, has := cfg.get("approvals", "mode"); {
	case unread:
		add("mode", checkProblem, notChecked)
	case !has || v == nil:
		add("mode", checkOK, "approvals.mode is not set (manual)")
	case v == false || (isString(v) && strings.EqualFold(v.(string), "off")):
		// PyYAML reads a bare off as false.
		add("mode", checkProblem, "approvals.mode is off: Hermes asks nobody, approve-tui included; set it to manual (or smart)")
	case v == "manual" || v == "smart":
		add("mode", checkOK, "approvals.mode is "+v.(string))
	default:
		add("mode", checkProblem, "approvals.mode is "+yamlValue(v)+": want manual or smart")
	}

	// timeout
	if unread {
		add("timeout", checkProblem, notChecked)
	} else {
		status, msg := checkTimeout(cfg)
		add("timeout", status, msg)
	}

	// binary and store
	status, msg := a.checkBinary(ctx, cfg, pluginSettings, unread)
	add("binary", status, msg)
	status, msg = a.checkStore(ctx, cfg, pluginSettings, home, homeFlag, unread)
	add("store", status, msg)
	return checks
}

func isList(v any) bool   { _, ok := v.([]any); return ok }
func isString(v any) bool { _, ok := v.(string); return ok }

// checkTimeout: approvals.timeout less agent.HermesMargin must leave an
// operator hermesOperatorMin.
func checkTimeout(cfg *hermesConfig) (string, string) {
	secs, given := float64(hermesDefaultTimeout), false
	switch v, has := cfg.get("approvals", "timeout"); {
	case !has || v == nil:
	default:
		n, ok := yamlNumber(v)
		if !ok {
			return checkProblem, "approvals.timeout is " + yamlValue(v) + ", not a number of seconds: set it to " + strconv.Itoa(hermesDefaultTimeout) + " (the default) or more"
		}
		secs, given = n, true
	}
	minSecs := int(math.Ceil((hermesOperatorMin + agent.HermesMargin).Seconds()))
	num := strconv.FormatFloat(secs, 'f', -1, 64)
	what := "approvals.timeout is " + num + "s"
	if !given {
		what = "approvals.timeout is not set (" + num + "s)"
	}
	left := time.Duration(secs*float64(time.Second)) - agent.HermesMargin
	margin := human.Duration(agent.HermesMargin)
	if left < hermesOperatorMin {
		leaves := "leaves an operator no time"
		if left > 0 {
			leaves = "leaves an operator " + human.Duration(left)
		}
		return checkProblem, fmt.Sprintf("%s, which after approve-tui's %s margin %s (want at least %s): set it to %d or more",
			what, margin, leaves, human.Duration(hermesOperatorMin), minSecs)
	}
	return checkOK, fmt.Sprintf("%s: an operator has %s to decide (approve-tui answers %s before Hermes' deadline)", what, human.Duration(left), margin)
}

// yamlNumber reads a YAML number (or a string of one: Hermes converts it).
func yamlNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// pluginSettings is where config.yaml keeps the plugin's settings.
var pluginSettings = []string{"plugins", "entries", hermes.PluginName, "settings"}

// setting is the plugin's setting key as the plugin reads it: trimmed,
// with a leading ~ expanded; empty is unset. A value that is not a string
// is a problem message.
func setting(cfg *hermesConfig, settings []string, key string) (val string, has bool, problem string) {
	v, has := cfg.get(append(append([]string(nil), settings...), key)...)
	if !has || v == nil {
		return "", false, ""
	}
	s, ok := v.(string)
	if !ok {
		return "", true, "settings." + key + " is " + yamlValue(v) + ", not a path: fix plugins.entries." + hermes.PluginName + ".settings." + key
	}
	if s = strings.TrimSpace(s); s == "" {
		return "", false, ""
	}
	return expandHome(s), true, ""
}

// expandHome expands a leading ~ or ~/ to this user's home, as the
// plugin's os.path.expanduser does.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(h, p[1:])
}

// checkBinary: the approve-tui the plugin would run exists, is executable
// and says it is approve-tui. As in the plugin, settings.binary and
// $APPROVE_TUI_BIN are paths (never looked up on PATH); only the default,
// approve-tui, is.
func (a *app) checkBinary(ctx context.Context, cfg *hermesConfig, settings []string, unread bool) (string, string) {
	bin, has, bad := setting(cfg, settings, "binary")
	if bad != "" {
		return checkProblem, bad
	}
	from, onPath := "settings.binary", false
	if !has {
		if bin = strings.TrimSpace(a.getenv("APPROVE_TUI_BIN")); bin != "" {
			from, bin = "$APPROVE_TUI_BIN", expandHome(bin)
		} else {
			bin, from, onPath = "approve-tui", "PATH", true
		}
	}
	if unread && !has {
		from += ", config.yaml unread"
	}
	setIt := "set plugins.entries." + hermes.PluginName + ".settings.binary to its absolute path"
	path := bin
	if onPath {
		p, ok := a.lookPath(bin)
		if !ok {
			return checkProblem, "approve-tui is not on this shell's PATH: install it there, or " + setIt
		}
		path = p
	}
	shown := line(path) + " (from " + from + ")"
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return checkProblem, shown + " does not exist: install approve-tui there, or " + setIt
	case err != nil:
		return checkProblem, shown + ": " + line(err.Error())
	case !fi.Mode().IsRegular():
		return checkProblem, shown + " is not a regular file: " + setIt
	}
	if err := syscall.Access(path, 1 /* X_OK */); err != nil {
		return checkProblem, shown + " is not executable by this user: chmod +x it, or " + setIt
	}
	ver, err := binaryVersion(ctx, path)
	if err != nil {
		return checkProblem, shown + " --version: " + line(err.Error()) + ": " + setIt + " (an approve-tui)"
	}
	msg := shown + " is " + line(ver)
	status := checkOK
	if mine := "approve-tui " + Build.String(); ver != mine {
		status = checkWarning
		msg += ", not this build (" + line(mine) + "): the plugin installed is this build's; install the same build at both"
	}
	if !onPath && !filepath.IsAbs(bin) {
		status = checkWarning
		msg += "; " + relativeNote
	}
	if onPath {
		status = checkWarning
		msg += "; a service's PATH may differ from this shell's: set plugins.entries." + hermes.PluginName + ".settings.binary: " + line(path)
	}
	return status, msg
}

// lookPath finds name on this shell's PATH (a.getenv's), as the plugin's
// subprocess would on its own.
func (a *app) lookPath(name string) (string, bool) {
	for _, dir := range filepath.SplitList(a.getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
			return p, true
		}
	}
	return "", false
}

// binaryVersion runs path --version and returns its first line, which
// must be approve-tui's.
func binaryVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, hermesVersionWait)
	defer cancel()
	var out, errb bytes.Buffer
	c := exec.CommandContext(ctx, path, "--version")
	c.Stdout, c.Stderr = &out, &errb
	c.WaitDelay = time.Second
	err := c.Run()
	first, _, _ := strings.Cut(out.String(), "\n")
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("did not finish within %s", hermesVersionWait)
		}
		e, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
		if e == "" {
			e = first
		}
		return "", fmt.Errorf("%v %s", err, cut(e, 120))
	}
	if !strings.HasPrefix(first, "approve-tui ") {
		return "", fmt.Errorf("printed %q, not approve-tui's version", cut(first, 120))
	}
	return first, nil
}

// checkStore: the store the plugin would use exists, has the approval
// table and can be written by this user; nothing is created or changed.
func (a *app) checkStore(ctx context.Context, cfg *hermesConfig, settings []string, home, homeFlag string, unread bool) (string, string) {
	db, has, bad := setting(cfg, settings, "db")
	if bad != "" {
		return checkProblem, bad
	}
	from := "settings.db"
	if !has {
		if db = a.getenv("APPROVE_TUI_DB"); db != "" {
			from = "$APPROVE_TUI_DB; Hermes' environment must set it too"
		} else {
			db, from = filepath.Join(home, "state.db"), "the default"
		}
	}
	if unread && !has {
		from += ", config.yaml unread"
	}
	pg := storage.IsPostgresURL(db)
	shownDB := db
	if pg {
		shownDB = storage.RedactURL(db)
	}
	initFix := "run " + line(agent.QuoteArgs([]string{"approve-tui", "init", "--db", shownDB}))
	if from == "the default" {
		initFix = "run " + hermesFix(homeFlag, home, "approve-tui", "hermes", "install")
	}
	shown := line(shownDB) + " (from " + from + ")"
	if !pg {
		p := strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:")
		switch fi, err := os.Stat(p); {
		case errors.Is(err, fs.ErrNotExist):
			return checkProblem, shown + " does not exist: " + initFix
		case err != nil:
			return checkProblem, shown + ": " + line(err.Error())
		case !fi.Mode().IsRegular():
			return checkProblem, shown + " is not a regular file"
		}
	}
	// Read-only and without Create: a missing table is refused, not made,
	// and nothing is migrated.
	s, err := storage.Open(ctx, db, storage.Options{ReadOnly: true, BusyTimeout: a.lockTimeout})
	if err != nil {
		msg := shown + ": " + line(err.Error())
		if !strings.Contains(err.Error(), "approve-tui init") {
			msg += "; " + initFix
		}
		return checkProblem, msg
	}
	rev := s.HermesRevision()
	s.Close()
	if pg {
		return checkOK, shown + " has the approval table (Hermes revision " + rev + "); write permission is not checked on PostgreSQL"
	}
	if p := storage.WriteProblem(db); p != "" {
		return checkProblem, shown + ": " + line(p) + "; the plugin, as this user, could not record decisions: fix its permissions"
	}
	msg := shown + " has the approval table (Hermes revision " + rev + ") and is writable by this user"
	if p := strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:"); !filepath.IsAbs(p) {
		return checkWarning, msg + "; " + relativeNote
	}
	return checkOK, msg
}

// relativeNote warns of a relative path in the plugin's settings.
const relativeNote = "the path is relative: the plugin resolves it against Hermes' working directory, this check against this shell's; use an absolute path"
