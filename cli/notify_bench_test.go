package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/pgtest"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// The notifier's benchmarks, with the real binary as its own process and
// a webhook stand-in on 127.0.0.1 (notify_e2e_test.go) that verifies each
// request's signature. Results and commands: BENCHMARKS.md, "Notifier".
//
//	go test ./cli -run '^$' -bench BenchmarkNotifySubmitToPage -benchtime 200x
//	APPROVE_TUI_NOTIFY_BENCH_DURATION=1m go test ./cli -run '^$' -bench BenchmarkNotifySustained -benchtime 1x -timeout 30m
//	go test ./cli -run '^$' -bench BenchmarkNotifyIdleCPU -benchtime 1x

// notifyBenchConfig pages proposals of high risk to the webhook at once
// (its secret in $NT_HOOK_SECRET); the end-to-end tests use it too.
const notifyBenchConfig = `channels:
  hook: {type: webhook, url: %q, secret_env: NT_HOOK_SECRET}
routes:
  - match: {risk: high}
    steps: [{after: 0s, notify: [hook]}]
`

// openBenchStore opens the rig's store in this process.
func openBenchStore(tb testing.TB, db string) *storage.Store {
	tb.Helper()
	st, err := storage.Open(context.Background(), db, storage.Options{BusyTimeout: 30 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// seedNotify submits n proposals through st.Submit: id(i) and command(i)
// (a command's risk decides whether a route takes it).
func seedNotify(tb testing.TB, st *storage.Store, n int, id, command func(int) string, ttl time.Duration) {
	tb.Helper()
	actor := model.LocalActor(model.SurfaceCLI)
	for i := 0; i < n; i++ {
		p, _, err := risk.Propose(risk.Draft{Command: command(i), SessionKey: fmt.Sprintf("agent:seed:%d", i%40), ID: id(i), TTL: ttl}, time.Now())
		if err != nil {
			tb.Fatal(err)
		}
		if err := st.Submit(context.Background(), p, actor); err != nil {
			tb.Fatal(err)
		}
	}
}

// submitHigh submits one proposal of high risk (a route takes it).
func submitHigh(st *storage.Store, id string) error {
	p, _, err := risk.Propose(risk.Draft{Command: "rm -rf /srv/" + id, SessionKey: "agent:bench:web", ID: id, TTL: time.Hour}, time.Now())
	if err != nil {
		return err
	}
	return st.Submit(context.Background(), p, model.LocalActor(model.SurfaceCLI))
}

// notifyBenchRig is a store with pending unrouted proposals, a webhook
// stand-in and a notifier running on them.
func notifyBenchRig(b *testing.B, db string, pending int) (*notifyRig, *nreceiver, *storage.Store, *notifierProc) {
	b.Helper()
	r := newNotifyRig(b, db)
	hook := newReceiver(b, "webhook", "hook")
	hook.secret = "whsec-bench"
	r.env = []string{"NT_HOOK_SECRET=" + hook.secret}
	r.writeConfig(fmt.Sprintf(notifyBenchConfig, hook.url()))
	st := openBenchStore(b, r.db)
	// Low risk (ls): no route takes them; the notifier reads them all at
	// every pass all the same.
	seedNotify(b, st, pending, func(i int) string { return fmt.Sprintf("seed%06d", i) },
		func(i int) string { return fmt.Sprintf("ls -la /srv/app%d", i) }, 2*time.Hour)
	n := r.startNotifier()
	time.Sleep(2 * time.Second) // its first passes are over
	return r, hook, st, n
}

// percentile is the q-quantile (0..1) of sorted ds.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(q*float64(len(ds)) + 0.5)
	if i >= len(ds) {
		i = len(ds) - 1
	}
	return ds[i]
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Submit → page: one proposal of high risk submitted (Store.Submit, in
// this process), the time until its page reaches the webhook stand-in,
// with 10 and 10,000 unrouted proposals pending.
func BenchmarkNotifySubmitToPage(b *testing.B) {
	for _, pending := range []int{10, 10000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			_, hook, st, _ := notifyBenchRig(b, "", pending)
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := fmt.Sprintf("bench%06d", i)
				t0 := time.Now()
				if err := submitHigh(st, id); err != nil {
					b.Fatal(err)
				}
				hook.waitFor("the page of "+id, 30*time.Second, func([]nhit) bool { return hook.has(id, "page") })
				h, _ := hook.find(id, "page")
				lat = append(lat, h.at.Sub(t0))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(msOf(percentile(lat, 0.50)), "p50-ms")
			b.ReportMetric(msOf(percentile(lat, 0.99)), "p99-ms")
			b.ReportMetric(msOf(lat[len(lat)-1]), "max-ms")
			slow := 0
			for _, d := range lat {
				if d >= 900*time.Millisecond {
					slow++
				}
			}
			// Pages that waited for the notifier's one-second pass
			// rather than coming on the commit (see BENCHMARKS.md).
			b.ReportMetric(float64(slow), "over-900ms")
		})
	}
}

// benchDuration is the environment's duration, or def.
func benchDuration(b *testing.B, env string, def time.Duration) time.Duration {
	if v := os.Getenv(env); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("%s=%q: want a duration", env, v)
		}
		return d
	}
	return def
}

// 100 submits a second (APPROVE_TUI_NOTIFY_BENCH_DURATION long, 10 s by
// default; a minute in BENCHMARKS.md): every page reaches the stand-in,
// and none twice. The proposals stay open, so the notifier reads more at
// every pass (6,000 after a minute).
func BenchmarkNotifySustained100PerSecond(b *testing.B) {
	dur := benchDuration(b, "APPROVE_TUI_NOTIFY_BENCH_DURATION", 10*time.Second)
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		_, hook, st, n := notifyBenchRig(b, "", 0)
		b.StartTimer()
		const rate = 100
		total := int(dur.Seconds() * rate)
		type sub struct {
			id string
			at time.Time
		}
		jobs := make(chan int, total)
		subs := make([]sub, total)
		var wg sync.WaitGroup
		var emu sync.Mutex
		var errs []error
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range jobs {
					id := fmt.Sprintf("s%d-%06d", iter, k)
					subs[k] = sub{id: id, at: time.Now()}
					if err := submitHigh(st, id); err != nil {
						emu.Lock()
						errs = append(errs, err)
						emu.Unlock()
					}
				}
			}()
		}
		start := time.Now()
		for k := 0; k < total; k++ {
			if d := time.Until(start.Add(time.Duration(k) * time.Second / rate)); d > 0 {
				time.Sleep(d)
			}
			jobs <- k
		}
		close(jobs)
		wg.Wait()
		submitted := time.Since(start)
		if len(errs) > 0 {
			b.Fatalf("%d submits failed, the first: %v", len(errs), errs[0])
		}
		// Every page, then a pause for any that comes twice.
		deadline := time.Now().Add(2*time.Minute + dur)
		for {
			got := map[string]bool{}
			for _, h := range hook.delivered() {
				got[h.approvalID] = true
			}
			missing := 0
			for _, s := range subs {
				if !got[s.id] {
					missing++
				}
			}
			if missing == 0 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d pages never came; notifier:\n%s", missing, total, tail(n.text(), 2000))
			}
			time.Sleep(200 * time.Millisecond)
		}
		drained := time.Since(start)
		b.StopTimer()
		time.Sleep(3 * time.Second)
		byKey := hitsByKey(hook.snapshot())
		at := map[string]time.Time{}
		doubled, failedReq := 0, 0
		for _, hs := range byKey {
			if len(hs) > 1 {
				doubled++
			}
			for _, h := range hs {
				if !h.ok() {
					failedReq++
				}
			}
			at[hs[0].approvalID] = hs[0].at
		}
		var lat []time.Duration
		for _, s := range subs {
			lat = append(lat, at[s.id].Sub(s.at))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		if doubled > 0 || len(byKey) != total || failedReq > 0 {
			b.Errorf("%d delivery ids for %d submits, %d received twice or more, %d requests not answered 2xx", len(byKey), total, doubled, failedReq)
		}
		b.ReportMetric(float64(total)/submitted.Seconds(), "submits/s")
		b.ReportMetric(float64(total-len(byKey)), "lost")
		b.ReportMetric(float64(doubled), "doubled")
		b.ReportMetric(msOf(percentile(lat, 0.50)), "p50-ms")
		b.ReportMetric(msOf(percentile(lat, 0.99)), "p99-ms")
		b.ReportMetric(msOf(lat[len(lat)-1]), "max-ms")
		b.ReportMetric(msOf(drained-submitted), "drain-ms")
		n.stop()
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// cpuTime is a process's user and system time from /proc/PID/stat.
func cpuTime(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		tb.Fatal(err)
	}
	// Fields after the command name, which is in parentheses: state is
	// field 3, utime 14 and stime 15.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks // idle_bench_test.go's USER_HZ
}

// The idle notifier: user+sys time over APPROVE_TUI_NOTIFY_IDLE_WINDOW
// (30 s by default) with nothing to do, after 5 s to settle: an empty
// store, and 1,000 and 10,000 pending proposals no route takes (read at
// every pass);
// on PostgreSQL too when a server is named.
func BenchmarkNotifyIdleCPU(b *testing.B) {
	window := benchDuration(b, "APPROVE_TUI_NOTIFY_IDLE_WINDOW", 30*time.Second)
	run := func(b *testing.B, db string, pending int) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			_, _, _, n := notifyBenchRig(b, db, pending)
			time.Sleep(3 * time.Second)
			b.StartTimer()
			c0 := cpuTime(b, n.cmd.Process.Pid)
			time.Sleep(window)
			used := cpuTime(b, n.cmd.Process.Pid) - c0
			b.StopTimer()
			b.ReportMetric(msOf(used), "cpu-ms")
			b.ReportMetric(msOf(used)/window.Seconds(), "cpu-ms/s")
			n.stop()
		}
	}
	b.Run("sqlite/empty", func(b *testing.B) { run(b, "", 0) })
	b.Run("sqlite/pending=1000", func(b *testing.B) { run(b, "", 1000) })
	b.Run("sqlite/pending=10000", func(b *testing.B) { run(b, "", 10000) })
	b.Run("postgres/empty", func(b *testing.B) {
		pgtest.Require(b)
		run(b, pgtest.Schema(b), 0)
	})
}
