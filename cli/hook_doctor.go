package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/spf13/cobra"
)

func (a *app) hookDoctorCmd() *cobra.Command {
	var o hookInstallOpts
	cmd := &cobra.Command{
		Use:   "doctor claude-code|codex|gemini [--scope user|project] [--dir DIR]",
		Short: "Check that an agent will really run approve-tui's hook, and say how to fix what is missing",
		Long: `Check, one line each (ok, warning or problem, every problem with its fix),
that the agent will run approve-tui's hook before its shell commands:

  settings  the settings file (as "hook install" writes it, for --scope)
            exists and parses
  EVENT     each event the hook handles has an approve-tui entry; without
            the post-run ones (PostToolUse, PostToolUseFailure, AfterTool)
            a call the agent ran without an approval goes unrecorded
  binary    the approve-tui the entry runs is an absolute path, exists, is
            executable and prints approve-tui's version; with --scope
            project (settings the agent may write) nothing is run: the entry
            must name this approve-tui
  store     the store named by its --db exists and has the approval table
            ("approve-tui init"), and this user may write it
  timeout   the hook's --timeout is below the agent's hook timeout (a
            problem: the agent kills the hook before it answers, and Codex
            and Gemini CLI then run the command), by at least 10s (a
            warning: the agent's clock starts before the hook's)
  park      how long a call the hook stopped waiting for stays approvable:
            --park-window, else the configuration file's park: window,
            else 1h
  unasked   what the hook lets through without asking (--unasked, else
            the configuration file's risk: unasked, else low), and a value
            it would refuse
  signatures whether the hook checks signed approvals (trust: required),
            where that setting comes from, and whether the agent's user
            could turn it off (no root-owned system configuration)
  switch    Claude Code: no disableAllHooks in the user's, the project's
            (.claude/settings.json, settings.local.json) or the managed
            settings (/etc/claude-code), no allowManagedHooksOnly there
  gate      Claude Code: the PreToolUse entry has no "async",
            "asyncRewake", "once", "if" or "args" (each keeps it from
            gating every call)
  failure   Claude Code: "onFailure": "block" on PreToolUse (else a hook
            that cannot start lets the call run)
  defer     Claude Code, when the hook runs with --defer: a warning unless
            the settings are a CLAUDE_CONFIG_DIR of their own (interactive
            sessions ignore defer and ask at their own prompt)
  allow     Claude Code, when the hook runs with --defer: a warning for
            each permissions.allow rule of Bash or PowerShell in the
            settings Claude Code reads (a call it does not defer goes on
            with its own rules, which run it)
  trust     Codex: each entry's trusted_hash in ~/.codex/config.toml is
            the hash of the entry as it is now (Codex skips untrusted and
            modified hooks), not disabled there, hooks not turned off
            ([features] hooks = false, in ~/.codex/config.toml,
            /etc/codex/config.toml, /etc/codex/managed_config.toml or a
            trusted project's .codex/config.toml); project scope: the
            project is trusted
  switch    Gemini CLI: hooksConfig.enabled is not false, and
            hooksConfig.disabled does not list approve-tui, in the system
            defaults, the user's, the folder's or the system settings
            (/etc/gemini-cli), read as Gemini reads them (with comments)
  folder    Gemini CLI: the folder (--dir, default the current one) is
            trusted: Gemini CLI runs no hook at all, user hooks included,
            in a folder it does not trust

  others    a warning when the project's own settings (--dir), which
            the agent can write, register other hooks: they run commands
            nobody approves

It changes nothing. The checks run as this user: run it as the user the
agent runs as.
` + exitCodesWhere(map[int]string{
			ExitOK:    "no problems (warnings allowed)",
			ExitError: "a check found a problem: the hook would not run, or not as installed",
		}, ExitOK, ExitError, ExitUsage),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			who, err := parseInstallAgent(args)
			if err != nil {
				return err
			}
			t, err := a.installTarget(who, o)
			if err != nil {
				return err
			}
			checks := a.hookDoctor(cmd.Context(), t, o)
			return a.reportChecks(checks, model.NewJSONObject().Str("agent", string(who)).Str("settings", t.settings))
		},
	}
	o.flags(cmd, false)
	return cmd
}

// expectedEvents are the events install registers for who, in its order.
func expectedEvents(who agent.Agent) []string {
	var evs []string
	for _, g := range installGroups(who, "/approve-tui", "/db", installHookTimeout, "") {
		if !slices.Contains(evs, g.Event) {
			evs = append(evs, g.Event)
		}
	}
	return evs
}

// missingPostRun says what is lost when the agent's post-run event ev has
// no approve-tui entry: the agent's report that a call ran.
func missingPostRun(who agent.Agent, ev string) string {
	msg := "no approve-tui entry: the agent's report that a call ran is not read, so a call it ran without an approval goes unrecorded " +
		"(its proposal looks open, or parked, as if nothing had run), and an approved call is never marked executed"
	switch who {
	case agent.AgentCodex:
		msg += "; Codex runs the command when it kills its hook at its timeout, and this is the only record of it"
	case agent.AgentGemini:
		msg += "; Gemini CLI runs the command when it kills its hook at its timeout, and this is the only record of it"
	case agent.AgentClaudeCode:
		if ev == "PostToolUseFailure" {
			msg = "no approve-tui entry: a call Claude Code ran and that failed is not read, so one run without an approval goes unrecorded " +
				"(its proposal looks open, or parked, as if nothing had run), and an approved one is never marked executed"
		}
	}
	return msg
}

// shellTool is the name of the agent's shell tool, as its hooks' matchers
// see it.
func shellTool(who agent.Agent) string {
	switch who {
	case agent.AgentGemini:
		return "run_shell_command"
	}
	return "Bash"
}

// matcherCovers reports whether a group's matcher selects the agent's
// shell tool, under any of the readings the agents give it: empty or "*"
// (every tool), a list of names separated by "|", or a regular expression
// found in the name (Codex, Gemini CLI) or matching all of it (Claude
// Code). A matcher none of them reads as the shell tool is a hook that
// never runs for a shell command.
func matcherCovers(who agent.Agent, m string) bool {
	tool := shellTool(who)
	if m == "" || m == "*" || slices.Contains(strings.Split(m, "|"), tool) {
		return true
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return false
	}
	if who == agent.AgentClaudeCode {
		full, err := regexp.Compile("^(?:" + m + ")$")
		return err == nil && full.MatchString(tool)
	}
	return re.MatchString(tool)
}

// preEvent is the event whose hook decides.
func preEvent(who agent.Agent) string {
	if who == agent.AgentGemini {
		return "BeforeTool"
	}
	return "PreToolUse"
}

func (a *app) hookDoctor(ctx context.Context, t *installTarget, o hookInstallOpts) []doctorCheck {
	var checks []doctorCheck
	add := func(name, status, msg string) { checks = append(checks, doctorCheck{name, status, msg}) }
	install := "run " + doctorLine(t.who, o)
	install = strings.Replace(install, " doctor ", " install ", 1)
	shown := line(t.settings)

	src, exists, err := readSettings(t.settings)
	switch {
	case err != nil:
		add("settings", checkProblem, shown+": "+line(err.Error()))
		return checks
	case !exists:
		add("settings", checkProblem, shown+" does not exist: "+install+a.otherScopeHint(t, o))
		return checks
	}
	if t.who == agent.AgentGemini {
		src = agent.StripJSONComments(src) // Gemini CLI reads JSON with comments
	}
	settings, err := agent.ParseJSONObject(src)
	if err != nil {
		add("settings", checkProblem, shown+" is "+line(err.Error())+": the agent cannot read it; fix it, then "+install)
		return checks
	}
	add("settings", checkOK, shown+" parses")

	found := agent.FindHooks(settings, t.who)
	var pre *agent.FoundHook
	for _, ev := range expectedEvents(t.who) {
		var hs []agent.FoundHook
		for _, h := range found {
			if h.Event == ev {
				hs = append(hs, h)
			}
		}
		switch {
		case len(hs) == 0 && ev != preEvent(t.who):
			add(ev, checkProblem, missingPostRun(t.who, ev)+": "+install+a.otherScopeHint(t, o))
		case len(hs) == 0:
			add(ev, checkProblem, "no approve-tui entry: "+install+a.otherScopeHint(t, o))
		case len(hs) > 1:
			add(ev, checkWarning, strconv.Itoa(len(hs))+" approve-tui entries: the hook runs more than once; "+install+" keeps one")
		case !matcherCovers(t.who, hs[0].Matcher):
			add(ev, checkProblem, line(hs[0].Command)+": its matcher "+strconv.Quote(line(hs[0].Matcher))+" does not match "+shellTool(t.who)+
				", so the agent never runs it for a shell command; "+install)
		default:
			add(ev, checkOK, line(hs[0].Command)+" (matcher "+strconv.Quote(line(hs[0].Matcher))+")")
		}
		if ev == preEvent(t.who) && len(hs) > 0 {
			h := hs[0]
			pre = &h
		}
	}
	if pre == nil {
		return checks
	}
	words, err := agent.HookWords(pre.Command)
	if err != nil {
		add("binary", checkProblem, "the command does not parse: "+line(err.Error())+"; "+install)
		return checks
	}
	st, msg := a.checkHookBinary(ctx, words[0], install, t.project != "")
	add("binary", st, msg)
	st, msg = a.checkHookStore(ctx, words, install)
	add("store", st, msg)
	st, msg = checkHookTimeout(t.who, words, pre.Fields, install)
	add("timeout", st, msg)
	st, msg = a.checkHookPark(words, install)
	add("park", st, msg)
	st, msg = a.checkHookUnasked(words, install)
	add("unasked", st, msg)
	st, msg = a.checkHookTrust()
	add("signatures", st, msg)

	for _, c := range a.projectHookChecks(t) {
		checks = append(checks, c)
	}
	switch t.who {
	case agent.AgentClaudeCode:
		if why := claudeWeakened(pre.Fields); why != "" {
			add("gate", checkProblem, "the PreToolUse entry "+why+": "+install+" writes it without")
		}
		for _, c := range a.claudeSwitchChecks(t) {
			checks = append(checks, c)
		}
		if slices.Contains(words, "--defer") {
			if a.getenv("CLAUDE_CONFIG_DIR") == "" {
				add("defer", checkWarning, "the hook runs with --defer in "+shown+", which interactive sessions read too: there Claude Code ignores defer and asks at its own prompt, "+
					"so whoever sits at the terminal decides the call; give headless sessions settings of their own "+
					"(CLAUDE_CONFIG_DIR=DIR approve-tui hook install claude-code --defer) and run install here without --defer")
			} else {
				add("defer", checkOK, "--defer: a call the hook parks in a headless session (permission mode default or plan) is deferred; keep "+
					line(a.getenv("CLAUDE_CONFIG_DIR"))+" for headless sessions alone (interactive ones ignore defer and ask at their own prompt)")
			}
		}
		if slices.Contains(words, "--defer") {
			if rules := a.claudeShellAllowRules(t); len(rules) > 0 {
				add("allow", checkWarning, "--defer with allow rules for the shell ("+strings.Join(rules, "; ")+
					"): where Claude Code ignores a defer answer (an interactive session; a turn of more than one tool call, for which the hook answers its parked deny only when the transcript shows it) "+
					"or the hook fails, it goes on with its own permission rules, and these run the call unasked; remove them from the settings headless sessions read")
			} else {
				add("allow", checkOK, "no allow rule for Bash or PowerShell in the settings read here; a session started with --allowedTools Bash (or --permission-mode bypassPermissions) "+
					"has one all the same, which runs a call Claude Code does not defer: do not start headless sessions with it")
			}
		}
		if v, _ := pre.Fields.Get("onFailure"); v == "block" {
			add("failure", checkOK, `"onFailure": "block": Claude Code (2.1.295 and later) blocks the call when the hook cannot start, times out or fails`)
		} else {
			add("failure", checkWarning, `no "onFailure": "block" on PreToolUse: a hook that cannot start or times out lets the call run; `+install)
		}
	case agent.AgentCodex:
		for _, c := range a.codexTrustChecks(settings, t, install) {
			checks = append(checks, c)
		}
	case agent.AgentGemini:
		st, msg := a.geminiSwitchCheck(settings, t)
		add("switch", st, msg)
		if ok, why := a.geminiFolderTrusted(t.home, t.dir); ok {
			add("folder", checkOK, why)
		} else {
			add("folder", checkProblem, "Gemini CLI runs no hook, user hooks included, in "+line(t.dir)+": "+why+
				"; trust it (Gemini's own prompt, /permissions trust, or "+line(a.trustedFoldersPath(t.home))+`: {"`+line(t.dir)+`": "TRUST_FOLDER"}), or run gemini --skip-trust there`)
		}
	}
	return checks
}

// projectHookChecks warns of other hooks registered in the project's own
// settings files, which the agent can write: they run commands that nobody
// approves, and a hook before the call can change the command after
// approve-tui approved it (the hook reports such a run, after the fact).
func (a *app) projectHookChecks(t *installTarget) []doctorCheck {
	var files []string
	switch t.who {
	case agent.AgentClaudeCode:
		files = []string{filepath.Join(t.dir, ".claude", "settings.json"), filepath.Join(t.dir, ".claude", "settings.local.json")}
	case agent.AgentCodex:
		files = []string{filepath.Join(t.dir, ".codex", "hooks.json")}
	case agent.AgentGemini:
		files = []string{filepath.Join(t.dir, ".gemini", "settings.json")}
	}
	var checks []doctorCheck
	for _, p := range files {
		src, ok, err := readSettings(p)
		if err != nil || !ok {
			continue // unreadable files are reported by the other checks
		}
		if t.who == agent.AgentGemini {
			src = agent.StripJSONComments(src)
		}
		o, err := agent.ParseJSONObject(src)
		if err != nil {
			continue
		}
		if n := foreignHooks(o, t.who); n > 0 {
			checks = append(checks, doctorCheck{"others", checkWarning, fmt.Sprintf("%s, in the project (which the agent can write), registers %s besides approve-tui's: they run commands nobody approves, and one that runs before a call can change its command after the approval; review them",
				line(p), human.CountNo(n, "other hook"))})
		}
	}
	return checks
}

// foreignHooks counts the command handlers in settings that are not
// approve-tui's hook for who.
func foreignHooks(settings *agent.JSONObject, who agent.Agent) int {
	hooks, ok := settings.Object("hooks")
	if !ok {
		return 0
	}
	n := 0
	for _, ev := range hooks.Keys() {
		v, _ := hooks.Get(ev)
		groups, _ := v.([]any)
		for _, g := range groups {
			gm, ok := g.(*agent.JSONObject)
			if !ok {
				continue
			}
			hv, _ := gm.Get("hooks")
			hs, _ := hv.([]any)
			for _, h := range hs {
				ho, ok := h.(*agent.JSONObject)
				if !ok {
					n++
					continue
				}
				c, _ := ho.Get("command")
				cs, _ := c.(string)
				if !agent.IsApproveTUIHook(cs, who) {
					n++
				}
			}
		}
	}
	return n
}

// claudeWeakened says which field of a Claude Code PreToolUse handler keeps
// it from gating every shell command ("" for none): "async" and
// "asyncRewake" run it in the background (the call does not wait), "once"
// removes it after its first run, "if" runs it only for the calls its
// permission rule matches, and "args" runs the command without the line
// install wrote.
func claudeWeakened(h *agent.JSONObject) string {
	for _, k := range []string{"async", "asyncRewake", "once"} {
		if v, ok := h.Get(k); ok && v != false {
			return fmt.Sprintf("has %q: %v (%s)", k, v, map[string]string{
				"async": "it runs in the background: the call does not wait for it", "asyncRewake": "it runs in the background: the call does not wait for it",
				"once": "Claude Code removes it after its first run"}[k])
		}
	}
	if v, ok := h.Get("if"); ok && v != nil {
		return fmt.Sprintf("has \"if\" (%s): it runs only for the calls that rule matches", line(fmt.Sprint(v)))
	}
	if v, ok := h.Get("args"); ok && v != nil {
		return `has "args": Claude Code runs its command with those arguments instead of the line written`
	}
	return ""
}

// claudeManagedDir holds Claude Code's managed (policy) settings on Linux:
// managed-settings.json and managed-settings.d/*.json.
var claudeManagedDir = "/etc/claude-code"

// claudeSwitchChecks: no settings file Claude Code reads turns hooks off.
// Claude Code 2.1 runs no hook when its policy sets disableAllHooks, only
// the policy's own hooks when the policy sets allowManagedHooksOnly or
// strictPluginOnlyCustomization (true, or a list naming "hooks"), and only
// the policy's hooks when disableAllHooks is true in any settings it
// merges: the user's, the project's .claude/settings.json and
// .claude/settings.local.json (both the agent's to write). A file that
// cannot be read is a problem: what it says cannot be known.
// claudeShellAllowRules lists the permissions.allow rules of the settings
// Claude Code reads here (managed, user, project, local) that allow its
// shell tools, as "FILE: RULE" (bounded, sanitised); a file that cannot be
// read or parsed is listed as such (whether it allows the shell is not
// known).
func (a *app) claudeShellAllowRules(t *installTarget) []string {
	var paths []string
	paths = append(paths, filepath.Join(claudeManagedDir, "managed-settings.json"))
	if ents, err := os.ReadDir(filepath.Join(claudeManagedDir, "managed-settings.d")); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
				paths = append(paths, filepath.Join(claudeManagedDir, "managed-settings.d", e.Name()))
			}
		}
	}
	userBase := filepath.Join(t.home, ".claude")
	if d := a.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		userBase = d
	}
	paths = append(paths, filepath.Join(userBase, "settings.json"),
		filepath.Join(t.dir, ".claude", "settings.json"), filepath.Join(t.dir, ".claude", "settings.local.json"))
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		src, ok, err := readSettings(p)
		if err != nil {
			out = append(out, line(p)+": cannot be read ("+line(err.Error())+")")
			continue
		}
		if !ok {
			continue
		}
		o, err := agent.ParseJSONObject(src)
		if err != nil {
			out = append(out, line(p)+": does not parse")
			continue
		}
		perms, _ := o.Get("permissions")
		po, _ := perms.(*agent.JSONObject)
		if po == nil {
			continue
		}
		allow, _ := po.Get("allow")
		list, _ := allow.([]any)
		for _, r := range list {
			rule, _ := r.(string)
			tool := strings.TrimSpace(rule)
			if i := strings.IndexByte(tool, '('); i >= 0 {
				tool = strings.TrimSpace(tool[:i])
			}
			if tool == "Bash" || tool == "PowerShell" || tool == "*" {
				if len(out) < 8 {
					out = append(out, line(p)+": "+strconv.Quote(line(rule)))
				}
			}
		}
	}
	return out
}

func (a *app) claudeSwitchChecks(t *installTarget) []doctorCheck {
	var checks []doctorCheck
	add := func(status, msg string) { checks = append(checks, doctorCheck{"switch", status, msg}) }
	var managed []string
	if _, err := os.Stat(filepath.Join(claudeManagedDir, "managed-settings.json")); err == nil {
		managed = append(managed, filepath.Join(claudeManagedDir, "managed-settings.json"))
	}
	if ents, err := os.ReadDir(filepath.Join(claudeManagedDir, "managed-settings.d")); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
				managed = append(managed, filepath.Join(claudeManagedDir, "managed-settings.d", e.Name()))
			}
		}
	}
	userBase := filepath.Join(t.home, ".claude")
	if d := a.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		userBase = d
	}
	others := []string{filepath.Join(userBase, "settings.json"),
		filepath.Join(t.dir, ".claude", "settings.json"), filepath.Join(t.dir, ".claude", "settings.local.json")}
	read := func(p string) (*agent.JSONObject, bool) {
		src, ok, err := readSettings(p)
		if err != nil {
			add(checkProblem, line(p)+": "+line(err.Error())+": cannot tell whether it turns hooks off")
			return nil, false
		}
		if !ok {
			return nil, false
		}
		o, err := agent.ParseJSONObject(src)
		if err != nil {
			add(checkProblem, line(p)+" is "+line(err.Error())+": cannot tell whether it turns hooks off; fix it")
			return nil, false
		}
		return o, true
	}
	for _, p := range managed {
		o, ok := read(p)
		if !ok {
			continue
		}
		if v, _ := o.Get("disableAllHooks"); v == true {
			add(checkProblem, `"disableAllHooks": true in the managed settings `+line(p)+": Claude Code runs no hook at all; ask whoever manages this machine")
		}
		if v, _ := o.Get("allowManagedHooksOnly"); v == true {
			add(checkProblem, `"allowManagedHooksOnly": true in the managed settings `+line(p)+": Claude Code runs only the managed settings' hooks; have approve-tui's hook added there")
		}
		v, _ := o.Get("strictPluginOnlyCustomization")
		strict := v == true
		if list, ok := v.([]any); ok {
			for _, e := range list {
				strict = strict || e == "hooks"
			}
		}
		if strict {
			add(checkProblem, `"strictPluginOnlyCustomization" in the managed settings `+line(p)+` covers hooks: Claude Code runs only the managed settings' hooks; have approve-tui's hook added there`)
		}
	}
	seen := map[string]bool{}
	for _, p := range others {
		if seen[p] {
			continue
		}
		seen[p] = true
		o, ok := read(p)
		if !ok {
			continue
		}
		if v, _ := o.Get("disableAllHooks"); v == true {
			add(checkProblem, `"disableAllHooks": true in `+line(p)+": Claude Code runs no hook of the user's or the project's there; remove it")
		}
	}
	if len(checks) == 0 {
		add(checkOK, "no settings Claude Code reads here turn hooks off (disableAllHooks, allowManagedHooksOnly)")
	}
	return checks
}

// otherScopeHint points to approve-tui's entries in the other scope's
// settings, when there are some: the doctor was perhaps asked about the
// wrong one.
func (a *app) otherScopeHint(t *installTarget, o hookInstallOpts) string {
	other := o
	other.scope = map[string]string{"user": "project", "project": "user"}[o.scope]
	ot, err := a.installTarget(t.who, other)
	if err != nil || ot.settings == t.settings {
		return ""
	}
	src, ok, err := readSettings(ot.settings)
	if err != nil || !ok {
		return ""
	}
	s, err := agent.ParseJSONObject(src)
	if err != nil || len(agent.FindHooks(s, t.who)) == 0 {
		return ""
	}
	return " (" + line(ot.settings) + " has approve-tui's hook: check it with --scope " + other.scope + ")"
}

// checkHookBinary: the entry's approve-tui exists, is executable and is
// approve-tui.
//
// A project's settings are the agent's to write: from them, the doctor runs
// nothing (asking a program its version runs it, as this user and outside
// any sandbox the agent has). The entry passes only when it names this very
// approve-tui.
func (a *app) checkHookBinary(ctx context.Context, bin, install string, project bool) (string, string) {
	path := bin
	status := checkOK
	note := ""
	if !filepath.IsAbs(bin) {
		p, ok := a.lookPath(bin)
		if !ok {
			return checkProblem, line(bin) + " is not an absolute path and not on this shell's PATH: " + install
		}
		path, status = p, checkWarning
		note = "; found on this shell's PATH only: the agent's PATH may differ (" + install + " writes the absolute path)"
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return checkProblem, line(path) + " does not exist: the agent cannot start the hook; " + install
	case err != nil:
		return checkProblem, line(path) + ": " + line(err.Error())
	case !fi.Mode().IsRegular():
		return checkProblem, line(path) + " is not a regular file: " + install
	}
	if err := syscall.Access(path, 1 /* X_OK */); err != nil {
		return checkProblem, line(path) + " is not executable by this user: chmod +x it, or " + install
	}
	if project {
		self, err := selfBinary()
		if err == nil {
			if sfi, serr := os.Stat(self); serr == nil && os.SameFile(sfi, fi) {
				return status, line(path) + " is this approve-tui (" + line("approve-tui "+Build.String()) + ")" + note
			}
		}
		return checkProblem, line(path) + " is not this approve-tui, and a project's settings are the agent's to write: the doctor runs none of the programs they name, so it cannot tell what this one is; " + install + " (it names this approve-tui), or check that file yourself"
	}
	ver, err := binaryVersion(ctx, path)
	if err != nil {
		return checkProblem, line(path) + " --version: " + line(err.Error()) + "; " + install
	}
	msg := line(path) + " is " + line(ver)
	if mine := "approve-tui " + Build.String(); ver != mine && status == checkOK {
		msg += " (this one is " + line(mine) + ")"
	}
	return status, msg + note
}

// selfBinary is this approve-tui's path (tests name their stand-in).
var selfBinary = os.Executable

// checkHookStore: the store the entry names is ready.
func (a *app) checkHookStore(ctx context.Context, words []string, install string) (string, string) {
	db, ok := agent.FlagValue(words, "db")
	if !ok {
		db = a.defaultDB()
		if p := storeProblem(ctx, db, a.lockTimeout); p != "" {
			return checkProblem, "no --db: the hook uses the agent's $APPROVE_TUI_DB, else ~/.hermes/state.db; here " + p + "; " + install
		}
		return checkWarning, "no --db: the hook uses the agent's $APPROVE_TUI_DB (which an agent may strip), else ~/.hermes/state.db; " + install + " names the store"
	}
	if p := storeProblem(ctx, db, a.lockTimeout); p != "" {
		return checkProblem, p
	}
	return checkOK, line(db) + " has the approval table and is writable by this user"
}

// hookMinMargin is the least the doctor wants the agent's hook timeout
// above the hook's wait: Codex's clock starts before the hook's (the
// spawn, a login shell), and the hook parks the call in the store (a
// lock wait of up to --lock-timeout) before it answers.
const hookMinMargin = 10 * time.Second

// killedAt says what the agent does with the call when it kills its hook
// at its own hook timeout, before the hook answered.
func killedAt(who agent.Agent, fields *agent.JSONObject) string {
	switch who {
	case agent.AgentCodex:
		return "Codex then runs the command, with no approval"
	case agent.AgentGemini:
		return "Gemini CLI then runs the command, with no approval"
	}
	if v, _ := fields.Get("onFailure"); v == "block" {
		return `Claude Code then blocks the call ("onFailure": "block"), and the agent is told nothing of the proposal`
	}
	return `Claude Code's own permission rules then decide the call (no "onFailure": "block"): where they let it, it runs with no approval`
}

// checkHookTimeout: the hook answers (and parks the call) before the
// agent kills it, with some time to spare.
func checkHookTimeout(who agent.Agent, words []string, fields *agent.JSONObject, install string) (string, string) {
	hook := agent.DefaultHookTimeout
	if who == agent.AgentGemini {
		hook = agent.DefaultGeminiTimeout
	}
	if v, ok := agent.FlagValue(words, "timeout"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return checkProblem, "--timeout " + strconv.Quote(line(v)) + " is not a positive duration: the hook denies every call; " + install
		}
		hook = d
	}
	unit, def := time.Second, 600*time.Second
	if who == agent.AgentGemini {
		unit, def = time.Millisecond, 60*time.Second
	}
	ag := def
	from := "the agent's default"
	if v, ok := fields.Get("timeout"); ok {
		n, isNum := v.(json.Number)
		f, err := n.Float64()
		if !isNum || err != nil || f <= 0 {
			return checkProblem, fmt.Sprintf(`"timeout": %v is not a positive number; %s`, v, install)
		}
		ag = time.Duration(f * float64(unit))
		from = `"timeout"`
	}
	msg := fmt.Sprintf("the hook waits %s, the agent %s (%s)", human.Duration(hook), human.Duration(ag), from)
	switch {
	case hook >= ag:
		return checkProblem, msg + ": the agent kills the hook before it answers, and " + killedAt(who, fields) + "; " + install +
			" (it sets the agent's timeout " + human.Duration(installAgentMargin) + " above --timeout)"
	case ag-hook < hookMinMargin:
		return checkWarning, msg + ": only " + human.Duration(ag-hook) + " apart, and the agent's clock starts before the hook's: the agent may kill the hook as it answers, and " +
			killedAt(who, fields) + "; give the agent at least " + human.Duration(hookMinMargin) + " more than --timeout (" + install + " sets " + human.Duration(installAgentMargin) + ")"
	}
	return checkOK, msg + ": the hook answers before its agent stops waiting"
}

// checkHookPark says how long a call the hook stopped waiting for stays
// approvable: the hook's --park-window (0s: off),
// else this user's configuration file's park: window (0s: off), else the
// default.
func (a *app) checkHookPark(words []string, install string) (string, string) {
	var w time.Duration
	var from string
	if v, ok := agent.FlagValue(words, "park-window"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return checkProblem, "--park-window " + strconv.Quote(line(v)) + " is not a duration: the hook denies every call; " + install
		}
		if d < 0 {
			return checkProblem, "--park-window " + line(v) + " is negative: the hook denies every call (0s turns parking off); " + install
		}
		w, from = d, "--park-window "+line(v)
		if d == 0 {
			w = config.ParkOff // 0s: off, as run and the hooks read it
		}
	} else {
		f, err := a.loadConfig()
		if err != nil {
			return checkProblem, "the configuration file has problems: the hook denies every call (" + line(err.Error()) + ")"
		}
		w, from = f.ParkWindow(), "the default"
		if f.Park.Set {
			from = fmt.Sprintf("%s:%d, park: window; the agent's $APPROVE_TUI_CONFIG or $XDG_CONFIG_HOME may name another file", line(f.Path), f.Park.Line)
		}
	}
	if w < 0 {
		return checkOK, "off (" + from + "): when the hook stops waiting it withdraws the proposal, so an approval given later lets nothing through, and the agent's next ask waits from the start"
	}
	return checkOK, human.Duration(w) + " (" + from + "): a call the hook stopped waiting for stays approvable that long, and the agent's next ask of the same call takes the approval"
}

func trustedProject(cfg *agent.CodexConfig, roots []string) bool {
	ok, _ := cfg.ProjectTrusted(roots...)
	return ok
}

// codexSystemDir holds Codex's machine-wide config.toml and
// managed_config.toml on Linux.
var codexSystemDir = "/etc/codex"

// codexTrustChecks: each approve-tui entry is trusted as it is now, and a
// project's hooks load.
func (a *app) codexTrustChecks(settings *agent.JSONObject, t *installTarget, install string) []doctorCheck {
	var checks []doctorCheck
	add := func(name, status, msg string) { checks = append(checks, doctorCheck{name, status, msg}) }
	cfgPath := filepath.Join(t.codex, "config.toml")
	src, _, err := readSettings(cfgPath)
	if err != nil {
		add("trust", checkProblem, line(cfgPath)+": "+line(err.Error()))
		return checks
	}
	cfg, err := agent.ParseCodexConfig(src)
	if err != nil {
		add("trust", checkProblem, line(cfgPath)+" is "+line(err.Error())+": Codex cannot read it either; fix it, then "+install)
		return checks
	}
	if name, off := cfg.HooksFeatureOff(); off {
		add("feature", checkProblem, name+" = false in "+line(cfgPath)+" turns every Codex hook off: remove it")
	}
	// The other layers Codex 0.169 reads that can turn hooks off: the
	// machine's, and a trusted project's own (the agent's to write).
	layers := []string{filepath.Join(codexSystemDir, "config.toml"), filepath.Join(codexSystemDir, "managed_config.toml")}
	if roots := codexProjectRoots(t.dir); trustedProject(cfg, roots) {
		for _, r := range roots {
			layers = append(layers, filepath.Join(r, ".codex", "config.toml"))
		}
	}
	for _, p := range layers {
		src, ok, err := readSettings(p)
		if err != nil {
			add("feature", checkProblem, line(p)+": "+line(err.Error())+": cannot tell whether it turns Codex's hooks off")
			continue
		}
		if !ok {
			continue
		}
		layer, err := agent.ParseCodexConfig(src)
		if err != nil {
			add("feature", checkProblem, line(p)+" is "+line(err.Error())+": cannot tell whether it turns Codex's hooks off; fix it")
			continue
		}
		if name, off := layer.HooksFeatureOff(); off {
			add("feature", checkProblem, name+" = false in "+line(p)+" turns every Codex hook off there: remove it")
		}
	}
	abs, _ := filepath.Abs(t.settings)
	for _, h := range agent.FindHooks(settings, agent.AgentCodex) {
		ch, err := codexHandlerOf(h)
		name := "trust " + h.Event
		if err != nil {
			add(name, checkProblem, line(err.Error())+"; "+install)
			continue
		}
		key := agent.CodexHookKey(abs, codexEvent(h.Event), h.Group, h.Handler)
		want := agent.CodexHookHash(ch)
		st, ok := cfg.HookState(key)
		switch {
		case ok && st.HasEnabled && !st.Enabled:
			add(name, checkProblem, "disabled in "+line(cfgPath)+" ([hooks.state."+strconv.Quote(line(key))+"] enabled = false): enable it in Codex's /hooks")
		case !ok || st.TrustedHash == "":
			add(name, checkProblem, "not trusted: Codex skips it; "+install+" (or trust it in Codex's /hooks)")
		case st.TrustedHash != want:
			add(name, checkProblem, "changed since it was trusted (the trusted hash is not the entry's): Codex skips it; "+install+" (or review it in Codex's /hooks)")
		default:
			add(name, checkOK, "trusted as it is ("+want[:19]+"…)")
		}
	}
	if t.project != "" {
		roots := codexProjectRoots(t.project)
		if ok, _ := cfg.ProjectTrusted(roots...); ok {
			add("project", checkOK, line(roots[0])+" is a trusted project: Codex loads its .codex/")
		} else {
			add("project", checkProblem, "Codex loads "+line(filepath.Join(t.project, ".codex"))+" only in a trusted project, and "+line(roots[0])+
				" is not one: start codex there and trust it, or add [projects."+line(strconv.Quote(roots[0]))+`] trust_level = "trusted" to `+line(cfgPath))
		}
	}
	if n := codexInlineOurs(cfg); n > 0 {
		add("inline", checkWarning, fmt.Sprintf("%s has %d approve-tui hook(s) inline under [hooks] as well: the hook runs twice; remove them", line(cfgPath), n))
	}
	return checks
}

// geminiSwitchCheck: the hooks system is on, and approve-tui not disabled.
// Gemini CLI 0.61 merges, later overriding earlier: the system defaults,
// the user's settings, the folder's (the agent's to write), then the
// system settings ($GEMINI_CLI_SYSTEM_SETTINGS_PATH, /etc/gemini-cli/
// settings.json); each is JSON with comments. A file that cannot be read
// or parsed is a problem: what it says cannot be known.
func (a *app) geminiSwitchCheck(settings *agent.JSONObject, t *installTarget) (string, string) {
	sys := a.getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	if sys == "" {
		sys = "/etc/gemini-cli/settings.json"
	}
	defaults := a.getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
	if defaults == "" {
		defaults = filepath.Join(filepath.Dir(sys), "system-defaults.json")
	}
	var files []*agent.JSONObject
	var names []string
	for _, p := range []string{defaults, filepath.Join(a.geminiDir(t.home), "settings.json"), filepath.Join(t.dir, ".gemini", "settings.json"), sys} {
		if slices.Contains(names, p) {
			continue
		}
		if p == t.settings {
			files, names = append(files, settings), append(names, p)
			continue
		}
		src, ok, err := readSettings(p)
		if err != nil {
			return checkProblem, line(p) + ": " + line(err.Error()) + ": cannot tell whether it turns hooks off"
		}
		if !ok {
			continue
		}
		f, err := agent.ParseJSONObject(agent.StripJSONComments(src))
		if err != nil {
			return checkProblem, line(p) + " is " + line(err.Error()) + ": cannot tell whether it turns hooks off; fix it"
		}
		files, names = append(files, f), append(names, p)
	}
	enabled, where := true, "unset: on by default in Gemini CLI 0.61"
	for i, f := range files {
		hc, ok := f.Object("hooksConfig")
		if !ok {
			continue
		}
		if v, has := hc.Get("enabled"); has {
			enabled = v == true
			where = "hooksConfig.enabled in " + line(names[i])
		}
		if geminiDisabled(hc) {
			return checkProblem, "hooksConfig.disabled in " + line(names[i]) + " lists approve-tui: remove it"
		}
	}
	if !enabled {
		return checkProblem, "the hooks system is off (" + where + " is not true): set it to true"
	}
	return checkOK, "the hooks system is on (" + where + ")"
}

func (a *app) trustedFoldersPath(home string) string {
	if p := a.getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH"); p != "" {
		return p
	}
	return filepath.Join(a.geminiDir(home), "trustedFolders.json")
}

// geminiFolderTrusted decides, as Gemini CLI 0.61 does, whether it trusts
// dir: folder trust off in the user's settings (security.folderTrust.enabled
// false) trusts every folder; else the longest rule of trustedFolders.json
// whose folder holds dir (TRUST_PARENT: the rule's parent) decides, and no
// rule is untrusted. It says why.
func (a *app) geminiFolderTrusted(home, dir string) (bool, string) {
	if a.getenv("GEMINI_RESTRICTED_MODE") == "true" || a.getenv("GEMINI_CLI_TRUST_WORKSPACE") == "false" {
		return false, "this shell sets GEMINI_RESTRICTED_MODE=true or GEMINI_CLI_TRUST_WORKSPACE=false: no folder is trusted"
	}
	if a.getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		return true, "this shell sets GEMINI_CLI_TRUST_WORKSPACE=true: gemini started from it trusts every folder"
	}
	if src, ok, err := readSettings(filepath.Join(a.geminiDir(home), "settings.json")); err == nil && ok {
		if s, err := agent.ParseJSONObject(agent.StripJSONComments(src)); err == nil {
			if sec, ok := s.Object("security"); ok {
				if ft, ok := sec.Object("folderTrust"); ok {
					if v, has := ft.Get("enabled"); has && v == false {
						return true, "folder trust is off (security.folderTrust.enabled false): every folder is trusted"
					}
				}
			}
		}
	}
	path := a.trustedFoldersPath(home)
	src, ok, err := readSettings(path)
	if err != nil {
		return false, line(path) + ": " + line(err.Error())
	}
	if !ok {
		return false, "no folder is trusted yet (" + line(path) + " does not exist)"
	}
	rules, err := agent.ParseJSONObject(agent.StripJSONComments(src))
	if err != nil {
		return false, line(path) + " is " + line(err.Error()) + " (Gemini CLI refuses to start on an invalid file)"
	}
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	best, level, rule := -1, "", ""
	for _, k := range rules.Keys() {
		v, _ := rules.Get(k)
		l, _ := v.(string)
		eff := k
		if l == "TRUST_PARENT" {
			eff = filepath.Dir(k)
		}
		eff = real(eff)
		if (dir == eff || strings.HasPrefix(dir, strings.TrimSuffix(eff, string(filepath.Separator))+string(filepath.Separator))) && len(k) > best {
			best, level, rule = len(k), l, k
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return true, line(dir) + " is trusted (" + line(path) + ": " + strconv.Quote(line(rule)) + " " + level + ")"
	case "DO_NOT_TRUST":
		return false, line(dir) + " is marked DO_NOT_TRUST (" + strconv.Quote(line(rule)) + " in " + line(path) + ")"
	case "":
		return false, line(dir) + " is not trusted (no rule in " + line(path) + " covers it)"
	}
	return false, line(path) + ": " + strconv.Quote(line(rule)) + " has trust level " + strconv.Quote(line(level)) + ", which Gemini CLI refuses"
}

// checkHookUnasked says what the hook lets through without asking: its
// --unasked, else this user's configuration file's risk: unasked, else
// the default.
func (a *app) checkHookUnasked(words []string, install string) (string, string) {
	what := map[string]string{
		config.UnaskedNothing:  "every command is asked",
		config.UnaskedReadOnly: "only what is proven read-only goes without asking",
		config.UnaskedLow:      "everything judged low goes without asking",
	}
	if v, ok := agent.FlagValue(words, "unasked"); ok {
		if _, known := what[v]; !known {
			return checkProblem, "--unasked " + strconv.Quote(line(v)) + " is not one of " + strings.Join(config.UnaskedModes, ", ") + ": the hook denies every call; " + install
		}
		return checkOK, v + " (--unasked): " + what[v]
	}
	f, err := a.loadConfig()
	if err != nil {
		return checkProblem, "the configuration file has problems: the hook denies every call (" + line(err.Error()) + ")"
	}
	for _, s := range f.Settings("risk") {
		if s.Key == "unasked" {
			return checkOK, fmt.Sprintf("%s (%s:%d, risk: unasked; the agent's $APPROVE_TUI_CONFIG or $XDG_CONFIG_HOME may name another file): %s", s.Value, line(f.Path), s.Line, what[s.Value])
		}
	}
	return checkOK, config.DefaultUnasked + " (the default): " + what[config.DefaultUnasked]
}

// checkHookTrust says whether the hook, run as this user with this
// configuration, checks signatures before letting a command through, and
// whether the agent could turn that off.
func (a *app) checkHookTrust() (string, string) {
	f, err := a.loadConfig()
	if err != nil {
		return checkProblem, "the configuration cannot be read: " + line(err.Error()) + "; the hook refuses every approval until it can"
	}
	tc, from := f.TrustFor(config.AgentSide)
	ts, err := f.TrustSettings(storage.DefaultIdentity(a.db), config.AgentSide)
	switch {
	case err != nil:
		return checkProblem, "the hook refuses every approval: " + line(err.Error())
	case ts == nil:
		where := "no trust: section"
		if from.Path != "" {
			where = line(from.String())
		}
		return checkOK, "off (" + where + "): approvals are not signed, as for one person on a laptop; where the agent and its approvers are " +
			"not one person, an approval is a row the agent's user can write: sign them (docs/policy.md: Signed approvals)"
	case !from.System:
		return checkWarning, "required (" + line(from.String()) + "), but the agent sets the environment and may write that file, so it can turn it off: " +
			"anchor the trust: section in " + line(a.systemPath) + ", owned by root"
	}
	return checkOK, "required (" + line(from.String()) + "): a command runs only with enough valid signatures from " + line(tc.AllowedSigners)
}
