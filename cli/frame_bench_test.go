package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// BenchmarkCommitToFrame is "another process commits, the operator's
// terminal gets the frame that shows it", with real processes and a real
// terminal: the console binary runs in tmux (120x40, no status line) on a
// file with N pending proposals, and this process, another one, submits
// proposals to that file. Each submit adds one pending proposal, so the
// console's header line changes on every commit ("16 pending", "5000 most
// urgent of 10001 pending"): the first time "<N+1> pending" leaves the
// console is the frame that shows the commit.
//
// Frames are timestamped where they leave the console: tmux pipe-pane
// copies everything the console writes to its terminal to a recorder (this
// test binary, TestFrameRecorderHelper), which takes the wall clock at
// every read and reports each "<digits> pending" it finds. The latency is
// from Submit's return (the commit) to that read.
//
// The floor (floor-*) is what the measuring path itself costs, measured in
// the same run between the commits: in a second tmux pane of the same
// server, a helper (TestFrameFloorHelper) blocked on a pipe writes
// "<n> pending" to its terminal as soon as this process writes n to the
// pipe; the same recorder timestamps it. That is a process waking on a
// pipe, a terminal write, tmux's relay and the recorder's read: everything
// but the console's own work (noticing the commit, reading the list,
// drawing).
//
// Commits are isolated: each comes at least maxReloadGap (tui/model.go,
// 150 ms) plus jitter after the frame of the one before, so none is paced
// behind an earlier load. Commits per sub-benchmark are b.N; run it as
//
//	go test -run '^$' -bench BenchmarkCommitToFrame -benchtime 300x -timeout 30m ./cli/
func BenchmarkCommitToFrame(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux is needed for the commit-to-frame benchmark (apt-get install tmux)")
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	bin := buildBinaryTB(b, b.TempDir())
	for _, pending := range []int{15, 10_000} {
		// One console per case, kept across the sub-benchmark's runs (b.N
		// = 1, then the -benchtime count): seeding and starting are slow.
		var rig *frameRig
		b.Cleanup(func() {
			if rig != nil {
				rig.close()
			}
		})
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			b.StopTimer()
			if rig == nil {
				rig = startFrameRig(b, bin, self, pending)
			}
			rig.run(b)
		})
		if rig != nil {
			rig.close()
			rig = nil
		}
	}
}

// Environment of the helper processes.
const (
	frameRecorderEnv = "APPROVE_TUI_FRAME_RECORDER" // the recorder's output (a FIFO)
	frameFloorEnv    = "APPROVE_TUI_FRAME_FLOOR"    // the floor helper's input (a FIFO)
)

// Spacing of the commits and floor probes: after a commit's frame, a
// floor probe after frameProbeGap (+ jitter), then the next commit
// frameCommitGap (+ jitter) after the probe's marker. The two together are
// more than the console's longest pause between loads (maxReloadGap,
// 150 ms) after its last load ended.
const (
	frameProbeGap  = 40 * time.Millisecond
	frameCommitGap = 130 * time.Millisecond
	frameJitter    = 40 * time.Millisecond
	frameTimeout   = 10 * time.Second
)

type frameRig struct {
	dir, sock string
	sockPath  string // the tmux server's socket, left behind by kill-server
	pid       int    // the console's
	store     *storage.Store
	console   *frameMarks // what the console wrote
	floor     *frameMarks // what the floor helper wrote
	floorIn   *os.File    // the floor helper's pipe
	count     int         // pending proposals now
	probes    int         // floor probes so far
	closed    bool
}

func startFrameRig(b *testing.B, bin, self string, pending int) *frameRig {
	dir, err := os.MkdirTemp("", "approve-tui-frame-")
	if err != nil {
		b.Fatal(err)
	}
	r := &frameRig{dir: dir, sock: fmt.Sprintf("approve-tui-frame-%d-%d", os.Getpid(), pending), count: pending}
	ok := false
	defer func() {
		if !ok {
			r.close()
		}
	}()
	db := filepath.Join(dir, "state.db")
	seedPending(b, db, pending, 0)
	fifo := func(name string) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			b.Fatal(err)
		}
		return p
	}
	consoleRec, floorRec, floorIn := fifo("console.rec"), fifo("floor.rec"), fifo("floor.in")
	// Read-write: opening does not wait for the other end, and the reader
	// sees no end of file while the helpers come and go.
	if r.console, err = openFrameMarks(consoleRec); err != nil {
		b.Fatal(err)
	}
	if r.floor, err = openFrameMarks(floorRec); err != nil {
		b.Fatal(err)
	}
	if r.floorIn, err = os.OpenFile(floorIn, os.O_RDWR, 0); err != nil {
		b.Fatal(err)
	}

	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", r.sock}, args...)...).CombinedOutput()
		if err != nil {
			b.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	recorder := func(out string) string {
		return fmt.Sprintf("exec env %s=%s %s -test.run '^TestFrameRecorderHelper$'", frameRecorderEnv, shellQuote(out), shellQuote(self))
	}
	tmux("new-session", "-d", "-s", "console", "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", bin, "--db", db)
	tmux("set-option", "-t", "console", "status", "off")
	r.sockPath = strings.TrimSpace(tmux("display-message", "-p", "#{socket_path}"))
	if r.pid, err = strconv.Atoi(strings.TrimSpace(tmux("display-message", "-p", "-t", "console", "#{pane_pid}"))); err != nil {
		b.Fatalf("console pid: %v", err)
	}
	tmux("pipe-pane", "-O", "-t", "console", recorder(consoleRec))
	tmux("new-session", "-d", "-s", "floor", "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", frameFloorEnv+"="+floorIn, self, "-test.run", "^TestFrameFloorHelper$")
	tmux("set-option", "-t", "floor", "status", "off")
	tmux("pipe-pane", "-O", "-t", "floor", recorder(floorRec))
	for _, m := range []*frameMarks{r.console, r.floor} {
		if !m.awaitReady(30 * time.Second) {
			b.Fatal("a frame recorder (tmux pipe-pane) did not start within 30 s")
		}
	}

	// The list is loaded, and ranked: seedPending writes the rows as
	// another program would, without the rank index, which the console
	// fills in the background at first ("ranking 40% · soonest first ·
	// 10000 pending"). The figure is the steady state's.
	want := fmt.Sprintf("%d pending", pending)
	deadline := time.Now().Add(120 * time.Second)
	for screen := ""; !strings.Contains(screen, want) || frameRanking.MatchString(screen); screen = tmux("capture-pane", "-p", "-t", "console") {
		if time.Now().After(deadline) {
			b.Fatalf("the console never showed %q, ranked:\n%s", want, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The floor helper's first answer (its start).
	r.probes++
	fmt.Fprintf(r.floorIn, "%d\n", frameProbeBase+r.probes)
	if _, ok := r.floor.await(frameProbeBase+r.probes, 30*time.Second); !ok {
		b.Fatalf("the floor helper never answered:\n%s", tmux("capture-pane", "-p", "-t", "floor"))
	}
	// The first full load, the integrity check and the first presence
	// write are over.
	time.Sleep(idleSettle)
	if r.store, err = storage.Open(context.Background(), db, storage.Options{}); err != nil {
		b.Fatal(err)
	}
	ok = true
	return r
}

// frameRanking is the header while the console ranks the list.
var frameRanking = regexp.MustCompile(`ranking \d+%`)

// frameProbeBase: the floor helper's numbers, far from any pending count.
const frameProbeBase = 1_000_000

// run makes b.N commits, each followed by a floor probe.
func (r *frameRig) run(b *testing.B) {
	lat := make([]time.Duration, 0, b.N)
	floor := make([]time.Duration, 0, b.N)
	type slow struct{ lat, submit, floor time.Duration }
	var slowest []slow // the slowest commits, for the log
	actor := model.Actor{Surface: model.SurfaceRunner, Name: "agent@bench", Person: "agent"}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(frameProbeGap + rand.N(frameJitter))
		r.probes++
		n := frameProbeBase + r.probes
		if _, err := fmt.Fprintf(r.floorIn, "%d\n", n); err != nil {
			b.Fatal(err)
		}
		sent := time.Now()
		at, ok := r.floor.await(n, frameTimeout)
		if !ok {
			b.Fatalf("the floor helper did not write %d within %v", n, frameTimeout)
		}
		floor = append(floor, at.Sub(sent))

		time.Sleep(frameCommitGap + rand.N(frameJitter))
		// The CLI's default TTL (10 minutes): a countdown shown to the
		// second, as an agent's proposal has.
		p, _, err := risk.Propose(risk.Draft{Command: fmt.Sprintf("ls -la /srv/frame/%d", r.count),
			SessionKey: "agent:frame-bench", TTL: 10 * time.Minute}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		submitted := time.Now()
		if err := r.store.Submit(ctx, p, actor); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		r.count++
		at, ok = r.console.await(r.count, frameTimeout)
		b.StopTimer()
		if !ok {
			screen, _ := exec.Command("tmux", "-L", r.sock, "capture-pane", "-p", "-t", "console").CombinedOutput()
			b.Fatalf("the console did not write a frame with %q within %v of the commit; its screen:\n%s",
				fmt.Sprintf("%d pending", r.count), frameTimeout, screen)
		}
		lat = append(lat, at.Sub(committed))
		slowest = append(slowest, slow{at.Sub(committed), committed.Sub(submitted), floor[len(floor)-1]})
		sort.Slice(slowest, func(i, j int) bool { return slowest[i].lat > slowest[j].lat })
		slowest = slowest[:min(len(slowest), 5)]
	}
	for _, s := range slowest {
		if b.N == 1 {
			break // the first run, a warm-up
		}
		b.Logf("slow: %.1f ms from commit to frame (submit took %.1f ms, the floor probe before it %.1f ms)",
			float64(s.lat.Microseconds())/1e3, float64(s.submit.Microseconds())/1e3, float64(s.floor.Microseconds())/1e3)
	}
	ms := func(ds []time.Duration, q int) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		i := len(ds) * q / 100
		if i >= len(ds) {
			i = len(ds) - 1
		}
		return float64(ds[i].Microseconds()) / 1e3
	}
	b.ReportMetric(ms(lat, 50), "p50-ms")
	b.ReportMetric(ms(lat, 99), "p99-ms")
	b.ReportMetric(ms(lat, 100), "max-ms")
	b.ReportMetric(ms(floor, 50), "floor-p50-ms")
	b.ReportMetric(ms(floor, 99), "floor-p99-ms")
	b.ReportMetric(ms(floor, 100), "floor-max-ms")
	// The machine's load over the last minute: the runs share it.
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(raw)); len(f) > 0 {
			if l, err := strconv.ParseFloat(f[0], 64); err == nil {
				b.ReportMetric(l, "loadavg")
			}
		}
	}
}

// close stops the tmux server (the console, the helpers) and removes the
// files.
func (r *frameRig) close() {
	if r.closed {
		return
	}
	r.closed = true
	exec.Command("tmux", "-L", r.sock, "kill-server").Run() //nolint:errcheck
	if r.sockPath != "" {
		os.Remove(r.sockPath)
	}
	// The console writes to the directory until it has gone.
	for end := time.Now().Add(5 * time.Second); r.pid > 0 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(r.pid, 0); err != nil {
			break
		}
	}
	if r.store != nil {
		r.store.Close()
	}
	for _, m := range []*frameMarks{r.console, r.floor} {
		if m != nil {
			m.f.Close()
		}
	}
	if r.floorIn != nil {
		r.floorIn.Close()
	}
	os.RemoveAll(r.dir)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// frameMarks reads a recorder's reports: "ready", then "N UNIXNANO" for
// every "N pending" a pane wrote.
type frameMarks struct {
	f     *os.File
	ready chan struct{}
	marks chan frameMark
}

type frameMark struct {
	n  int
	at time.Time
}

func openFrameMarks(path string) (*frameMarks, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	m := &frameMarks{f: f, ready: make(chan struct{}), marks: make(chan frameMark, 1<<16)}
	go func() {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if line == "ready" {
				close(m.ready)
				continue
			}
			n, ns, ok := strings.Cut(line, " ")
			x, err1 := strconv.Atoi(n)
			t, err2 := strconv.ParseInt(ns, 10, 64)
			if !ok || err1 != nil || err2 != nil {
				continue
			}
			m.marks <- frameMark{x, time.Unix(0, t)}
		}
	}()
	return m, nil
}

func (m *frameMarks) awaitReady(limit time.Duration) bool {
	select {
	case <-m.ready:
		return true
	case <-time.After(limit):
		return false
	}
}

// await returns the time of the first report of n, skipping the others.
func (m *frameMarks) await(n int, limit time.Duration) (time.Time, bool) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case mk := <-m.marks:
			if mk.n == n {
				return mk.at, true
			}
		case <-t.C:
			return time.Time{}, false
		}
	}
}

// framePending is the marker: a count of pending proposals.
var framePending = regexp.MustCompile(`(\d+) pending`)

// TestFrameRecorderHelper is BenchmarkCommitToFrame's frame recorder, run
// by tmux pipe-pane with the pane's output on its standard input: at every
// read it takes the wall clock and reports each "N pending" the read
// completed, as "N UNIXNANO" lines, to the file frameRecorderEnv names.
func TestFrameRecorderHelper(t *testing.T) {
	path := os.Getenv(frameRecorderEnv)
	if path == "" {
		t.Skip("a helper process of BenchmarkCommitToFrame, which starts it")
	}
	out, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.WriteString(out, "ready\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	var carry, data, rep []byte
	for {
		n, err := os.Stdin.Read(buf)
		now := time.Now().UnixNano()
		if n > 0 {
			// A marker may be cut between two reads: look in the end of
			// the last read too, and report the markers that end in this
			// one.
			data = append(append(data[:0], carry...), buf[:n]...)
			rep = rep[:0]
			for _, loc := range framePending.FindAllSubmatchIndex(data, -1) {
				if loc[1] > len(carry) {
					rep = fmt.Appendf(rep, "%s %d\n", data[loc[2]:loc[3]], now)
				}
			}
			if len(rep) > 0 {
				if _, err := out.Write(rep); err != nil {
					return // the benchmark has gone
				}
			}
			carry = append(carry[:0], data[max(0, len(data)-64):]...)
		}
		if err != nil {
			return
		}
	}
}

// TestFrameFloorHelper is BenchmarkCommitToFrame's floor: run in a tmux
// pane, it writes "N pending" to its terminal as soon as a line N comes
// from the pipe frameFloorEnv names.
func TestFrameFloorHelper(t *testing.T) {
	path := os.Getenv(frameFloorEnv)
	if path == "" {
		t.Skip("a helper process of BenchmarkCommitToFrame, which starts it")
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	sc := bufio.NewScanner(in)
	var line bytes.Buffer
	for sc.Scan() {
		line.Reset()
		fmt.Fprintf(&line, "\x1b[H%s pending\x1b[K", sc.Text())
		if _, err := os.Stdout.Write(line.Bytes()); err != nil {
			return
		}
	}
}
