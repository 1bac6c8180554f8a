package tui

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// One tea.Model: the console is Model, the one type in package tui with
// Init, Update and View, and the one that Bubble Tea, the SSH server and
// the headless driver run. Its parts are components (detail, prompt,
// header, pendingList, historyList), each with an update, view and
// setSize, unexported so that nothing outside the package can run one as a
// program of its own, nor mistake it for the console: no other type of the
// package has an exported Update or View.
func TestOneConsoleModel(t *testing.T) {
	fset := gotoken.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]map[string]bool{}
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
					continue
				}
				typ := fn.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					if methods[id.Name] == nil {
						methods[id.Name] = map[string]bool{}
					}
					methods[id.Name][fn.Name.Name] = true
				}
			}
		}
	}
	for typ, m := range methods {
		if typ == "Model" {
			if !m["Init"] || !m["Update"] || !m["View"] {
				t.Errorf("Model lacks Init, Update or View: %v", m)
			}
			continue
		}
		if m["Update"] || m["View"] {
			t.Errorf("%s has an exported Update or View: only Model is a tea.Model", typ)
		}
	}
	// Each component has update, view and setSize, its own or those of the
	// part it is made of (the two lists share theirs: rowList); the
	// compiler checks them.
	_ = []component{(*detail)(nil), (*prompt)(nil), (*header)(nil), (*pendingList)(nil), (*historyList)(nil)}
	var _ tea.Model = (*Model)(nil)
}

// component is what each part of the console has.
type component interface {
	update(tea.Msg) tea.Cmd
	view() string
	setSize(w, h int)
}

// The driver waits until the console has no load or decision outstanding
// (Model.Busy) before a Screenshot or the next key; the clock and the
// watcher's wait never end by themselves and are not counted.
func TestModelBusyCountsOneOffCommands(t *testing.T) {
	f := newFixture(t)
	m := New(Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	init := m.Init()
	if !m.Busy() {
		t.Fatal("not busy while the first load is out")
	}
	Settle(m, init)
	if m.Busy() {
		t.Fatalf("busy after everything settled (%d in flight)", m.inflight)
	}
	id := f.ids["drop"]
	typedApproval(t, m, id)
	_, cmd := m.Update(keyMsg("enter"))
	if !m.Busy() {
		t.Fatal("not busy while the approval is out")
	}
	Settle(m, cmd)
	if m.Busy() {
		t.Fatalf("busy after the approval came back (%d in flight)", m.inflight)
	}
	// The clock's and the watcher's commands are not one-off.
	live := New(Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow})
	live.Init()
	if live.inflight != 2 { // the first load and the watcher's start
		t.Fatalf("%d one-off commands after Init, want 2", live.inflight)
	}
	live.Update(tickMsg{at: t0})
	if live.inflight != 2 {
		t.Fatalf("a tick counted as one-off: %d", live.inflight)
	}
}

// The drivers (Driver: headless, Settle, the tests) know the messages of
// Bubble Tea's public API only: a tea.Sequence's is Bubble Tea's own, and
// they would hand it to Update, which ignores it. The console builds none.
func TestNoSequenceInTheConsole(t *testing.T) {
	fset := gotoken.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range pkgs {
		for name, file := range pkg.Files {
			ast.Inspect(file, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "tea" && sel.Sel.Name == "Sequence" {
						t.Errorf("%s: tea.Sequence at %s", name, fset.Position(sel.Pos()))
					}
				}
				return true
			})
		}
	}
}
