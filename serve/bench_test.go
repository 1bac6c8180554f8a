package serve_test

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/serve"
)

// BenchmarkSSHSessions: with 1, 20 and 100 console sessions open over SSH
// (server and Go clients in this process, loopback), the heap per idle
// session, commit → frame in every session (p50/p99 over 10 commits), and
// the process's CPU over 10 s with every session idle. Run with -benchtime 1x.
func BenchmarkSSHSessions(b *testing.B) {
	for _, n := range []int{1, 20, 100} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			r := startRigWith(b, b.TempDir(), func(c *serve.Config) {
				c.MaxSessions, c.MaxSessionsPerKey = 1000, 1000
			})
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cs := make([]*console, n)
			for i := range cs {
				cs[i] = r.console([]string{"alice", "bob", "carol"}[i%3])
			}
			time.Sleep(time.Second)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n)/1024, "heap-KiB/session")

			var lat []time.Duration
			for k := 0; k < 10; k++ {
				marker := fmt.Sprintf("/srv/bench-%d-%d", n, k)
				start := time.Now()
				submit(b, r.s, "rm -rf "+marker)
				for _, c := range cs {
					for !strings.Contains(c.out.String(), marker) {
						if time.Since(start) > 20*time.Second {
							b.Fatalf("a session never showed %s", marker)
						}
						time.Sleep(time.Millisecond)
					}
					lat = append(lat, time.Since(start))
				}
				time.Sleep(200 * time.Millisecond)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "frame-p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "frame-p99-ms")

			cpu := func() float64 {
				var ru syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
			}
			c0, t0 := cpu(), time.Now()
			time.Sleep(10 * time.Second)
			b.ReportMetric((cpu()-c0)/time.Since(t0).Seconds()*100, "idle-cpu-%")
		})
	}
}
