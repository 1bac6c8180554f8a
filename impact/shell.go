// Package impact previews what a shell command would touch, before anyone
// is asked to approve it: the command is parsed with a real shell parser
// (mvdan.cc/sh), each simple command known as its words, and the words
// expanded only where the result is certain from the command itself and
// the filesystem (literals, quotes, ~, globs relative to the command's
// working directory). Whatever needs the command to run (command
// substitution, variables it does not set, arithmetic) is reported as
// unknown, never guessed. Analysers, one per kind of destruction, then walk
// what each simple command names, read-only and within bounds. Nothing is
// written and nothing of the command runs.
package impact

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
	// Text is the simple command as written (for messages).
	Text string
	// Cwd is where it runs: the proposal's working directory, or where a
	// cd before it went ("" when that is not known for sure).
	Cwd string
}

type redirect struct {
	Path    string
	Unknown string // the word as written, when it could not be expanded
}

// parse splits command into its simple commands, in order. A command that
// does not parse is an error: nothing of it can be previewed. cwd is where
// the command starts ("" when not known); a cd to a directory that exists
// moves it for what follows, and a cd that may or may not happen (in a
// branch, a loop, after ||) leaves it unknown after that. Globs read
// directories within b: a glob cut by it, or over a directory that cannot
// be read, is an unknown word.
func parse(command, cwd, home string, b *budget) ([]simple, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, err
	}
	vars := map[string]*string{} // set in the command: value, or nil when unknown
	env := func() expand.Environ {
		pairs := []string{"PWD=" + cwd, "HOME=" + home, "IFS= \t\n"}
		for k, v := range vars {
			if v != nil {
				pairs = append(pairs, k+"="+*v)
			}
		}
		return expand.ListEnviron(pairs...)
	}
	var stack []cdFrame
	var out []simple
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			fr := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch {
			case fr.restore:
				cwd = fr.saved // a subshell's cd stays in it
			case fr.maybe && cwd != fr.saved:
				cwd = "" // it may or may not have run
			case fr.hasAfterX && cwd != fr.afterX && !leftOfAnd(stack):
				cwd = "" // Y's cd, which did not run when X failed
			}
			return true
		}
		fr := cdFrame{node: n, saved: cwd}
		switch x := n.(type) {
		case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
			fr.restore = true
		case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl:
			fr.maybe = true
		case *syntax.Stmt:
			fr.restore = x.Background || x.Coprocess
			if len(stack) > 0 {
				if b, ok := stack[len(stack)-1].node.(*syntax.BinaryCmd); ok {
					switch {
					case b.Op == syntax.Pipe || b.Op == syntax.PipeAll:
						fr.restore = true // each part a subshell
					case b.Y == x && b.Op == syntax.OrStmt:
						fr.maybe = true // runs only when X failed
					case b.Y == x && b.Op == syntax.AndStmt:
						stack[len(stack)-1].afterX, stack[len(stack)-1].hasAfterX = cwd, true
					}
				}
			}
		}
		push := func() bool {
			stack = append(stack, fr)
			return true
		}
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return push()
		}
		call, _ := st.Cmd.(*syntax.CallExpr)
		if call == nil {
			// Compound commands (subshells, if, loops, functions): their
			// statements are walked in turn. Their redirections count.
			if len(st.Redirs) > 0 {
				s := simple{Text: printed(st), Cwd: cwd}
				addRedirs(&s, st.Redirs, vars, env())
				out = append(out, s)
			}
			return push()
		}
		if len(call.Args) == 0 {
			// X=value: known for the rest of the command when certain.
			for _, a := range call.Assigns {
				if a.Name == nil {
					continue
				}
				if a.Array != nil || a.Index != nil || a.Append || a.Value == nil {
					vars[a.Name.Value] = nil
					continue
				}
				if v, ok := literal(a.Value, vars, env()); ok {
					vars[a.Name.Value] = &v
				} else {
					vars[a.Name.Value] = nil
				}
			}
			if len(st.Redirs) > 0 {
				s := simple{Text: printed(st), Cwd: cwd}
				addRedirs(&s, st.Redirs, vars, env())
				out = append(out, s)
			}
			return false
		}
		s := simple{Text: printed(st), Cwd: cwd}
		relative := false // a glob was read relative to an unknown directory
		unread := ""      // why a glob could not read all it needed
		cfg := config(env())
		cfg.ReadDir2 = b.readDir(&unread)
		if cwd == "" {
			read := cfg.ReadDir2
			cfg.ReadDir2 = func(name string) ([]fs.DirEntry, error) {
				if !filepath.IsAbs(name) {
					relative = true
					return nil, fs.ErrNotExist
				}
				return read(name)
			}
		}
		for i, w := range call.Args {
			relative, unread = false, ""
			if !certain(w, vars) {
				s.Unknown = append(s.Unknown, printed(w))
				if i == 0 {
					s.NameUnknown = true
				}
				continue
			}
			fields, err := expand.Fields(cfg, w)
			if err == nil {
				fields = dotFiltered(cfg, w, fields)
			}
			if err != nil || relative || unread != "" {
				word := printed(w)
				if relative {
					word += " (a glob, and the working directory is not known)"
				} else if unread != "" {
					word += " (a glob: " + unread + ")"
				}
				s.Unknown = append(s.Unknown, word)
				if i == 0 {
					s.NameUnknown = true
				}
				continue
			}
			s.Args = append(s.Args, fields...)
		}
		addRedirs(&s, st.Redirs, vars, env())
		out = append(out, s)
		if len(s.Args) > 0 && (s.Args[0] == "cd" || s.Args[0] == "pushd" || s.Args[0] == "popd") {
			// Its frame is not walked into: what its end does is done here.
			switch to := changeDir(s, cwd, home); {
			case fr.restore: // in a subshell of its own: no change after it
			case fr.maybe && to != cwd:
				cwd = "" // it may or may not run
			default:
				cwd = to
			}
		}
		// Assignments before a command apply to it alone: they do not
		// change what later words mean.
		return false
	})
	return out, nil
}

// cdFrame is a node being walked, with the directory at its start and
// what its end does to a cd made inside it.
type cdFrame struct {
	node  syntax.Node
	saved string
	// restore: a subshell, whose cd stays in it; maybe: it may or may not
	// run (a branch, a loop, the Y of X || Y).
	restore, maybe bool
	// afterX: for X && Y, where X left the shell; a cd in Y holds only
	// while the chain runs (Y runs only when X succeeded).
	afterX    string
	hasAfterX bool
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

// changeDir is where cd (or pushd) leaves the shell: its directory when
// certain and there, else "" (not known). popd, cd - and CDPATH's
// searches are not followed.
func changeDir(s simple, cwd, home string) string {
	if s.Args[0] == "popd" || len(s.Unknown) > 0 {
		return ""
	}
	args := s.Args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		args = args[1:] // -L, -P, -e, -@
	}
	dir := home
	if len(args) > 0 {
		dir = args[0]
	}
	switch {
	case dir == "" || dir == "-" || len(args) > 1:
		return ""
	case !filepath.IsAbs(dir) && cwd == "":
		return ""
	}
	dir = absolute(dir, cwd)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "" // cd would fail: what follows may run anywhere
	}
	return dir
}

// config is the expansion as bash does it for the oracle: globs relative
// to PWD, no match giving no word (nullglob), an unset variable an error.
func config(env expand.Environ) *expand.Config {
	return &expand.Config{Env: env, ReadDir2: os.ReadDir, NullGlob: true, NoUnset: true}
}

func addRedirs(s *simple, rs []*syntax.Redirect, vars map[string]*string, env expand.Environ) {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll:
		default:
			continue // appends, reads, duplications, here-documents
		}
		if r.Word == nil {
			continue
		}
		if !certain(r.Word, vars) {
			s.Redirs = append(s.Redirs, redirect{Unknown: printed(r.Word)})
			continue
		}
		p, err := expand.Literal(config(env), r.Word)
		if err != nil || p == "" {
			s.Redirs = append(s.Redirs, redirect{Unknown: printed(r.Word)})
			continue
		}
		s.Redirs = append(s.Redirs, redirect{Path: p})
	}
}

// literal expands an assignment's value when it is certain.
func literal(w *syntax.Word, vars map[string]*string, env expand.Environ) (string, bool) {
	if !certain(w, vars) {
		return "", false
	}
	v, err := expand.Literal(config(env), w)
	return v, err == nil
}

// certain reports whether w can be expanded without running anything:
// no command or process substitution, no arithmetic, and only variables
// the command itself set to a known value.
func certain(w *syntax.Word, vars map[string]*string) bool {
	ok := true
	syntax.Walk(w, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ExtGlob:
			ok = false
		case *syntax.ParamExp:
			if x.Param == nil {
				ok = false
				break
			}
			v, set := vars[x.Param.Value]
			if !set || v == nil || x.Excl || x.Length || x.Width || x.Index != nil || x.Slice != nil || x.Repl != nil || x.Exp != nil {
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
	if braces || err != nil || !pattern.HasMeta(pat, 0) {
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
