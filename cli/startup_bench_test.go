package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
//   - over-floor-p50-µs: the difference of the two medians;
//   - cpu-p50-µs, cpu-p99-µs: approve-tui's CPU time per run (user and
//     system, all its threads), which a loaded machine inflates far less
//     than the wall time: what the process itself costs.
//
// Sub-benchmarks: help (`--help`), version (`--version`), list (`list --db
// FILE` on a file made by `init` before the timing: opens the store, lists
// nothing, classifies nothing), submit (`submit --db FILE2 -- rm
// -rf build`: the first classification in the process loads the risk
// table, then one write transaction), and the Claude Code hook as the agent
// runs it for every Bash call, a PreToolUse input on stdin (a file) for a
// command no rule matches (`npm test`, the documented sample):
// hook-pass (`hook claude-code --db FILE3`: classifies it, reads the
// policy in force, none, and answers nothing) and hook-allow (`hook claude-code
// --low allow --db FILE3`: classifies it, audits the allow in one write
// transaction and prints it). Neither waits for an operator; each case's
// answer is checked once before the timing.
//
//	go test -run '^$' -bench Startup -benchtime 300x ./cli/
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	bin := startupBuild(b, dir)
	floor := startupBuildFloor(b, dir)
	db, subDB, hookDB := filepath.Join(dir, "fresh.db"), filepath.Join(dir, "submit.db"), filepath.Join(dir, "hook.db")
	for _, f := range []string{db, subDB, hookDB} {
		if out, err := exec.Command(bin, "init", "--db", f).CombinedOutput(); err != nil {
			b.Fatalf("init: %v\n%s", err, out)
		}
	}
	// A Claude Code PreToolUse call of the Bash tool (agent/testdata/claude-code.txtar).
	preBash := filepath.Join(dir, "pre-bash-npm-test.json")
	if err := os.WriteFile(preBash, []byte(`{"session_id":"abc123","transcript_path":"/home/user/.claude/projects/my-project/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",`+
		`"cwd":"/home/user/my-project","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash",`+
		`"tool_input":{"command":"npm test"},"tool_use_id":"toolu_01ABC123"}`), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		args  []string
		stdin string // a file, or "" for none
		want  string // the answer must contain this ("" for none)
	}{
		{"help", []string{"--help"}, "", ""},
		{"version", []string{"--version"}, "", ""},
		{"list", []string{"list", "--db", db}, "", ""},
		{"submit", []string{"submit", "--db", subDB, "--", "rm -rf build"}, "", ""},
		{"hook-pass", []string{"hook", "claude-code", "--db", hookDB}, preBash, ""},
		{"hook-allow", []string{"hook", "claude-code", "--low", "allow", "--db", hookDB}, preBash, `"permissionDecision":"allow"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.stdin != "" {
				startupCheck(b, bc.stdin, bc.want, bin, bc.args...)
			}
			startupRun(b, floor) // warm the page cache for both binaries
			startupRunIn(b, bc.stdin, bin, bc.args...)
			own := make([]time.Duration, 0, b.N)
			cpu := make([]time.Duration, 0, b.N)
			base := make([]time.Duration, 0, b.N)
			runOwn := func() {
				wall, used := startupRunCPU(b, bc.stdin, bin, bc.args...)
				own, cpu = append(own, wall), append(cpu, used)
			}
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					runOwn()
					base = append(base, startupRun(b, floor))
				} else {
					base = append(base, startupRun(b, floor))
					runOwn()
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
			b.ReportMetric(startupPct(cpu, 0.50), "cpu-p50-µs")
			b.ReportMetric(startupPct(cpu, 0.99), "cpu-p99-µs")
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
	return startupRunIn(b, "", bin, args...)
}

// startupRunIn is startupRun with the file stdin (unless "") as standard
// input, a file too.
func startupRunIn(b *testing.B, stdin, bin string, args ...string) time.Duration {
	b.Helper()
	wall, _ := startupRunCPU(b, stdin, bin, args...)
	return wall
}

// startupRunCPU is startupRunIn, and the CPU time (user and system) the
// process used.
func startupRunCPU(b *testing.B, stdin, bin string, args ...string) (wall, cpu time.Duration) {
	b.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = null, null
	if stdin != "" {
		in, err := os.Open(stdin)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close()
		cmd.Stdin = in
	}
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %v: %v", filepath.Base(bin), args, err)
	}
	wall = time.Since(start)
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// startupCheck runs bin with args and the file stdin once and fails
// unless it exits 0 with standard output containing want (empty when want
// is ""): a hook that denies or waits is not the case meant.
func startupCheck(b *testing.B, stdin, want, bin string, args ...string) {
	b.Helper()
	in, err := os.Open(stdin)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	var out, errOut strings.Builder
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &out, &errOut
	if err := cmd.Run(); err != nil {
		b.Fatalf("%v: %v\n%s%s", args, err, &out, &errOut)
	}
	if got := out.String(); want == "" && got != "" || !strings.Contains(got, want) {
		b.Fatalf("%v answered %q (stderr %q), want %q", args, got, &errOut, want)
	}
}

// startupPct is the q-quantile of ds in microseconds (nearest rank).
func startupPct(ds []time.Duration, q float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i].Nanoseconds()) / 1e3
}
