package shell

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// kinds names a Path's nodes by their type ("File Stmt BinaryCmd").
func kinds(path []syntax.Node) string {
	var out []string
	for _, n := range path {
		out = append(out, strings.TrimPrefix(fmt.Sprintf("%T", n), "*syntax."))
	}
	return strings.Join(out, " ")
}

// show is one statement as the tests read it: its text (or "expr TEXT"),
// its Path's kinds, and the names of its commands.
func show(s *Script, st Statement) string {
	var text string
	if st.Node != nil {
		text = s.Source[st.Node.Pos().Offset():st.Node.End().Offset()]
	} else {
		text = "expr " + s.Source[st.Expr.Pos().Offset():st.Expr.End().Offset()]
	}
	var names []string
	for _, i := range st.Commands {
		names = append(names, s.Commands[i].Name().Value)
	}
	return text + " | " + kinds(st.Path()) + " | " + strings.Join(names, ",")
}

// The statements of a line come in the order a shell meets them: a
// substitution's before the statement holding it, a loop's words where
// the loop reads them; each with the nodes it is in and the commands
// Parse read from it (wrappers looked through, find -exec's commands).
func TestStatements(t *testing.T) {
	line := `cd a && sudo rm x $(ls d) || y=1; for i in a $(pwd); do ((n++)); done; find . -exec rm {} \; &
case $v in p) [[ -f q ]];; esac; { export Z=1; } > out`
	s, err := Parse(line, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range s.Statements(s.File) {
		got = append(got, show(s, st))
	}
	want := []string{
		"cd a | File Stmt BinaryCmd Stmt BinaryCmd | cd",
		"ls d | File Stmt BinaryCmd Stmt BinaryCmd CmdSubst | ls",
		"sudo rm x $(ls d) | File Stmt BinaryCmd Stmt BinaryCmd | rm",
		"y=1 | File Stmt BinaryCmd | ",
		"expr a | File Stmt ForClause WordIter | ",
		"expr $(pwd) | File Stmt ForClause WordIter | ",
		"pwd | File Stmt ForClause WordIter Word CmdSubst | pwd",
		"((n++)); | File Stmt ForClause | ",
		"find . -exec rm {} \\; & | File | find,rm",
		"expr $v | File Stmt CaseClause | ",
		"expr p | File Stmt CaseClause CaseItem | ",
		"[[ -f q ]] | File Stmt CaseClause CaseItem | ",
		"expr out | File Stmt Redirect | ", // opened before the body runs
		"export Z=1; | File Stmt Block | export",
	}
	if !slices.Equal(got, want) {
		t.Errorf("statements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A script a shell of the line runs has its own tree and statements, its
// commands one script deeper; a tree Parse did not read has none.
func TestStatementsNested(t *testing.T) {
	s, err := Parse(`sudo sh -c 'rm -rf d; bash -c "mv a b"'`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	outer := s.Statements(s.File)
	if len(outer) != 1 || len(outer[0].Commands) != 0 {
		t.Fatalf("outer: %v", outer)
	}
	inner := s.Statements(s.Tree(`rm -rf d; bash -c "mv a b"`))
	if len(inner) != 2 || len(inner[0].Commands) != 1 || s.Commands[inner[0].Commands[0]].Depth != 1 {
		t.Fatalf("inner: %+v", inner)
	}
	deepest := s.Statements(s.Tree(`mv a b`))
	if len(deepest) != 1 || s.Commands[deepest[0].Commands[0]].Depth != 2 || s.Commands[deepest[0].Commands[0]].Name().Value != "mv" {
		t.Fatalf("deepest: %+v", deepest)
	}
	other, _ := Parse(`rm -rf d`, Options{})
	if got := s.Statements(other.File); got != nil {
		t.Errorf("a tree of another line: %v", got)
	}
	if got := s.Statements(nil); got != nil {
		t.Errorf("no tree: %v", got)
	}
}

// Every command Parse reads is in the Commands of one statement of the
// trees it read (the line's and its scripts'), but the redirections of a
// compound command that holds no command, which are the compound
// statement's.
func TestStatementsCoverCommands(t *testing.T) {
	for _, line := range []string{
		`a | b |& c; d && e || f; (g; h) & i`,
		`x=$(j) k "$(l)" <(m) > $(n)`,
		`if o; then p; elif q; then r; else s; fi; while t; do u; done; for v in w; do x; done`,
		`f() { y; }; f; case z in a) b;; esac; time c; coproc d; let e=1; [[ $(g) ]]; ((h = $(i)))`,
		`sudo env X=1 nice rm a; find . -exec rm {} + -execdir mv {} b \; ; xargs rm < list`,
		`sh -c 'a; bash -c "b | c"'; eval "d; e"; ssh h 'f && g'; watch -n1 'ls'; su -c 'k' root`,
		`sh -c 'a (' ; bash -c "$X"; declare -x Y=$(z)`,
		`for i in 1; do ((1)); done > out`,
	} {
		s, err := Parse(line, Options{})
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		trees := s.Trees()
		seen := map[int]int{}
		for _, f := range trees {
			for _, st := range s.Statements(f) {
				for _, i := range st.Commands {
					seen[i]++
				}
			}
		}
		for i, c := range s.Commands {
			compound := c.stmt != nil && !leafStmt(c.stmt)
			if seen[i] != 1 && !(compound && seen[i] == 0) {
				t.Errorf("%s: command %d (%q) in %d statements", line, i, c.Text, seen[i])
			}
		}
	}
}

// A place's End is past the last statement in it: the statements of a
// loop are those from the first in it to its End; places are shared.
func TestPlacesEnd(t *testing.T) {
	s := parse(t, `a; for i in x; do b; while c; do d; done; e; done; f`)
	sts := s.Statements(s.File)
	var loops []*Place
	for _, st := range sts {
		for p := st.In; p != nil; p = p.Up {
			switch p.Node.(type) {
			case *syntax.ForClause, *syntax.WhileClause:
				if !slices.Contains(loops, p) {
					loops = append(loops, p)
				}
			}
		}
	}
	if len(loops) != 2 {
		t.Fatalf("%d loops", len(loops))
	}
	for _, l := range loops {
		var in []string
		for i, st := range sts {
			for p := st.In; p != nil; p = p.Up {
				if p == l {
					if i >= l.End {
						t.Errorf("statement %d past its loop's End %d", i, l.End)
					}
					in = append(in, show(s, st))
					break
				}
			}
		}
		t.Logf("%T: %d statements, End %d", l.Node, len(in), l.End)
	}
	if forLoop, while := loops[0], loops[1]; forLoop.End != len(sts)-1 || while.End != forLoop.End-1 || while.Depth <= forLoop.Depth {
		t.Errorf("for End %d depth %d, while End %d depth %d, %d statements", forLoop.End, forLoop.Depth, while.End, while.Depth, len(sts))
	}
}

// FuzzStatements: for any line Parse reads, the statements of each tree
// it read list each command at most once (once, but for the redirections
// of a compound command holding none), their places chain up to the File
// with depths one apart, and every statement in a place is before its End.
func FuzzStatements(f *testing.F) {
	for _, s := range []string{
		"a && b || c &", "f() { g; }; while x; do y; done", "for i in $(a); do ((n++)); done > $(b)",
		"case $x in a) rm y;; esac", "sh -c 'a | b; bash -c \"c\"'", "find . -exec rm {} + ; [[ $(a) ]]",
		"{ a; } > ${X:=f}; ( b ) & c <(d)", "eval 'e; f'; trap -- 'g' EXIT", "x=$(a) y=`b` c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		s, err := Parse(line, Options{})
		if err != nil {
			return
		}
		trees := s.Trees()
		seen := map[int]int{}
		for _, tr := range trees {
			sts := s.Statements(tr)
			for i, st := range sts {
				if (st.Node == nil) == (st.Expr == nil) {
					t.Fatalf("statement %d: node %v, expr %v", i, st.Node, st.Expr)
				}
				for p := st.In; p != nil; p = p.Up {
					if i >= p.End {
						t.Fatalf("statement %d past its place's End %d", i, p.End)
					}
					if p.Up == nil && (p.Node != tr || p.Depth != 0) || p.Up != nil && p.Depth != p.Up.Depth+1 {
						t.Fatalf("statement %d: place %T at depth %d", i, p.Node, p.Depth)
					}
				}
				for _, j := range st.Commands {
					seen[j]++
				}
			}
		}
		for i, c := range s.Commands {
			if seen[i] > 1 || seen[i] == 0 && (c.stmt == nil || leafStmt(c.stmt)) {
				t.Fatalf("command %d (%q) in %d statements", i, c.Text, seen[i])
			}
		}
	})
}
