package risk

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkJudge times Judge on every corpus command (all under 1 KB) and
// on 64 KB commands built from them (lines joined by newlines; one rm with
// 64 KB of operands), and the analysis alone with the table's verdict
// given (-analysis). Metrics: p50-µs and p99-µs of one
// judgement, cpu-µs/op the process' CPU time (user and system, the
// garbage collector's included) a judgement, which a loaded machine
// changes less than the wall-clock times; ns/op is the mean.
//
//	go test -run '^$' -bench 'Judge$' -benchtime 3s ./risk/
func BenchmarkJudge(b *testing.B) {
	cmds := corpusCommands(b)
	big := joinUpTo(cmds, "\n", 64*1024)
	// One long simple command: 64 KB of words for rm, one path over
	// again and every one different.
	words := "rm -f" + strings.Repeat(" build/x.o", 64*1024/10+1)
	var distinct strings.Builder
	distinct.WriteString("rm -f")
	for k := 0; distinct.Len() < 64*1024; k++ {
		fmt.Fprintf(&distinct, " build/x%05d.o", k)
	}
	// The corpus commands joined once each, none repeated (under 64 KB:
	// the corpora hold about 50 KB).
	once := strings.Join(cmds, "\n")
	Judge("ls", corpusContext) // load the table and the catalogue outside the timings
	for _, bc := range []struct {
		name string
		cmds []string
	}{
		{"under-1KB", cmds},
		{"64KB-lines", []string{big}},
		{"64KB-words", []string{words[:64*1024]}},
		{"64KB-words-distinct", []string{distinct.String()[:64*1024]}},
		{"corpus-once-lines", []string{once}},
	} {
		verdicts := make([]Verdict, len(bc.cmds))
		for k, c := range bc.cmds {
			verdicts[k] = Classify(c)
		}
		// The analysis alone, the table's verdict given: what Judge adds
		// to Classify.
		b.Run(bc.name+"-analysis", func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			i := 0
			cpu := cpuTime()
			for b.Loop() {
				k := i % len(bc.cmds)
				i++
				start := time.Now()
				judgeSink = judgeWith(bc.cmds[k], corpusContext, verdicts[k])
				ds = append(ds, time.Since(start))
			}
			reportCPU(b, cpu, len(ds))
			reportPercentiles(b, ds)
		})
		b.Run(bc.name, func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			i := 0
			cpu := cpuTime()
			for b.Loop() {
				cmd := bc.cmds[i%len(bc.cmds)]
				i++
				start := time.Now()
				judgeSink = Judge(cmd, corpusContext)
				ds = append(ds, time.Since(start))
			}
			reportCPU(b, cpu, len(ds))
			reportPercentiles(b, ds)
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time used since start, per operation.
func reportCPU(b *testing.B, start time.Duration, n int) {
	if n > 0 && start > 0 {
		b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/1e3/float64(n), "cpu-µs/op")
	}
}

func reportPercentiles(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	pct := func(q float64) float64 {
		k := max(0, min(int(q*float64(len(ds))+0.5)-1, len(ds)-1))
		return float64(ds[k].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

var judgeSink Judgement

// corpusCommands is every corpus command, in the corpora's order.
func corpusCommands(b *testing.B) []string {
	var cmds []string
	corpora := loadCorpora(b)
	for _, f := range corpusFiles {
		for _, c := range corpora[f.name] {
			cmds = append(cmds, c.command)
		}
	}
	return cmds
}

// joinUpTo joins cmds (over again) with sep until the text holds at
// least n bytes.
func joinUpTo(cmds []string, sep string, n int) string {
	var big strings.Builder
	for i := 0; big.Len() < n; i++ {
		big.WriteString(cmds[i%len(cmds)])
		big.WriteString(sep)
	}
	return big.String()
}
