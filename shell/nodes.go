package shell

import (
	"slices"

	"mvdan.cc/sh/v3/syntax"
)

// Statement is one step of a syntax tree Parse read, in the order a shell
// meets it, for an analysis that follows the shell's state itself
// (impact/: the directory a cd leaves, the variables, the options): either
// a statement that is not a compound command (Node), or a word or loop
// header read outside any such statement (Expr).
//
// The statements are those whose command is simple (with its assignments
// and redirections), a declaration (export, declare, local ...), let,
// (( )), [[ ]], or nothing but redirections. The command and process
// substitutions of a statement come before it, each a statement of its
// own; a compound command's redirection targets come before its body
// (the shell expands them first: n=1; { rm "d$n"; } > "f$((n=2))"
// removes d2).
type Statement struct {
	// Node is the statement (nil for an Expr).
	Node *syntax.Stmt
	// Expr is a word or a C-style for loop's header read outside any
	// statement, where the shell reads it: a for loop's items, a case's
	// subject and patterns, a compound command's redirection targets
	// (nil for a Node). What it assigns (${X:=v}, arithmetic) happens
	// there.
	Expr syntax.Node
	// Path are the nodes the statement (or Expr) is in, outermost first:
	// the tree's File, then each node down to its parent (a loop's
	// ForClause or WhileClause, an if's IfClause, the BinaryCmd of a && b,
	// a | b and their Stmt, a Subshell, a FuncDecl ...). For a statement in
	// a command or process substitution of another statement, the nodes of
	// that statement down to the substitution are left out: Path goes
	// from the nodes the other statement is in to the CmdSubst or
	// ProcSubst, then on. The loops a statement is in are the ForClause
	// and WhileClause nodes of its Path.
	Path []syntax.Node
	// Commands are the indexes in Script.Commands of the commands read
	// from the statement (wrappers looked through, find -exec's commands,
	// a command running a script that was not read). Those of its
	// substitutions are theirs; those of a script it runs by a shell are
	// in that script's tree (Tree).
	Commands []int
}

// Statements are the statements of f, a tree Parse read (File, or one
// Tree gave), in the order a shell meets them; nil for a tree Parse did
// not read. Every statement of the tree is listed, including one whose
// construct Parse's commands do not read (it then has no Commands).
func (s *Script) Statements(f *syntax.File) []Statement {
	if s == nil || f == nil || f != s.File && !s.holds(f) {
		return nil
	}
	w := stmtWalker{cmds: map[*syntax.Stmt][]int{}}
	for i, c := range s.Commands {
		if c.stmt != nil {
			w.cmds[c.stmt] = append(w.cmds[c.stmt], i)
		}
	}
	w.node(f)
	return w.out
}

// holds reports whether f is the tree of a script the line runs that
// Parse read.
func (s *Script) holds(f *syntax.File) bool {
	for _, t := range s.nested {
		if t == f {
			return true
		}
	}
	return false
}

type stmtWalker struct {
	path []syntax.Node
	out  []Statement
	cmds map[*syntax.Stmt][]int
}

// node walks n and what is in it, n on the path.
func (w *stmtWalker) node(n syntax.Node) {
	syntax.Walk(n, func(m syntax.Node) bool {
		switch x := m.(type) {
		case nil:
			w.path = w.path[:len(w.path)-1]
			return true
		case *syntax.Stmt:
			if leafStmt(x) {
				w.leaf(x)
				return false
			}
			// A compound command's redirections are opened (their words
			// expanded) before its body runs.
			w.path = append(w.path, x)
			for _, r := range x.Redirs {
				w.node(r)
			}
			if x.Cmd != nil {
				w.node(x.Cmd)
			}
			w.path = w.path[:len(w.path)-1]
			return false
		case *syntax.Word, *syntax.CStyleLoop:
			w.out = append(w.out, Statement{Expr: m, Path: slices.Clone(w.path)})
		}
		w.path = append(w.path, m)
		return true
	})
}

// leaf lists st after the statements of its substitutions.
func (w *stmtWalker) leaf(st *syntax.Stmt) {
	syntax.Walk(st, func(m syntax.Node) bool {
		switch m.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			w.node(m)
			return false
		}
		return true
	})
	w.out = append(w.out, Statement{Node: st, Path: slices.Clone(w.path), Commands: w.cmds[st]})
}

// leafStmt: st is not a compound command.
func leafStmt(st *syntax.Stmt) bool {
	switch st.Cmd.(type) {
	case nil, *syntax.CallExpr, *syntax.DeclClause, *syntax.ArithmCmd, *syntax.LetClause, *syntax.TestClause:
		return true
	}
	return false
}
