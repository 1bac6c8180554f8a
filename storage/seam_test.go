package storage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// engineFile reports whether a file of this package is one engine's own
// (or the seam between them), where what only one engine has may be named.
func engineFile(name string) bool {
	return name == "engine.go" || name == "sqlite.go" || name == "postgres.go" ||
		strings.HasPrefix(name, "sqlite_") || strings.HasPrefix(name, "postgres_")
}

// The engine seam: outside the engine files, the package asks the engine
// interface how to behave, and never looks at PostgreSQL's own state (a
// dbfile's pg field) to tell which engine it is on, nor names one engine
// (sqliteDialect, postgresDialect) to do what the store's own engine does.
func TestEngineSeam(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || engineFile(name) {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "pg" {
				t.Errorf("%s: .pg outside the engine files: ask the engine interface (engine.go)", fset.Position(sel.Pos()))
			}
			if id, ok := n.(*ast.Ident); ok && (id.Name == "sqliteDialect" || id.Name == "postgresDialect") {
				t.Errorf("%s: %s outside the engine files: use the store's own engine (f.eng, classify)", fset.Position(id.Pos()), id.Name)
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("only %d files checked: is this the package's directory?", checked)
	}
}
