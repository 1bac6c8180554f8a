package catalogue

import (
	"io/fs"
	"testing"
)

func BenchmarkLoad(b *testing.B) {
	sub, err := fs.Sub(data, "data")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := LoadFS(sub); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	c, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	words := []string{"git", "-C", "repo", "push", "--force-with-lease", "origin", "feature/x"}
	for b.Loop() {
		c.Lookup(words)
	}
}

// BenchmarkStart is what a process pays on its first Default: hashing the
// embedded data and building the generated table.
func BenchmarkStart(b *testing.B) {
	sub, err := fs.Sub(data, "data")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		files, err := readFiles(sub)
		if err != nil {
			b.Fatal(err)
		}
		if digest(files) != generatedDigest {
			b.Fatal("catalogue_gen.go is stale")
		}
		if _, err := build(generated()); err != nil {
			b.Fatal(err)
		}
	}
}
