package shell

import (
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// Tree gives the syntax tree Parse read: the line's, and each script it
// read in turn by its text; none for a script it did not read.
func TestTree(t *testing.T) {
	line := `cd d && sh -c 'rm -rf x; bash -c "ls y"' ; su -c "echo hi" bob; sh -c "$X"; sh -c 'a (' ; eval 'echo e'`
	s, err := Parse(line, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.File == nil || s.Tree(line) != s.File || len(s.File.Stmts) != 5 {
		t.Fatalf("the line's tree: %v", s.File)
	}
	for _, src := range []string{`rm -rf x; bash -c "ls y"`, `ls y`, `echo hi`, `echo e`} {
		f := s.Tree(src)
		if f == nil {
			t.Errorf("no tree for %q", src)
			continue
		}
		var b []byte
		syntax.Walk(f, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
				b = append(b, c.Args[0].Lit()...)
				b = append(b, ' ')
			}
			return true
		})
		if len(b) == 0 {
			t.Errorf("%q: a tree without commands", src)
		}
	}
	for _, src := range []string{`$X`, `a (`, `nothing of the line`, ``} {
		if f := s.Tree(src); f != nil {
			t.Errorf("a tree for %q, which Parse did not read", src)
		}
	}
	var none *Script
	if none.Tree("x") != nil {
		t.Error("a nil script has no tree")
	}
	// Past MaxDepth: not read, no tree.
	s, err = Parse(`sh -c "sh -c 'ls z'"`, Options{MaxDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Tree(`sh -c 'ls z'`) == nil || s.Tree(`ls z`) != nil {
		t.Error("a script past MaxDepth has a tree, or one within it has none")
	}
}
