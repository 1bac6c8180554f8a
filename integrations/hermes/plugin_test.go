package hermes

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestInstallAndCompare(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugins", PluginName)
	if c, err := Compare(dir); err != nil || !c.DirMissing || c.Current() || !slices.Equal(c.Missing, Files()) {
		t.Fatalf("before install: %+v %v", c, err)
	}
	res, err := Install(dir)
	if err != nil || res.Summary() != "installed" || !slices.Equal(res.Written(), Files()) {
		t.Fatalf("install: %+v %v", res, err)
	}
	for _, name := range Files() {
		b, err := File(name)
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: embedded %d bytes, %v", name, len(b), err)
		}
	}
	if c, err := Compare(dir); err != nil || !c.Current() {
		t.Fatalf("after install: %+v %v", c, err)
	}
	if res, err := Install(dir); err != nil || res.Summary() != "current" || len(res.Written()) != 0 {
		t.Fatalf("again: %+v %v", res, err)
	}
	os.WriteFile(filepath.Join(dir, "__init__.py"), []byte("x"), 0o644)
	os.Remove(filepath.Join(dir, "README.md"))
	c, err := Compare(dir)
	if err != nil || c.Current() || !slices.Equal(c.Differ, []string{"__init__.py"}) || !slices.Equal(c.Missing, []string{"README.md"}) {
		t.Fatalf("changed: %+v %v", c, err)
	}
	res, err = Install(dir)
	if err != nil || res.Summary() != "updated" || !slices.Equal(res.Written(), []string{"__init__.py", "README.md"}) {
		t.Fatalf("update: %+v %v", res, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(Files()) {
		t.Fatalf("left in the directory: %v", ents)
	}
}
