package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkStartup is process start-up as a user or an agent's hook feels
// it: the real binary (built once, as buildBinary builds it) exec'd and
// waited for, wall time from fork to exit.
//
// Every iteration also runs a trivial Go binary built the same way (a main
// that prints a line and exits), in alternating order, so the floor (fork,
// exec, the Go runtime's own start) is measured in the same run, under the
// same load:
//
//   - p50-µs, p99-µs: approve-tui's wall time per run (ns/op is its mean);
//   - floor-p50-µs, floor-p99-µs: the trivial binary's;
//   - over-floor-p50-µs: the difference of the two medians.
//
// Sub-benchmarks: help (`--help`), version (`--version`), list (`list --db
// FILE` on a file made by `init` before the timing: opens the store, lists
// nothing, classifies nothing) and submit (`submit --db FILE2 -- rm
// -rf build`: the first classification in the process loads the risk
// table, then one write transaction).
//
//	go test -run '^$' -bench Startup -benchtime 300x ./cli/
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	bin := startupBuild(b, dir)
	floor := startupBuildFloor(b, dir)
	db, subDB := filepath.Join(dir, "fresh.db"), filepath.Join(dir, "submit.db")
	for _, f := range []string{db, subDB} {
		if out, err := exec.Command(bin, "init", "--db", f).CombinedOutput(); err != nil {
			b.Fatalf("init: %v\n%s", err, out)
		}
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"help", []string{"--help"}},
		{"version", []string{"--version"}},
		{"list", []string{"list", "--db", db}},
		{"submit", []string{"submit", "--db", subDB, "--", "rm -rf build"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			startupRun(b, floor) // warm the page cache for both binaries
			startupRun(b, bin, bc.args...)
			own := make([]time.Duration, 0, b.N)
			base := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					own = append(own, startupRun(b, bin, bc.args...))
					base = append(base, startupRun(b, floor))
				} else {
					base = append(base, startupRun(b, floor))
					own = append(own, startupRun(b, bin, bc.args...))
				}
			}
			b.StopTimer()
			var sum time.Duration
			for _, d := range own {
				sum += d
			}
			p50, p99 := startupPct(own, 0.50), startupPct(own, 0.99)
			f50, f99 := startupPct(base, 0.50), startupPct(base, 0.99)
			b.ReportMetric(float64(sum.Nanoseconds())/float64(len(own)), "ns/op")
			b.ReportMetric(p50, "p50-µs")
			b.ReportMetric(p99, "p99-µs")
			b.ReportMetric(f50, "floor-p50-µs")
			b.ReportMetric(f99, "floor-p99-µs")
			b.ReportMetric(p50-f50, "over-floor-p50-µs")
		})
	}
}

// startupBuild builds approve-tui into dir with the command buildBinary
// uses (buildBinary wants a *testing.T).
func startupBuild(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "approve-tui")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/approve-tui").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// startupBuildFloor builds a main that prints a line and exits, with the
// same go command and toolchain, as its own module in dir/floor.
func startupBuildFloor(b *testing.B, dir string) string {
	b.Helper()
	src := filepath.Join(dir, "floor")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	files := map[string]string{
		"go.mod":  "module floor\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"floor\") }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "floor-bin")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the floor binary: %v\n%s", err, out)
	}
	return bin
}

// startupRun execs bin with args, output to /dev/null (a file, so os/exec
// starts no copying goroutine), and returns the wall time from start to
// the end of wait. A non-zero exit fails the benchmark.
func startupRun(b *testing.B, bin string, args ...string) time.Duration {
	b.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = null, null
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %v: %v", filepath.Base(bin), args, err)
	}
	return time.Since(start)
}

// startupPct is the q-quantile of ds in microseconds (nearest rank).
func startupPct(ds []time.Duration, q float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i].Nanoseconds()) / 1e3
}
