package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/integrations/hermes"
	"github.com/approve-tui/approve-tui/model"
	"github.com/spf13/cobra"
)

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
	cfg := hermes.LoadConfig(filepath.Join(home, "config.yaml"))
	adv := hermes.Advise(cfg, home, s.Path(), s.Backend() == "postgres" && s.Path() != s.DSN())

	if a.json {
		o := model.NewJSONObject().Str("hermes_home", home).Str("plugin_dir", pdir).
			Str("plugin", res.Summary()).Strs("written", res.Written()).
			Obj("store", initJSON(s)).
			Str("config", cfg.Path).Str("config_state", adv.State).OptStr("config_problem", cfg.Problem).
			OptStr("config_snippet", adv.Snippet).Strs("notes", adv.Notes)
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
	cpath := line(cfg.Path)
	switch adv.State {
	case "configured":
		a.printf("%s already enables %s and selects it as the approval transport\n", cpath, hermes.PluginName)
	case "missing":
		a.printf("%s does not exist yet: create it with these lines (approve-tui never edits it):\n\n%s\n", cpath, adv.Snippet)
	case "unreadable":
		a.printf("%s cannot be read (%s): once it is fixed, merge these lines into it\n(approve-tui never edits it):\n\n%s\n", cpath, cfg.Problem, adv.Snippet)
	default:
		if adv.Snippet != "" {
			a.printf("add to %s, merged into the keys it has (approve-tui never edits it):\n\n%s\n", cpath, adv.Snippet)
		}
	}
	for _, n := range adv.Notes {
		a.printf("%s\n", n)
	}
	a.printf("Hermes loads plugins when it starts: restart it, then check with\n  %s\n", hermes.Fix(homeFlag, home, "approve-tui", "hermes", "doctor"))
	return nil
}

// The statuses of a doctor check.
const (
	checkOK      = hermes.CheckOK
	checkWarning = hermes.CheckWarning
	checkProblem = hermes.CheckProblem
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
  timeout    approvals.timeout (default ` + strconv.Itoa(hermes.DefaultTimeout) + `) leaves an operator at least
             ` + human.Duration(hermes.OperatorMin) + ` once approve-tui's margin (` + margin + `: it answers that long
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
			var checks []doctorCheck
			for _, c := range hermes.Doctor(cmd.Context(), hermes.DoctorEnv{Home: home, HomeFlag: homeFlag, Getenv: a.getenv,
				LockTimeout: a.lockTimeout, Version: "approve-tui " + Build.String(), LookPath: a.lookPath, BinaryVersion: binaryVersion}) {
				checks = append(checks, doctorCheck{c.Name, c.Status, c.Message})
			}
			return a.reportChecks(checks, model.NewJSONObject().Str("hermes_home", home))
		},
	}
	hermesHomeFlag(cmd, &homeFlag)
	return cmd
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
