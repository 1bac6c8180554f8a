package impact

import (
	"path/filepath"
	"slices"
	"strings"
)

// Commands that run other commands. Those whose command is on their
// command line for sure are looked through (their options skipped); the
// others, and those that run code from elsewhere (a file, the input, an
// alias), are named unknown: what they do cannot be seen here.

// wrappers run the command that follows their options (and a fixed
// number of operands of their own): the option values are named, with
// the options that end the wrapper's command line (none runs).
type wrapper struct {
	values   map[string]bool // options followed by a value of their own
	operands int             // operands of its own before the command (flock's file, taskset's mask)
	noRun    map[string]bool // options with which it runs no command (-p PID)
}

var wrappers = map[string]wrapper{
	"setsid":  {},
	"flock":   {values: set("-w", "--timeout", "--wait", "-E", "--conflict-exit-code"), operands: 1},
	"chrt":    {values: set("-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"), noRun: set("-p", "--pid", "-m", "--max")},
	"taskset": {operands: 1, noRun: set("-p", "--pid")},
	"busybox": {noRun: set("--list", "--list-full", "--help", "--install")},
}

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
// to look at, unknown named where it runs something).
func (a *analysis) unwrap(args []string, text string) (inner []string, handled bool) {
	name := filepath.Base(args[0])
	rest := args[1:]
	if why, ok := opaque[name]; ok {
		a.unknown = append(a.unknown, text+" (runs a command "+why+")")
		return nil, true
	}
	switch name {
	case "su", "runuser":
		return nil, a.suArgs(name, rest, text)
	case "script":
		return nil, a.scriptArgs(rest, text)
	case "watch":
		return a.watchArgs(rest, text)
	}
	w, ok := wrappers[name]
	if !ok {
		return nil, false
	}
	i := 0
	for ; i < len(rest); i++ {
		arg := rest[i]
		if arg == "--" {
			i++
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			break
		}
		k, _, _ := strings.Cut(arg, "=")
		if w.noRun[k] || !strings.HasPrefix(arg, "--") && slices.ContainsFunc([]rune(arg[1:]), func(c rune) bool { return w.noRun["-"+string(c)] }) {
			return nil, true
		}
		if name == "flock" && (arg == "-c" || arg == "--command") {
			break // before the file is an error; after it, below
		}
		if w.values[arg] {
			i++
		}
	}
	rest = rest[min(i, len(rest)):]
	if name == "chrt" && len(rest) > 0 && strings.Trim(rest[0], "0123456789") == "" {
		rest = rest[1:] // the priority
	} else if len(rest) >= w.operands {
		rest = rest[w.operands:]
	} else {
		return nil, true
	}
	if name == "flock" && len(rest) > 0 && (rest[0] == "-c" || rest[0] == "--command") {
		if len(rest) < 2 {
			return nil, true
		}
		// flock FILE -c COMMAND: $SHELL -c COMMAND.
		a.byShell(text, rest[1])
		return nil, true
	}
	if len(rest) == 0 {
		return nil, true
	}
	return rest, true
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

// suArgs: su [-] [-c COMMAND] [USER [ARG...]], runuser likewise, or
// runuser -u USER COMMAND (run directly). The user's shell runs COMMAND,
// with their HOME (and, for a login, in their home): previewed with what
// it reads unknown.
func (a *analysis) suArgs(name string, args []string, text string) bool {
	values := set("-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment", "-u", "--user")
	var command *string
	var ops []string
	login, user := false, false
	i := 0
	for ; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			i++
			break
		}
		if arg == "-" || arg == "-l" || arg == "--login" {
			login = true
			continue
		}
		if !strings.HasPrefix(arg, "-") {
			if user {
				break // runuser -u USER COMMAND: the command
			}
			ops = append(ops, arg) // su reads its options anywhere
			continue
		}
		if v, ok := strings.CutPrefix(arg, "--command="); ok {
			command = &v
			continue
		}
		if arg == "--command" || arg == "-c" {
			if i+1 < len(args) {
				i++
				command = &args[i]
			}
			continue
		}
		if name == "runuser" && (arg == "-u" || arg == "--user") {
			user = true
		}
		if values[arg] {
			i++
			continue
		}
		if !strings.HasPrefix(arg, "--") {
			for j, c := range arg[1:] {
				switch c {
				case 'l':
					login = true
				case 'c':
					v := arg[2+j:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i]
					}
					command = &v
				}
				if c == 'c' {
					break
				}
			}
		}
	}
	ops = append(ops, args[min(i, len(args)):]...)
	if user && command == nil {
		// runuser -u USER COMMAND...: run directly, in the same directory.
		if len(ops) > 0 {
			a.asUser(ops, text, login)
		}
		return true
	}
	if command == nil {
		a.unknown = append(a.unknown, text+" (a shell reading its input, as another user)")
		return true
	}
	a.asUser([]string{"bash", "-c", *command}, text, login)
	return true
}

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

// scriptArgs: script -c COMMAND runs it by $SHELL; script alone runs an
// interactive shell on its input.
func (a *analysis) scriptArgs(args []string, text string) bool {
	values := set("-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T", "--log-timing",
		"-m", "--logging-format", "-o", "--output-limit", "-t", "--timing")
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if v, ok := strings.CutPrefix(arg, "--command="); ok {
			a.byShell(text, v)
			return true
		}
		if (arg == "-c" || arg == "--command") && i+1 < len(args) {
			a.byShell(text, args[i+1])
			return true
		}
		if values[arg] {
			i++
		}
	}
	a.unknown = append(a.unknown, text+" (an interactive shell on its input)")
	return true
}

// watchArgs: watch [options] COMMAND... runs sh -c "COMMAND..." (the
// words joined by spaces), or the words themselves with -x.
func (a *analysis) watchArgs(args []string, text string) ([]string, bool) {
	opts, ops := leadingOptions(args, set("-n", "--interval", "-q", "--equexit"))
	exec := slices.Contains(opts, "-x") || slices.Contains(opts, "--exec")
	if len(ops) == 0 {
		return nil, true
	}
	if exec {
		return ops, true
	}
	return []string{"sh", "-c", strings.Join(ops, " ")}, true
}

// leadingOptions splits a wrapper's arguments into the options before
// its command (values: those that take the next word) and the command
// with its words ("--" ends the options).
func leadingOptions(args []string, values map[string]bool) (opts, rest []string) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			return opts, args[i+1:]
		case !strings.HasPrefix(arg, "-"):
			return opts, args[i:]
		}
		opts = append(opts, arg)
		if values[arg] {
			i++
		}
	}
	return opts, nil
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
	_, isWrapper := wrappers[base]
	_, isOpaque := opaque[base]
	_, isElsewhere := elsewhere[base]
	return analysers[base] != nil || prefixes[base] || isWrapper || isOpaque || isElsewhere || unseenProgram(name) ||
		strings.HasPrefix(base, "mkfs.") || base == "su" || base == "runuser" || base == "script" || base == "watch"
}

// xargsArgs: xargs [options] [COMMAND [ARG...]] runs COMMAND on the words
// of its input.
func xargsArgs(a *analysis, _ string, args []string) {
	_, cmd := leadingOptions(args, set("-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P",
		"--max-procs", "-s", "--max-chars", "--process-slot-var", "--max-lines"))
	if len(cmd) > 0 && runsOthers(cmd[0]) {
		a.unknown = append(a.unknown, "xargs "+strings.Join(args, " ")+" (its operands come from its input)")
	}
}

// findExec: find ... -exec COMMAND {} ... (-execdir, -ok, -okdir) runs
// COMMAND on what find finds.
func findExec(a *analysis, args []string) {
	for i, arg := range args {
		switch arg {
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) && runsOthers(args[i+1]) {
				a.unknown = append(a.unknown, "find "+strings.Join(args, " ")+" ("+arg+" "+args[i+1]+" on what find finds)")
				return
			}
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

// splitString is env -S STRING's words when they are plain (no quotes,
// escapes, variables or comments, which env reads its own way).
func splitString(s string) ([]string, bool) {
	if strings.ContainsAny(s, `'"\$#`) {
		return nil, false
	}
	return strings.Fields(s), true
}

// shellArgs previews the script of sh -c SCRIPT (also -lc, -ec, ...): its
// words are parsed and analysed in turn, in a shell with the options its
// command line sets (-P, -o physical, -O). A shell reading a file or its
// input is not previewed; nor what its startup files do (a login or
// interactive shell, --rcfile, $BASH_ENV).
func shellArgs(a *analysis, name string, args []string) {
	bash := name == "bash"
	text := name + " " + strings.Join(args, " ")
	command, input, startup := false, false, false
	var setOpts, shoptOpts []string
	i := 0
	for ; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || arg == "-" {
			i++
			break
		}
		if strings.HasPrefix(arg, "--") {
			switch arg {
			case "--login", "--rcfile", "--init-file":
				startup = true
			case "--posix":
				setOpts = append(setOpts, "-o", "posix")
			}
			if arg == "--rcfile" || arg == "--init-file" {
				i++
			}
			continue
		}
		if len(arg) < 2 || arg[0] != '-' && arg[0] != '+' {
			break
		}
		for _, c := range arg[1:] {
			switch c {
			case 'c':
				command = command || arg[0] == '-'
			case 's':
				input = true
			case 'i', 'l':
				startup = true
			case 'o', 'O':
				if i+1 < len(args) {
					i++
					if c == 'o' {
						setOpts = append(setOpts, string(arg[0])+"o", args[i])
					} else {
						shoptOpts = append(shoptOpts, map[byte]string{'-': "-s", '+': "-u"}[arg[0]], args[i])
					}
				}
			default:
				setOpts = append(setOpts, string(arg[0])+string(c))
			}
		}
	}
	ops := args[min(i, len(args)):]
	switch {
	case !command && !input && len(ops) > 0:
		a.unknown = append(a.unknown, text+" (a script not on its command line)")
		return
	case !command:
		a.unknown = append(a.unknown, text+" (reads its commands from its input)")
		return
	case len(ops) == 0:
		return // -c with no command: the shell fails
	}
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
	cmds, err := parse(ops[0], sh, a.b)
	if err != nil {
		a.unknown = append(a.unknown, name+" -c script that does not parse ("+err.Error()+")")
		return
	}
	a.depth++
	for _, c := range cmds {
		a.simple(c)
	}
	a.depth--
}
