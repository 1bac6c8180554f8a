// Package docstest reads the user documentation (README.md and the guides
// in docs/) for the tests that check it against the code: the marked
// blocks they run, the paragraphs they compare, the links they follow.
//
// A block is marked by an HTML comment on the line before its fence:
// "<!-- readme-test: NAME -->" names a block a test runs in its own way
// (the name is unique across all the files); a shell block with no marker
// is run by the generic docs test unless its fence says
// "```sh {no-test: WHY}".
package docstest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// File is one documentation file: its path relative to the repository and
// its text.
type File struct {
	Path string
	Text string
}

// Files reads README.md and docs/*.md (not the generated docs/reference)
// of the repository at root, README first, then the guides by name.
func Files(root string) ([]File, error) {
	paths := []string{"README.md"}
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(guides)
	for _, g := range guides {
		rel, err := filepath.Rel(root, g)
		if err != nil {
			return nil, err
		}
		paths = append(paths, rel)
	}
	var files []File
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: p, Text: string(b)})
	}
	return files, nil
}

// Text is every file's text, one after the other, for a test that looks
// for a sentence wherever it now stands.
func Text(root string) (string, error) {
	files, err := Files(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range files {
		b.WriteString(f.Text)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// Block is a fenced block of a documentation file.
type Block struct {
	File   string // the file's path relative to the repository
	Line   int    // the line of its opening fence, from 1
	Marker string // the readme-test name before it, if any
	Lang   string // the fence's language: sh, yaml, console…
	Info   string // the rest of the fence's info string, such as {no-test: WHY}
	Body   string
}

var (
	fence  = regexp.MustCompile("(?m)^```([a-z]*)([^\n]*)\n((?s:.*?))^```[ \t]*$")
	marker = regexp.MustCompile(`<!-- readme-test: ([a-z-]+) -->\n$`)
	// NoTest is the info string that keeps a shell block from the generic
	// run, with its reason.
	NoTest = regexp.MustCompile(`^\s*\{no-test: ([^}]+)\}\s*$`)
)

// AllBlocks is every fenced block of the files, in order.
func AllBlocks(files []File) []Block {
	var out []Block
	for _, f := range files {
		for _, m := range fence.FindAllStringSubmatchIndex(f.Text, -1) {
			b := Block{File: f.Path, Line: 1 + strings.Count(f.Text[:m[0]], "\n"),
				Lang: f.Text[m[2]:m[3]], Info: f.Text[m[4]:m[5]], Body: f.Text[m[6]:m[7]]}
			if mm := marker.FindStringSubmatch(f.Text[:m[0]]); mm != nil {
				b.Marker = mm[1]
			}
			out = append(out, b)
		}
	}
	return out
}

// Marked is the blocks marked "<!-- readme-test: NAME -->", by name, from
// whichever file holds them. A name used twice is an error: a test would
// not know which block it runs.
func Marked(root string) (map[string]Block, error) {
	files, err := Files(root)
	if err != nil {
		return nil, err
	}
	out := map[string]Block{}
	for _, b := range AllBlocks(files) {
		if b.Marker == "" {
			continue
		}
		if prev, ok := out[b.Marker]; ok {
			return nil, fmt.Errorf("readme-test: %s marks a block in %s:%d and in %s:%d", b.Marker, prev.File, prev.Line, b.File, b.Line)
		}
		out[b.Marker] = b
	}
	return out, nil
}
