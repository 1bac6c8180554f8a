package storage

import (
	"errors"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/internal/latency"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// BenchmarkConsumeSigned is what verifying the signature inside the
// approving transaction costs: the same approval (rows read first, as in
// the console) with trust off and unsigned, and with trust required and
// signed by an ed25519 key (statement verified against the trust file,
// principal and requester checked); then under a signed two-person policy,
// where the policy's own signature is verified in the transaction too: the
// first vote, and the vote that completes the quorum. A control keeps the
// signature with trust off (written, not verified). Signing happens
// before the timer: it is the operator's side.
func BenchmarkConsumeSigned(b *testing.B) {
	carol, alice, bob := newKey(b, "carol"), newKey(b, "alice"), newKey(b, "bob")
	for _, c := range []struct {
		name   string
		trust  bool
		policy bool
		first  bool
		sign   bool // trust off, the signature carried and kept unverified
	}{
		{"trust-off-unsigned", false, false, false, false},
		{"trust-off-signed-unverified", false, false, false, true},
		{"trust-required-signed", true, false, false, true},
		{"trust-required-signed-policy-first-vote", true, true, false, true},
		{"trust-required-signed-policy-final-vote", true, true, true, true},
	} {
		b.Run(testBackend+"/"+c.name, func(b *testing.B) {
			var ts *trust.Settings
			if c.trust {
				ts = trustOf(b, []string{"carol"}, carol.line(), alice.line(), bob.line())
			}
			s, err := Open(ctx, tempDB(b), Options{Create: true, Synchronous: map[bool]string{true: "", false: "NORMAL"}[testBackend == "postgres"],
				BusyTimeout: time.Minute, Trust: ts})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			if c.policy {
				src := highNeeds(2)
				p, err := config.ParsePolicy("p", []byte(src))
				if err != nil {
					b.Fatal(err)
				}
				sig := carol.signed(b, policyStatement(src, time.Now()))
				if _, _, err := s.SetPolicy(ctx, []byte(src), p, osActor(sig)); err != nil {
					b.Fatal(err)
				}
			}
			ids := submitBench(b, s, b.N)
			recs := make([]*Record, len(ids))
			actors := make([]model.Actor, len(ids))
			for i, id := range ids {
				rec, err := s.Get(ctx, id)
				if err != nil {
					b.Fatal(err)
				}
				recs[i] = rec
				actors[i] = model.Actor{Surface: model.SurfaceCLI, Name: "bob@desk", Person: "bob"}
				if c.sign {
					actors[i] = osActor(bob.signed(b, approval(rec, time.Now())))
				}
				if c.first {
					var v *VoteRecorded
					if _, err := approve(s, rec, osActor(alice.signed(b, approval(rec, time.Now())))); !errors.As(err, &v) {
						b.Fatal(err)
					}
				}
			}
			latency.Each(b, func(i int) {
				_, err := approve(s, recs[i], actors[i])
				var v *VoteRecorded
				if err != nil && !(errors.As(err, &v) && c.policy && !c.first) {
					b.Fatal(err)
				}
			})
		})
	}
}
