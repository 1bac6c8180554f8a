// Package impact previews what a shell command would touch, before anyone
// is asked to approve it: the command is read once by shell.Parse (a real
// shell parser, mvdan.cc/sh, the reading every analysis of the command
// shares), its syntax tree followed here, each simple command known as its
// words (a sh -c script is the tree Parse read for it), and the words
// expanded only where the result is certain from the command itself and
// the filesystem (literals, quotes, ~, globs relative to the command's
// working directory). Whatever needs the command to run (command
// substitution, variables it does not set, arithmetic) is reported as
// unknown, never guessed. Analysers, one per kind of destruction, then walk
// what each simple command names, read-only and within bounds. Nothing is
// written and nothing of the command runs. The commands that run another
// (sudo, env, nice, timeout, flock, su, script, watch, find -exec, xargs
// ...) are read by shell.Through, by the rules shell.Parse reads every
// command line by; the preview keeps the shell's state it follows (the
// directory, the environment, the options) itself.
package impact

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	parsed "github.com/approve-tui/approve-tui/shell"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// simple is one simple command as the analysers see it: its words, as
// far as they are certain, and its output redirections.
type simple struct {
	// Args are the expanded words; a word that could not be expanded for
	// sure is left out and named in Unknown.
	Args []string
	// Unknown are the words (as written) that could not be expanded.
	Unknown []string
	// NameUnknown: the command's own name could not be expanded, so what
	// it does cannot be known.
	NameUnknown bool
	// Redirs are the files written by > (truncated), with the operator.
	Redirs []redirect
	// MarksOnly: an earlier pass of a loop, analysed only for what it
	// changes before the pass that is previewed.
	MarksOnly bool
	// Fds are the files the command's own redirections open, by
	// descriptor ("": not a file known, as a here-document or a word not
	// known); a descriptor not in it is the shell's own.
	Fds map[int]string
	// Text is the simple command as written (for messages).
	Text string
	// Cwd is where it runs: the proposal's working directory, or where a
	// cd before it went ("" when that is not known for sure).
	Cwd string
	// CwdUnsure: Cwd may be $PWD's physical path instead (see shell).
	CwdUnsure bool
	// Env is the environment it gets, as far as the shell's own
	// directory and expansion depend on it (for a shell it starts).
	Env map[string]shvar
}

type redirect struct {
	Path    string
	Unknown string // the word as written, when it could not be expanded
	// Keeps: >> and <> write without truncating (nothing lost; what a
	// later command reads there changes).
	Keeps bool
}

// A shell variable as the preview knows it. The zero value is a variable
// whose value is not known (the environment's, when not one the preview
// reads, or set by something the preview does not follow).
type shvar struct {
	state    uint8 // varUnknown, varSet, varUnset
	val      string
	exported bool
}

const (
	varUnknown uint8 = iota
	varSet
	varUnset
)

func known(v string, exported bool) shvar { return shvar{state: varSet, val: v, exported: exported} }

// imported are the variables read from the environment the command runs
// in: those that change where cd goes (HOME, CDPATH), how globs match
// (GLOBIGNORE, BASHOPTS), what a bash does first (BASH_ENV, SHELLOPTS,
// POSIXLY_CORRECT), the words terraform adds to its own (TF_CLI_ARGS*) and
// what moves git's repository (gitPlaceVars).
// Any other variable of the environment is not known to the preview.
var imported = append([]string{"HOME", "CDPATH", "GLOBIGNORE", "BASHOPTS", "SHELLOPTS", "BASH_ENV", "POSIXLY_CORRECT",
	"TF_CLI_ARGS", "TF_CLI_ARGS_apply"}, gitPlaceVars...)

// tri is a setting that may not be known.
type tri uint8

const (
	off tri = iota
	on
	unknownTri
)

// shell is what the preview follows of a shell's state while it reads a
// command: its logical working directory (as $PWD and cd -L have it),
// its variables, the pushd stack, the options that change cd and globs,
// and the functions the command defines.
type shell struct {
	bash bool   // the shell is bash (pushd, popd, BASHOPTS...)
	cwd  string // "" when not known
	// pwdUnsure: $PWD may be cwd's physical path rather than cwd (the
	// shell is not seen); a logical .. from it is then not known where
	// the two differ.
	pwdUnsure  bool
	vars       map[string]shvar
	stack      []string // pushd's stack, below cwd
	stackKnown bool
	physical   tri // set -P: cd resolves symlinks
	posix      tri // set -o posix: whether a cd no CDPATH entry finds falls back differs among versions
	dotglob    tri
	nocaseglob tri
	globstar   tri
	allexport  tri // set -a: every assignment exports
	keyword    tri // set -k: NAME=value anywhere in the words goes to the environment
	lastpipe   tri // shopt -s lastpipe: a pipeline's last part runs in the shell
	funcs      map[string]bool
	// refs are the namerefs (declare -n) to the variable each names (""
	// when not known): assigning one assigns that variable.
	refs map[string]string
	// renamed are the command names that no longer run what they say
	// (an alias, hash -p); "*": any name may be one.
	renamed map[string]bool
	b       *budget // bounds the directories globs read (nil: none)
}

// newShell is the shell that starts the command: in cwd (absolute, or ""
// when not known) with env; bash says whether it is bash, pwdUnsure that
// its $PWD may be cwd's physical path instead.
func newShell(cwd string, env map[string]shvar, bash, pwdUnsure bool) *shell {
	sh := &shell{bash: bash, cwd: cwd, vars: map[string]shvar{}, stackKnown: true, funcs: map[string]bool{},
		refs: map[string]string{}, renamed: map[string]bool{}}
	if pwdUnsure && cwd != "" {
		phys, err := filepath.EvalSymlinks(cwd)
		sh.pwdUnsure = err != nil || phys != cwd
	}
	for _, k := range imported {
		v, ok := env[k]
		if !ok {
			v = shvar{state: varUnset}
		}
		sh.vars[k] = v
	}
	if cwd != "" {
		sh.vars["PWD"] = known(cwd, true)
	}
	if !bash {
		return sh
	}
	// bash -c reads BASH_ENV first: what it does is not known.
	if v := sh.vars["BASH_ENV"]; v.state != varUnset && !(v.state == varSet && v.val == "") {
		sh.forget()
		return sh
	}
	sh.physical = optionIn(sh.vars["SHELLOPTS"], "physical")
	sh.posix = optionIn(sh.vars["SHELLOPTS"], "posix")
	sh.allexport = optionIn(sh.vars["SHELLOPTS"], "allexport")
	sh.keyword = optionIn(sh.vars["SHELLOPTS"], "keyword")
	if sh.vars["SHELLOPTS"].state == varUnset {
		// bash sets it (not exported) to the options it has: export
		// SHELLOPTS hands them to the bash it starts.
		sh.vars["SHELLOPTS"] = known("braceexpand:hashall:interactive-comments", false)
	}
	if p := sh.vars["POSIXLY_CORRECT"]; p.state == varSet {
		sh.posix = on
	} else if p.state == varUnknown {
		sh.posix = unknownTri
	}
	sh.dotglob = optionIn(sh.vars["BASHOPTS"], "dotglob")
	sh.nocaseglob = optionIn(sh.vars["BASHOPTS"], "nocaseglob")
	sh.globstar = optionIn(sh.vars["BASHOPTS"], "globstar")
	sh.lastpipe = optionIn(sh.vars["BASHOPTS"], "lastpipe")
	if sh.vars["BASHOPTS"].state == varUnset {
		// As SHELLOPTS: bash's own (5.2), none of the options followed set.
		sh.vars["BASHOPTS"] = known("checkwinsize:cmdhist:complete_fullquote:extquote:force_fignore:globasciiranges:"+
			"globskipdots:hostcomplete:interactive_comments:patsub_replacement:progcomp:promptvars:sourcepath", false)
	}
	if optionIn(sh.vars["BASHOPTS"], "expand_aliases") != off {
		sh.forget()
	}
	return sh
}

// optionIn says whether option is in v, a colon-separated list of the
// options set (SHELLOPTS, BASHOPTS).
func optionIn(v shvar, option string) tri {
	switch v.state {
	case varUnset:
		return off
	case varSet:
		for _, o := range strings.Split(v.val, ":") {
			if o == option {
				return on
			}
		}
		return off
	}
	return unknownTri
}

// envOf reads KEY=VALUE pairs (later ones win) as exported variables.
func envOf(pairs []string) map[string]shvar {
	env := map[string]shvar{}
	for _, kv := range pairs {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = known(v, true)
		}
	}
	return env
}

func (sh *shell) clone() *shell {
	c := *sh
	c.vars = maps.Clone(sh.vars)
	c.stack = slices.Clone(sh.stack)
	c.funcs = maps.Clone(sh.funcs)
	c.refs = maps.Clone(sh.refs)
	c.renamed = maps.Clone(sh.renamed)
	return &c
}

// forget: the shell's state is no longer known (eval, source, a function
// of the command's, an unknown command name ran in it). The functions the
// command defined stay defined.
func (sh *shell) forget() {
	sh.cwd = ""
	sh.vars = map[string]shvar{}
	sh.stackKnown = false
	sh.physical, sh.posix, sh.dotglob, sh.nocaseglob, sh.globstar = unknownTri, unknownTri, unknownTri, unknownTri, unknownTri
	sh.allexport, sh.keyword, sh.lastpipe = unknownTri, unknownTri, unknownTri
}

// merge makes unknown what may or may not have changed: sh is the state
// when something ran, was the state when it did not.
func (sh *shell) merge(was *shell) {
	if sh.cwd != was.cwd {
		sh.cwd = ""
	}
	sh.pwdUnsure = sh.pwdUnsure || was.pwdUnsure
	for k, v := range sh.vars {
		if w, ok := was.vars[k]; !ok || w != v {
			sh.vars[k] = shvar{}
		}
	}
	for k := range was.vars {
		if _, ok := sh.vars[k]; !ok {
			sh.vars[k] = shvar{}
		}
	}
	if !sh.stackKnown || !was.stackKnown || !slices.Equal(sh.stack, was.stack) {
		sh.stackKnown, sh.stack = false, nil
	}
	for _, p := range [][2]*tri{{&sh.physical, &was.physical}, {&sh.posix, &was.posix}, {&sh.dotglob, &was.dotglob},
		{&sh.nocaseglob, &was.nocaseglob}, {&sh.globstar, &was.globstar}, {&sh.allexport, &was.allexport},
		{&sh.keyword, &was.keyword}, {&sh.lastpipe, &was.lastpipe}} {
		if *p[0] != *p[1] {
			*p[0] = unknownTri
		}
	}
	for k := range was.funcs {
		sh.funcs[k] = true
	}
	for k, v := range was.refs {
		if w, ok := sh.refs[k]; ok && w != v {
			v = ""
		}
		sh.refs[k] = v
	}
	for k := range was.renamed {
		sh.renamed[k] = true
	}
}

// set assigns a variable, keeping whether it is exported.
func (sh *shell) set(name string, v shvar) {
	v.exported = v.exported || sh.vars[name].exported || sh.allexport == on
	if sh.bash && (name == "SHELLOPTS" || name == "BASHOPTS") {
		v = shvar{exported: v.exported} // read-only in bash: the assignment fails
	}
	sh.vars[name] = v
}

// exported is the environment a command started by the shell gets: its
// exported variables, then the assignments before the command.
func (sh *shell) exported(prefix map[string]shvar) map[string]shvar {
	env := map[string]shvar{}
	for k, v := range sh.vars {
		if v.exported || v.state == varUnknown {
			if v.state == varSet || v.state == varUnknown {
				env[k] = v
			}
		} else if v.state == varSet && sh.allexport == unknownTri {
			env[k] = shvar{} // exported or not: not known
		}
	}
	for _, k := range imported {
		if _, ok := sh.vars[k]; !ok {
			env[k] = shvar{} // forgotten: not known, rather than unset
		}
	}
	for k, v := range prefix {
		env[k] = v
	}
	return env
}

// environ is the expander's environment: the variables known to be set,
// PWD the directory globs are read in.
func (sh *shell) environ() expand.Environ {
	pairs := []string{"IFS= \t\n"}
	for k, v := range sh.vars {
		if v.state == varSet && k != "PWD" {
			pairs = append(pairs, k+"="+v.val)
		}
	}
	pairs = append(pairs, "PWD="+sh.cwd)
	return expand.ListEnviron(pairs...)
}

// parse splits command into its simple commands, in order, following sh
// (changed as the command would change it). A command shell.Parse refuses
// (it does not parse, or is too large, nested too deep, holds NUL or
// invalid UTF-8) is an error: nothing of it can be previewed. A cd (or pushd, popd) that
// surely goes somewhere moves the directory for what follows, as the
// shell would go (CDPATH, HOME, OLDPWD, -L/-P, symlinks); one that may
// or may not happen (in a branch, a loop, after ||) or whose destination
// is not known leaves it unknown after that.
//
// Globs read directories within b: a glob cut by it, or over a directory
// that cannot be read, is an unknown word.
func parse(command string, sh *shell, b *budget) ([]simple, error) {
	s, err := parsed.Parse(command, parsed.Options{})
	if err != nil {
		return nil, parseError(err)
	}
	return simples(s.Statements(s.File), sh, b), nil
}

// simples are the simple commands of sts, the statements shell.Parse
// lists for a tree it read (the line's, or a script's it runs by a
// shell), followed from sh (see parse).
func simples(sts []parsed.Statement, sh *shell, b *budget) []simple {
	sh.b = b
	out, _ := follow(sts, 0, len(sts), nil, sh, 0)
	return out
}

// parseError is why shell.Parse refused a line, as the preview says it:
// the parser's own words for a syntax error.
func parseError(err error) error {
	var e *parsed.Error
	if errors.As(err, &e) && errors.Is(e, parsed.ErrSyntax) && e.Detail != "" {
		return errors.New(e.Detail)
	}
	return err
}

// tree is the syntax tree of script, a script a shell of the line runs
// (sh -c SCRIPT): the one shell.Parse read with the line (or with a script
// read before) when it read that text, else script read by shell.Parse
// now (a script the preview's own expansion gave: $SHELL -c, a word
// shell/ did not know).
func (a *analysis) tree(script string) (*syntax.File, error) {
	for _, s := range a.scripts {
		if f := s.Tree(script); f != nil {
			return f, nil
		}
	}
	s, err := parsed.Parse(script, parsed.Options{})
	if err != nil {
		return nil, parseError(err)
	}
	a.scripts = append(a.scripts, s)
	return s.File, nil
}

// statements are the statements shell.Parse lists for f, a tree it read
// (see tree).
func (a *analysis) statements(f *syntax.File) []parsed.Statement {
	for _, s := range a.scripts {
		if sts := s.Statements(f); sts != nil {
			return sts
		}
	}
	return nil
}

// maxLoopDepth bounds the loops inside loops whose passes are walked to
// find where a pass starts; deeper, a loop's start is not known at all.
const maxLoopDepth = 3

// follow follows sh through sts[lo:hi], statements shell.Parse listed for
// one tree (Script.Statements): the simple commands in them, and the
// shell after them. once is a loop walked as one pass (nil: none; depth:
// loops within loops so walked); sts[lo:hi] are then the statements in it.
func follow(sts []parsed.Statement, lo, hi int, once *parsed.Place, sh *shell, depth int) ([]simple, *shell) {
	var stack []cdFrame // the places entered, by depth from base
	var out []simple
	base := 0
	if once != nil {
		base = once.Depth
	}
	// leave ends the place on top of the stack: what its end does to the
	// changes made in it.
	leave := func() {
		fr := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case fr.restore:
			sh = fr.saved // a subshell's changes stay in it
		case fr.maybe:
			sh.merge(fr.saved) // it may or may not have run
		case fr.afterX != nil && !leftOfAnd(stack):
			sh.merge(fr.afterX) // Y's changes, which did not happen when X failed
		}
	}
	// stmtFrame is the frame of a statement: what its place (in a
	// pipeline, after || or &&, in the background) does to its changes.
	stmtFrame := func(x *syntax.Stmt) cdFrame {
		fr := cdFrame{node: x, saved: sh.clone()}
		fr.restore = x.Background || x.Coprocess
		if len(stack) > 0 {
			if b, ok := stack[len(stack)-1].node.(*syntax.BinaryCmd); ok {
				switch {
				case (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && b.Y == x && sh.bash && sh.lastpipe != off:
					// lastpipe: the last part runs in the shell itself
					fr.maybe = sh.lastpipe == unknownTri
				case b.Op == syntax.Pipe || b.Op == syntax.PipeAll:
					fr.restore = true // each part a subshell
				case b.Y == x && b.Op == syntax.OrStmt:
					fr.maybe = true // runs only when X failed
				case b.Y == x && b.Op == syntax.AndStmt:
					stack[len(stack)-1].afterX = sh.clone()
				}
			}
		}
		return fr
	}
	// enter starts place p, whose first statement is sts[i].
	enter := func(p *parsed.Place, i int) {
		n := p.Node
		if st, ok := n.(*syntax.Stmt); ok {
			// A compound command (subshell, if, loop, function): its
			// statements follow. Its redirections count.
			fr := stmtFrame(st)
			fr.place = p
			if len(st.Redirs) > 0 {
				s := simple{Text: printed(st), Cwd: sh.cwd}
				addRedirs(&s, st.Redirs, sh)
				out = append(out, s)
			}
			stack = append(stack, fr)
			return
		}
		fr := cdFrame{node: n, place: p, saved: sh.clone()}
		switch x := n.(type) {
		case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
			fr.restore = true
		case *syntax.IfClause, *syntax.CaseClause:
			fr.maybe = true
		case *syntax.WhileClause, *syntax.ForClause:
			fr.maybe = true
			// A pass starts where the one before left: what the body
			// changes is not known at its start.
			switch {
			case p == once:
			case depth >= maxLoopDepth:
				sh.forget()
			default:
				// The pass before: what it changes is changed before
				// the pass walked next (its commands mark, and count
				// nothing themselves).
				var before []simple
				before, sh = follow(sts, i, p.End, p, sh.clone(), depth+1)
				for _, c := range before {
					c.MarksOnly = true
					out = append(out, c)
				}
			}
			if f, ok := x.(*syntax.ForClause); ok {
				if it, ok := f.Loop.(*syntax.WordIter); ok && it.Name != nil {
					sh.vars[it.Name.Value] = shvar{} // set by the loop: not known after
				}
			}
		case *syntax.FuncDecl:
			// Its body runs when called, from wherever the shell is then:
			// walked from a shell not known; calling it makes the shell
			// not known.
			fr.restore = true
			if x.Name != nil {
				sh.funcs[x.Name.Value] = true
				fr.saved.funcs[x.Name.Value] = true
			}
			sh.forget()
		}
		stack = append(stack, fr)
	}
	var fresh []*parsed.Place
	for i := lo; i < hi; i++ {
		if sh.b != nil && sh.b.out() {
			sh.b.unfollowed += hi - i // the preview's time is up: what follows is not seen
			break
		}
		st := sts[i]
		// The places st is in that are not entered yet, from its parent
		// up to the one entered (or the walk's root): the others end.
		fresh = fresh[:0]
		q := st.In
		for q != nil && q.Depth >= base && (q.Depth-base >= len(stack) || stack[q.Depth-base].place != q) {
			fresh = append(fresh, q)
			q = q.Up
		}
		k := 0
		if q != nil && q.Depth >= base {
			k = q.Depth - base + 1
		}
		for len(stack) > k {
			leave()
		}
		for j := len(fresh) - 1; j >= 0; j-- {
			enter(fresh[j], i)
		}
		if st.Expr != nil {
			sideAssigns(st.Expr, sh) // a loop's words, a case's subject
			continue
		}
		out = statement(st.Node, stmtFrame(st.Node), &sh, out)
	}
	for len(stack) > 0 {
		leave()
	}
	return out, sh
}

// statement follows *shp through x, a statement that is not a compound
// command (its substitutions already followed), in its frame fr: its
// simple command, if it has one, is added to out. What it does to the
// shell is done on a copy; then kept, made uncertain or dropped as its
// place says.
func statement(x *syntax.Stmt, fr cdFrame, shp **shell, out []simple) []simple {
	sh := *shp
	next := sh.clone()
	defer func() {
		throughRefs(sh, next)
		switch {
		case fr.restore:
		case fr.maybe:
			next.merge(sh)
			*shp = next
		default:
			*shp = next
		}
	}()
	switch d := x.Cmd.(type) {
	case *syntax.DeclClause:
		s := simple{Text: printed(x), Cwd: sh.cwd}
		addRedirs(&s, x.Redirs, sh)
		if len(s.Redirs) > 0 {
			out = append(out, s)
		}
		declare(d, sh, next)
		return out
	case *syntax.CallExpr:
	default: // (( )), let, [[ ]], redirections alone
		if len(x.Redirs) > 0 {
			s := simple{Text: printed(x), Cwd: sh.cwd}
			addRedirs(&s, x.Redirs, sh)
			out = append(out, s)
		}
		sideAssigns(x, next)
		return out
	}
	call := x.Cmd.(*syntax.CallExpr)
	sideAssigns(x, next)
	if len(call.Args) == 0 {
		// X=value: known for the rest of the command when certain.
		for _, a := range call.Assigns {
			if a.Name != nil {
				next.set(a.Name.Value, assigned(a, next)) // in order: X=1 Y=$X
			}
		}
		if len(x.Redirs) > 0 {
			s := simple{Text: printed(x), Cwd: sh.cwd}
			addRedirs(&s, x.Redirs, sh)
			out = append(out, s)
		}
		return out
	}
	s := simple{Text: printed(x), Cwd: sh.cwd, CwdUnsure: sh.pwdUnsure}
	argWords, keywords := keywordAssigns(call.Args, sh)
	s.Args, s.Unknown, s.NameUnknown = words(argWords, sh)
	if len(s.Args) > 0 && !s.NameUnknown && (sh.renamed[s.Args[0]] || sh.renamed["*"]) {
		s.NameUnknown = true // an alias, or a name hash -p points elsewhere
	}
	addRedirs(&s, x.Redirs, sh)
	// Assignments before a command apply to it alone: they do not
	// change what later words mean.
	prefix := map[string]shvar{}
	if assigns := append(slices.Clone(call.Assigns), keywords...); len(assigns) > 0 {
		tmp := sh.clone() // each seen by those after it: X=1 Y=$X cmd
		for _, a := range assigns {
			if a.Name != nil {
				v := assigned(a, tmp)
				if sh.bash && (a.Name.Value == "SHELLOPTS" || a.Name.Value == "BASHOPTS") {
					v = shvar{} // read-only in bash: the assignment fails
				}
				v.exported = true
				prefix[a.Name.Value] = v
				tmp.vars[a.Name.Value] = v
			}
		}
	}
	s.Env = sh.exported(prefix)
	out = append(out, s)
	builtin(s, prefix, next)
	return out
}

// words expands a simple command's words: each one certain, or named in
// unknown (nameUnknown when the first one is).
func words(ws []*syntax.Word, sh *shell) (args, unknown []string, nameUnknown bool) {
	relative, globbed := false, false
	unread := "" // why a glob could not read all it needed
	cfg := config(sh)
	read := cfg.ReadDir2
	if sh.b != nil {
		read = sh.b.readDir(&unread)
	}
	cfg.ReadDir2 = func(name string) ([]fs.DirEntry, error) {
		globbed = true
		if !filepath.IsAbs(name) {
			relative = true
			return nil, fs.ErrNotExist
		}
		return read(name)
	}
	for i, w := range ws {
		relative, globbed, unread = false, false, ""
		why := ""
		var fields []string
		err := errUncertain
		if certain(w, sh) {
			fields, err = expand.Fields(cfg, w)
		}
		if relative {
			why = " (a glob, and the working directory is not known)"
		} else if unread != "" {
			why = " (a glob: " + unread + ")"
		} else if err == nil {
			fields = dotFiltered(cfg, w, fields)
			switch {
			case globbed && !globsKnown(sh):
				why = " (a glob, and the shell options or GLOBIGNORE that change it are not known)"
			case globbed && dotDotAfterLink(cfg, w, sh.cwd):
				why = " (a glob through .. after a symlink)"
			}
		}
		if err != nil || why != "" {
			unknown = append(unknown, printed(w)+why)
			if i == 0 {
				nameUnknown = true
			}
			continue
		}
		args = append(args, fields...)
	}
	return args, unknown, nameUnknown
}

var errUncertain = errors.New("not certain")

// globsKnown: how a glob matches is known (the options that change it,
// GLOBIGNORE unset or empty).
func globsKnown(sh *shell) bool {
	g := sh.vars["GLOBIGNORE"]
	return sh.dotglob != unknownTri && sh.nocaseglob != unknownTri && sh.globstar != unknownTri &&
		(g.state == varUnset || g.state == varSet && g.val == "")
}

// dotDotAfterLink: w's pattern has a .. whose directory before it is
// reached through a symlink, or is itself a pattern. The shell's glob
// opens dir/.. as the kernel does (the symlink's target's parent); the
// expander joins it away lexically.
func dotDotAfterLink(cfg *expand.Config, w *syntax.Word, cwd string) bool {
	pat, err := expand.Pattern(cfg, w)
	if err != nil {
		return true
	}
	parts := strings.Split(pat, "/")
	for i, p := range parts {
		if p != ".." {
			continue
		}
		before := strings.Join(parts[:i], "/")
		if pattern.HasMeta(before, 0) {
			return true
		}
		lex := absolute(before+"/..", cwd)
		if !filepath.IsAbs(before) && cwd == "" {
			return true
		}
		base := before
		if !filepath.IsAbs(base) {
			base = cwd + "/" + base
		}
		phys, err := filepath.EvalSymlinks(base + "/..")
		if err != nil {
			continue // nothing there: the glob matches nothing either way
		}
		if l, err := filepath.EvalSymlinks(lex); err != nil || l != phys {
			return true
		}
	}
	return false
}

// assigned is the value an assignment gives (unknown when not certain).
func assigned(a *syntax.Assign, sh *shell) shvar {
	if a.Array != nil || a.Index != nil || a.Append {
		return shvar{}
	}
	if a.Value == nil {
		return known("", false)
	}
	if v, ok := literal(a.Value, sh); ok {
		return known(v, false)
	}
	return shvar{}
}

// declare follows export, declare, typeset, local, readonly: values and
// the export attribute; an option that changes what a value becomes
// (-i, -n, -l, -u, -a...) makes the variables it names unknown.
func declare(d *syntax.DeclClause, sh, next *shell) {
	variant := ""
	if d.Variant != nil {
		variant = d.Variant.Value
	}
	plain, export, unexport := variant != "nameref", variant == "export", false
	nameref := variant == "nameref"
	for _, a := range d.Args {
		if a.Name != nil || a.Value == nil {
			continue
		}
		opt, ok := literal(a.Value, sh)
		if !ok || !strings.HasPrefix(opt, "-") && !strings.HasPrefix(opt, "+") {
			plain = false
			nameref = nameref || variant != "export" // an option not known may be -n
			continue
		}
		for _, c := range opt[1:] {
			switch {
			case c == 'n' && opt[0] == '-' && variant != "export":
				nameref = true
				plain = false
			case c == 'x' && opt[0] == '-':
				export = true
			case c == 'x' || c == 'n' && variant == "export":
				unexport = true
			case c == 'g' || c == 'r' || c == 'x' || c == 'p' || c == 'f' || c == 'F':
			default:
				plain = false
			}
		}
	}
	for _, a := range d.Args {
		if a.Name == nil {
			continue
		}
		name := a.Name.Value
		switch {
		case nameref:
			// A nameref: what it names is changed through it.
			target := ""
			if v := assigned(a, sh); v.state == varSet && syntax.ValidName(v.val) {
				target = v.val
			}
			next.refs[name] = target
			if target == "" {
				next.vars = map[string]shvar{}
			} else {
				next.vars[target] = shvar{exported: next.vars[target].exported}
			}
			next.markRefs()
		case !plain || unexport:
			next.vars[name] = shvar{}
		case a.Naked:
			v := next.vars[name]
			v.exported = v.exported || export
			next.vars[name] = v
		default:
			v := assigned(a, sh)
			v.exported = export || next.vars[name].exported || next.allexport == on && !a.Naked
			next.vars[name] = v
		}
	}
}

// sideAssigns makes unknown what expansions in n assign: ${X:=v},
// arithmetic (X=1, X++, let, (( ))).
func sideAssigns(n syntax.Node, sh *shell) {
	syntax.Walk(n, func(m syntax.Node) bool {
		switch x := m.(type) {
		case *syntax.ParamExp:
			if x.Param != nil && x.Exp != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) {
				sh.vars[x.Param.Value] = shvar{}
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop:
			syntax.Walk(x, func(k syntax.Node) bool {
				switch y := k.(type) {
				case *syntax.Lit:
					sh.vars[y.Value] = shvar{}
				case *syntax.ParamExp:
					if y.Param != nil {
						sh.vars[y.Param.Value] = shvar{}
					}
				}
				return true
			})
			return false
		}
		return true
	})
}

// stateBuiltin: name, run by the shell itself, may change what the
// preview follows of it (a command the shell starts cannot).
func stateBuiltin(name string) bool {
	switch name {
	case "cd", "pushd", "popd", "dirs", "set", "shopt", "unset", "read", "mapfile", "readarray",
		"printf", "getopts", "source", ".", "eval", "enable", "alias", "let", "wait", "builtin", "command", "hash":
		return true
	}
	return false
}

// builtin does to next what s, run in the shell, does to its state:
// cd, pushd, popd, dirs -c, set -P, shopt, unset, read and the like;
// eval, source, a function of the command's or a name not known make it
// unknown.
func builtin(s simple, prefix map[string]shvar, next *shell) {
	if s.NameUnknown {
		next.forget() // it may be cd, eval, source...
		return
	}
	args := s.Args
	if len(args) == 0 {
		return
	}
	name := args[0]
	if next.funcs[name] {
		next.forget()
		return
	}
	for (name == "builtin" || name == "command") && len(args) > 1 {
		if strings.HasPrefix(args[1], "-") {
			if name == "command" && (args[1] == "-v" || args[1] == "-V") {
				return
			}
			next.forget() // options not followed
			return
		}
		args = args[1:]
		name = args[0]
	}
	if name == "builtin" || name == "command" || !stateBuiltin(name) {
		return
	}
	if len(s.Unknown) > 0 && name != "printf" && name != "command" && name != "builtin" {
		// Some of its words are not known: what it changes is not.
		forgetOf(name, next)
		return
	}
	switch name {
	case "cd":
		changeDir(next, args[1:], prefix, true)
	case "pushd":
		pushd(next, args[1:], prefix)
	case "popd":
		popd(next, args[1:])
	case "dirs":
		if slices.Contains(args[1:], "-c") {
			next.stack, next.stackKnown = nil, true
		}
	case "set":
		if !next.bash && slices.ContainsFunc(args[1:], func(a string) bool {
			return a == "physical" || a == "keyword" || len(a) > 1 && (a[0] == '-' || a[0] == '+') && a[1] != '-' && strings.ContainsAny(a, "Pk")
		}) {
			next.forget() // sh has no -P nor -k: set fails, and a failing special builtin ends sh
			return
		}
		setOptions(next, args[1:])
		next.syncShellopts()
	case "shopt":
		if next.bash {
			shopt(next, args[1:]) // sh has no shopt: nothing changes
			next.syncShellopts()
		}
	case "alias":
		for _, a := range args[1:] {
			if name, _, ok := strings.Cut(a, "="); ok {
				next.renamed[name] = true // expanded where the shell does (sh, bash with expand_aliases)
			}
		}
	case "hash":
		for i, a := range args {
			if a == "-p" && i+2 < len(args) {
				next.renamed[args[i+2]] = true
			}
		}
	case "unset":
		for _, a := range args[1:] {
			switch {
			case a == "-f":
				return // functions: it no longer calls one, a call is then a command not known
			case strings.HasPrefix(a, "-"):
			default:
				next.vars[a] = shvar{state: varUnset}
			}
		}
	case "read", "mapfile", "readarray", "getopts", "wait", "let":
		for _, a := range args[1:] {
			next.vars[a] = shvar{} // names and more: each made unknown
		}
		next.vars["REPLY"], next.vars["MAPFILE"], next.vars["OPTARG"], next.vars["OPTIND"] = shvar{}, shvar{}, shvar{}, shvar{}
	case "printf":
		for i, a := range args {
			if a == "-v" && i+1 < len(args) {
				next.vars[args[i+1]] = shvar{}
			} else if strings.HasPrefix(a, "-v") && len(a) > 2 {
				next.vars[a[2:]] = shvar{}
			}
		}
		if len(s.Unknown) > 0 {
			forgetOf(name, next)
		}
	default: // source, ., eval, enable, alias
		next.forget()
	}
}

// forgetOf makes unknown what builtin name may change when its words are
// not known.
func forgetOf(name string, next *shell) {
	switch name {
	case "read", "mapfile", "readarray", "getopts", "wait", "let", "printf", "unset":
		next.vars = map[string]shvar{}
	case "dirs":
		next.stackKnown, next.stack = false, nil
	case "alias", "hash":
		next.renamed["*"] = true
	case "cd", "pushd", "popd":
		next.lost()
		if name != "cd" {
			next.stackKnown, next.stack = false, nil
		}
	default:
		next.forget()
	}
}

// setOptions follows set -P / set -o physical (cd resolving symlinks);
// other options change neither cd nor globs.
func setOptions(sh *shell, args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || len(a) < 2 || a[0] != '-' && a[0] != '+' {
			return // positional parameters follow
		}
		v := on
		if a[0] == '+' {
			v = off
		}
		if a[1:] == "o" {
			if i+1 < len(args) {
				i++
				if o := sh.setOption(args[i]); o != nil {
					*o = v
				}
			}
			continue
		}
		if strings.ContainsRune(a[1:], 'P') {
			sh.physical = v
		}
		if strings.ContainsRune(a[1:], 'a') {
			sh.allexport = v
		}
		if strings.ContainsRune(a[1:], 'k') {
			sh.keyword = v
		}
	}
}

// setOption is the set -o option named (nil: one that changes neither cd
// nor globs).
func (sh *shell) setOption(name string) *tri {
	switch name {
	case "physical":
		return &sh.physical
	case "posix":
		return &sh.posix
	case "allexport":
		return &sh.allexport
	case "keyword":
		return &sh.keyword
	}
	return nil
}

// shopt follows the options that change globs; expand_aliases makes what
// follows unknown.
func shopt(sh *shell, args []string) {
	v, o := unknownTri, false
	var names []string
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' {
			for _, c := range a[1:] {
				switch c {
				case 's':
					v = on
				case 'u':
					v = off
				case 'o':
					o = true
				}
			}
			continue
		}
		names = append(names, a)
	}
	if v == unknownTri {
		return // it lists or tests the options
	}
	if o {
		// shopt -o: the options of set -o.
		for _, n := range names {
			if p := sh.setOption(n); p != nil {
				*p = v
			}
		}
		return
	}
	for _, a := range names {
		switch a {
		case "lastpipe":
			sh.lastpipe = v
		case "dotglob":
			sh.dotglob = v
		case "nocaseglob":
			sh.nocaseglob = v
		case "globstar":
			sh.globstar = v
		case "expand_aliases":
			if v != off {
				sh.forget()
			}
		}
	}
}

// cdFrame is a node being walked, with the shell at its start and what
// its end does to changes made inside it.
type cdFrame struct {
	node  syntax.Node
	place *parsed.Place // where it is among the statements' places
	saved *shell
	// restore: a subshell, whose changes stay in it; maybe: it may or may
	// not run (a branch, a loop, the Y of X || Y).
	restore, maybe bool
	// afterX: for X && Y, the shell X left; a change in Y holds only
	// while the chain runs (Y runs only when X succeeded).
	afterX *shell
}

// leftOfAnd reports whether the node ending (popped off stack) is the X
// of an enclosing X && Y (the stack's top is its statement, then that
// chain): the chain goes on only when it succeeded, so its cd holds there.
func leftOfAnd(stack []cdFrame) bool {
	if len(stack) < 2 {
		return false
	}
	st, ok := stack[len(stack)-1].node.(*syntax.Stmt)
	b, isChain := stack[len(stack)-2].node.(*syntax.BinaryCmd)
	return ok && isChain && b.Op == syntax.AndStmt && b.X == st
}

// changeDir does cd ARGS (builtin: the cd builtin itself, whose -L, -P,
// -e and -@ it reads) as bash does: no operand is $HOME, - is $OLDPWD, a
// name not starting with /, ./ or ../ (nor . or ..) is searched in each
// $CDPATH entry (an empty one the current directory) before the current
// directory; -L (the default, unless set -P) takes .. off the logical
// path, -P resolves symlinks. prefix are assignments before the cd
// (CDPATH=x cd y). Where it goes is sh.cwd after, "" when not known:
// also when it fails, since then what follows runs where the shell was
// or not at all, and at run time it may not fail. It reports whether it
// went somewhere known.
func changeDir(sh *shell, args []string, prefix map[string]shvar, options bool) bool {
	get := func(name string) shvar {
		if v, ok := prefix[name]; ok {
			return v
		}
		return sh.vars[name]
	}
	physical := sh.physical
	for options && len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		for _, c := range a[1:] {
			switch c {
			case 'L':
				physical = off
			case 'P':
				physical = on
			case 'e', '@':
				if !sh.bash {
					return sh.lost() // sh has only -L and -P
				}
			default:
				return sh.lost() // an option cd refuses
			}
		}
	}
	if physical == unknownTri || len(args) > 1 {
		return sh.lost()
	}
	var dir string
	search := false
	switch {
	case len(args) == 0:
		home := get("HOME")
		if home.state != varSet {
			return sh.lost() // not known, or cd fails (HOME not set)
		}
		dir = home.val
	case args[0] == "-":
		old := get("OLDPWD")
		if old.state != varSet {
			return sh.lost()
		}
		dir = old.val
	default:
		dir = args[0]
		search = !(strings.HasPrefix(dir, "/") || dir == "." || dir == ".." || strings.HasPrefix(dir, "./") || strings.HasPrefix(dir, "../"))
	}
	if dir == "" {
		return sh.went(sh.cwd) // cd "" stays (bash)
	}
	if search {
		cdpath := get("CDPATH")
		switch {
		case cdpath.state == varUnknown:
			return sh.lost()
		case cdpath.state == varSet && cdpath.val != "":
			if !sh.bash && strings.Contains("/"+dir+"/", "/../") {
				return sh.lost() // sh checks a candidate physically, then goes logically
			}
			for _, entry := range strings.Split(cdpath.val, ":") {
				cand := dir
				if entry != "" {
					cand = strings.TrimSuffix(entry, "/") + "/" + dir
				}
				to, ok, sure := sh.dirAt(cand, physical == on)
				switch {
				case !sure:
					return sh.lost()
				case ok:
					return sh.went(to)
				}
			}
			if !sh.bash || sh.posix != off {
				return sh.lost() // POSIX shells differ on falling back to the current directory
			}
		}
	}
	to, ok, sure := sh.dirAt(dir, physical == on)
	if !sure || !ok {
		return sh.lost()
	}
	return sh.went(to)
}

// lost: where the shell is is no longer known.
func (sh *shell) lost() bool {
	sh.cwd = ""
	sh.vars["PWD"], sh.vars["OLDPWD"] = shvar{exported: sh.vars["PWD"].exported}, shvar{exported: sh.vars["OLDPWD"].exported}
	return false
}

// went: a cd arrived at to; OLDPWD is what $PWD was (bash), or where the
// shell was (sh, whose $PWD assigned by the command does not count).
func (sh *shell) went(to string) bool {
	old := sh.vars["PWD"]
	if !sh.bash {
		old = shvar{}
		if sh.cwd != "" {
			old = known(sh.cwd, false)
		}
	}
	sh.set("OLDPWD", shvar{state: old.state, val: old.val})
	sh.set("PWD", known(to, false))
	sh.cwd = to
	return true
}

// dirAt is where changing to dir goes from sh.cwd (logically, or
// physically): ok when the shell would get there, sure false when that
// cannot be known (a relative dir from an unknown directory; a logical
// path that does not exist while its physical one does, where bash and
// POSIX shells differ).
func (sh *shell) dirAt(dir string, physical bool) (to string, ok, sure bool) {
	t := dir
	if !strings.HasPrefix(dir, "/") {
		if sh.cwd == "" {
			return "", false, false
		}
		t = sh.cwd + "/" + dir
	}
	if processPath(t) {
		return "", false, false // /proc/self/cwd, /dev/fd: the shell's state, not the preview's
	}
	raw := enterable(t) // the path as the kernel resolves it (physically)
	if physical {
		if !raw {
			return "", false, true
		}
		p, err := filepath.EvalSymlinks(t)
		if err != nil {
			return "", false, false
		}
		sh.pwdUnsure = false // a physical path: $PWD is it
		return p, true, true
	}
	canon, ok := canonical(t)
	if ok && enterable(canon) && strings.HasPrefix(dir, "/") {
		sh.pwdUnsure = false // from / : $PWD is canon
		return canon, true, true
	}
	if ok && enterable(canon) {
		if sh.pwdUnsure && !strings.HasPrefix(dir, "/") && strings.Contains("/"+dir+"/", "/../") {
			// From the physical $PWD, the logical .. may lead elsewhere.
			phys, err := filepath.EvalSymlinks(sh.cwd)
			if err != nil {
				return "", false, false
			}
			alt, ok := canonical(phys + "/" + dir)
			if !ok || !sameDir(alt, canon) {
				return "", false, false
			}
		}
		return canon, true, true
	}
	if raw {
		return "", false, false
	}
	return "", false, true
}

// sameDir: a and b are the same directory.
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// canonical is bash's logical path of t (absolute): . dropped, .. taking
// off the name before it, which must be a directory; the result must
// exist.
func canonical(t string) (string, bool) {
	var parts []string
	for _, p := range strings.Split(t, "/") {
		switch p {
		case "", ".":
		case "..":
			if fi, err := os.Stat("/" + strings.Join(parts, "/")); err != nil || !fi.IsDir() {
				return "", false
			}
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, p)
		}
	}
	c := "/" + strings.Join(parts, "/")
	if _, err := os.Stat(c); err != nil {
		return "", false
	}
	return c, true
}

// enterable: p is a directory the shell can chdir into.
func enterable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir() && syscall.Access(p, 1) == nil
}

// pushd DIR is cd DIR, the old directory pushed on the stack; pushd
// alone swaps the top two. Options and +N/-N are not followed. Only bash
// has it.
func pushd(sh *shell, args []string, prefix map[string]shvar) {
	old := sh.cwd
	switch {
	case !sh.bash || !sh.stackKnown || len(args) > 1 || len(args) == 1 && (strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[0], "+")):
		sh.lost()
		sh.stackKnown, sh.stack = false, nil
	case len(args) == 0:
		if len(sh.stack) == 0 || old == "" {
			sh.lost() // fails: the stack is empty
			return
		}
		top := sh.stack[0]
		if changeDir(sh, []string{top}, nil, false) {
			sh.stack[0] = old
		} else {
			sh.stackKnown, sh.stack = false, nil
		}
	default:
		if changeDir(sh, args, prefix, false) && old != "" {
			sh.stack = append([]string{old}, sh.stack...)
		} else {
			sh.stackKnown, sh.stack = false, nil
		}
	}
}

// popd goes to the directory on the top of the stack and takes it off.
func popd(sh *shell, args []string) {
	if !sh.bash || !sh.stackKnown || len(args) > 0 || len(sh.stack) == 0 {
		sh.lost()
		sh.stackKnown, sh.stack = false, nil
		return
	}
	top := sh.stack[0]
	if changeDir(sh, []string{top}, nil, false) {
		sh.stack = sh.stack[1:]
	} else {
		sh.stackKnown, sh.stack = false, nil
	}
}

// config is the expansion as bash does it for the oracle: globs relative
// to the shell's directory, no match giving no word (nullglob), an unset
// variable an error, the glob options the shell has.
func config(sh *shell) *expand.Config {
	return &expand.Config{Env: sh.environ(), ReadDir2: os.ReadDir, NullGlob: true, NoUnset: true,
		DotGlob: sh.dotglob == on, NoCaseGlob: sh.nocaseglob == on, GlobStar: sh.globstar == on}
}

func addRedirs(s *simple, rs []*syntax.Redirect, sh *shell) {
	for _, r := range rs {
		fdsOf(s, r, sh)
		keeps := false
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll:
		case syntax.AppOut, syntax.AppAll, syntax.RdrInOut:
			keeps = true
		default:
			continue // reads, duplications, here-documents
		}
		if r.Word == nil {
			continue
		}
		if !certain(r.Word, sh) {
			s.Redirs = append(s.Redirs, redirect{Unknown: printed(r.Word), Keeps: keeps})
			continue
		}
		p, err := expand.Literal(config(sh), r.Word)
		if err != nil || p == "" {
			s.Redirs = append(s.Redirs, redirect{Unknown: printed(r.Word), Keeps: keeps})
			continue
		}
		s.Redirs = append(s.Redirs, redirect{Path: p, Keeps: keeps})
	}
}

// fdsOf notes in s.Fds the file redirection r opens, on its descriptor.
func fdsOf(s *simple, r *syntax.Redirect, sh *shell) {
	if s.Fds == nil {
		s.Fds = map[int]string{}
	}
	fd := 1
	switch r.Op {
	case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		fd = 0
	}
	if r.N != nil {
		n, err := strconv.Atoi(r.N.Value)
		if err != nil {
			return // {var}>file: a descriptor not known
		}
		fd = n
	}
	path := ""
	if r.Word != nil && certain(r.Word, sh) {
		if p, err := expand.Literal(config(sh), r.Word); err == nil {
			path = p
		}
	}
	switch r.Op {
	case syntax.RdrIn, syntax.RdrInOut, syntax.RdrOut, syntax.RdrClob, syntax.AppOut:
		if path != "" {
			path = absolute(path, sh.cwd)
		}
		s.Fds[fd] = path
	case syntax.RdrAll, syntax.AppAll:
		if path != "" {
			path = absolute(path, sh.cwd)
		}
		s.Fds[1], s.Fds[2] = path, path
	case syntax.DplIn, syntax.DplOut:
		from, err := strconv.Atoi(path)
		if err != nil {
			s.Fds[fd] = "" // closed, or a word not known
			break
		}
		if p, ok := s.Fds[from]; ok {
			s.Fds[fd] = p
		} else {
			delete(s.Fds, fd) // the shell's own, as it is
		}
	default:
		s.Fds[fd] = ""
	}
}

// literal expands an assignment's value when it is certain.
func literal(w *syntax.Word, sh *shell) (string, bool) {
	if !certain(w, sh) {
		return "", false
	}
	v, err := expand.Literal(config(sh), w)
	return v, err == nil
}

// certain reports whether w can be expanded without running anything:
// no command or process substitution, no arithmetic, only variables whose
// value is known, and ~ only when HOME is.
func certain(w *syntax.Word, sh *shell) bool {
	ok := true
	for i, p := range w.Parts {
		if l, isLit := p.(*syntax.Lit); isLit && (i == 0 && strings.HasPrefix(l.Value, "~") || strings.Contains(l.Value, ":~")) {
			if sh.vars["HOME"].state != varSet {
				return false
			}
			// ~+ and ~- are $PWD and $OLDPWD, ~N the directory stack: the
			// expander would leave them as written.
			for _, t := range strings.Split(l.Value, ":~")[1:] {
				if t != "" && strings.ContainsRune("+-0123456789", rune(t[0])) {
					return false
				}
			}
			if i == 0 && len(l.Value) > 1 && strings.ContainsRune("+-0123456789", rune(l.Value[1])) {
				return false
			}
		}
	}
	syntax.Walk(w, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ExtGlob:
			ok = false
		case *syntax.ParamExp:
			if x.Param == nil {
				ok = false
				break
			}
			v := sh.vars[x.Param.Value]
			if ifs, set := sh.vars["IFS"]; set && ifs.state == varUnknown {
				ok = false // how it splits is not known
				break
			}
			if v.state != varSet || x.Param.Value == "PWD" && v.val != sh.cwd || x.Excl || x.Length || x.Width ||
				x.Index != nil || x.Slice != nil || x.Repl != nil || x.Exp != nil {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// printed is a node as written (for messages): one line.
func printed(n syntax.Node) string {
	var b bytes.Buffer
	if err := syntax.NewPrinter(syntax.Minify(true)).Print(&b, n); err != nil {
		return "?"
	}
	return strings.TrimSpace(strings.ReplaceAll(b.String(), "\n", "; "))
}

// absolute is p made absolute against cwd and cleaned.
func absolute(p, cwd string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// dotFiltered drops what a glob matched with a leading dot where the
// pattern's part does not start with one: bash never lets *, ? or a class
// match it (dotglob off), where the expander's classes did ([!a]*).
func dotFiltered(cfg *expand.Config, w *syntax.Word, fields []string) []string {
	braces := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.BraceExp); ok {
			braces = true
		}
		return !braces
	})
	pat, err := expand.Pattern(cfg, w)
	if braces || cfg.DotGlob || err != nil || !pattern.HasMeta(pat, 0) {
		return fields
	}
	parts := strings.Split(pat, "/")
	out := fields[:0:0]
	for _, f := range fields {
		names := strings.Split(f, "/")
		keep := len(names) == len(parts)
		for i := 0; keep && i < len(parts); i++ {
			if pattern.HasMeta(parts[i], 0) && !strings.HasPrefix(parts[i], ".") && !strings.HasPrefix(parts[i], "\\.") &&
				strings.HasPrefix(names[i], ".") {
				keep = false
			}
		}
		if keep || len(names) != len(parts) {
			out = append(out, f)
		}
	}
	return out
}

// keywordAssigns splits a command's words under set -k, which makes a
// word NAME=value anywhere among them an assignment for the command: the
// words left, and those assignments (when set -k is not known, such a
// word is both: kept, and its variable not known).
func keywordAssigns(ws []*syntax.Word, sh *shell) (args []*syntax.Word, assigns []*syntax.Assign) {
	if !sh.bash || sh.keyword == off || len(ws) < 2 {
		return ws, nil
	}
	args = ws[:1:1]
	for _, w := range ws[1:] {
		l, ok := w.Parts[0].(*syntax.Lit)
		name, rest, isAssign := "", "", false
		if ok {
			name, rest, isAssign = strings.Cut(l.Value, "=")
			isAssign = isAssign && syntax.ValidName(name)
		}
		if !isAssign {
			args = append(args, w)
			continue
		}
		value := &syntax.Word{Parts: append([]syntax.WordPart{&syntax.Lit{Value: rest}}, w.Parts[1:]...)}
		a := &syntax.Assign{Name: &syntax.Lit{Value: name}, Value: value}
		if sh.keyword == unknownTri {
			// An assignment or a word, which is not known: both (the
			// word previewed, the variable not known).
			a.Value = &syntax.Word{Parts: []syntax.WordPart{&syntax.CmdSubst{}}}
			args = append(args, w)
		}
		assigns = append(assigns, a)
	}
	return args, assigns
}

// throughRefs: a statement that changed a nameref (next, from sh) changed
// the variable it names: that variable is not known after (every one,
// when the nameref's is not). The nameref itself is left not known, so
// the next assignment through it is seen too.
func throughRefs(sh, next *shell) {
	for ref, target := range next.refs {
		if next.vars[ref] == refMark {
			continue
		}
		if target == "" {
			next.vars = map[string]shvar{}
		} else {
			next.vars[target] = shvar{exported: next.vars[target].exported}
		}
		next.markRefs()
	}
}

// markRefs sets each nameref's own value to refMark.
func (sh *shell) markRefs() {
	for ref := range sh.refs {
		sh.vars[ref] = refMark
	}
}

// refMark is a nameref's own value: not known, and unlike any value an
// assignment gives, so that one is seen.
var refMark = shvar{state: varUnknown, val: "\x00nameref"}

// syncShellopts keeps bash's $SHELLOPTS and $BASHOPTS the options it
// has (exported, they set a bash it starts): the options the preview
// follows in them, or not known.
func (sh *shell) syncShellopts() {
	if !sh.bash {
		return
	}
	for _, o := range []struct {
		v     string
		names []string
		opts  []tri
	}{
		{"SHELLOPTS", []string{"physical", "posix", "allexport", "keyword"}, []tri{sh.physical, sh.posix, sh.allexport, sh.keyword}},
		{"BASHOPTS", []string{"dotglob", "nocaseglob", "globstar", "lastpipe"}, []tri{sh.dotglob, sh.nocaseglob, sh.globstar, sh.lastpipe}},
	} {
		cur := sh.vars[o.v]
		if cur.state != varSet {
			sh.vars[o.v] = shvar{exported: cur.exported}
			continue
		}
		list := strings.Split(cur.val, ":")
		for i, name := range o.names {
			switch o.opts[i] {
			case unknownTri:
				sh.vars[o.v] = shvar{exported: cur.exported}
				goto nextVar
			case on:
				if !slices.Contains(list, name) {
					list = append(list, name)
				}
			case off:
				list = slices.DeleteFunc(list, func(s string) bool { return s == name })
			}
		}
		sh.vars[o.v] = shvar{state: varSet, val: strings.Join(slices.DeleteFunc(list, func(s string) bool { return s == "" }), ":"), exported: cur.exported}
	nextVar:
	}
}
