package cli

import (
	"slices"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// BenchmarkApproveSigning is what approve adds under trust required to
// sign one approval: dial the ssh-agent at $SSH_AUTH_SOCK, list its keys
// (two: one the trust file knows, one it does not), pick the known one,
// build and sign the statement (ed25519), close. The trust file is loaded
// once, as the command does when it opens the store. Reports p50-µs and
// p99-µs per signature.
func BenchmarkApproveSigning(b *testing.B) {
	r := newTrustRig(b)
	env := r.agent(b, "carol", "alice")
	f, err := config.Load(r.config)
	if err != nil {
		b.Fatal(err)
	}
	ts, err := f.TrustSettings("sqlite:"+r.db, config.OperatorSide)
	if err != nil {
		b.Fatal(err)
	}
	a := newApp(nil, nil, nil)
	a.getenv = r.getenv(env)
	rec := &storage.Record{}
	rec.ApprovalID, rec.PayloadSHA256, rec.RiskLevel = "abcdef0123456789", trust.SHA256Hex([]byte("payload")), "high"
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		sig, err := a.signDecision(ts, "", trust.DecisionApprove, rec, "")
		if err != nil || sig == nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(times)
	us := func(q float64) float64 { return float64(times[int(q*float64(len(times)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(us(0.50), "p50-µs")
	b.ReportMetric(us(0.99), "p99-µs")
}
