package impact

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/internal/latency"
)

// wideTree makes dirs directories of files empty files each under root
// (1 + dirs + dirs*files entries).
func wideTree(tb testing.TB, root string, dirs, files int) {
	tb.Helper()
	for i := 0; i < dirs; i++ {
		d := filepath.Join(root, fmt.Sprintf("d%04d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		for j := 0; j < files; j++ {
			f, err := os.Create(filepath.Join(d, fmt.Sprintf("f%04d", j)))
			if err != nil {
				tb.Fatal(err)
			}
			f.Close()
		}
	}
}

// A tree of a million entries: the walk stops at its bound and says so
// (at least), never reading the whole tree.
func TestBoundOnAMillionEntries(t *testing.T) {
	dir := t.TempDir()
	wideTree(t, filepath.Join(dir, "big"), 1000, 1000)
	p := Compute(context.Background(), "rm -rf big", Options{Cwd: dir})
	if p.Complete || p.Entries > DefaultMaxEntries || p.Entries == 0 {
		t.Fatalf("complete %v, %d entries (bound %d)", p.Complete, p.Entries, DefaultMaxEntries)
	}
	if !strings.Contains(p.Summary, "deletes at least ") {
		t.Fatalf("summary %q", p.Summary)
	}
	if r, _ := Raise(p); r != "high" {
		t.Fatalf("a cut walk past 10,000 entries raises to high, got %q", r)
	}
}

// BenchmarkPreview is the preview of rm -rf on trees of 10, 10,000 and
// 1,000,000 entries (the last cut by the default bound).
func BenchmarkPreview(b *testing.B) {
	for _, c := range []struct {
		name        string
		dirs, files int
	}{{"10", 1, 8}, {"10k", 10, 999}, {"1M", 1000, 1000}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			wideTree(b, filepath.Join(dir, "t"), c.dirs, c.files)
			latency.Each(b, func(int) {
				if p := Compute(context.Background(), "rm -rf t", Options{Cwd: dir}); p.Entries == 0 {
					b.Fatal("nothing counted")
				}
			})
		})
	}
}

// BenchmarkPreviewPrograms is the preview of the analysers that ask a
// program: a forced push (git rev-parse, config, rev-list and log), a
// branch deletion, and terraform apply PLAN (terraform show -json, which
// loads the plan and its providers' schemas: built-in ones here).
func BenchmarkPreviewPrograms(b *testing.B) {
	_, local := pushRig(b)
	cases := []struct{ name, cmd, dir string }{
		{"git-push-force", "git push --force origin main", local},
		{"git-branch-D", "git branch -D feature", local},
	}
	if _, err := exec.LookPath("terraform"); err == nil {
		dir := terraformDir(b)
		writeTF(b, dir, `resource "terraform_data" "a" { input = "changed" }`)
		tf(b, dir, "plan", "-input=false", "-out=p.tfplan")
		cases = append(cases, struct{ name, cmd, dir string }{"terraform-apply-plan", "terraform apply p.tfplan", dir})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			latency.Each(b, func(int) {
				if p := Compute(context.Background(), c.cmd, Options{Cwd: c.dir}); len(p.Targets) != 1 {
					b.Fatalf("%s: %+v %q", c.cmd, p.Targets, p.Unknown)
				}
			})
		})
	}
}
