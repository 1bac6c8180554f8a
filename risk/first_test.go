package risk

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// firstClassifyEnv makes TestFirstClassifyChild classify its value.
const firstClassifyEnv = "APPROVE_TUI_RISK_FIRST_CLASSIFY"

// TestFirstClassifyChild is the child of BenchmarkFirstClassify: with
// firstClassifyEnv set, in a fresh test binary that has classified nothing,
// it classifies that command once and prints how long it took.
func TestFirstClassifyChild(t *testing.T) {
	cmd, ok := os.LookupEnv(firstClassifyEnv)
	if !ok {
		t.Skip("the child of BenchmarkFirstClassify")
	}
	start := time.Now()
	v := Classify(cmd)
	d := time.Since(start)
	fmt.Printf("first-classify-ns %d %s\n", d.Nanoseconds(), v.Level)
}

// BenchmarkFirstClassify is what the first classification costs a fresh
// process (an agent hook classifies one command per process): every
// iteration runs this test binary again and times its first Classify.
// Metrics: p50-µs and p99-µs of that one call; ns/op is the whole exec.
//
//	go test -run '^$' -bench FirstClassify -benchtime 200x ./risk/
func BenchmarkFirstClassify(b *testing.B) {
	for _, bc := range []struct{ name, cmd string }{
		{"benign", "npm test"},
		{"typical", "git push --force origin main"},
		{"hardline", "rm -rf /"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^TestFirstClassifyChild$", "-test.bench=^$")
				cmd.Env = append(os.Environ(), firstClassifyEnv+"="+bc.cmd)
				out, err := cmd.CombinedOutput()
				if err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				_, rest, ok := strings.Cut(string(out), "first-classify-ns ")
				if !ok {
					b.Fatalf("no timing in:\n%s", out)
				}
				ns, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				if err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Duration(ns))
			}
			slices.Sort(ds)
			pct := func(q float64) float64 {
				i := max(0, min(int(q*float64(len(ds))+0.5)-1, len(ds)-1))
				return float64(ds[i].Nanoseconds()) / 1e3
			}
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
		})
	}
}
