package shell

import (
	"path"
	"strings"
)

// optSpec describes a wrapper's options: those that take a value (short
// letters "-u" and long names "--user"), those with which it runs no
// command, and how many operands of its own come before the command.
type optSpec struct {
	values   map[string]bool
	noRun    map[string]bool
	operands int
	// assigns: NAME=VALUE words after the options go to the command's
	// environment (env, sudo).
	assigns bool
	// anywhere: options may follow operands (su).
	stopAtOperand bool
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// opt is one option a wrapper was given, with its value.
type opt struct {
	name, val string
	hasVal    bool
}

// options splits ws into the wrapper's options and the rest. ok is false
// when a word that decides where the command starts is not certain.
func options(ws []Word, spec optSpec) (opts []opt, rest []Word, noRun, ok bool) {
	i := 0
	for ; i < len(ws); i++ {
		w := ws[i]
		if !w.Known {
			return opts, ws[i:], false, false
		}
		a := w.Value
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if strings.HasPrefix(a, "--") {
			k, v, eq := strings.Cut(a, "=")
			o := opt{name: k, val: v, hasVal: eq}
			if spec.noRun[k] {
				return append(opts, o), ws[i+1:], true, true
			}
			if !eq && spec.values[k] {
				if i+1 >= len(ws) {
					return opts, nil, false, true
				}
				i++
				o.val, o.hasVal = valueOf(ws[i]), true
			}
			opts = append(opts, o)
			continue
		}
		for j := 1; j < len(a); j++ {
			k := "-" + a[j:j+1]
			if spec.noRun[k] {
				return append(opts, opt{name: k}), ws[i+1:], true, true
			}
			if spec.values[k] {
				o := opt{name: k, hasVal: true}
				if j+1 < len(a) {
					o.val = a[j+1:]
				} else {
					if i+1 >= len(ws) {
						return opts, nil, false, true
					}
					i++
					o.val = valueOf(ws[i])
				}
				opts = append(opts, o)
				break
			}
			opts = append(opts, opt{name: k})
		}
	}
	rest = ws[min(i, len(ws)):]
	return opts, rest, false, true
}

// valueOf is an option's value: "?" and the word as written when it is
// not certain (the value does not move where the command starts).
func valueOf(w Word) string {
	if w.Known {
		return w.Value
	}
	return "?" + w.Raw
}

func has(opts []opt, names ...string) (string, bool) {
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				return o.val, true
			}
		}
	}
	return "", false
}

// takeAssigns moves the NAME=value words at the head of rest to env; sure
// is false when the word after them is not known and may be one.
func takeAssigns(env []Assign, rest []Word) (_ []Assign, _ []Word, sure bool) {
	for len(rest) > 0 && rest[0].Known && isAssign(rest[0].Value) {
		k, v, _ := strings.Cut(rest[0].Value, "=")
		env = append(env, Assign{Name: k, Value: Word{Raw: rest[0].Raw, Value: v, Known: true}})
		rest = rest[1:]
	}
	return env, rest, len(rest) == 0 || rest[0].Known || !strings.Contains(rest[0].Raw, "=")
}

// notCertain is the step of a wrapper whose own words are not certain.
func notCertain(name string) step {
	return step{opaque: &Opaque{Kind: "unknown", Why: name + "'s options are not certain: the command it runs cannot be known"}}
}

// simpleWrapper unwraps a wrapper that runs the words after its options
// and operands.
func simpleWrapper(spec optSpec, after func(opts []opt, w *Wrap, rest []Word) []Word) func(string, []Word) step {
	return func(name string, ws []Word) step {
		opts, rest, noRun, ok := options(ws, spec)
		if !ok && len(rest) > 0 {
			// A word not certain where an option or the command may be:
			// the command's name is not known from there on.
			return step{wrap: Wrap{Args: ws[:len(ws)-len(rest)]}, inner: rest}
		}
		if !ok {
			return notCertain(name)
		}
		if noRun {
			return step{stop: true}
		}
		w := Wrap{Args: ws[:len(ws)-len(rest)]}
		if len(rest) < spec.operands {
			return step{stop: true}
		}
		for k := range spec.operands {
			if !rest[k].Known {
				return step{wrap: w, inner: rest[k:]}
			}
		}
		w.Args = ws[:len(ws)-len(rest)+spec.operands]
		rest = rest[spec.operands:]
		if spec.assigns {
			var sure bool
			if w.Env, rest, sure = takeAssigns(w.Env, rest); !sure {
				return notCertain(name)
			}
		}
		if after != nil {
			rest = after(opts, &w, rest)
		}
		return step{wrap: w, inner: rest}
	}
}

func isAssign(s string) bool {
	k, _, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return false
	}
	for i, c := range k {
		if c != '_' && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func known(s string) Word { return Word{Raw: s, Value: s, Known: true} }

var shells = set("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash")

// handlers are the wrappers the parser looks through, by program name.
var handlers map[string]func(name string, ws []Word) step

func init() {
	handlers = map[string]func(string, []Word) step{
		"sudo": simpleWrapper(optSpec{
			values: set("-u", "--user", "-g", "--group", "-p", "--prompt", "-C", "--close-from", "-r", "--role",
				"-t", "--type", "-U", "--other-user", "-T", "--command-timeout", "-D", "--chdir", "-R", "--chroot", "--host"),
			noRun:   set("-l", "--list", "-v", "--validate", "-K", "--remove-timestamp", "-V", "--version", "-h", "--help", "-e", "--edit"),
			assigns: true,
		}, func(opts []opt, w *Wrap, rest []Word) []Word {
			w.User = "root"
			if u, ok := has(opts, "-u", "--user"); ok {
				w.User = u
			}
			if d, ok := has(opts, "-R", "--chroot"); ok {
				w.Remote = "root " + d
			}
			if d, ok := has(opts, "-D", "--chdir"); ok {
				w.Dir = d
			}
			if _, ok := has(opts, "-i", "--login"); ok {
				w.Login = true
			}
			if _, ok := has(opts, "-s", "--shell", "-i", "--login"); ok && len(rest) == 0 {
				return []Word{known("sh")} // an interactive shell
			}
			return rest
		}),
		"doas": simpleWrapper(optSpec{values: set("-u", "-a"), noRun: set("-C", "-L"), assigns: false},
			func(opts []opt, w *Wrap, rest []Word) []Word {
				w.User = "root"
				if u, ok := has(opts, "-u"); ok {
					w.User = u
				}
				if _, ok := has(opts, "-s"); ok && len(rest) == 0 {
					return []Word{known("sh")}
				}
				return rest
			}),
		"env":      envStep,
		"nice":     simpleWrapper(optSpec{values: set("-n", "--adjustment")}, nil),
		"ionice":   simpleWrapper(optSpec{values: set("-c", "--class", "-n", "--classdata"), noRun: set("-p", "--pid", "-P", "--pgid", "-u", "--uid")}, nil),
		"timeout":  simpleWrapper(optSpec{values: set("-s", "--signal", "-k", "--kill-after"), operands: 1}, nil),
		"stdbuf":   simpleWrapper(optSpec{values: set("-i", "-o", "-e", "--input", "--output", "--error")}, nil),
		"setsid":   simpleWrapper(optSpec{}, nil),
		"nohup":    simpleWrapper(optSpec{}, nil),
		"unbuffer": simpleWrapper(optSpec{}, nil),
		"chroot": simpleWrapper(optSpec{values: set("--userspec", "--groups"), operands: 1}, func(opts []opt, w *Wrap, rest []Word) []Word {
			w.Remote = "root " + w.Args[len(w.Args)-1].Value
			if len(rest) == 0 {
				return []Word{known("sh")} // chroot DIR runs $SHELL -i
			}
			return rest
		}),
		"time":    simpleWrapper(optSpec{values: set("-o", "--output", "-f", "--format")}, nil),
		"chrt":    chrtStep,
		"taskset": simpleWrapper(optSpec{noRun: set("-p", "--pid", "-h", "--help", "-V", "--version"), operands: 1}, nil),
		"busybox": simpleWrapper(optSpec{noRun: set("--list", "--list-full", "--help", "--install")}, nil),
		"command": simpleWrapper(optSpec{noRun: set("-v", "-V")}, nil),
		"builtin": simpleWrapper(optSpec{}, nil),
		"exec":    simpleWrapper(optSpec{values: set("-a")}, nil),
		"xargs":   xargsStep,
		"find":    findStep,
		"watch":   watchStep,
		"flock":   flockStep,
		"script":  scriptStep,
		"su":      suStep,
		"runuser": suStep,
		"ssh":     sshStep,
		"docker":  dockerStep,
		"podman":  dockerStep,
		"kubectl": kubectlStep,
		"oc":      kubectlStep,
		"eval":    evalStep,
		"source":  sourceStep,
		"trap":    trapStep,
		".":       sourceStep,
	}
	for s := range shells {
		handlers[s] = shellStep
	}
}

func envStep(name string, ws []Word) step {
	spec := optSpec{values: set("-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-P"),
		noRun: set("--help", "--version"), assigns: true}
	opts, rest, noRun, ok := options(ws, spec)
	if !ok {
		return notCertain(name)
	}
	if noRun {
		return step{stop: true}
	}
	w := Wrap{Args: ws[:len(ws)-len(rest)]}
	for _, o := range opts {
		switch o.name {
		case "-i", "--ignore-environment":
			w.ClearsEnv = true
		case "-u", "--unset":
			w.Unset = append(w.Unset, o.val)
		case "-C", "--chdir":
			w.Dir = o.val
		}
	}
	if len(rest) > 0 && rest[0].Known && rest[0].Value == "-" {
		w.ClearsEnv = true
		rest = rest[1:]
	}
	var sure bool
	if w.Env, rest, sure = takeAssigns(w.Env, rest); !sure {
		return notCertain(name)
	}
	if s, ok := has(opts, "-S", "--split-string"); ok {
		if strings.ContainsAny(s, `'"\$#`) {
			return step{opaque: &Opaque{Kind: "unknown", Code: s, Why: "env -S splits a string its own way"}}
		}
		var split []Word
		for _, f := range strings.Fields(s) {
			split = append(split, known(f))
		}
		rest = append(split, rest...)
	}
	if len(rest) == 0 {
		return step{stop: true} // env alone prints the environment
	}
	return step{wrap: w, inner: rest}
}

func xargsStep(name string, ws []Word) step {
	spec := optSpec{values: set("-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P",
		"--max-procs", "-s", "--max-chars", "--process-slot-var", "--max-lines", "--eof", "--replace")}
	opts, rest, _, ok := options(ws, spec)
	if !ok {
		return notCertain(name)
	}
	_ = opts
	w := Wrap{Args: ws[:len(ws)-len(rest)]}
	if len(rest) == 0 {
		rest = []Word{known("echo")}
	}
	return step{wrap: w, inner: rest, moreArgs: true}
}

// findStep: find's -exec, -execdir, -ok and -okdir run a command on what
// it finds (ended by ; or +); find itself stays a command.
func findStep(name string, ws []Word) step {
	var children [][]Word
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if !w.Known {
			continue
		}
		switch w.Value {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for ; j < len(ws); j++ {
				if ws[j].Known && (ws[j].Value == ";" || ws[j].Value == "+") {
					break
				}
			}
			if j > i+1 {
				children = append(children, ws[i+1:j])
			}
			i = j
		}
	}
	if len(children) == 0 {
		return step{stop: true}
	}
	return step{wrap: Wrap{Name: "find -exec"}, children: children}
}

// watchStep: watch [options] COMMAND... runs sh -c "COMMAND..." (the
// words joined by spaces), or the words themselves with -x.
func watchStep(name string, ws []Word) step {
	opts, rest, noRun, ok := options(ws, optSpec{values: set("-n", "--interval", "-q", "--equexit"), noRun: set("-h", "--help", "-v", "--version")})
	if !ok {
		return notCertain(name)
	}
	if noRun || len(rest) == 0 {
		return step{stop: true}
	}
	w := Wrap{Args: ws[:len(ws)-len(rest)]}
	if _, x := has(opts, "-x", "--exec"); x {
		return step{wrap: w, inner: rest}
	}
	s, ok := joined(rest)
	if !ok {
		return notCertain(name)
	}
	return step{wrap: w, script: &s}
}

func joined(ws []Word) (string, bool) {
	s := make([]string, len(ws))
	for i, w := range ws {
		if !w.Known {
			return "", false
		}
		s[i] = w.Value
	}
	return strings.Join(s, " "), true
}

// flockStep: flock [options] FILE COMMAND..., or flock FILE -c COMMAND
// ($SHELL -c), or flock FD (no command).
func flockStep(name string, ws []Word) step {
	opts, rest, noRun, ok := options(ws, optSpec{values: set("-w", "--timeout", "--wait", "-E", "--conflict-exit-code", "-c", "--command"),
		noRun: set("-h", "--help", "-V", "--version")})
	if !ok {
		return notCertain(name)
	}
	if noRun || len(rest) == 0 {
		return step{stop: true}
	}
	if !rest[0].Known {
		return notCertain(name)
	}
	w := Wrap{Args: ws[:len(ws)-len(rest)+1]}
	rest = rest[1:]
	if c, ok := has(opts, "-c", "--command"); ok {
		return step{wrap: w, script: &c}
	}
	if len(rest) >= 2 && rest[0].Known && (rest[0].Value == "-c" || rest[0].Value == "--command") {
		if !rest[1].Known {
			return notCertain(name)
		}
		s := rest[1].Value
		return step{wrap: w, script: &s}
	}
	if len(rest) == 0 {
		return step{stop: true}
	}
	return step{wrap: w, inner: rest}
}

// anywhere reads the words of a program that takes its options anywhere
// among its operands (GNU getopt: su, script): its options, and its
// operands in order. "--" ends the options; so does rest(opts), when it
// says the words left are all operands (runuser -u USER COMMAND...). A
// lone "-" is the option "-" (su's login).
func anywhere(ws []Word, spec optSpec, rest func([]opt) bool) (opts []opt, ops []Word, noRun, ok bool) {
	for len(ws) > 0 {
		o, r, stop, good := options(ws, spec)
		if !good {
			return opts, ops, false, false
		}
		opts = append(opts, o...)
		if stop {
			return opts, ops, true, true
		}
		if len(r) < len(ws) && ws[len(ws)-len(r)-1].Value == "--" || rest != nil && rest(opts) {
			return opts, append(ops, r...), false, true
		}
		if len(r) == 0 {
			break
		}
		if r[0].Known && r[0].Value == "-" {
			opts = append(opts, opt{name: "-"})
		} else {
			ops = append(ops, r[0])
		}
		ws = r[1:]
	}
	return opts, ops, false, true
}

// scriptStep: script -c COMMAND runs it by $SHELL; script alone runs an
// interactive shell on its input. script reads its options anywhere among
// its words (script -q /dev/null -c CMD), the last -c winning.
func scriptStep(name string, ws []Word) step {
	values := set("-c", "--command", "-E", "--echo", "-I", "--log-in", "-O", "--log-out",
		"-B", "--log-io", "-T", "--log-timing", "-m", "--logging-format", "-o", "--output-limit", "-t", "--timing")
	opts, _, noRun, ok := anywhere(ws, optSpec{values: values, noRun: set("-h", "--help", "-V", "--version")}, nil)
	if !ok {
		return notCertain(name)
	}
	if noRun {
		return step{stop: true}
	}
	w := Wrap{Args: ws}
	command, found := "", false
	for _, o := range opts {
		if o.name == "-c" || o.name == "--command" {
			command, found = o.val, true
		}
	}
	if found {
		if strings.HasPrefix(command, "?") {
			return notCertain(name)
		}
		return step{wrap: w, script: &command}
	}
	return step{opaque: &Opaque{Kind: "input", Why: "script runs an interactive shell on its input"}}
}

// suStep: su [options] [-c COMMAND] [USER [ARG...]], runuser likewise, or
// runuser -u USER COMMAND... (run directly).
func suStep(name string, ws []Word) step {
	values := set("-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment", "-c", "--command",
		"-C", "--session-command")
	if name == "runuser" {
		values["-u"], values["--user"] = true, true
	}
	opts, ops, noRun, ok := anywhere(ws, optSpec{values: values, noRun: set("-h", "--help", "-V", "--version")}, func(opts []opt) bool {
		_, user := has(opts, "-u", "--user")
		return user && name == "runuser" // runuser -u USER COMMAND...
	})
	if !ok {
		return notCertain(name)
	}
	if noRun {
		return step{stop: true}
	}
	w := Wrap{Args: ws[:len(ws)-len(ops)], User: "root"}
	if _, ok := has(opts, "-", "-l", "--login"); ok {
		w.Login = true
	}
	if u, ok := has(opts, "-u", "--user"); ok && name == "runuser" {
		w.User = u
		if len(ops) == 0 {
			return step{stop: true}
		}
		if _, c := has(opts, "-c", "--command"); !c {
			return step{wrap: w, inner: ops}
		}
	}
	if len(ops) > 0 && name == "su" || len(ops) > 0 && name == "runuser" {
		if ops[0].Known {
			w.User = ops[0].Value
		} else {
			w.User = ""
		}
	}
	if c, ok := has(opts, "-c", "--command", "-C", "--session-command"); ok {
		w.Name = "-c"
		return step{wrap: w, script: &c}
	}
	return step{opaque: &Opaque{Kind: "input", Why: name + " runs a shell on its input, as another user"}}
}

// shellStep: sh -c SCRIPT (also -lc, -ec ...) is read as a script of its
// own; a shell reading a file or its input runs code not on the line.
func shellStep(name string, ws []Word) step {
	r := ReadShellArgs(ws)
	switch {
	case r.RCFile >= 0:
		return step{opaque: &Opaque{Kind: "script", Why: name + " runs a start-up file not on the line"}}
	case r.Unknown >= 0:
		return notCertain(name)
	case r.Info >= 0:
		return step{stop: true}
	}
	command, input, i := r.Command, r.Input, r.End
	ops := ws[min(i, len(ws)):]
	switch {
	case command && len(ops) == 0:
		return step{stop: true} // -c without a script: the shell fails
	case command:
		if !ops[0].Known {
			return step{opaque: &Opaque{Kind: "unknown", Code: ops[0].Raw, Why: name + " -c runs a script that is not certain (" + ops[0].Why + ")"}}
		}
		s := ops[0].Value
		return step{wrap: Wrap{Name: "-c", Args: ws[:i]}, script: &s}
	case input || len(ops) == 0:
		return step{opaque: &Opaque{Kind: "input", Why: name + " reads the commands it runs from its input"}}
	default:
		return step{opaque: &Opaque{Kind: "script", Code: ops[0].Raw, Why: name + " runs a script file not on the line"}}
	}
}

func evalStep(name string, ws []Word) step {
	if len(ws) == 0 {
		return step{stop: true}
	}
	s, ok := joined(ws)
	if !ok {
		return step{opaque: &Opaque{Kind: "eval", Code: joinRaw(ws), Why: "eval runs words that are not certain"}}
	}
	return step{script: &s}
}

func sourceStep(name string, ws []Word) step {
	code := ""
	if len(ws) > 0 {
		code = ws[0].Raw
	}
	return step{opaque: &Opaque{Kind: "source", Code: code, Why: name + " runs a script file not on the line, in this shell"}}
}

// sshStep: ssh [options] HOST [COMMAND...] runs COMMAND (its words joined
// by spaces) by the remote user's shell.
func sshStep(name string, ws []Word) step {
	opts, rest, noRun, ok := options(ws, optSpec{values: set("-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m",
		"-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B"), noRun: set("-V", "-G")})
	if !ok {
		return notCertain(name)
	}
	if noRun || len(rest) == 0 {
		return step{stop: true}
	}
	_ = opts
	host := rest[0]
	if !host.Known {
		return notCertain(name)
	}
	w := Wrap{Args: ws[:len(ws)-len(rest)+1], Remote: host.Value}
	if u, ok := has(opts, "-l"); ok {
		w.User = u
	} else if u, _, ok := strings.Cut(host.Value, "@"); ok {
		w.User = u
	}
	rest = rest[1:]
	if len(rest) == 0 {
		return step{stop: true} // a session: ssh itself is the command
	}
	s, ok := joined(rest)
	if !ok {
		return step{opaque: &Opaque{Kind: "remote", Code: joinRaw(rest), Why: "ssh runs a remote command line that is not certain"}}
	}
	return step{wrap: w, script: &s}
}

var dockerValues = set("-a", "--attach", "-c", "--cpu-shares", "--cidfile", "--cpus", "--cpuset-cpus", "--device",
	"--dns", "-e", "--env", "--env-file", "--entrypoint", "--expose", "--gpus", "--group-add", "-h", "--hostname",
	"--health-cmd", "--ip", "--ipc", "-l", "--label", "--label-file", "--link", "--log-driver", "--log-opt", "-m",
	"--memory", "--mount", "--name", "--network", "--net", "--network-alias", "-p", "--publish", "--pid", "--platform",
	"--pull", "--restart", "--runtime", "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout",
	"--tmpfs", "-u", "--user", "--ulimit", "--userns", "--uts", "-v", "--volume", "--volumes-from", "-w", "--workdir",
	"--add-host", "--cap-add", "--cap-drop", "--cgroupns", "--detach-keys", "--annotation", "--cgroup-parent",
	"--memory-swap", "--log-level", "-H", "--host", "--context", "--config")

// dockerStep: docker exec [options] CONTAINER COMMAND..., docker run
// [options] IMAGE [COMMAND...] (also container exec/run, podman).
func dockerStep(name string, ws []Word) step {
	// Global options before the subcommand.
	_, rest, _, ok := options(ws, optSpec{values: set("-H", "--host", "--context", "--config", "-l", "--log-level")})
	if !ok {
		return notCertain(name)
	}
	if len(rest) > 0 && rest[0].Known && rest[0].Value == "container" {
		rest = rest[1:]
	}
	if len(rest) == 0 || !rest[0].Known {
		return step{stop: len(rest) == 0, opaque: map[bool]*Opaque{false: {Kind: "unknown", Why: name + "'s subcommand is not certain"}}[len(rest) == 0]}
	}
	sub := rest[0].Value
	if sub != "exec" && sub != "run" {
		return step{stop: true}
	}
	opts, r, _, ok := options(rest[1:], optSpec{values: dockerValues})
	if !ok || len(r) == 0 || !r[0].Known {
		if !ok || len(r) > 0 {
			return notCertain(name + " " + sub)
		}
		return step{stop: true}
	}
	kind := "container "
	if sub == "run" {
		kind = "image "
	}
	w := Wrap{Name: sub, Args: ws[:len(ws)-len(r)+1], Remote: kind + r[0].Value}
	if u, ok := has(opts, "-u", "--user"); ok {
		w.User = u
	}
	cmd := r[1:]
	if e, ok := has(opts, "--entrypoint"); ok {
		cmd = append([]Word{known(e)}, cmd...)
	}
	if len(cmd) == 0 {
		return step{opaque: &Opaque{Kind: "unknown", Code: r[0].Value, Why: "the image's own command runs"}}
	}
	return step{wrap: w, inner: cmd}
}

// kubectlStep: kubectl exec [options] POD -- COMMAND...
func kubectlStep(name string, ws []Word) step {
	i := -1
	for j, w := range ws {
		if w.Known && w.Value == "exec" {
			i = j
			break
		}
		if !w.Known || !strings.HasPrefix(w.Value, "-") && j > 0 && !strings.HasPrefix(ws[j-1].Value, "-") {
			break
		}
	}
	if i < 0 {
		return step{stop: true}
	}
	after := ws[i+1:]
	dash := -1
	for j, w := range after {
		if w.Known && w.Value == "--" {
			dash = j
			break
		}
	}
	if dash < 0 {
		return step{opaque: &Opaque{Kind: "remote", Why: name + " exec without -- : where its command starts is not certain"}}
	}
	pod := ""
	_, ops, _, _ := options(after[:dash], optSpec{values: set("-c", "--container", "-n", "--namespace", "--context", "-f",
		"--filename", "--kubeconfig", "--pod-running-timeout", "--cluster", "--user", "-s", "--server")})
	if len(ops) > 0 {
		pod = ops[0].Raw
	}
	w := Wrap{Name: "exec", Args: ws[:i+1+dash+1], Remote: "pod " + pod}
	cmd := after[dash+1:]
	if len(cmd) == 0 {
		return step{stop: true}
	}
	return step{wrap: w, inner: cmd}
}

// trapStep: trap ACTION SIGNAL... runs ACTION later, in this shell: it is
// read as a script of its own.
func trapStep(name string, ws []Word) step {
	if len(ws) > 0 && ws[0].Known && ws[0].Value == "--" {
		ws = ws[1:] // trap -- ACTION SIGNAL...
	}
	if len(ws) < 2 || !ws[0].Known || ws[0].Value == "-" || strings.HasPrefix(ws[0].Value, "-") {
		if len(ws) >= 2 && !ws[0].Known {
			return step{opaque: &Opaque{Kind: "unknown", Code: ws[0].Raw, Why: "trap runs an action that is not certain"}}
		}
		return step{stop: true}
	}
	s := ws[0].Value
	return step{wrap: Wrap{Args: ws[1:]}, script: &s}
}

// chrtStep: chrt [options] [PRIORITY] COMMAND... (the priority is
// optional with a policy that has none, -b, -i, -o).
func chrtStep(name string, ws []Word) step {
	opts, rest, noRun, ok := options(ws, optSpec{values: set("-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"),
		noRun: set("-p", "--pid", "-m", "--max", "-h", "--help", "-V", "--version")})
	_ = opts
	if !ok {
		if len(rest) > 0 {
			return step{wrap: Wrap{Args: ws[:len(ws)-len(rest)]}, inner: rest}
		}
		return notCertain(name)
	}
	if noRun || len(rest) == 0 {
		return step{stop: true}
	}
	if rest[0].Known && rest[0].Value != "" && strings.Trim(rest[0].Value, "0123456789") == "" {
		rest = rest[1:] // the priority
	}
	if len(rest) == 0 {
		return step{stop: true}
	}
	return step{wrap: Wrap{Args: ws[:len(ws)-len(rest)]}, inner: rest}
}

// Step is what one wrapper at the start of a command's words does (see
// Through).
type Step struct {
	// Wrap is the wrapper, as in Command.Wrappers (Name: its program and
	// the form, "sudo", "flock -c", "su -c").
	Wrap Wrap
	// Inner are the words of the command it runs (nil: none, or one of
	// Script, Opaque, Stop, Children).
	Inner []Word
	// Script is a command line it runs by a shell (sh -c, su -c, flock
	// -c, script -c, watch, ssh, eval, trap).
	Script *string
	// Opaque is code it runs that cannot be read.
	Opaque *Opaque
	// Stop: it runs nothing of its words (sudo -l, command -v, timeout 5):
	// it is the command itself.
	Stop bool
	// MoreArgs: the command it runs gets words not on the line (xargs).
	MoreArgs bool
	// Children are the commands it runs besides being a command itself
	// (find -exec); it stays the command.
	Children [][]Word
}

// Through reads words (one simple command's, name first) as a wrapper that
// Parse looks through, by the same rules: ok is false when words[0] is not
// certain or not such a wrapper. An analysis that expands words itself
// (the impact preview: ~ with a known HOME, globs against the filesystem)
// unwraps its own words with it, one wrapper at a time.
func Through(words []Word) (st Step, ok bool) {
	if len(words) == 0 || !words[0].Known {
		return Step{}, false
	}
	name := path.Base(words[0].Value)
	h, ok := handlers[name]
	if !ok {
		return Step{}, false
	}
	s := h(name, words[1:])
	s.wrap.Name = strings.TrimSpace(name + " " + s.wrap.Name)
	return Step{Wrap: s.wrap, Inner: s.inner, Script: s.script, Opaque: s.opaque, Stop: s.stop,
		MoreArgs: s.moreArgs, Children: s.children}, true
}
