package hermes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The doctor: whether Hermes will hand its approval prompts to
// approve-tui, each check with how to fix what it finds. It reads
// config.yaml, the plugin's directory, the binary the plugin would run and
// the store it would use; it changes nothing (the store is opened
// read-only, never created or migrated).

// OperatorMin is the least time approvals.timeout must leave an operator
// once `hook hermes` has taken agent.HermesMargin off it.
const OperatorMin = 30 * time.Second

// DefaultTimeout is Hermes' approvals.timeout when config.yaml has none,
// in seconds.
const DefaultTimeout = 300

// The statuses of a check.
const (
	CheckOK      = "ok"
	CheckWarning = "warning"
	CheckProblem = "problem"
)

// Check is one line of the doctor's report.
type Check struct {
	Name, Status, Message string
}

// DoctorEnv is what the doctor reads of the process that runs it: the
// checks run as this user, in this shell's environment.
type DoctorEnv struct {
	// Home is Hermes' home (absolute); HomeFlag is --hermes-home as given
	// ("" when it was not), for the fixes to name it.
	Home, HomeFlag string
	Getenv         func(string) string
	// LockTimeout bounds the wait for another process's lock on the store.
	LockTimeout time.Duration
	// Version is this binary's --version line ("approve-tui 1.2.3 ...").
	Version string
	// LookPath finds a program on this shell's PATH.
	LookPath func(name string) (string, bool)
	// BinaryVersion runs a program with --version and returns its first
	// line, which must be approve-tui's.
	BinaryVersion func(ctx context.Context, path string) (string, error)
}

// Fix is the command that fixes something in home: argv, with
// --hermes-home when it was given (homeFlag), sanitised for printing.
func Fix(homeFlag, home string, argv ...string) string {
	if homeFlag != "" {
		argv = append(argv, "--hermes-home", home)
	}
	return line(agent.QuoteArgs(argv))
}

// line sanitises foreign text (config values, paths, errors) for one line.
func line(s string) string { return model.Sanitize(s, model.Line) }

// Advice is what config.yaml lacks for the plugin and the store
// install made ready.
type Advice struct {
	// State: configured (nothing to add), incomplete, missing (no file) or
	// unreadable (it does not parse, or cannot be read).
	State string
	// Snippet is the YAML to merge in ("" when configured).
	Snippet string
	Notes   []string
}

// Advise compares cfg with what the plugin needs to use the store at
// storePath (its path, or its URL with the password shown as xxxxx:
// passwordHidden).
func Advise(cfg *Config, home, storePath string, passwordHidden bool) Advice {
	var adv Advice
	readable := !cfg.Missing && cfg.Problem == ""

	// settings.db: the store s, unless it is the plugin's default and the
	// config names no other.
	defaultDB := filepath.Join(home, "state.db")
	want := storePath
	cfgDB, hasDB, _ := setting(cfg, pluginSettings, "db")
	needDB := want != defaultDB
	if readable && hasDB {
		needDB = !sameStore(cfgDB, want)
	}
	needEnabled, needTransport := true, true
	if readable {
		needEnabled = !cfg.listHas(PluginName, "plugins", "enabled")
		t, ok := cfg.str("security", "approval", "transport")
		needTransport = !ok || t != TransportName
		if v, has := cfg.get("security", "approval", "transport"); has && v != nil && needTransport {
			adv.Notes = append(adv.Notes, "security.approval.transport is "+yamlValue(v)+" now: replace it with "+TransportName)
		}
		if cfg.listHas(PluginName, "plugins", "disabled") {
			adv.Notes = append(adv.Notes, "remove "+PluginName+" from plugins.disabled in "+line(cfg.Path))
		}
		if hasDB && needDB {
			adv.Notes = append(adv.Notes, "settings.db is "+yamlValue(cfgDB)+" now: replace it, or the plugin uses that store")
		}
	}
	if needDB && passwordHidden {
		adv.Notes = append(adv.Notes, "the URL's password is shown as xxxxx: put it there, or leave it out and give it to Hermes' service in ~/.pgpass or PGPASSWORD")
	}
	var b strings.Builder
	if needEnabled || needDB {
		b.WriteString("plugins:\n")
		if needEnabled {
			b.WriteString("  enabled:\n    - " + PluginName + "\n")
		}
		if needDB {
			b.WriteString("  entries:\n    " + PluginName + ":\n      settings:\n        db: " + yamlScalar(want) + "\n")
		}
	}
	if needTransport {
		b.WriteString("security:\n  approval:\n    transport: " + TransportName + "\n")
	}
	adv.Snippet = b.String()
	switch {
	case cfg.Missing:
		adv.State = "missing"
	case cfg.Problem != "":
		adv.State = "unreadable"
	case adv.Snippet == "" && len(adv.Notes) == 0:
		adv.State = "configured"
	default:
		adv.State = "incomplete"
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

// Config is Hermes' config.yaml as read.
type Config struct {
	Path    string
	Missing bool
	// problem: why it could not be read or parsed, sanitised ("" when it
	// was read); a parse error starts with path:line:column.
	Problem string
	root    map[string]any
}

func LoadConfig(path string) *Config {
	c := &Config{Path: path, root: map[string]any{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Missing = true
		return c
	case err != nil:
		c.Problem = line(err.Error())
		return c
	}
	var v any
	// Hermes reads it with PyYAML, which lets a later duplicate key win.
	if err := yaml.UnmarshalWithOptions(data, &v, yaml.AllowDuplicateMapKey()); err != nil {
		c.Problem = yamlProblem(path, err)
		return c
	}
	switch m := v.(type) {
	case nil:
	case map[string]any:
		c.root = m
	default:
		c.Problem = line(path) + ": the document is not a mapping of keys"
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
func (c *Config) get(keys ...string) (v any, has bool) {
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
func (c *Config) str(keys ...string) (string, bool) {
	v, _ := c.get(keys...)
	s, ok := v.(string)
	return s, ok
}

// listHas reports whether the list at keys holds the string want.
func (c *Config) listHas(want string, keys ...string) bool {
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

// Doctor runs every check of what Hermes needs to hand its approval
// prompts to approve-tui, in order: plugin, config, enabled, transport,
// fallback, mode, timeout, binary and store. It changes nothing.
func Doctor(ctx context.Context, env DoctorEnv) []Check {
	var checks []Check
	add := func(name, status, msg string) { checks = append(checks, Check{name, status, msg}) }
	home := env.Home
	install := "run " + Fix(env.HomeFlag, home, "approve-tui", "hermes", "install")

	// plugin
	pdir := filepath.Join(home, "plugins", PluginName)
	switch cmp, err := Compare(pdir); {
	case err != nil:
		add("plugin", CheckProblem, "cannot read the plugin: "+line(err.Error())+"; fix that, then "+install)
	case cmp.DirMissing:
		add("plugin", CheckProblem, "not installed ("+line(pdir)+" does not exist): "+install)
	case !cmp.Current():
		var what []string
		if len(cmp.Missing) > 0 {
			what = append(what, "missing "+strings.Join(cmp.Missing, ", "))
		}
		if len(cmp.Differ) > 0 {
			what = append(what, "different "+strings.Join(cmp.Differ, ", "))
		}
		add("plugin", CheckProblem, line(pdir)+" is not this approve-tui's copy ("+strings.Join(what, "; ")+"): "+install)
	default:
		add("plugin", CheckOK, line(pdir)+" is installed and current")
	}

	// config
	cfg := LoadConfig(filepath.Join(home, "config.yaml"))
	cpath := line(cfg.Path)
	switch {
	case cfg.Missing:
		add("config", CheckProblem, cpath+" does not exist: create it with the lines "+Fix(env.HomeFlag, home, "approve-tui", "hermes", "install")+" prints")
	case cfg.Problem != "":
		add("config", CheckProblem, cfg.Problem+": fix the YAML (Hermes cannot read it either)")
	default:
		add("config", CheckOK, cpath+" parses")
	}
	unread := cfg.Problem != ""
	notChecked := "not checked: " + cpath + " cannot be read"

	// enabled
	if unread {
		add("enabled", CheckProblem, notChecked)
	} else {
		var bad []string
		switch v, has := cfg.get("plugins", "enabled"); {
		case !has || v == nil:
			bad = append(bad, "plugins.enabled is not set (Hermes loads only the plugins listed there): add "+PluginName+" to it")
		case !isList(v):
			bad = append(bad, "plugins.enabled is "+yamlValue(v)+", not a list: make it a list that holds "+PluginName)
		case !cfg.listHas(PluginName, "plugins", "enabled"):
			bad = append(bad, PluginName+" is not in plugins.enabled (Hermes loads only the plugins listed there): add it")
		}
		if cfg.listHas(PluginName, "plugins", "disabled") {
			bad = append(bad, PluginName+" is in plugins.disabled: remove it from there")
		}
		if len(bad) > 0 {
			add("enabled", CheckProblem, strings.Join(bad, "; "))
		} else {
			add("enabled", CheckOK, PluginName+" is in plugins.enabled")
		}
	}

	// transport
	switch v, has := cfg.get("security", "approval", "transport"); {
	case unread:
		add("transport", CheckProblem, notChecked)
	case !has || v == nil:
		add("transport", CheckProblem, "security.approval.transport is not set, so Hermes asks with its own prompt: set it to "+TransportName)
	case v == TransportName:
		add("transport", CheckOK, "security.approval.transport is "+TransportName)
	default:
		add("transport", CheckProblem, "security.approval.transport is "+yamlValue(v)+": set it to "+TransportName)
	}

	// fallback
	switch v, has := cfg.get("security", "approval", "transport_fallback"); {
	case unread:
		add("fallback", CheckProblem, notChecked)
	case !has || v == nil:
		add("fallback", CheckOK, "security.approval.transport_fallback is not set (deny: when approve-tui fails, Hermes denies)")
	case v == "deny":
		add("fallback", CheckOK, "security.approval.transport_fallback is deny (when approve-tui fails, Hermes denies)")
	case v == "builtin":
		add("fallback", CheckWarning, "security.approval.transport_fallback is builtin: when approve-tui fails (binary missing, store locked, a crash), Hermes shows its own prompt instead of denying; set it to deny to fail closed")
	default:
		add("fallback", CheckProblem, "security.approval.transport_fallback is "+yamlValue(v)+": want deny (or builtin)")
	}

	// mode
	switch v, has := cfg.get("approvals", "mode"); {
	case unread:
		add("mode", CheckProblem, notChecked)
	case !has || v == nil:
		add("mode", CheckOK, "approvals.mode is not set (manual)")
	case v == false || (isString(v) && strings.EqualFold(v.(string), "off")):
		// PyYAML reads a bare off as false.
		add("mode", CheckProblem, "approvals.mode is off: Hermes asks nobody, approve-tui included; set it to manual (or smart)")
	case v == "manual" || v == "smart":
		add("mode", CheckOK, "approvals.mode is "+v.(string))
	default:
		add("mode", CheckProblem, "approvals.mode is "+yamlValue(v)+": want manual or smart")
	}

	// timeout
	if unread {
		add("timeout", CheckProblem, notChecked)
	} else {
		status, msg := checkTimeout(cfg)
		add("timeout", status, msg)
	}

	// binary and store
	status, msg := checkBinary(ctx, env, cfg, pluginSettings, unread)
	add("binary", status, msg)
	status, msg = checkStore(ctx, env, cfg, pluginSettings, unread)
	add("store", status, msg)
	return checks
}

func isList(v any) bool   { _, ok := v.([]any); return ok }
func isString(v any) bool { _, ok := v.(string); return ok }

// checkTimeout: approvals.timeout less agent.HermesMargin must leave an
// operator OperatorMin.
func checkTimeout(cfg *Config) (string, string) {
	secs, given := float64(DefaultTimeout), false
	switch v, has := cfg.get("approvals", "timeout"); {
	case !has || v == nil:
	default:
		n, ok := yamlNumber(v)
		if !ok {
			return CheckProblem, "approvals.timeout is " + yamlValue(v) + ", not a number of seconds: set it to " + strconv.Itoa(DefaultTimeout) + " (the default) or more"
		}
		secs, given = n, true
	}
	minSecs := int(math.Ceil((OperatorMin + agent.HermesMargin).Seconds()))
	num := strconv.FormatFloat(secs, 'f', -1, 64)
	what := "approvals.timeout is " + num + "s"
	if !given {
		what = "approvals.timeout is not set (" + num + "s)"
	}
	left := time.Duration(secs*float64(time.Second)) - agent.HermesMargin
	margin := human.Duration(agent.HermesMargin)
	if left < OperatorMin {
		leaves := "leaves an operator no time"
		if left > 0 {
			leaves = "leaves an operator " + human.Duration(left)
		}
		return CheckProblem, fmt.Sprintf("%s, which after approve-tui's %s margin %s (want at least %s): set it to %d or more",
			what, margin, leaves, human.Duration(OperatorMin), minSecs)
	}
	return CheckOK, fmt.Sprintf("%s: an operator has %s to decide (approve-tui answers %s before Hermes' deadline)", what, human.Duration(left), margin)
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
var pluginSettings = []string{"plugins", "entries", PluginName, "settings"}

// setting is the plugin's setting key as the plugin reads it: trimmed,
// with a leading ~ expanded; empty is unset. A value that is not a string
// is a problem message.
func setting(cfg *Config, settings []string, key string) (val string, has bool, problem string) {
	v, has := cfg.get(append(append([]string(nil), settings...), key)...)
	if !has || v == nil {
		return "", false, ""
	}
	s, ok := v.(string)
	if !ok {
		return "", true, "settings." + key + " is " + yamlValue(v) + ", not a path: fix plugins.entries." + PluginName + ".settings." + key
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
func checkBinary(ctx context.Context, env DoctorEnv, cfg *Config, settings []string, unread bool) (string, string) {
	bin, has, bad := setting(cfg, settings, "binary")
	if bad != "" {
		return CheckProblem, bad
	}
	from, onPath := "settings.binary", false
	if !has {
		if bin = strings.TrimSpace(env.Getenv("APPROVE_TUI_BIN")); bin != "" {
			from, bin = "$APPROVE_TUI_BIN", expandHome(bin)
		} else {
			bin, from, onPath = "approve-tui", "PATH", true
		}
	}
	if unread && !has {
		from += ", config.yaml unread"
	}
	setIt := "set plugins.entries." + PluginName + ".settings.binary to its absolute path"
	path := bin
	if onPath {
		p, ok := env.LookPath(bin)
		if !ok {
			return CheckProblem, "approve-tui is not on this shell's PATH: install it there, or " + setIt
		}
		path = p
	}
	shown := line(path) + " (from " + from + ")"
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return CheckProblem, shown + " does not exist: install approve-tui there, or " + setIt
	case err != nil:
		return CheckProblem, shown + ": " + line(err.Error())
	case !fi.Mode().IsRegular():
		return CheckProblem, shown + " is not a regular file: " + setIt
	}
	if err := syscall.Access(path, 1 /* X_OK */); err != nil {
		return CheckProblem, shown + " is not executable by this user: chmod +x it, or " + setIt
	}
	ver, err := env.BinaryVersion(ctx, path)
	if err != nil {
		return CheckProblem, shown + " --version: " + line(err.Error()) + ": " + setIt + " (an approve-tui)"
	}
	msg := shown + " is " + line(ver)
	status := CheckOK
	if mine := env.Version; ver != mine {
		status = CheckWarning
		msg += ", not this build (" + line(mine) + "): the plugin installed is this build's; install the same build at both"
	}
	if !onPath && !filepath.IsAbs(bin) {
		status = CheckWarning
		msg += "; " + relativeNote
	}
	if onPath {
		status = CheckWarning
		msg += "; a service's PATH may differ from this shell's: set plugins.entries." + PluginName + ".settings.binary: " + line(path)
	}
	return status, msg
}

// checkStore: the store the plugin would use exists, has the approval
// table and can be written by this user; nothing is created or changed.
func checkStore(ctx context.Context, env DoctorEnv, cfg *Config, settings []string, unread bool) (string, string) {
	db, has, bad := setting(cfg, settings, "db")
	if bad != "" {
		return CheckProblem, bad
	}
	home := env.Home
	from := "settings.db"
	if !has {
		if db = env.Getenv("APPROVE_TUI_DB"); db != "" {
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
		initFix = "run " + Fix(env.HomeFlag, home, "approve-tui", "hermes", "install")
	}
	shown := line(shownDB) + " (from " + from + ")"
	if !pg {
		p := strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:")
		switch fi, err := os.Stat(p); {
		case errors.Is(err, fs.ErrNotExist):
			return CheckProblem, shown + " does not exist: " + initFix
		case err != nil:
			return CheckProblem, shown + ": " + line(err.Error())
		case !fi.Mode().IsRegular():
			return CheckProblem, shown + " is not a regular file"
		}
	}
	// Read-only and without Create: a missing table is refused, not made,
	// and nothing is migrated.
	s, err := storage.Open(ctx, db, storage.Options{ReadOnly: true, BusyTimeout: env.LockTimeout})
	if err != nil {
		msg := shown + ": " + line(err.Error())
		if !strings.Contains(err.Error(), "approve-tui init") {
			msg += "; " + initFix
		}
		return CheckProblem, msg
	}
	rev := s.HermesRevision()
	s.Close()
	if pg {
		return CheckOK, shown + " has the approval table (Hermes revision " + rev + "); write permission is not checked on PostgreSQL"
	}
	if p := storage.WriteProblem(db); p != "" {
		return CheckProblem, shown + ": " + line(p) + "; the plugin, as this user, could not record decisions: fix its permissions"
	}
	msg := shown + " has the approval table (Hermes revision " + rev + ") and is writable by this user"
	if p := strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:"); !filepath.IsAbs(p) {
		return CheckWarning, msg + "; " + relativeNote
	}
	return CheckOK, msg
}

// relativeNote warns of a relative path in the plugin's settings.
const relativeNote = "the path is relative: the plugin resolves it against Hermes' working directory, this check against this shell's; use an absolute path"
