package impact

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The wrappers before a command are read by shell.Through, the rules the
// parsed command line of every analysis uses: what the wrapped command
// deletes is seen where it runs, and a wrapper that runs nothing of its
// words (sudo -l, command -v, ionice -p) deletes nothing.
func TestWrappersThroughShell(t *testing.T) {
	root := t.TempDir()
	work, other := filepath.Join(root, "work"), filepath.Join(root, "other")
	for _, d := range []string{work, other} {
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "data", "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deletes := map[string]string{
		// sudo's NAME=VALUE words go to the command's environment.
		"sudo X=1 rm -rf data":     filepath.Join(work, "data"),
		"sudo HOME=/x rm -rf data": filepath.Join(work, "data"),
		// env's options joined in one word.
		"env -iC " + other + " rm -rf data":               filepath.Join(other, "data"),
		"env -C " + other + " rm -rf data":                filepath.Join(other, "data"),
		"sudo -D " + other + " rm -rf data":               filepath.Join(other, "data"),
		"chrt -b rm -rf data":                             filepath.Join(work, "data"),
		"nice env -C " + other + " timeout 5 rm -rf data": filepath.Join(other, "data"),
		// script reads its options anywhere, the last -c winning.
		"script -qc 'rm -rf data' /dev/null":      filepath.Join(work, "data"),
		"script -q /dev/null -c 'rm -rf data'":    filepath.Join(work, "data"),
		"script -c ls -c 'rm -rf data' /dev/null": filepath.Join(work, "data"),
	}
	for command, want := range deletes {
		p := Compute(context.Background(), command, Options{Cwd: work, Env: []string{"HOME=" + root}})
		found := false
		for _, tg := range p.Targets {
			if tg.Op == "delete" && tg.Path == want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %s not seen deleted: %+v", command, want, p.Targets)
		}
	}
	for _, command := range []string{
		"sudo -l rm -rf data",      // lists whether it may run
		"command -v rm -rf data",   // prints what each name is
		"ionice -p 12 rm -rf data", // the words are process ids
		"taskset -p 3 rm -rf data",
		"flock -c 'rm -rf data'", // -c before flock's file: refused
	} {
		p := Compute(context.Background(), command, Options{Cwd: work, Env: []string{"HOME=" + root}})
		for _, tg := range p.Targets {
			if tg.Op == "delete" {
				t.Errorf("%s runs nothing of its words, yet deletes %s", command, tg.Path)
			}
		}
	}
	// env -S of a string env splits its own way: not seen, so unknown.
	p := Compute(context.Background(), `env -S "rm -rf 'data'"`, Options{Cwd: work})
	if len(p.Unknown) == 0 {
		t.Errorf("env -S with quotes not named unknown: %+v", p)
	}
}

// BenchmarkPreviewWrapped: the preview of a command behind six wrappers
// (each read by shell.Through), on a small tree.
func BenchmarkPreviewWrapped(b *testing.B) {
	root := b.TempDir()
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(filepath.Join(work, "data"), 0o755); err != nil {
		b.Fatal(err)
	}
	command := "sudo -u root nice -n 5 env -C " + work + " timeout -s KILL 5 stdbuf -oL setsid rm -rf data"
	for b.Loop() {
		if p := Compute(context.Background(), command, Options{Cwd: work}); len(p.Targets) == 0 {
			b.Fatalf("%+v", p)
		}
	}
}
