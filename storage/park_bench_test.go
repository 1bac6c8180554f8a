package storage

import (
	"errors"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/latency"
	"github.com/approve-tui/approve-tui/model"
)

// BenchmarkFindParked measures the lookup an agent hook makes on every
// call before it submits (FindParked), on a store holding 10,000 open
// proposals, every one of them in the parks index (the index at its
// largest): half parked, half reserved with their waiter gone (killed -9
// before a heartbeat). "miss" is a call that was never parked (nearly
// every hook call), "hit" a retry of a parked one (the lookup, then the
// full record read with its tamper check), "hit-reserved" a retry of a
// reserved one (the waiters read too). The goal is p99 ≤ 1 ms.
func BenchmarkFindParked(b *testing.B) {
	const open = 10_000
	s := benchStore(b, "NORMAL")
	now := time.Now()
	matches := make([]model.Match, open)
	var parked, reserved []model.Match
	for i := range matches {
		if i%2 == 1 {
			p := benchProposal(i, now.Add(-time.Minute)) // its waiter gone since
			if err := s.SubmitReserved(ctx, p, now.Add(30*time.Minute), agent); err != nil {
				b.Fatal(err)
			}
			matches[i] = model.MatchOf(p)
			reserved = append(reserved, matches[i])
			continue
		}
		p := benchProposal(i, now)
		if err := s.Submit(ctx, p, agent); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Park(ctx, p.ApprovalID, now.Add(30*time.Minute), "hook timeout", agent); err != nil {
			b.Fatal(err)
		}
		matches[i] = model.MatchOf(p)
		parked = append(parked, matches[i])
	}
	b.Run("miss", func(b *testing.B) {
		latency.Each(b, func(i int) {
			m := matches[i%open]
			m.Command += " --again" // another call: never matches
			if _, _, err := s.FindParked(ctx, m); !errors.Is(err, ErrNotFound) {
				b.Fatal(err)
			}
		})
	})
	b.Run("hit", func(b *testing.B) {
		latency.Each(b, func(i int) {
			if _, _, err := s.FindParked(ctx, parked[i%len(parked)]); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("hit-reserved", func(b *testing.B) {
		latency.Each(b, func(i int) {
			if _, _, err := s.FindParked(ctx, reserved[i%len(reserved)]); err != nil {
				b.Fatal(err)
			}
		})
	})
}
