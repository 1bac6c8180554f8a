package impact

import (
	"path/filepath"
	"slices"
	"strings"

	parsed "github.com/approve-tui/approve-tui/shell"
)

// Commands that run other commands. Those whose command is on their
// command line for sure are looked through (their options skipped); the
// others, and those that run code from elsewhere (a file, the input, an
// alias), are named unknown: what they do cannot be seen here.

// opaque run a command this preview does not follow: in another root or
// namespace, as a service, from their input.
var opaque = map[string]string{
	"chroot":      "in another root",
	"unshare":     "in namespaces of its own",
	"nsenter":     "in another process's namespaces",
	"systemd-run": "as a service, elsewhere",
	"parallel":    "with operands from its input or its own arguments",
}

// unwrap looks through one command that runs another: the command it
// runs (handled false: args[0] is not such a command; nil: nothing left
// to look at, unknown named where it runs something). su, runuser, script
// and watch are read by shell.Through; what each runs is previewed as it
// would run (as another user, by $SHELL, by sh).
func (a *analysis) unwrap(args []string, text string) (inner []string, handled bool) {
	name := filepath.Base(args[0])
	if why, ok := opaque[name]; ok {
		a.unknown = append(a.unknown, text+" (runs a command "+why+")")
		return nil, true
	}
	switch name {
	case "su", "runuser", "script", "watch":
	default:
		return nil, false
	}
	st, _ := parsed.Through(certainWords(args))
	switch name {
	case "su", "runuser":
		switch {
		case st.Script != nil:
			a.asUser([]string{"bash", "-c", *st.Script}, text, st.Wrap.Login)
		case len(st.Inner) > 0:
			// runuser -u USER COMMAND...: run directly.
			a.asUser(values(st.Inner), text, st.Wrap.Login)
		case st.Opaque != nil:
			a.unknown = append(a.unknown, text+" (a shell reading its input, as another user)")
		}
	case "script":
		switch {
		case st.Script != nil:
			a.byShell(text, *st.Script)
		case st.Opaque != nil:
			a.unknown = append(a.unknown, text+" (an interactive shell on its input)")
		}
	case "watch":
		// watch COMMAND... runs sh -c "COMMAND..." (the words joined by
		// spaces), or the words themselves with -x.
		switch {
		case st.Script != nil:
			return []string{"sh", "-c", *st.Script}, true
		case len(st.Inner) > 0:
			return values(st.Inner), true
		}
	}
	return nil, true
}

// values are words' values (words the preview expanded itself).
func values(ws []parsed.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Value
	}
	return out
}

// byShell previews script as $SHELL -c script runs it (flock -c, script
// -c): $SHELL when it is a shell the preview follows, else unknown.
func (a *analysis) byShell(text, script string) {
	sh, ok := a.env["SHELL"] // not in it: /bin/sh
	shell := "sh"
	if ok && sh.state == varSet {
		shell = filepath.Base(sh.val)
	}
	if ok && sh.state == varUnknown || !shells[shell] {
		a.unknown = append(a.unknown, text+" (run by $SHELL, which is not known)")
		return
	}
	shellArgs(a, shell, []string{"-c", script})
}

var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

// asUser analyses args run as another user: its environment not known
// (HOME is theirs, their shell's startup is not seen), in their home for
// a login.
func (a *analysis) asUser(args []string, text string, login bool) {
	a.unknown = append(a.unknown, text+" (run as another user, by their shell)")
	a.env = map[string]shvar{}
	for _, k := range imported {
		a.env[k] = shvar{}
	}
	if login {
		a.cwd = ""
	}
	a.run(args)
}

// run analyses args as a command line of its own (the command a wrapper
// runs).
func (a *analysis) run(args []string) {
	a.command(simple{Args: args, Text: strings.Join(args, " "), Cwd: a.cwd, Env: a.env, CwdUnsure: a.cwdUnsure})
}

// elsewhere are the commands that run code not on their command line.
var elsewhere = map[string]string{
	"eval":   "its words run as a command, in the shell as it is then",
	"source": "a script not on its command line",
	".":      "a script not on its command line",
}

// unseenProgram: name is a path to a program that is not the system's
// (./script, bin/deploy): what it does is not on the command line.
func unseenProgram(name string) bool {
	if !strings.Contains(name, "/") {
		return false
	}
	switch filepath.Dir(filepath.Clean(name)) {
	case "/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin":
		return false
	}
	return true
}

// runsOthers: name is a command this preview analyses for destruction,
// or one that runs another: given operands it does not see, what it does
// is not known.
func runsOthers(name string) bool {
	base := filepath.Base(name)
	_, isOpaque := opaque[base]
	_, isElsewhere := elsewhere[base]
	return analysers[base] != nil || lookedThrough[base] || isOpaque || isElsewhere || unseenProgram(name) ||
		strings.HasPrefix(base, "mkfs.") || base == "su" || base == "runuser" || base == "script" || base == "watch"
}

// xargsArgs: xargs [options] [COMMAND [ARG...]] runs COMMAND on the words
// of its input (read by shell.Through).
func xargsArgs(a *analysis, _ string, args []string) {
	st, _ := parsed.Through(certainWords(append([]string{"xargs"}, args...)))
	if len(st.Inner) > 0 && runsOthers(st.Inner[0].Value) {
		a.unknown = append(a.unknown, "xargs "+strings.Join(args, " ")+" (its operands come from its input)")
	}
}

// findExec: find ... -exec COMMAND {} ... (-execdir, -ok, -okdir) runs
// COMMAND on what find finds (read by shell.Through).
func findExec(a *analysis, args []string) {
	st, _ := parsed.Through(certainWords(append([]string{"find"}, args...)))
	for _, ch := range st.Children {
		if runsOthers(ch[0].Value) {
			a.unknown = append(a.unknown, "find "+strings.Join(args, " ")+" (runs "+ch[0].Value+" on what find finds)")
			return
		}
	}
}

// elsewhereArgs: eval, source and . run code this preview does not see.
func elsewhereArgs(a *analysis, name string, args []string) {
	a.unknown = append(a.unknown, name+" "+strings.Join(args, " ")+" ("+elsewhere[name]+")")
}

// constructAnalysers are the analysers of this file.
func constructAnalysers() map[string]func(a *analysis, name string, args []string) {
	return map[string]func(a *analysis, name string, args []string){
		"xargs":  xargsArgs,
		"eval":   elsewhereArgs,
		"source": elsewhereArgs,
		".":      elsewhereArgs,
	}
}

// shellArgs previews the script of sh -c SCRIPT (also -lc, -ec, ...): what
// the shell runs is read by shell.Through (the rules shell.Parse reads a
// line by), and the script is the tree shell.Parse read for it; it is
// previewed in a shell with the options its command line sets (-P, -o
// physical, -O), read here from the shell's own words. A shell reading a
// file or its input is not previewed; nor what its startup files do (a
// login or interactive shell, --rcfile, $BASH_ENV).
func shellArgs(a *analysis, name string, args []string) {
	bash := name == "bash"
	text := name + " " + strings.Join(args, " ")
	words := certainWords(append([]string{name}, args...))
	// Its own options, read by the rule shell/ reads sh -c by.
	opts := parsed.ReadShellArgs(words[1:])
	st, _ := parsed.Through(words)
	if i := opts.RCFile + 1; opts.RCFile >= 0 && i+1 < len(words) {
		// --rcfile FILE, --init-file FILE: a start-up file runs first,
		// then what the rest of the words say.
		st, _ = parsed.Through(slices.Delete(slices.Clone(words), i, i+2))
	}
	switch {
	case st.Stop:
		return // -c with no command (the shell fails), --version, --help
	case st.Opaque != nil && st.Opaque.Kind == "script":
		a.unknown = append(a.unknown, text+" (a script not on its command line)")
		return
	case st.Opaque != nil && st.Opaque.Kind == "input":
		a.unknown = append(a.unknown, text+" (reads its commands from its input)")
		return
	case st.Opaque != nil || st.Script == nil:
		a.unknown = append(a.unknown, text+" (runs what cannot be read)")
		return
	}
	setOpts, shoptOpts, startup := opts.Set, opts.Shopt, opts.Startup
	if startup {
		a.unknown = append(a.unknown, text+" (runs its startup files first)")
	}
	if be, ok := a.env["BASH_ENV"]; ok && bash && !startup && be.state != varUnset && !(be.state == varSet && be.val == "") {
		a.unknown = append(a.unknown, text+" (runs $BASH_ENV first)")
	}
	if a.depth >= maxNesting {
		a.unknown = append(a.unknown, name+" -c … (shells nested too deep)")
		return
	}
	sh := newShell(a.cwd, a.env, bash, a.cwdUnsure)
	if startup {
		sh.forget()
	}
	if slices.ContainsFunc(setOpts, func(o string) bool { return strings.ContainsAny(o[1:], "Pk") && len(o) == 2 }) && !bash {
		a.unknown = append(a.unknown, text+" (options this shell may refuse)")
		return
	}
	setOptions(sh, setOpts)
	for j := 0; bash && j+1 < len(shoptOpts); j += 2 {
		shopt(sh, shoptOpts[j:j+2])
	}
	sh.syncShellopts()
	f, err := a.tree(*st.Script)
	if err != nil {
		a.unknown = append(a.unknown, name+" -c script that does not parse ("+err.Error()+")")
		return
	}
	cmds := simples(a.statements(f), sh, a.b)
	a.depth++
	for _, c := range cmds {
		a.simple(c)
	}
	a.depth--
}
