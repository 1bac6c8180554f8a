package catalogue

import (
	"io/fs"
	"sync"
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

// BenchmarkStart is what a process pays on its first Default and first
// lookup: nothing for the catalogue itself (static data), then the
// indexing of the one program looked up (git, the largest) and the lookup.
// Each iteration indexes git afresh, as a new process would.
func BenchmarkStart(b *testing.B) {
	words := []string{"git", "-C", "repo", "push", "--force-with-lease", "origin", "feature/x"}
	for b.Loop() {
		c := &Catalogue{list: generatedList, names: generatedNames, lazy: make([]sync.Once, len(generatedList))}
		c.Lookup(words)
	}
}
