package impact

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/approve-tui/approve-tui/model"
)

// analysis gathers the targets of one preview.
type analysis struct {
	ctx     context.Context // the programs an analyser runs stop with it
	o       Options
	cwd     string // where the simple command being analysed runs ("": not known)
	b       *budget
	dev     *host // the host's devices and mounts, read when first needed
	targets []Target
	unknown []string
	depth   int // shells inside shells
}

// prefixes run the command that follows them: the analysers look past
// them (and their options) at what they run.
var prefixes = map[string]bool{"sudo": true, "doas": true, "env": true, "command": true, "builtin": true,
	"exec": true, "nohup": true, "nice": true, "time": true, "ionice": true, "timeout": true, "stdbuf": true}

// prefixArgs are the options of a prefix that take a value of their own.
var prefixArgs = map[string]map[string]bool{
	"sudo":    {"-u": true, "-g": true, "-C": true, "-D": true, "-h": true, "-p": true, "-r": true, "-t": true, "-U": true},
	"doas":    {"-u": true, "-C": true},
	"env":     {"-u": true, "-C": true, "-S": true},
	"nice":    {"-n": true},
	"ionice":  {"-c": true, "-n": true, "-p": true},
	"timeout": {"-k": true, "-s": true},
	"stdbuf":  {"-i": true, "-o": true, "-e": true},
}

// simple analyses one simple command.
func (a *analysis) simple(c simple) {
	a.cwd = c.Cwd
	for _, r := range c.Redirs {
		if r.Unknown != "" {
			a.unknown = append(a.unknown, "> "+r.Unknown)
			continue
		}
		a.target(r.Path, "overwrite", false, "", nil)
	}
	args := c.Args
	if c.NameUnknown {
		a.unknown = append(a.unknown, c.Text)
		return
	}
	for len(args) > 0 && prefixes[filepath.Base(args[0])] {
		name := filepath.Base(args[0])
		args = args[1:]
		for len(args) > 0 {
			arg := args[0]
			switch {
			case name == "env" && strings.Contains(arg, "=") && !strings.HasPrefix(arg, "-"):
				args = args[1:]
			case name == "timeout" && !strings.HasPrefix(arg, "-"):
				args = args[1:] // the duration
				goto next
			case strings.HasPrefix(arg, "-") && arg != "-" && arg != "--":
				args = args[1:]
				if prefixArgs[name][arg] && len(args) > 0 {
					args = args[1:]
				}
			case arg == "--":
				args = args[1:]
				goto next
			default:
				goto next
			}
		}
	next:
	}
	if len(args) == 0 {
		return
	}
	name := filepath.Base(args[0])
	run, ok := analysers[name]
	if strings.HasPrefix(name, "mkfs.") {
		run, ok = mkfsArgs, true
	}
	if !ok {
		return
	}
	if len(c.Unknown) > 0 {
		// Some of its words are not known: what it names is not whole.
		a.unknown = append(a.unknown, c.Unknown...)
	}
	run(a, name, args[1:])
}

// analysers know what each command destroys (set in init: the shells'
// analyser analyses in turn).
var analysers map[string]func(a *analysis, name string, args []string)

func init() { analysers = analyserTable() }

func analyserTable() map[string]func(a *analysis, name string, args []string) {
	return map[string]func(a *analysis, name string, args []string){
		"rm":     rmArgs,
		"rmdir":  func(a *analysis, _ string, args []string) { a.each(operands(args, nil), "delete", false) },
		"unlink": func(a *analysis, _ string, args []string) { a.each(operands(args, nil), "delete", false) },
		"shred":  shredArgs,
		"truncate": func(a *analysis, _ string, args []string) {
			a.each(operands(args, set("-s", "--size", "-r", "--reference")), "truncate", false)
		},
		"chmod":      func(a *analysis, _ string, args []string) { modeArgs(a, "chmod", args) },
		"chown":      func(a *analysis, _ string, args []string) { modeArgs(a, "chown", args) },
		"chgrp":      func(a *analysis, _ string, args []string) { modeArgs(a, "chown", args) },
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
	}
}

// maxNesting bounds shells inside shells (sh -c "bash -c '…'").
const maxNesting = 4

// shellArgs previews the script of sh -c SCRIPT (also -lc, -ec, ...): its
// words are parsed and analysed in turn. A shell reading a file or its
// input is not previewed.
func shellArgs(a *analysis, name string, args []string) {
	for i, arg := range args {
		if !strings.HasPrefix(arg, "-") || arg == "--" {
			if i == 0 || !strings.Contains(args[i-1], "c") {
				a.unknown = append(a.unknown, name+" "+strings.Join(args, " ")+" (a script not on its command line)")
			}
			return
		}
		if strings.HasPrefix(arg, "--") || !strings.Contains(arg, "c") {
			continue
		}
		if i+1 >= len(args) {
			return
		}
		if a.depth >= maxNesting {
			a.unknown = append(a.unknown, name+" -c … (shells nested too deep)")
			return
		}
		cmds, err := parse(args[i+1], a.cwd, a.o.Home, a.b)
		if err != nil {
			a.unknown = append(a.unknown, name+" -c script that does not parse ("+err.Error()+")")
			return
		}
		a.depth++
		for _, c := range cmds {
			a.simple(c)
		}
		a.depth--
		return
	}
}

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
			if takesValue[arg] {
				opts[arg] = true
				i++
				continue
			}
			for _, c := range arg[1:] {
				opts["-"+string(c)] = true
			}
		}
	}
	return opts, ops
}

func operands(args []string, takesValue map[string]bool) []string {
	_, ops := flags(args, takesValue)
	return ops
}

func rmArgs(a *analysis, _ string, args []string) {
	opts, ops := flags(args, nil)
	recursive := opts["-r"] || opts["-R"] || opts["--recursive"]
	for _, p := range ops {
		note := ""
		if !recursive {
			if abs, ok := a.abs(p); ok {
				fi, err := a.b.lstat(abs)
				if errors.Is(err, errUnseen) {
					continue // counted in the budget
				}
				if err == nil && fi.IsDir() {
					note = "rm without -r does not delete a directory"
					a.target(p, "delete", false, note, nil)
					a.targets[len(a.targets)-1].Entries, a.targets[len(a.targets)-1].Dirs = 0, 0
					continue
				}
			}
		}
		a.target(p, "delete", recursive, note, nil)
	}
}

func shredArgs(a *analysis, _ string, args []string) {
	opts, ops := flags(args, set("-n", "-s", "--iterations", "--size", "--random-source"))
	op := "shred"
	if opts["-u"] || opts["--remove"] {
		op = "delete"
	}
	a.each(ops, op, false)
}

// modeArgs: chmod MODE FILE..., chown OWNER FILE... (-R recursive;
// --reference=FILE takes the place of the mode).
func modeArgs(a *analysis, op string, args []string) {
	opts, ops := flags(args, map[string]bool{"--reference": false})
	if !opts["--reference"] && len(ops) > 0 {
		ops = ops[1:] // the mode or owner
	}
	a.each(ops, op, opts["-R"] || opts["--recursive"])
}

// ontoArgs: mv or cp SOURCE... DEST overwrite what exists at DEST (or at
// DEST/SOURCE's name when DEST is a directory); -n overwrites nothing.
func ontoArgs(a *analysis, _ string, args []string) {
	opts, ops := flags(args, set("-t", "--target-directory", "-S", "--suffix"))
	if opts["-n"] || opts["--no-clobber"] || opts["--update=none"] {
		return
	}
	var dest string
	var sources []string
	if t := valueOf(args, "-t", "--target-directory"); t != "" {
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
	fi, err := os.Stat(d)
	switch {
	case err == nil && fi.IsDir():
		for _, s := range sources {
			into := filepath.Join(d, filepath.Base(filepath.Clean(s)))
			if ti, err := os.Lstat(into); err == nil && !ti.IsDir() {
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
		case "-delete", "-print", "-depth":
			continue
		case "-name":
			v, ok = val()
			names = append(names, v)
		case "-iname":
			v, ok = val()
			inames = append(inames, strings.ToLower(v))
		case "-type":
			v, ok = val()
			types = v
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

// abs is p made absolute where the command runs (ok false: p is relative
// and the working directory is not known).
func (a *analysis) abs(p string) (string, bool) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), true
	}
	if a.cwd == "" {
		return "", false
	}
	return absolute(p, a.cwd), true
}

// target adds one target: walked (recursive: everything under it),
// with its mounts, where it lies and the symlinks that point into it.
func (a *analysis) target(p, op string, recursive bool, note string, find *findSpec) {
	abs, ok := a.abs(p)
	if !ok {
		a.unknown = append(a.unknown, p+" (a relative path, and the working directory is not known)")
		return
	}
	t := Target{Path: abs, Op: op, Note: note, LiveLinks: []string{}, Complete: true}
	fi, err := a.b.lstat(abs)
	if errors.Is(err, errUnseen) {
		return // the time ran out, or it could not be looked at: counted in the budget
	}
	if err == nil {
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
		var st walkStats
		if find != nil {
			st = walk(abs, fi, true, a.b, find.match, find.min, find.max)
		} else {
			st = walk(abs, fi, recursive, a.b, nil, 0, -1)
		}
		t.Entries, t.Files, t.Dirs, t.Links, t.Bytes, t.Complete = st.entries, st.files, st.dirs, st.links, st.bytes, st.complete
		if !st.newest.IsZero() {
			t.NewestMtime = float64(st.newest.UnixNano()) / 1e9
		}
		if recursive || fi.IsDir() {
			t.Mounts = mountsIn(abs, a.host().mounts)
		}
		if op == "delete" || op == "shred" {
			t.LiveLinks = liveLinks(abs, a.b)
		}
	}
	if a.o.Cwd != "" && !within(abs, filepath.Clean(a.o.Cwd)) {
		t.Outside = true
	}
	a.targets = append(a.targets, t)
}
