// Package latency reports per-operation timings of a benchmark as its
// p50 and p99 (the p50-µs and p99-µs metrics BENCHMARKS.md records).
package latency

import (
	"slices"
	"testing"
	"time"
)

// Latencies are the timings of a benchmark's operations, one each.
type Latencies []time.Duration

// Report adds the p50-µs and p99-µs metrics to b (nothing when empty).
func (l Latencies) Report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	pct := func(p float64) float64 {
		return float64(s[int(p*float64(len(s)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// Each runs op b.N times (i from 0), timing each run apart, and reports
// their p50 and p99; b's timer counts the runs only.
func Each(b *testing.B, op func(i int)) {
	lat := make(Latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		op(i)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.Report(b)
}
