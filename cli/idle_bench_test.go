package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkConsoleIdle measures what an open console costs while nothing
// happens: the real binary in a real terminal (tmux, 120x40) on a file with
// N pending proposals, left alone once it has settled. It samples the
// console process's CPU time over a window and reports it as a percentage
// of one core: %core from the scheduler's nanosecond count of each
// thread's time on a CPU (/proc/PID/task/TID/schedstat), %core-ticks from
// /proc/PID/stat's utime+stime, which counts 10 ms ticks (0.1 % of a core
// over 60 s is 6 ticks, so one tick more or less moves it by a sixth).
// With them, the process's context switches a second (wakeups/s: every
// thread's voluntary and involuntary switches, a proxy for timer
// wake-ups).
//
// The proposals are fresh and expire in two hours: the countdowns show
// minutes, and the selected proposal's age ("created 40s ago") seconds
// for its first minute, then minutes. The seconds variant's proposals
// expire in 50 minutes: every visible countdown shows seconds, and the
// console draws a frame every second of the window, as it does whenever
// a proposal on screen is in its last hour.
//
// The noisy-dir variants write another file in the database's directory
// (a log, 100 lines a second) during the window: what the console does
// with events for files that are not its own.
//
// The window is APPROVE_TUI_BENCH_IDLE_SECONDS (default 120; 30 is enough
// for a quick look).
// One iteration is one window; run it with -benchtime 1x:
//
//	go test -run '^$' -bench BenchmarkConsoleIdle -benchtime 1x -timeout 60m ./cli/
func BenchmarkConsoleIdle(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux is needed for the idle console benchmark (apt-get install tmux)")
	}
	window := 120 * time.Second
	if v := os.Getenv("APPROVE_TUI_BENCH_IDLE_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("APPROVE_TUI_BENCH_IDLE_SECONDS=%q: want a number of seconds", v)
		}
		window = time.Duration(n) * time.Second
	}
	bin := buildBinaryTB(b, b.TempDir())
	for _, c := range []struct {
		pending int
		noisy   bool
		ttl     time.Duration
	}{
		{10, false, 2 * time.Hour},
		{10_000, false, 2 * time.Hour},
		{10, true, 2 * time.Hour},
		{10_000, true, 2 * time.Hour},
		{10, false, 50 * time.Minute},
	} {
		name := fmt.Sprintf("pending=%d", c.pending)
		if c.noisy {
			name += "/noisy-dir"
		}
		if c.ttl < time.Hour {
			name += "/seconds"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				idleWindow(b, bin, c.pending, c.noisy, c.ttl, window)
			}
		})
	}
}

// buildBinaryTB is buildBinary for a benchmark.
func buildBinaryTB(tb testing.TB, dir string) string {
	tb.Helper()
	bin := filepath.Join(dir, "approve-tui")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/approve-tui").CombinedOutput(); err != nil {
		tb.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// idleSettle is how long the console is left alone before the window
// opens: the first full load, the integrity check at start and the first
// presence write are over by then.
const idleSettle = 5 * time.Second

func idleWindow(b *testing.B, bin string, pending int, noisy bool, ttl, window time.Duration) {
	b.StopTimer()
	dir := b.TempDir()
	db := filepath.Join(dir, "state.db")
	seedPendingTTL(b, db, pending, 0, ttl)

	sock := fmt.Sprintf("approve-tui-idle-%d", os.Getpid())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			b.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", "idle", "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", bin, "--db", db)
	defer exec.Command("tmux", "-L", sock, "kill-server").Run()
	tmux("set-option", "-t", "idle", "status", "off") // the console has the whole 120x40
	pid, err := strconv.Atoi(strings.TrimSpace(tmux("display-message", "-p", "-t", "idle", "#{pane_pid}")))
	if err != nil {
		b.Fatalf("console pid: %v", err)
	}
	// The header says how many are pending once the first load is in
	// ("10 pending", "5000 most urgent of 10000 pending").
	want := fmt.Sprintf("%d pending", pending)
	deadline := time.Now().Add(30 * time.Second)
	for screen := ""; !strings.Contains(screen, want); screen = tmux("capture-pane", "-p", "-t", "idle") {
		if time.Now().After(deadline) {
			b.Fatalf("the console never showed %q:\n%s", want, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(idleSettle)

	stop := make(chan struct{})
	writerDone := make(chan struct{})
	writes := 0
	if noisy {
		log, err := os.OpenFile(filepath.Join(dir, "agent.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		defer log.Close()
		go func() {
			defer close(writerDone)
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case now := <-t.C:
					fmt.Fprintf(log, "%s agent: still thinking\n", now.Format(time.RFC3339Nano))
					writes++
				}
			}
		}()
	} else {
		close(writerDone)
	}

	cpu0, sw0, run0 := procCPU(b, pid), procSwitches(pid), procRunTime(pid)
	start := time.Now()
	b.StartTimer()
	time.Sleep(window)
	b.StopTimer()
	cpu1, sw1, run1 := procCPU(b, pid), procSwitches(pid), procRunTime(pid)
	wall := time.Since(start)
	close(stop)
	<-writerDone
	if noisy && float64(writes) < 0.9*100*wall.Seconds() {
		b.Logf("the log was written %d times in %.1f s, not 100 a second", writes, wall.Seconds())
	}
	// The console must still be there (and showing the list) after the window.
	if screen := tmux("capture-pane", "-p", "-t", "idle"); !strings.Contains(screen, want) {
		b.Fatalf("after the window the console shows:\n%s", screen)
	}
	var ran time.Duration
	for tid, t := range run1 {
		ran += t - run0[tid] // a thread started in the window: from 0
	}
	for tid := range run0 {
		if _, ok := run1[tid]; !ok {
			b.Logf("thread %d ended in the window: its time on a CPU is not counted", tid)
		}
	}
	b.ReportMetric(100*ran.Seconds()/wall.Seconds(), "%core")
	b.ReportMetric(100*(cpu1-cpu0)/wall.Seconds(), "%core-ticks")
	b.ReportMetric(float64(sw1-sw0)/wall.Seconds(), "wakeups/s")
	b.ReportMetric(wall.Seconds(), "window-s")
}

// procCPU is the process's user and system CPU time in seconds, all
// threads, from /proc/PID/stat.
func procCPU(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("the console is gone: %v", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields after it start at the last ')'.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	ut, err1 := strconv.ParseUint(fields[11], 10, 64)
	st, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("parse /proc/%d/stat: %q", pid, s)
	}
	return float64(ut+st) / clockTicks
}

// procRunTime is each thread's time on a CPU so far, by thread id, from
// the first field of /proc/PID/task/TID/schedstat (nanoseconds).
func procRunTime(pid int) map[int]time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	out := map[int]time.Duration{}
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		tid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(t)))
		f := strings.Fields(string(raw))
		if err1 != nil || len(f) == 0 {
			continue
		}
		if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			out[tid] = time.Duration(ns)
		}
	}
	return out
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// procSwitches sums the context switches of the process's threads.
func procSwitches(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var n int64
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += x
			}
		}
	}
	return n
}
