package impact

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// longOptions are the long options of the programs whose options the
// analysers read, as their getopt_long tables have them (GNU coreutils,
// util-linux); a name ending in "=" takes a value (the next word when not
// given as --name=value). getopt_long accepts any unambiguous prefix of
// one: --rec is --recursive.
var longOptions = map[string][]string{
	"rm":       {"dir", "force", "help", "interactive", "no-preserve-root", "one-file-system", "preserve-root", "recursive", "verbose", "version"},
	"rmdir":    {"help", "ignore-fail-on-non-empty", "parents", "verbose", "version"},
	"unlink":   {"help", "version"},
	"shred":    {"exact", "force", "help", "iterations=", "random-source=", "remove", "size=", "verbose", "version", "zero"},
	"truncate": {"help", "io-blocks", "no-create", "reference=", "size=", "version"},
	"chmod":    {"changes", "help", "no-preserve-root", "preserve-root", "quiet", "recursive", "reference=", "silent", "verbose", "version"},
	"chown": {"changes", "dereference", "from=", "help", "no-dereference", "no-preserve-root", "preserve-root", "quiet",
		"recursive", "reference=", "silent", "verbose", "version"},
	"chgrp": {"changes", "dereference", "help", "no-dereference", "no-preserve-root", "preserve-root", "quiet",
		"recursive", "reference=", "silent", "verbose", "version"},
	"cp": {"archive", "attributes-only", "backup", "context", "copy-contents", "debug", "dereference", "force", "help",
		"interactive", "keep-directory-symlink", "link", "no-clobber", "no-dereference", "no-preserve=", "no-target-directory",
		"one-file-system", "parents", "preserve", "recursive", "reflink", "remove-destination", "sparse=",
		"strip-trailing-slashes", "suffix=", "symbolic-link", "target-directory=", "update", "verbose", "version"},
	"mv": {"backup", "context", "debug", "exchange", "force", "help", "interactive", "no-clobber", "no-copy", "no-target-directory",
		"strip-trailing-slashes", "suffix=", "target-directory=", "update", "verbose", "version"},
	"tee":        {"append", "help", "ignore-interrupts", "output-error", "version"},
	"wipefs":     {"all", "backup", "force", "help", "json", "lock", "no-act", "noheadings", "offset=", "output=", "parsable", "quiet", "types=", "version"},
	"blkdiscard": {"force", "help", "length=", "lock", "offset=", "quiet", "secure", "step=", "verbose", "version", "zeroout"},
}

// opts reads a program's options as GNU getopt_long does (options and
// operands in any order, "--" ends the options, -xVALUE and --name=VALUE,
// a long option by any unambiguous prefix): the options by their canonical
// names, the values of those that take one (short ones named in
// takesValue), the operands. A long option the program does not have, or
// an ambiguous prefix, is named unknown (ok false): the program would
// refuse it, or it is one this preview does not know; never ignored.
func (a *analysis) opts(prog string, args []string, takesValue map[string]bool) (opts map[string]bool, vals map[string]string, ops []string, ok bool) {
	opts, vals, ok = map[string]bool{}, map[string]string{}, true
	longs := longOptions[prog]
	end := false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case end || arg == "-" || !strings.HasPrefix(arg, "-"):
			ops = append(ops, arg)
		case arg == "--":
			end = true
		case strings.HasPrefix(arg, "--"):
			k, v, hasValue := strings.Cut(arg[2:], "=")
			name, takes, found := longMatch(longs, k)
			if !found {
				a.unknown = append(a.unknown, prog+" "+arg+" (an option "+prog+" does not have, or an ambiguous abbreviation)")
				ok = false
				continue
			}
			opts["--"+name] = true
			switch {
			case hasValue:
				vals["--"+name] = v
			case takes && i+1 < len(args):
				i++
				vals["--"+name] = args[i]
			}
		default:
			for j := 1; j < len(arg); j++ {
				o := "-" + string(arg[j])
				opts[o] = true
				if takesValue[o] {
					if j+1 < len(arg) {
						vals[o] = arg[j+1:]
					} else if i+1 < len(args) {
						i++
						vals[o] = args[i]
					}
					break
				}
			}
		}
	}
	return opts, vals, ops, ok
}

// abbrev reads, in opts (from flags), a long option given by a prefix of
// one of names (or of a long option in takesValue) as git's option parser
// does: the option itself when the prefix is of one alone (--har is
// --hard), else unknown (ambiguous: git refuses it). One that takes a
// value, abbreviated, is unknown: flags did not take its value.
func (a *analysis) abbrev(cmd string, opts, takesValue map[string]bool, names ...string) {
	for k := range opts {
		if !strings.HasPrefix(k, "--") || slices.Contains(names, k) || takesValue[k] {
			continue
		}
		var hits []string
		for _, n := range names {
			if strings.HasPrefix(n, k) {
				hits = append(hits, n)
			}
		}
		for n := range takesValue {
			if strings.HasPrefix(n, "--") && strings.HasPrefix(n, k) && !slices.Contains(hits, n) {
				hits = append(hits, n)
			}
		}
		switch {
		case len(hits) == 0:
		case len(hits) == 1 && !takesValue[hits[0]]:
			opts[hits[0]] = true
		default:
			a.unknown = append(a.unknown, cmd+" "+k+" (an abbreviated option this preview does not read)")
		}
	}
}

// longMatch is the long option k names among longs: an exact name, else
// the one name it is a prefix of (found false: none, or more than one).
func longMatch(longs []string, k string) (name string, takes, found bool) {
	var hits []string
	for _, l := range longs {
		n := strings.TrimSuffix(l, "=")
		if n == k {
			return n, n != l, true
		}
		if k != "" && strings.HasPrefix(n, k) {
			hits = append(hits, l)
		}
	}
	if len(hits) != 1 {
		return "", false, false
	}
	n := strings.TrimSuffix(hits[0], "=")
	return n, n != hits[0], true
}

// Paths an earlier command of the same command line changes.
//
// The preview looks at the tree as it is now; a command line that first
// moves, links, copies, extracts or writes, then destroys, acts on the
// tree as those earlier commands left it (ln -sfn prod e2; chmod -R 000
// e2/). So the analysis keeps the paths earlier commands may change, and a
// later target at one, under one, reached through one, holding one (when
// walked), a glob that may match one, or a plan read from one, is unknown
// ("… changed earlier in the command by mv"), never previewed as it is now.
//
// What counts as a change, and why:
//   - mv (its sources and where they go), cp, ln, install, rsync (where
//     they write), tar -x and unzip (the directory they extract into),
//     dd of=, tee, redirections (> and >>), truncate and shred (what a plan
//     or script read later holds), terraform plan -out=FILE, git commands
//     that write the working tree (its top), git clone (the directory);
//   - a command this preview does not know: each of its operands (and
//     --opt=VALUE values) may be written. A build (make, npm, go) writes
//     what it writes; what a later command names is unknown only when the
//     build names it. A command whose name or words cannot be known, a
//     shell reading a script, and programs that run a command line they
//     are given (xargs, parallel, flock, setsid, chroot, su, watch) may
//     change anything: every later target is unknown.
//   - mkdir and touch are not changes: they add empty directories and
//     empty files where nothing was (or only times), which hold nothing a
//     later command could lose; rm, rmdir, chmod and chown are not either:
//     the preview counts what they remove or change, and a later command
//     finds less than the preview counts, never more.
//
// Commands that only read (ls, cat, grep, echo, test…) change nothing.
type change struct {
	path, phys string // as written (made absolute), and as the kernel resolves it now
	by         string // the command that changes it
}

// readOnly are programs known to write no file their operands name.
var readOnly = set("echo", "printf", "cat", "ls", "grep", "egrep", "fgrep", "rg", "head", "tail", "wc", "test", "[",
	"true", "false", ":", "pwd", "stat", "file", "diff", "cmp", "du", "df", "readlink", "realpath", "basename",
	"dirname", "date", "sleep", "id", "whoami", "uname", "which", "type", "less", "more", "md5sum", "sha256sum",
	"sha1sum", "tree", "hostname", "nproc", "free", "uptime", "ps", "env", "printenv", "mkdir", "touch",
	"rm", "rmdir", "unlink", "chmod", "chown", "chgrp", "cd", "pushd", "popd", "dirs", "set", "shopt", "unset",
	"export", "read", "wipefs", "blkdiscard", "mkfs", "mke2fs", "mkswap", "mkdosfs", "trap", "exit", "return", "wait")

// runsAny are programs that run a command line given to them (or read
// from their input): what it changes cannot be known.
var runsAny = set("xargs", "parallel", "flock", "setsid", "chroot", "su", "runuser", "watch", "unshare", "nsenter",
	"eval", "source", ".", "script", "ssh", "sg", "fakeroot", "strace", "ltrace", "gdb")

// changedAt is the earlier change p (an operand where the command runs)
// is at, under, reached through, or (walked: holds) ("" none).
func (a *analysis) changedAt(p string, walked bool) string {
	if a.changedAll != "" {
		return a.changedAll
	}
	if len(a.changed) == 0 {
		return ""
	}
	lex, phys, ok := a.forms(p)
	if !ok {
		return a.changed[0].by
	}
	for _, c := range a.changed {
		for _, t := range []string{lex, phys} {
			for _, w := range []string{c.path, c.phys} {
				if within(t, w) || walked && within(w, t) {
					return c.by
				}
			}
		}
	}
	return ""
}

// forms are p made absolute as written (cleaned) and as the kernel
// resolves it now (the longest part of it that exists, symlinks followed).
func (a *analysis) forms(p string) (lex, phys string, ok bool) {
	p = shellState(p, a.cwd)
	if !filepath.IsAbs(p) {
		if a.cwd == "" {
			return "", "", false
		}
		p = a.cwd + "/" + p
	}
	lex = filepath.Clean(p)
	rest := ""
	for d := lex; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return lex, filepath.Join(r, rest), true
		}
		if d == "/" || d == "." {
			return lex, lex, true
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// mark records that the command named by may change p.
func (a *analysis) mark(p, by string) {
	if p == "" {
		return
	}
	lex, phys, ok := a.forms(p)
	if !ok {
		a.markAll(by + " (a relative path, the working directory not known)")
		return
	}
	a.changed = append(a.changed, change{path: lex, phys: phys, by: by})
}

func (a *analysis) markAll(by string) {
	if a.changedAll == "" {
		a.changedAll = by
	}
}

// record notes what the simple command c (program name, its arguments
// after it) may change for the commands after it (see change).
func (a *analysis) record(c simple, name string, args []string) {
	for _, r := range c.Redirs {
		if r.Unknown != "" {
			a.markAll("a redirection to " + r.Unknown)
			continue
		}
		a.mark(r.Path, "a redirection")
	}
	if c.NameUnknown {
		a.markAll(c.Text)
		return
	}
	if name == "" {
		return
	}
	if runsAny[name] {
		a.markAll(name)
		return
	}
	_, known := analysers[name]
	writer := !readOnly[name] && name != "find" && name != "git" && name != "terraform" && !shells[name]
	if len(c.Unknown) > 0 && (writer || !known && !readOnly[name]) {
		a.markAll(c.Text + " (words not known)")
		return
	}
	by := name
	switch name {
	case "mv", "cp", "ln", "install", "rsync":
		a.markOnto(name, args)
	case "tee", "truncate", "shred":
		_, _, ops, _ := a.quiet().opts(name, args, set("-s", "-r", "-n", "-p"))
		for _, p := range ops {
			a.mark(p, by)
		}
	case "dd":
		for _, arg := range args {
			if p, ok := strings.CutPrefix(arg, "of="); ok {
				a.mark(p, by)
			}
		}
	case "tar", "unzip", "bsdtar", "cpio":
		a.markExtract(name, args)
	case "find":
		for _, arg := range args {
			switch arg {
			case "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls":
				a.markAll("find " + arg)
				return
			}
		}
	case "git":
		a.markGit(args)
	case "terraform":
		a.markTerraform(args)
	case "sh", "bash", "dash", "zsh", "ksh":
		if !shellHasScript(args) {
			a.markAll(name + " reading a script")
		}
	default:
		if known || readOnly[name] {
			return
		}
		// Not known: each operand, and each --opt=VALUE, may be written.
		for _, arg := range args {
			if strings.HasPrefix(arg, "-") {
				_, v, ok := strings.Cut(arg, "=")
				if !ok {
					continue
				}
				arg = v
			}
			a.mark(arg, by)
		}
	}
}

// shellHasScript: the shell's arguments hold -c SCRIPT (whose commands
// were analysed, and recorded, in turn).
func shellHasScript(args []string) bool {
	for _, arg := range args {
		if !strings.HasPrefix(arg, "-") || arg == "--" {
			return false
		}
		if !strings.HasPrefix(arg, "--") && strings.Contains(arg, "c") {
			return true
		}
	}
	return false
}

// quiet is an analysis whose option errors are not kept (for reading
// options a second time).
func (a *analysis) quiet() *analysis {
	q := *a
	q.unknown = nil
	return &q
}

// markOnto: mv, cp, ln, install, rsync SOURCE... DEST change DEST, or
// DEST/NAME of each source when DEST is a directory (mv its sources too).
func (a *analysis) markOnto(name string, args []string) {
	values := set("-t", "-S", "-m", "-o", "-g", "-e", "-f")
	opts, vals, ops, _ := a.quiet().opts(name, args, values)
	dest := vals["-t"]
	if dest == "" {
		dest = vals["--target-directory"]
	}
	sources := ops
	if dest == "" {
		switch {
		case name == "ln" && len(ops) == 1:
			dest, sources = ".", ops
		case len(ops) >= 2:
			dest, sources = ops[len(ops)-1], ops[:len(ops)-1]
		case len(ops) == 1:
			a.mark(ops[0], name)
			return
		default:
			return
		}
	}
	if name == "mv" {
		for _, s := range sources {
			a.mark(s, name)
		}
	}
	if name == "rsync" || opts["-T"] || opts["--no-target-directory"] || a.changedAt(dest, false) != "" {
		a.mark(dest, name)
		return
	}
	d, ok := a.abs(dest)
	if fi, err := os.Stat(d); !ok || err != nil || !fi.IsDir() {
		a.mark(dest, name)
		return
	}
	for _, s := range sources {
		a.mark(filepath.Join(d, filepath.Base(filepath.Clean(s))), name)
	}
}

// markExtract: tar -x, unzip change the directory they extract into
// (names from the archive: any path under it).
func (a *analysis) markExtract(name string, args []string) {
	extract, dir := name == "unzip" || name == "cpio", "."
	for i, arg := range args {
		switch {
		case arg == "-C" || arg == "--directory" || name == "unzip" && arg == "-d":
			if i+1 < len(args) {
				dir = args[i+1]
			}
		case strings.HasPrefix(arg, "--directory="):
			dir = strings.TrimPrefix(arg, "--directory=")
		case arg == "--extract" || arg == "--get" || strings.HasPrefix(arg, "--ext") || strings.HasPrefix(arg, "--get"):
			extract = true
		case i == 0 && !strings.HasPrefix(arg, "--") && strings.Contains(arg, "x"):
			extract = true // tar xf A, tar -xf A
		case strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "--") && strings.Contains(arg, "x"):
			extract = true
		}
	}
	if extract {
		a.mark(dir, name+" extracting")
	}
}

// gitReadOnly are git subcommands that leave the working tree as it is.
var gitReadOnly = set("status", "log", "diff", "show", "branch", "fetch", "push", "remote", "rev-parse", "ls-files",
	"ls-tree", "blame", "grep", "describe", "tag", "shortlog", "reflog", "cat-file", "rev-list", "for-each-ref",
	"show-ref", "config", "help", "version", "add", "commit", "notes", "bisect", "var", "count-objects", "fsck", "gc")

// markGit: a git command that writes the working tree changes its top
// (git -C DIR: DIR's); git clone changes the directory it clones into.
func (a *analysis) markGit(args []string) {
	dir := "."
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if (args[0] == "-C" || args[0] == "-c" || args[0] == "--git-dir" || args[0] == "--work-tree") && len(args) > 1 {
			if args[0] == "-C" {
				dir = filepath.Join(dir, args[1])
				if filepath.IsAbs(args[1]) {
					dir = args[1]
				}
			}
			if args[0] == "--git-dir" || args[0] == "--work-tree" {
				a.markAll("git " + args[0] + " " + args[1])
				return
			}
			args = args[2:]
			continue
		}
		args = args[1:]
	}
	if len(args) == 0 || gitReadOnly[args[0]] {
		return
	}
	if args[0] == "clone" {
		var ops []string
		for _, arg := range args[1:] {
			if !strings.HasPrefix(arg, "-") {
				ops = append(ops, arg)
			}
		}
		switch {
		case len(ops) >= 2:
			a.mark(filepath.Join(dir, ops[1]), "git clone")
		case len(ops) == 1:
			a.mark(filepath.Join(dir, strings.TrimSuffix(filepath.Base(strings.TrimRight(ops[0], "/")), ".git")), "git clone")
		default:
			a.markAll("git clone")
		}
		return
	}
	top := dir
	if abs, ok := a.abs(dir); ok {
		for d := abs; ; d = filepath.Dir(d) {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				top = d
				break
			}
			if d == "/" {
				break
			}
		}
	}
	a.mark(top, "git "+args[0])
}

// markTerraform: terraform plan -out=FILE writes FILE (where -chdir= says).
func (a *analysis) markTerraform(args []string) {
	dir := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if d, ok := strings.CutPrefix(strings.Replace(args[0], "--", "-", 1), "-chdir="); ok {
			dir = d
		}
		args = args[1:]
	}
	if len(args) == 0 || args[0] != "plan" {
		return
	}
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		name, v, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(rest[i], "-"), "-"), "=")
		if !strings.HasPrefix(rest[i], "-") || name != "out" {
			continue
		}
		if !hasValue && i+1 < len(rest) {
			i++
			v = rest[i]
		}
		if !filepath.IsAbs(v) && dir != "" {
			v = filepath.Join(dir, v)
		}
		a.mark(v, "terraform plan -out")
	}
}

// procPid is /proc/PID (or /proc/self, /proc/thread-self) and what follows.
var procPid = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/proc/(self|thread-self|[0-9]+)(/.*)?$`) })

// fdOf is the descriptor p names (/dev/stdin, /dev/fd/N,
// /proc/self/fd/N), ok false when it names none.
func fdOf(p, cwd string) (int, bool) {
	if !filepath.IsAbs(p) {
		p = cwd + "/" + p
	}
	c := filepath.Clean(p)
	switch c {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if n, ok := strings.CutPrefix(c, dir); ok {
			if fd, err := strconv.Atoi(n); err == nil && fd >= 0 {
				return fd, true
			}
		}
	}
	return 0, false
}

// viaProcess: resolving p (absolute) as the kernel does passes through a
// symlink into a process's state (x -> /proc/self/cwd): the preview's
// process would resolve it to its own. Bounded as the kernel bounds it.
func viaProcess(p string) bool {
	todo := strings.Split(p, "/")
	cur := "/"
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if processPath(next) {
			return true
		}
		fi, err := os.Lstat(next)
		if err != nil {
			return false
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return false
		}
		t, err := os.Readlink(next)
		if err != nil {
			return false
		}
		if filepath.IsAbs(t) {
			cur = "/"
		}
		todo = append(strings.Split(t, "/"), todo...)
	}
	return false
}

// viaProcess is viaProcess(p), its directory's answer kept (rm -f many/*
// names thousands of paths in one directory).
func (a *analysis) viaProcess(p string) bool {
	dir, last := filepath.Split(p)
	via, ok := a.viaProc[dir]
	if !ok {
		via = viaProcess(dir)
		if a.viaProc == nil {
			a.viaProc = map[string]bool{}
		}
		a.viaProc[dir] = via
	}
	if via || last == "" || processPath(p) {
		return via || processPath(p)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return false
	}
	return viaProcess(p) // a symlink named last: where it leads
}

// processPath: p (absolute) names a process's state (/proc/self/…,
// /proc/PID/…, /dev/fd/…, /dev/stdin…): resolved in the preview's process
// it would be the preview's, not the shell's.
func processPath(p string) bool {
	c := filepath.Clean(p)
	return procPid().MatchString(c) || c == "/dev/fd" || strings.HasPrefix(c, "/dev/fd/") ||
		c == "/dev/stdin" || c == "/dev/stdout" || c == "/dev/stderr"
}

// shellState is p with /proc/self/cwd (and /proc/self/root) put as the
// shell has them: the working directory the command runs in (cwd, "" not
// known: p unchanged, and shellUnknown names it).
func shellState(p, cwd string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	m := procPid().FindStringSubmatch(filepath.Clean(p))
	if m == nil || m[1] != "self" && m[1] != "thread-self" {
		return p
	}
	rest := strings.TrimPrefix(m[2], "/")
	head, tail, _ := strings.Cut(rest, "/")
	switch {
	case head == "cwd" && cwd != "":
		return filepath.Join(cwd, tail) + trailing(p)
	case head == "root":
		return filepath.Join("/", tail) + trailing(p)
	}
	return p
}

func trailing(p string) string {
	if strings.HasSuffix(p, "/") {
		return "/"
	}
	return ""
}

// shellUnknown says why p names the running shell's own state, or another
// process's, which this preview cannot resolve in its own process ("": p
// is not such a path): /dev/stdin, /dev/fd/N, /proc/self/fd/N,
// /proc/PID/…, /proc/self/cwd when the working directory is not known.
func shellUnknown(p, cwd string) string {
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return ""
		}
		p = cwd + "/" + p
	}
	c := filepath.Clean(p)
	switch {
	case c == "/dev/stdin" || c == "/dev/stdout" || c == "/dev/stderr" || c == "/dev/fd" || strings.HasPrefix(c, "/dev/fd/"):
		return "it names one of the shell's open files"
	}
	m := procPid().FindStringSubmatch(c)
	if m == nil {
		return ""
	}
	if m[1] != "self" && m[1] != "thread-self" {
		return "it names another process's state"
	}
	head, _, _ := strings.Cut(strings.TrimPrefix(m[2], "/"), "/")
	switch {
	case head == "root", head == "cwd" && cwd != "":
		return ""
	case head == "cwd":
		return "it names the shell's working directory, which is not known"
	}
	return "it names the running shell's own state"
}
