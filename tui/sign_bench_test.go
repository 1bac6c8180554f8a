package tui

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/trust"
)

// percentiles adds p50 and p99 of the per-operation times.
func percentiles(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkConsoleSign is what an approve in the console waits for before
// it goes to the store: the key found in a real ssh-agent (a new
// connection, its keys listed, the one the trust file knows chosen), then
// the decision's statement signed through it (findSigner, signDecision).
func BenchmarkConsoleSign(b *testing.B) {
	r := newTrustRig(b)
	sg := AgentSocket(sshAgent(b, nil, r.carol, r.alice))
	rec := golden.Record(b, r.s, r.ids["drop"])
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		k := findSigner(sg, r.settings, 1, rec.ApprovalID)().(signerMsg)
		if k.err != nil {
			b.Fatal(k.err)
		}
		if s := signDecision(k.key, r.s, "", 1, rec, trust.DecisionApprove)().(signedMsg); s.err != nil {
			b.Fatal(s.err)
		}
		times = append(times, time.Since(start))
	}
	percentiles(b, times)
}

// BenchmarkConsoleReadSignatures is what the detail's data load adds for
// a proposal with two votes signed: the signatures read and each checked
// against the trust file (readSignatures).
func BenchmarkConsoleReadSignatures(b *testing.B) {
	r := newTrustRig(b)
	setPolicy(b, r.s, "policy:\n  - match: {risk: high}\n    approvals: 3\n")
	id := r.ids["drop"]
	rec := golden.Record(b, r.s, id)
	for _, key := range []string{r.alice, r.bob} {
		s, err := trust.KeyFileSigner(key)
		if err != nil {
			b.Fatal(err)
		}
		sig, err := r.settings.SignDecision(s, trust.Statement{Decision: trust.DecisionApprove, ApprovalID: id, PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel)}, t0)
		if err != nil {
			b.Fatal(err)
		}
		actor := operator
		actor.Person, actor.Key, actor.Signature = sig.Principal, sig.Key, sig
		if _, err := r.s.ConsumeRead(context.Background(), id, id, rec.PayloadSHA256, actor); err == nil {
			b.Fatal("a vote consumed the proposal")
		}
	}
	shown := shownOf(rec)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		sigs, err := readSignatures(context.Background(), r.s, shown)
		if err != nil || len(sigs) != 2 || !sigs[0].Verified || !sigs[1].Verified {
			b.Fatalf("%+v %v", sigs, err)
		}
		times = append(times, time.Since(start))
	}
	percentiles(b, times)
}
