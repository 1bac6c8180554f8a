package storage

import (
	"runtime"
	"testing"
)

// BenchmarkConsumeCPU is BenchmarkConsumePeers' store and bare-Go legs,
// interleaved on copies of one file of 2,000 pending proposals, with the
// store measured twice: "store" as in BenchmarkConsumePeers (this process
// submitted the proposals, so it classified their commands already) and
// "store-cold" with the process's classification cache emptied first, as a
// process that never saw the commands before (`approve --yes` in a script).
// Reported: CPU (user+system) per consume, and each over bare Go's. Each
// leg is measured from a collected heap to its own garbage collected
// (legCPU), so no leg pays for another's garbage.
func BenchmarkConsumeCPU(b *testing.B) {
	sqliteOnly(b, "copies of a SQLite file")
	const n = 2000
	dir := b.TempDir()
	for _, syncMode := range []string{"NORMAL", "FULL"} {
		b.Run("sync="+syncMode, func(b *testing.B) {
			data, ids := peerFile(b, dir, syncMode, n)
			var storeCPU, coldCPU, bareCPU float64
			for i := 0; i < b.N; i++ {
				copyOf := copier(b, dir, data)
				store := func(cold bool) float64 {
					if cold {
						classes.reset()
					}
					st, err := Open(ctx, copyOf("store"+map[bool]string{true: "-cold"}[cold]), Options{Synchronous: syncMode})
					if err != nil {
						b.Fatal(err)
					}
					defer st.Close()
					return legCPU(func() {
						for _, id := range ids {
							if _, err := st.Consume(ctx, id, id, alice); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
				coldCPU += store(true)
				storeCPU += store(false)
				bare := bareConsumer(b, copyOf("bare"), syncMode, false, "")
				bareCPU += legCPU(func() {
					for _, id := range ids {
						if err := bare(id); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			ops := float64(n * b.N)
			b.ReportMetric(storeCPU/ops*1e6, "store-cpu-µs/op")
			b.ReportMetric(coldCPU/ops*1e6, "store-cold-cpu-µs/op")
			b.ReportMetric(bareCPU/ops*1e6, "bare-go-cpu-µs/op")
			b.ReportMetric(storeCPU/bareCPU, "store/bare")
			b.ReportMetric(coldCPU/bareCPU, "store-cold/bare")
		})
	}
}

// legCPU is the process's CPU time running fn, with the garbage collected
// before it starts and again before it is read: what fn allocated is
// collected on its account, not on the next leg's.
func legCPU(fn func()) float64 {
	runtime.GC()
	cpu0 := processCPU()
	fn()
	runtime.GC()
	return processCPU() - cpu0
}
