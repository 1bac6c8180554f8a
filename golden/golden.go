// Package golden holds the console's golden screens (golden/testdata) and
// the small helper that compares a rendered screen with its fixture.
// `go test ./... -update` rewrites the fixtures; review the diff before
// committing.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	// The -update flag is the one teatest's golden package defines, so that
	// both work in one test binary.
	_ "github.com/charmbracelet/x/exp/golden"
)

// Dir is where the fixtures live.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Assert compares screen with the fixture name (a file in Dir, ".txt"
// added). Trailing spaces are trimmed from every line, so fixtures read well
// in a diff. With -update it writes the fixture instead.
func Assert(t testing.TB, name, screen string) {
	t.Helper()
	got := normalize(screen)
	path := filepath.Join(Dir(), name+".txt")
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test with -update to create it)", name, err)
	}
	if string(want) != got {
		t.Errorf("screen %s differs from %s (run with -update to accept):\n%s", name, path, lineDiff(string(want), got))
	}
}

func normalize(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// lineDiff lists the lines that differ, numbered.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line ")
			b.WriteString(strconv.Itoa(i + 1))
			b.WriteString(":\n  want: " + wl + "\n  got:  " + gl + "\n")
		}
	}
	return b.String()
}
