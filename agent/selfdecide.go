package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/shell"
)

// An agent often runs as the operator's own user: a command it asks to run
// could then approve its own proposals (`approve-tui approve ID --confirm
// ID` in a second tool call) or write the store directly (`sqlite3
// ~/.hermes/state.db "update gateway_approvals …"`). Such a command is
// never let through unseen, by any surface (every hook and run): it is
// raised to at least high, always a proposal the operator sees, never
// allowed under --low allow, never counted as low.
//
// selfDecides is that one rule. It parses the command as the shell would
// (mvdan.cc/sh, as the impact preview does) and looks at every simple
// command in it, in substitutions too, and at the scripts given to shells
// (sh -c, eval, su -c, ssh) in turn:
//   - the approve-tui binary (named approve-tui, or any path or name that
//     is this executable's file) run directly or after a command that runs
//     what follows it (sudo, env, xargs, find -exec, timeout, …: every word
//     after such a command is tried as the start of a command), with a
//     subcommand that is not one of the read-only ones (list, show, audit,
//     stats, wait, submit, run, hook, …); with no subcommand it is the
//     console, where approvals are decided;
//   - a command whose name cannot be known (`$X approve ID`) with a
//     deciding subcommand among its words;
//   - any word that names the store's file (the path in use, its -wal,
//     -shm and -journal, and state.db under HERMES_HOME): by its base name
//     anywhere in the word, by its absolute path, or as a glob that matches
//     it;
//   - any word naming one of the store's tables (gateway_approvals,
//     approve_tui_*), as SQL given to sqlite3, psql or a script would;
//   - psql or pgcli when the store is PostgreSQL;
//   - within any one word, "approve-tui" followed by a deciding subcommand
//     (a script handed to an interpreter: python -c "os.system(…)").
//
// It cannot see everything a program may do once run (a copy of the binary
// made by the same command under another name, a script file written
// earlier): the boundary that holds is running the agent as its own OS
// user (docs/guarantees.md, Trust boundary).
//
// store is the store in use as given (a path, relative to this process's
// directory, sqlite:PATH, or a postgres URL; "" for none known); env is
// the environment the command runs in; cwd its working directory. The answer is the reason, "" when the rule does
// not apply.
func selfDecides(command, cwd, store string, env []string) string {
	c := newSelfCheck(cwd, store, env)
	if c.script(command, 0) {
		return SelfDecideReason
	}
	return ""
}

// SelfDecideReason is the reason a command raised by selfDecides gives.
const SelfDecideReason = "it would decide an approval itself (approve-tui's deciding commands or the approval store); only an operator may"

// raiseSelf raises d to high when why (selfDecides' answer for its
// command) says it would decide approvals, and says so: in the raise, or,
// when the judgement is high already (a write to the store is), in the
// reason's notes, so that the operator always reads that the agent would
// decide an approval itself.
func raiseSelf(d *risk.Draft, why string) {
	if why != "" {
		raiseAtLeast(d, model.RiskHigh, why, why)
	}
}

// raiseAtLeast raises d to level with raiseWhy when its judgement (or a
// raise already made) is below level; when it is at level or above
// already, note is added to its notes instead, so the operator reads it
// either way.
func raiseAtLeast(d *risk.Draft, level model.RiskLevel, raiseWhy, note string) {
	pinned := risk.Judge(d.Command, d.JudgeContext()).Level
	if d.Raise.Valid() && d.Raise.Rank() > pinned.Rank() {
		pinned = d.Raise
	}
	if pinned.Rank() < level.Rank() {
		d.Raise, d.RaiseWhy = level, raiseWhy
		return
	}
	if d.Notes != "" {
		d.Notes += "; "
	}
	d.Notes += note
}

type selfCheck struct {
	cwd      string
	cfg      *expand.Config
	files    []string // absolute paths of the store's files
	bases    []string // their base names
	postgres bool
	exe      os.FileInfo // this executable, when known
	pathEnv  string
}

func newSelfCheck(cwd, store string, env []string) *selfCheck {
	c := &selfCheck{cwd: cwd}
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	c.pathEnv = vars["PATH"]
	c.cfg = &expand.Config{Env: expand.ListEnviron(env...)}
	add := func(p string) {
		if p == "" {
			return
		}
		// A relative store path is opened from this process's directory,
		// not from the command's.
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		p = filepath.Clean(p)
		c.files = append(c.files, p)
		c.bases = append(c.bases, filepath.Base(p))
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			c.files = append(c.files, r)
			c.bases = append(c.bases, filepath.Base(r))
		}
	}
	switch {
	case strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://"):
		c.postgres = true
	case strings.HasPrefix(store, "sqlite:"):
		add(strings.TrimPrefix(store, "sqlite:"))
	default:
		add(store)
	}
	home := vars["HERMES_HOME"]
	if home == "" {
		if h := vars["HOME"]; h != "" {
			home = filepath.Join(h, ".hermes")
		} else if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".hermes")
		}
	}
	if home != "" {
		add(filepath.Join(home, "state.db"))
	}
	if p, err := os.Executable(); err == nil {
		if fi, err := os.Stat(p); err == nil {
			c.exe = fi
		}
	}
	return c
}

// maxSelfDepth bounds scripts within scripts.
const maxSelfDepth = 8

// script reports whether the shell script src would decide approvals. It
// is read by shell.Parse: every simple command (in substitutions, in
// scripts run by shells, su -c, ssh, eval, watch, find -exec ...), with the
// wrappers it runs through (sudo, env, xargs, timeout, nice, docker exec
// ...) looked through, and every word the line holds. A script that
// cannot be read is looked at word by word.
func (c *selfCheck) script(src string, depth int) bool {
	if depth > maxSelfDepth {
		return c.text(src) // too deep to parse: its text alone
	}
	s, err := shell.Parse(src, shell.Options{})
	if err != nil && c.text(src) {
		return true
	}
	if s == nil {
		return c.words(strings.Fields(src), depth)
	}
	if err != nil && c.words(strings.Fields(src), depth) {
		return true // read in part (nested too deep): the words too
	}
	seen := func(ws ...shell.Word) bool {
		for _, w := range ws {
			for _, v := range c.values(w) {
				if c.text(v) || c.namesStore(v) {
					return true
				}
			}
		}
		return false
	}
	if seen(s.Others...) {
		return true
	}
	for _, cmd := range s.Commands {
		words := slices.Clone(cmd.Words)
		for _, a := range cmd.Assigns {
			words = append(words, a.Value)
		}
		for _, r := range cmd.Redirs {
			words = append(words, r.Target)
		}
		for _, w := range cmd.Wrappers {
			words = append(words, w.Args...)
			for _, a := range w.Env {
				words = append(words, a.Value)
			}
		}
		if seen(words...) {
			return true
		}
		if cmd.Opaque != nil && cmd.Opaque.Code != "" && c.text(cmd.Opaque.Code) {
			return true
		}
		args := make([]string, 0, len(cmd.Words))
		for _, w := range cmd.Words {
			if w.Known {
				args = append(args, w.Value)
			} else {
				args = append(args, "\x00"+unquoted(w.Raw)) // not known for sure
			}
		}
		if c.words(args, depth) {
			return true
		}
	}
	return false
}

// values are word w's readings to look at: its certain value and the word
// as written; a word not certain to shell.Parse (which assumes nothing of
// the environment) is expanded with the command's environment too (~,
// $HOME, $DB), when that is certain.
func (c *selfCheck) values(w shell.Word) []string {
	raw := unquoted(w.Raw)
	if w.Known {
		if w.Value == raw {
			return []string{raw}
		}
		return []string{w.Value, raw}
	}
	if v, ok := c.expand(w.Raw); ok && v != raw {
		return []string{v, raw}
	}
	return []string{"\x00" + raw, raw}
}

// expand is word raw (as written) expanded with the command's environment,
// when it is one word for sure.
func (c *selfCheck) expand(raw string) (string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(raw), "")
	if err != nil || len(f.Stmts) != 1 {
		return "", false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 || len(call.Assigns) > 0 || len(f.Stmts[0].Redirs) > 0 {
		return "", false
	}
	w := call.Args[0]
	safe := true
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			safe = false // expand would not run it, but says nothing sure
		}
		return safe
	})
	if !safe {
		return "", false
	}
	fields, err := expand.Fields(c.cfg, w)
	if err != nil || len(fields) != 1 {
		return "", false
	}
	return fields[0], true
}

// unquoted is s with one level of plain quotes around it stripped.
func unquoted(s string) string {
	u, _ := unquote(s)
	return u
}

// unquote strips one level of plain quotes around s.
func unquote(s string) (string, bool) {
	if len(s) >= 2 && (s[0] == '\'' && s[len(s)-1] == '\'' || s[0] == '"' && s[len(s)-1] == '"' && !strings.ContainsAny(s[1:len(s)-1], "$`\\")) {
		return s[1 : len(s)-1], true
	}
	return s, false
}

// unknownWord: the word could not be expanded for sure.
func unknownWord(a string) bool { return strings.HasPrefix(a, "\x00") }

// runsNext are commands that run a command given in their words: every
// word after one is tried as the start of a command.
var runsNext = map[string]bool{"sudo": true, "doas": true, "env": true, "command": true, "builtin": true,
	"exec": true, "nohup": true, "nice": true, "time": true, "ionice": true, "timeout": true, "stdbuf": true,
	"setsid": true, "xargs": true, "find": true, "chroot": true, "flock": true, "watch": true, "runuser": true,
	"unbuffer": true, "systemd-run": true, "strace": true, "ltrace": true, "nsenter": true, "firejail": true,
	"parallel": true, "chrt": true, "taskset": true, "setpriv": true, "sg": true, "script": true, "busybox": true,
	"faketime": true, "torsocks": true, "proxychains": true, "daemonize": true, "start-stop-daemon": true}

// shells run the scripts given in their words (each word is parsed as one
// in turn, as are all of them joined).
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
	"ash": true, "fish": true, "eval": true, "su": true, "ssh": true, "tmux": true, "screen": true, "script": true,
	"busybox": true, "runuser": true, "sudo": true}

// words reports whether the simple command args would decide approvals.
func (c *selfCheck) words(args []string, depth int) bool {
	for i := range args {
		if c.command(args[i:], depth) {
			return true
		}
		if i == 0 && !unknownWord(args[0]) && !runsNext[filepath.Base(args[0])] && !shells[filepath.Base(args[0])] {
			return false // an ordinary command: its words are its own
		}
	}
	return false
}

// command reports whether args, run as a command, would decide approvals.
func (c *selfCheck) command(args []string, depth int) bool {
	if len(args) == 0 {
		return false
	}
	name := args[0]
	if unknownWord(name) {
		// What runs is not known: a deciding subcommand among its words
		// says enough.
		for _, a := range args[1:] {
			if !unknownWord(a) && decidingWord[a] {
				return true
			}
		}
		return strings.Contains(name, "approve-tui")
	}
	base := filepath.Base(name)
	switch {
	case c.isSelf(name):
		return decides(args[1:])
	case c.postgres && (base == "psql" || base == "pgcli"):
		return true
	case shells[base]:
		rest := make([]string, 0, len(args)-1)
		for _, a := range args[1:] {
			if !unknownWord(a) {
				rest = append(rest, a)
			}
		}
		for _, a := range rest {
			if c.script(a, depth+1) {
				return true
			}
		}
		return len(rest) > 1 && c.script(strings.Join(rest, " "), depth+1)
	}
	return false
}

// isSelf: name runs this program.
func (c *selfCheck) isSelf(name string) bool {
	if b := filepath.Base(name); b == "approve-tui" || strings.HasPrefix(b, "approve-tui.") {
		return true
	}
	if c.exe == nil {
		return false
	}
	p := name
	if !strings.Contains(name, "/") {
		found, err := lookPath(name, c.pathEnv)
		if err != nil {
			return false
		}
		p = found
	} else if !filepath.IsAbs(p) {
		if !filepath.IsAbs(c.cwd) {
			return false
		}
		p = filepath.Join(c.cwd, p)
	}
	fi, err := os.Stat(p)
	return err == nil && os.SameFile(fi, c.exe)
}

// lookPath finds name in the directories of path (the command's PATH).
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// readOnlyCommands are the approve-tui subcommands that decide nothing and
// write nothing an approval depends on (submit and run make proposals;
// they do not decide them). hook is not among them: a hook ends the
// proposal of a call its agent gave up on, or that its agent reports ran
// unapproved, on the strength of its input alone, which a command of the
// agent's own could forge; only "hook doctor" reads without writing.
var readOnlyCommands = map[string]bool{"list": true, "show": true, "audit": true, "stats": true, "version": true,
	"help": true, "completion": true, "man": true, "wait": true, "submit": true, "run": true,
	"notify": true, "config": true, "policy": true, "lockouts": true, "hermes": true}

// decidingWord are the words that make a subcommand decide, vote, set
// policy or write the store, wherever they appear among its words.
var decidingWord = map[string]bool{"approve": true, "deny": true, "expire": true, "set": true, "clear": true,
	"copy": true, "init": true, "record": true, "serve": true, "headless": true, "demo": true, "install": true,
	"console": true}

// globalValue are approve-tui's global options followed by a value.
var globalValue = map[string]bool{"--db": true, "--lock-timeout": true, "--color": true, "--config": true,
	"--follow": true, "--open": true}

// decides reports whether approve-tui run with args decides approvals:
// not a read-only subcommand, or a deciding word among its words. Without
// a subcommand it is the console.
func decides(args []string) bool {
	var sub []string
	help := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case unknownWord(a):
			return true // a word not known for sure could be anything
		case a == "--":
			sub = append(sub, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
			if a == "-h" || a == "--help" || a == "--version" {
				help = true
			}
			if len(sub) == 0 && globalValue[a] {
				i++
			}
		default:
			sub = append(sub, a)
		}
	}
	for _, a := range sub {
		if decidingWord[a] {
			return true
		}
	}
	if len(sub) == 0 {
		return !help
	}
	if sub[0] == "hook" {
		return !help && (len(sub) < 2 || sub[1] != "doctor")
	}
	return !readOnlyCommands[sub[0]]
}

// storeTables are the store's tables, as SQL would name them (in any
// case).
var storeTables = []string{"gateway_approval", "approve_tui_answers", "approve_tui_audit", "approve_tui_deliveries",
	"approve_tui_meta", "approve_tui_migrations", "approve_tui_notifiers", "approve_tui_policy", "approve_tui_presence",
	"approve_tui_rank", "approve_tui_votes", "approve_tui_waiters"}

// namesTable: v names one of the store's tables.
func namesTable(v string) bool {
	l := strings.ToLower(v)
	for _, t := range storeTables {
		if strings.Contains(l, t) {
			return true
		}
	}
	return false
}

// text reports whether the text of one word would decide approvals on its
// own: it names the store's tables, or runs approve-tui with a deciding
// subcommand inside it (a script handed to an interpreter).
func (c *selfCheck) text(v string) bool {
	v = strings.TrimPrefix(v, "\x00")
	if namesTable(v) {
		return true
	}
	for _, b := range c.bases {
		if strings.Contains(v, b) {
			return true
		}
	}
	if !strings.Contains(v, "approve-tui") {
		return false
	}
	toks := strings.FieldsFunc(v, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	for i, t := range toks {
		if filepath.Base(t) != "approve-tui" {
			continue
		}
		// Its subcommand: the first word after its options.
		for j := i + 1; j < len(toks); j++ {
			if strings.HasPrefix(toks[j], "-") {
				if globalValue[toks[j]] {
					j++
				}
				continue
			}
			if decidingWord[toks[j]] {
				return true
			}
			break
		}
	}
	return false
}

// namesStore reports whether word value v names one of the store's files:
// by path (relative to the working directory) or as a glob matching it.
func (c *selfCheck) namesStore(v string) bool {
	if unknownWord(v) || v == "" {
		return false
	}
	// An option's value (--db=PATH, of=PATH) names a file too.
	cands := []string{v}
	if _, after, ok := strings.Cut(v, "="); ok {
		cands = append(cands, after)
	}
	for _, p := range cands {
		if !filepath.IsAbs(p) {
			if !filepath.IsAbs(c.cwd) {
				continue
			}
			p = filepath.Join(c.cwd, p)
		}
		p = filepath.Clean(p)
		paths := []string{p}
		if strings.ContainsAny(p, "*?[") {
			if m, err := filepath.Glob(p); err == nil {
				paths = append(paths, m...)
			}
		}
		for _, q := range paths {
			for _, f := range c.files {
				if q == f || strings.HasPrefix(q, f+"-") {
					return true
				}
				if r, err := filepath.EvalSymlinks(q); err == nil && (r == f || strings.HasPrefix(r, f+"-")) {
					return true
				}
			}
		}
	}
	return false
}
