package impact

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	parsed "github.com/approve-tui/approve-tui/shell"
)

// analysis gathers the targets of one preview.
type analysis struct {
	ctx       context.Context // the programs an analyser runs stop with it
	o         Options
	cwd       string           // where the simple command being analysed runs ("": not known)
	env       map[string]shvar // the environment it gets (for a shell it starts)
	cwdUnsure bool             // $PWD may be cwd's physical path
	b         *budget
	dev       *host // the host's devices and mounts, read when first needed
	targets   []Target
	unknown   []string
	depth     int // shells inside shells
	// changed are the paths earlier commands of the line may change;
	// changedAll, when set, names an earlier command that may change any
	// (see change).
	changed    []change
	changedAll string
	marksOnly  bool            // simple.MarksOnly: record what it changes, preview nothing
	fds        map[int]string  // the simple command's own redirections (simple.Fds)
	viaProc    map[string]bool // viaProcess of the directories looked at
	// scripts are the lines shell.Parse read: the command's, then scripts
	// of its shells it had not read with it (see tree).
	scripts []*parsed.Script
}

// lookedThrough are the commands that run the command after their
// options, looked through by shell.Through (the rules shell.Parse reads a
// line by): the analysers look at what they run, in the environment and
// directory each gives it. unseenAlone are those of them that, running
// nothing of their words, may still change anything (a process's
// scheduling, a lock held).
var (
	lookedThrough = set("sudo", "doas", "env", "command", "builtin", "exec", "nohup", "nice", "time", "ionice", "timeout",
		"stdbuf", "setsid", "flock", "chrt", "taskset", "busybox")
	unseenAlone = set("setsid", "flock", "chrt", "taskset", "busybox")
)

// simple analyses one simple command.
func (a *analysis) simple(c simple) {
	if c.MarksOnly && !a.marksOnly {
		a.marksOnly = true
		defer func() { a.marksOnly = false }()
	}
	a.cwd, a.env, a.cwdUnsure, a.fds = c.Cwd, maps.Clone(c.Env), c.CwdUnsure, c.Fds
	if a.env == nil {
		a.env = map[string]shvar{}
	}
	for _, r := range c.Redirs {
		switch {
		case a.marksOnly:
		case r.Keeps:
			// >> and <> lose nothing (record notes what they change).
		case r.Unknown != "":
			a.unknown = append(a.unknown, "> "+r.Unknown)
		default:
			a.target(r.Path, "overwrite", false, "", nil)
		}
	}
	if c.NameUnknown {
		if !a.marksOnly {
			a.unknown = append(a.unknown, c.Text)
		}
		a.record(c, "", nil)
		return
	}
	a.command(c)
}

// command analyses what c runs, past the prefixes and wrappers before it.
func (a *analysis) command(c simple) {
	args := c.Args
	wrapped := false
again:
	for len(args) > 0 && lookedThrough[filepath.Base(args[0])] {
		name := filepath.Base(args[0])
		st, _ := parsed.Through(certainWords(args))
		switch {
		case st.Opaque != nil:
			a.unknown = append(a.unknown, c.Text+" ("+st.Opaque.Why+")")
			a.markAll(c.Text)
			return
		case st.Stop || st.Script == nil && len(st.Inner) == 0:
			if unseenAlone[name] {
				a.markAll(c.Text) // what it does is not seen: it may change anything
				return
			}
			a.record(c, "", nil)
			return
		}
		a.through(st.Wrap)
		if st.Wrap.Remote != "" {
			a.unknown = append(a.unknown, c.Text+" (runs a command in another root)")
			a.markAll(c.Text)
			return
		}
		if st.Script != nil {
			// flock FILE -c COMMAND: $SHELL -c COMMAND.
			a.byShell(c.Text, *st.Script)
			a.markAll(c.Text)
			return
		}
		wrapped = true
		args = args[:0:0]
		for _, w := range st.Inner {
			args = append(args, w.Value)
		}
	}
	if len(args) == 0 {
		a.record(c, "", nil)
		return
	}
	if inner, handled := a.unwrap(args, c.Text); handled {
		if inner == nil {
			a.markAll(c.Text) // what it runs is not seen: it may change anything
			return
		}
		args, wrapped = inner, true
		goto again
	}
	if unseenProgram(args[0]) {
		a.unknown = append(a.unknown, c.Text+" (a program not on its command line)")
		a.markAll(c.Text)
		return
	}
	name := filepath.Base(args[0])
	defer a.record(c, name, args[1:]) // what it changes, for the commands after it
	if name == "find" {
		findExec(a, args[1:])
	}
	run, ok := analysers[name]
	if strings.HasPrefix(name, "mkfs.") {
		run, ok = mkfsArgs, true
	}
	if !ok {
		if wrapped && len(c.Unknown) > 0 {
			// Words not known, among a wrapper's: what runs is not known.
			a.unknown = append(a.unknown, c.Unknown...)
		}
		return
	}
	if a.marksOnly {
		if shells[name] {
			shellArgs(a, name, args[1:]) // its commands mark in turn
		}
		return
	}
	if len(c.Unknown) > 0 {
		// Some of its words are not known: what it names is not whole.
		a.unknown = append(a.unknown, c.Unknown...)
	}
	if !shells[name] {
		a.globOverChanged(c) // (a shell's script: its own commands are looked at)
	}
	run(a, name, args[1:])
}

// through gives the command a wrapper runs the environment and directory
// the wrapper gives it: another user's environment (sudo, doas) is not
// known, HOME and the rest with it; env's changes; the directory of env
// -C and sudo -D, or the target user's home for a login (sudo -i).
func (a *analysis) through(w parsed.Wrap) {
	if w.User != "" {
		// It sets the environment as its policy says: HOME and the rest
		// are not known.
		a.env = map[string]shvar{}
		for _, k := range imported {
			a.env[k] = shvar{}
		}
	}
	if w.ClearsEnv {
		a.env = map[string]shvar{}
	}
	for _, k := range w.Unset {
		delete(a.env, k)
	}
	for _, e := range w.Env {
		a.env[e.Name] = known(e.Value.Value, true)
	}
	switch {
	case w.Login:
		a.cwd = "" // a login shell, in the target user's home
	case strings.HasPrefix(w.Dir, "?"):
		a.cwd = ""
	case w.Dir != "":
		a.cwd = a.chdir(w.Dir) // what it runs runs there
	}
}

// certainWords are words the preview expanded, as shell.Words.
func certainWords(args []string) []parsed.Word {
	ws := make([]parsed.Word, len(args))
	for i, a := range args {
		ws[i] = parsed.Word{Raw: a, Value: a, Known: true}
	}
	return ws
}

// globOverChanged names unknown a glob of c's that may have matched what an
// earlier command of the line changes: its words were expanded against the
// tree as it is now (mv many data; rm -rf d*).
func (a *analysis) globOverChanged(c simple) {
	if !strings.ContainsAny(c.Text, "*?[") || a.changedAll != "" || len(a.changed) == 0 {
		return // (with changedAll, every target is unknown)
	}
	dirs := map[string]bool{}
	if a.cwd != "" {
		dirs[a.cwd] = true
	}
	for _, arg := range c.Args[1:] {
		if lex, phys, ok := a.forms(arg); ok {
			dirs[filepath.Dir(lex)], dirs[filepath.Dir(phys)] = true, true
		}
	}
	for _, ch := range a.changed {
		if dirs[filepath.Dir(ch.path)] || dirs[filepath.Dir(ch.phys)] {
			a.unknown = append(a.unknown, c.Text+" (its globs are expanded as the tree is now; "+ch.path+" is changed earlier in the command by "+ch.by+")")
			return
		}
	}
}

// analysers know what each command destroys (set in init: the shells'
// analyser analyses in turn).
var analysers map[string]func(a *analysis, name string, args []string)

func init() { analysers = analyserTable() }

func analyserTable() map[string]func(a *analysis, name string, args []string) {
	t := map[string]func(a *analysis, name string, args []string){
		"rm": rmArgs,
		"rmdir": func(a *analysis, name string, args []string) {
			_, _, ops, _ := a.opts(name, args, nil)
			a.each(ops, "delete", false)
		},
		"unlink": func(a *analysis, name string, args []string) {
			_, _, ops, _ := a.opts(name, args, nil)
			a.each(ops, "delete", false)
		},
		"shred": shredArgs,
		"truncate": func(a *analysis, name string, args []string) {
			_, _, ops, _ := a.opts(name, args, set("-s", "-r"))
			a.each(ops, "truncate", false)
		},
		"tee":        teeArgs,
		"chmod":      func(a *analysis, _ string, args []string) { modeArgs(a, "chmod", "chmod", args) },
		"chown":      func(a *analysis, _ string, args []string) { modeArgs(a, "chown", "chown", args) },
		"chgrp":      func(a *analysis, _ string, args []string) { modeArgs(a, "chgrp", "chown", args) },
		"mv":         ontoArgs,
		"cp":         ontoArgs,
		"find":       findArgs,
		"sh":         shellArgs,
		"bash":       shellArgs,
		"dash":       shellArgs,
		"zsh":        shellArgs,
		"ksh":        shellArgs,
		"git":        gitArgs,
		"dd":         ddArgs,
		"mkfs":       mkfsArgs,
		"mke2fs":     mkfsArgs,
		"mkswap":     mkfsArgs,
		"mkdosfs":    mkfsArgs,
		"wipefs":     wipefsArgs,
		"blkdiscard": blkdiscardArgs,
		"terraform":  terraformArgs,
		"trap":       trapArgs,
	}
	maps.Copy(t, constructAnalysers())
	return t
}

// trapArgs: trap ACTION SIGNAL... runs ACTION later, on a signal or at
// exit, wherever the shell is then: not previewed, so unknown.
// Its action is read by shell.Through (none: listing, or resetting to the
// default; "": the signals ignored).
func trapArgs(a *analysis, _ string, args []string) {
	st, _ := parsed.Through(certainWords(append([]string{"trap"}, args...)))
	if st.Script == nil || *st.Script == "" {
		return
	}
	a.unknown = append(a.unknown, "trap "+*st.Script+" (runs later, on a signal or at exit)")
}

// maxNesting bounds shells inside shells (sh -c "bash -c '…'").
const maxNesting = 4

// flags splits args into its short and long options (before "--") and its
// operands; takesValue names options followed by a value of their own.
func flags(args []string, takesValue map[string]bool) (opts map[string]bool, ops []string) {
	opts = map[string]bool{}
	end := false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case end || arg == "-" || !strings.HasPrefix(arg, "-"):
			ops = append(ops, arg)
		case arg == "--":
			end = true
		case strings.HasPrefix(arg, "--"):
			k, _, hasValue := strings.Cut(arg, "=")
			opts[k] = true
			if takesValue[k] && !hasValue {
				i++
			}
		default:
			// Short options cluster (-qs); one that takes a value takes
			// the rest of the word (-sHEAD) or, at its end, the next one.
			for j := 1; j < len(arg); j++ {
				o := "-" + string(arg[j])
				opts[o] = true
				if takesValue[o] {
					if j+1 == len(arg) {
						i++
					}
					break
				}
			}
		}
	}
	return opts, ops
}

func operands(args []string, takesValue map[string]bool) []string {
	_, ops := flags(args, takesValue)
	return ops
}

func rmArgs(a *analysis, name string, args []string) {
	opts, _, ops, _ := a.opts(name, args, nil)
	recursive := opts["-r"] || opts["-R"] || opts["--recursive"]
	for _, p := range ops {
		loc, ok := a.locate(p)
		switch {
		case ok && loc.dot:
			a.none(p, "rm refuses to remove . and ..")
			continue
		case ok && !recursive:
			fi, err := a.b.lstat(loc.path)
			if err == nil && loc.slash && fi.Mode()&fs.ModeSymlink != 0 {
				fi, err = a.b.stat(loc.path)
			}
			if errors.Is(err, errUnseen) {
				continue // counted in the budget
			}
			if err == nil && fi.IsDir() {
				a.none(p, "rm without -r does not delete a directory")
				continue
			}
		}
		a.target(p, "delete", recursive, "", nil)
	}
}

// none adds p as a target the command names and leaves whole.
func (a *analysis) none(p, note string) {
	a.targetHow(p, "delete", how{note: note})
	t := &a.targets[len(a.targets)-1]
	t.Entries, t.Files, t.Dirs, t.Links, t.Bytes, t.LiveLinks = 0, 0, 0, 0, 0, []string{}
}

func shredArgs(a *analysis, name string, args []string) {
	opts, _, ops, _ := a.opts(name, args, set("-n", "-s"))
	op := "shred"
	if opts["-u"] || opts["--remove"] {
		op = "delete"
	}
	a.each(ops, op, false)
}

// modeArgs: chmod MODE FILE..., chown OWNER FILE... (-R recursive;
// --reference=FILE takes the place of the mode).
func modeArgs(a *analysis, prog, op string, args []string) {
	opts, _, ops, _ := a.opts(prog, args, nil)
	if !opts["--reference"] && len(ops) > 0 {
		ops = ops[1:] // the mode or owner
	}
	h := how{recursive: opts["-R"] || opts["--recursive"], follow: true}
	if op == "chown" {
		// chown -h changes a symlink itself; chown -R changes the target
		// of a symlink named without a slash, not what is in it (unless
		// -H or -L).
		h.follow = !opts["-h"] && !opts["--no-dereference"]
		h.linkFlat = !opts["-H"] && !opts["-L"]
	}
	for _, p := range ops {
		a.targetHow(p, op, h)
	}
}

// teeArgs: tee FILE... truncates each FILE and writes its input there
// (-a appends: nothing lost).
func teeArgs(a *analysis, name string, args []string) {
	opts, _, ops, _ := a.opts(name, args, nil)
	if opts["-a"] || opts["--append"] {
		return
	}
	a.each(ops, "overwrite", false)
}

// ontoArgs: mv or cp SOURCE... DEST overwrite what exists at DEST (or at
// DEST/SOURCE's name when DEST is a directory); -n overwrites nothing.
func ontoArgs(a *analysis, name string, args []string) {
	opts, vals, ops, _ := a.opts(name, args, set("-t", "-S"))
	if opts["-n"] || opts["--no-clobber"] || vals["--update"] == "none" {
		return
	}
	var dest string
	var sources []string
	t := vals["-t"]
	if t == "" {
		t = vals["--target-directory"]
	}
	if t != "" {
		dest, sources = t, ops
	} else if len(ops) >= 2 {
		dest, sources = ops[len(ops)-1], ops[:len(ops)-1]
	} else {
		return
	}
	d, ok := a.abs(dest)
	if !ok {
		a.target(dest, "overwrite", false, "", nil) // named as not previewed
		return
	}
	// Within the budget: a destination that cannot be looked at (a
	// directory the previewing user cannot search) makes the preview
	// incomplete, never "nothing".
	fi, err := a.b.stat(d)
	if errors.Is(err, errUnseen) {
		return // counted in the budget
	}
	switch {
	case err == nil && fi.IsDir() && !opts["-T"] && !opts["--no-target-directory"]:
		for _, s := range sources {
			into := filepath.Join(d, filepath.Base(filepath.Clean(s)))
			if ti, err := a.b.lstat(into); err == nil && !ti.IsDir() {
				a.target(into, "overwrite", false, "", nil)
			}
		}
	case err == nil && len(sources) == 1:
		a.target(d, "overwrite", false, "", nil)
	}
}

func valueOf(args []string, short, long string) string {
	for i, arg := range args {
		if arg == "--" {
			break
		}
		if arg == short && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(arg, long+"="); ok {
			return v
		}
		if arg == long && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// findArgs previews find PATH... EXPR when EXPR deletes (-delete) and its
// predicates are ones it can evaluate exactly: -name, -iname, -type,
// -mindepth, -maxdepth (and -print, -depth). Anything else: unknown.
func findArgs(a *analysis, _ string, args []string) {
	var roots []string
	i := 0
	for ; i < len(args) && !strings.HasPrefix(args[i], "-") && args[i] != "(" && args[i] != "!"; i++ {
		roots = append(roots, args[i])
	}
	expr := args[i:]
	deletes := false
	for _, e := range expr {
		if e == "-delete" {
			deletes = true
		}
	}
	if !deletes {
		return
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	var names, inames []string
	types := ""
	minDepth, maxDepth := 0, -1
	// find evaluates its expression left to right: a test after -delete
	// decides nothing about what -delete removed (find many -delete -name
	// '*.bak' deletes everything). Tests count only before the first
	// -delete; -mindepth and -maxdepth hold wherever they stand.
	deleted := false
	for j := 0; j < len(expr); j++ {
		e := expr[j]
		val := func() (string, bool) {
			if j+1 < len(expr) {
				j++
				return expr[j], true
			}
			return "", false
		}
		var ok bool
		var v string
		switch e {
		case "-delete":
			deleted = true
			continue
		case "-print", "-depth":
			continue
		case "-name":
			v, ok = val()
			if !deleted {
				names = append(names, v)
			}
		case "-iname":
			v, ok = val()
			if !deleted {
				inames = append(inames, strings.ToLower(v))
			}
		case "-type":
			v, ok = val()
			if !deleted {
				types = v
			}
			ok = ok && (v == "f" || v == "d" || v == "l")
		case "-mindepth", "-maxdepth":
			v, ok = val()
			n, err := strconv.Atoi(v)
			ok = ok && err == nil && n >= 0
			if e == "-mindepth" {
				minDepth = n
			} else {
				maxDepth = n
			}
		}
		if !ok {
			a.unknown = append(a.unknown, "find "+strings.Join(args, " ")+" (predicate "+e+" is not previewed)")
			return
		}
	}
	match := func(p string, d fs.DirEntry) bool {
		base := path.Base(p)
		for _, n := range names {
			if ok, _ := path.Match(n, base); !ok {
				return false
			}
		}
		for _, n := range inames {
			if ok, _ := path.Match(n, strings.ToLower(base)); !ok {
				return false
			}
		}
		switch types {
		case "f":
			return d.Type().IsRegular()
		case "d":
			return d.IsDir()
		case "l":
			return d.Type()&fs.ModeSymlink != 0
		}
		return true
	}
	for _, r := range roots {
		a.target(r, "delete", true, "what find -delete would match", &findSpec{match: match, min: minDepth, max: maxDepth})
	}
}

// writes are the ops that write into what they name: on a block device,
// they wipe it (chmod, chown and rm only change or remove its node).
var writes = map[string]bool{"overwrite": true, "truncate": true, "shred": true, model.OpWipe: true}

type findSpec struct {
	match    func(string, fs.DirEntry) bool
	min, max int
}

func (a *analysis) each(paths []string, op string, recursive bool) {
	for _, p := range paths {
		a.target(p, op, recursive, "", nil)
	}
}

// located is where a path operand leads: its directory part resolved as
// the kernel resolves it (symlinks followed, .. after a symlink the
// target's parent), then its last name.
type located struct {
	// path is shown lexically (as written, made absolute) when that is
	// the same file, else physically.
	path string
	// slash: written with a trailing slash, which makes the kernel follow
	// a symlink named last; dot: its last name is . or ..
	slash, dot bool
}

// locate is where p leads from where the command runs (ok false: p is
// relative and the working directory is not known).
func (a *analysis) locate(p string) (located, bool) {
	p = shellState(p, a.cwd)
	raw := p
	if !filepath.IsAbs(p) {
		if a.cwd == "" {
			return located{}, false
		}
		raw = a.cwd + "/" + p
	}
	l := located{slash: strings.HasSuffix(p, "/")}
	trimmed := strings.TrimRight(raw, "/")
	if trimmed == "" {
		l.path = "/"
		return l, true
	}
	dir, last := path.Split(trimmed)
	l.dot = last == "." || last == ".."
	lex := filepath.Clean(raw)
	l.path = lex
	physDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return l, true // nothing there, either way
	}
	if phys := filepath.Join(physDir, last); phys != lex && !sameFile(lex, phys) {
		l.path = phys
	}
	return l, true
}

// sameFile: a and b are the same file (neither followed if a symlink).
func sameFile(a, b string) bool {
	fa, err := os.Lstat(a)
	if err != nil {
		return false
	}
	fb, err := os.Lstat(b)
	return err == nil && os.SameFile(fa, fb)
}

// chdir is where a program that changes into p (env -C) runs: the
// physical directory ("" when not known or not there).
func (a *analysis) chdir(p string) string {
	abs, ok := a.abs(p)
	if !ok {
		return ""
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return ""
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return ""
	}
	// A shell it starts keeps $PWD when that is still where it is.
	if pwd := a.env["PWD"]; pwd.state == varSet && filepath.IsAbs(pwd.val) {
		if pi, err := os.Stat(pwd.val); err == nil && os.SameFile(pi, fi) {
			return filepath.Clean(pwd.val)
		}
	}
	return real
}

// abs is p made absolute where the command runs, as the kernel resolves
// it (ok false: p is relative and the working directory is not known).
func (a *analysis) abs(p string) (string, bool) {
	l, ok := a.locate(p)
	return l.path, ok
}

// follows are the ops whose command follows a symlink named last: chmod
// and chown change its target, a write opens it.
var follows = map[string]bool{"chmod": true, "chown": true, "overwrite": true, "truncate": true, "shred": true, model.OpWipe: true}

// how a command treats one operand.
type how struct {
	recursive bool
	note      string
	find      *findSpec
	// follow: a symlink named last stands for its target (else only a
	// trailing slash makes it so); linkFlat: a symlink followed without
	// a trailing slash is not descended into (chown -R).
	follow, linkFlat bool
}

// target adds one target: walked (recursive: everything under it),
// with its mounts, where it lies and the symlinks that point into it.
func (a *analysis) target(p, op string, recursive bool, note string, find *findSpec) {
	a.targetHow(p, op, how{recursive: recursive, note: note, find: find, follow: follows[op]})
}

func (a *analysis) targetHow(p, op string, h how) {
	if fd, ok := fdOf(p, a.cwd); ok && a.fds[fd] != "" {
		p = a.fds[fd] // /dev/stdin < db: db
	}
	if why := shellUnknown(p, a.cwd); why != "" {
		a.unknown = append(a.unknown, p+" ("+why+")")
		return
	}
	if q := shellState(p, a.cwd); (filepath.IsAbs(q) || a.cwd != "") && a.viaProcess(absolute(q, a.cwd)) {
		a.unknown = append(a.unknown, p+" (it leads through a symlink into a process's state: the shell's, not the preview's)")
		return
	}
	if by := a.changedAt(p, h.recursive || h.find != nil); by != "" {
		// What is there when it runs is not known: said (at least
		// MEDIUM), and what is there now still counted, so that a large
		// target keeps raising the level.
		a.unknown = append(a.unknown, p+" (changed earlier in the command by "+by+")")
	}
	loc, ok := a.locate(p)
	if !ok {
		a.unknown = append(a.unknown, p+" (a relative path, and the working directory is not known)")
		return
	}
	abs, note, recursive := loc.path, h.note, h.recursive
	t := Target{Path: abs, Op: op, LiveLinks: []string{}, Complete: true}
	fi, err := a.b.lstat(abs)
	if errors.Is(err, errUnseen) {
		return // the time ran out, or it could not be looked at: counted in the budget
	}
	exists, via := err == nil, ""
	if exists && fi.Mode()&fs.ModeSymlink != 0 && (h.follow || loc.slash) {
		// The command acts on the symlink's target.
		via = abs
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
			fi, err = a.b.lstat(abs)
			if errors.Is(err, errUnseen) {
				return // counted in the budget
			}
			exists = err == nil
		} else {
			exists = false // a dangling symlink: nothing there to lose
		}
		t.Path = abs
		note = joinNote(note, "by symlink "+via)
		if !loc.slash && h.linkFlat {
			recursive = false
		}
	}
	if exists && loc.slash && !fi.IsDir() {
		exists = false // name/ of a file: the command fails on it
		note = joinNote(note, "not a directory")
	}
	t.Note = note
	// rm -r link/ and find link/ empty the target and fail to remove it;
	// find . and find dir/. never remove their root.
	contents := op == "delete" && (via != "" && loc.slash || loc.dot && h.find != nil)
	if exists {
		t.Exists = true
		if fi.Mode()&fs.ModeCharDevice != 0 && (op == "overwrite" || op == model.OpWipe) {
			return // > /dev/null and the like: a device, not a file that goes
		}
		if writes[op] {
			if dev, ok := blockNumber(abs); ok {
				a.device(abs, dev) // > /dev/sdb, shred /dev/sdb: the device is wiped
				return
			}
		}
		from := 0 // the depth counted from
		if contents {
			from = 1
		}
		var st walkStats
		if h.find != nil {
			st = walk(abs, fi, true, a.b, h.find.match, max(h.find.min, from), h.find.max)
		} else {
			st = walk(abs, fi, recursive || contents, a.b, nil, from, -1)
		}
		t.Entries, t.Files, t.Dirs, t.Links, t.Bytes, t.Complete = st.entries, st.files, st.dirs, st.links, st.bytes, st.complete
		if !st.newest.IsZero() {
			t.NewestMtime = float64(st.newest.UnixNano()) / 1e9
		}
		if recursive || fi.IsDir() {
			t.Mounts = mountsIn(abs, a.host().mounts)
		}
		if op == "delete" || op == "shred" || (op == "chmod" || op == "chown") && fi.IsDir() {
			// What a live symlink points into goes, or changes under it
			// (chmod -R 000 of the live release stops it as well).
			t.LiveLinks = liveLinks(abs, a.b)
		}
	}
	if a.o.Cwd != "" && !within(abs, filepath.Clean(a.o.Cwd)) {
		t.Outside = true
	}
	a.targets = append(a.targets, t)
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
