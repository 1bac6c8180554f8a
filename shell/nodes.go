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
	// In is the node the statement (or Expr) is in, its parent: its Up
	// the nodes that one is in, to the tree's File (see Path).
	In *Place
	// Commands are the indexes in Script.Commands of the commands read
	// from the statement (wrappers looked through, find -exec's commands,
	// a command running a script that was not read). Those of its
	// substitutions are theirs; those of a script it runs by a shell are
	// in that script's tree (Trees).
	Commands []int
}

// Place is a node of the tree that statements are in: a loop's ForClause
// or WhileClause, an if's IfClause, the BinaryCmd of a && b, a | b and
// their Stmt, a Subshell, a FuncDecl, a CmdSubst .... For a statement in
// a command or process substitution of another statement, the nodes of
// that statement down to the substitution are left out: from the node the
// other statement is in, the next is the CmdSubst or ProcSubst. Places
// are shared by the statements in them.
type Place struct {
	Node syntax.Node
	// Up is the place Node is in (nil for the tree's File).
	Up *Place
	// Depth is how many places are above it (0: the File).
	Depth int
	// End is the index, in the list Statements gave, past the last
	// statement in Node: the statements in it are those from its first
	// to End.
	End int
}

// Path are the nodes of st's places, outermost first (the File first, its
// parent last). The loops a statement is in are the ForClause and
// WhileClause nodes of its Path.
func (st Statement) Path() []syntax.Node {
	var out []syntax.Node
	for p := st.In; p != nil; p = p.Up {
		out = append(out, p.Node)
	}
	slices.Reverse(out)
	return out
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

// Trees are the syntax trees Parse read: the line's (File), then those of
// the scripts the line runs by a shell, in the order read, one for each
// reading (a script's text read twice, sh -c X; sh -c X, has two trees
// here, and Tree gives the last). Every command of Commands is in the
// Statements of one of them, but the redirections of a compound command
// that holds no command (the compound statement's own).
func (s *Script) Trees() []*syntax.File {
	if s == nil || s.File == nil {
		return nil
	}
	return append([]*syntax.File{s.File}, s.trees...)
}

// holds reports whether f is the tree of a script the line runs that
// Parse read.
func (s *Script) holds(f *syntax.File) bool {
	return slices.Contains(s.trees, f)
}

type stmtWalker struct {
	cur  *Place
	out  []Statement
	cmds map[*syntax.Stmt][]int
}

func (w *stmtWalker) push(n syntax.Node) {
	d := 0
	if w.cur != nil {
		d = w.cur.Depth + 1
	}
	w.cur = &Place{Node: n, Up: w.cur, Depth: d}
}

func (w *stmtWalker) pop() {
	w.cur.End = len(w.out)
	w.cur = w.cur.Up
}

// node walks n and what is in it, n a place.
func (w *stmtWalker) node(n syntax.Node) {
	syntax.Walk(n, func(m syntax.Node) bool {
		switch x := m.(type) {
		case nil:
			w.pop()
			return true
		case *syntax.Stmt:
			if leafStmt(x) {
				w.leaf(x)
				return false
			}
			// A compound command's redirections are opened (their words
			// expanded) before its body runs.
			w.push(x)
			for _, r := range x.Redirs {
				w.node(r)
			}
			if x.Cmd != nil {
				w.node(x.Cmd)
			}
			w.pop()
			return false
		case *syntax.Word, *syntax.CStyleLoop:
			w.out = append(w.out, Statement{Expr: m, In: w.cur})
		}
		w.push(m)
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
	w.out = append(w.out, Statement{Node: st, In: w.cur, Commands: w.cmds[st]})
}

// leafStmt: st is not a compound command.
func leafStmt(st *syntax.Stmt) bool {
	switch st.Cmd.(type) {
	case nil, *syntax.CallExpr, *syntax.DeclClause, *syntax.ArithmCmd, *syntax.LetClause, *syntax.TestClause:
		return true
	}
	return false
}
