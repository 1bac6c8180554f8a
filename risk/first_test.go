package risk

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// firstClassifyEnv makes TestFirstClassifyChild classify its value.
const firstClassifyEnv = "APPROVE_TUI_RISK_FIRST_CLASSIFY"

// TestFirstClassifyChild is the child of BenchmarkFirstClassify: with
// firstClassifyEnv set, in a fresh test binary that has classified nothing,
// it classifies that command once and prints how long it took.
func TestFirstClassifyChild(t *testing.T) {
	firstCallChild(t, firstClassifyEnv, "BenchmarkFirstClassify", "first-classify-ns", func(cmd string) model.RiskLevel {
		return Classify(cmd).Level
	})
}

// firstCallChild is the child of the benchmark named parent, with env set:
// it times call on env's value once and prints "prefix NS LEVEL".
func firstCallChild(t *testing.T, env, parent, prefix string, call func(cmd string) model.RiskLevel) {
	cmd, ok := os.LookupEnv(env)
	if !ok {
		t.Skip("the child of " + parent)
	}
	start := time.Now()
	level := call(cmd)
	d := time.Since(start)
	fmt.Printf("%s %d %s\n", prefix, d.Nanoseconds(), level)
}

// BenchmarkFirstClassify is what the first classification costs a fresh
// process (an agent hook classifies one command per process): every
// iteration runs this test binary again and times its first Classify.
// Metrics: p50-µs and p99-µs of that one call; ns/op is the whole exec.
//
//	go test -run '^$' -bench FirstClassify -benchtime 200x ./risk/
func BenchmarkFirstClassify(b *testing.B) {
	benchFirstCall(b, "TestFirstClassifyChild", firstClassifyEnv, "first-classify-ns ", []firstCase{
		{"benign", "npm test"},
		{"typical", "git push --force origin main"},
		{"hardline", "rm -rf /"},
	})
}
