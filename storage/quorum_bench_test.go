package storage

import (
	"errors"
	"testing"

	"github.com/approve-tui/approve-tui/internal/latency"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
)

// BenchmarkConsumeUnderPolicy is an approval's cost as the policy makes
// it: none set; a policy whose rule does not match (read and matched in the
// transaction); the first vote of two (recorded, audited, the row left
// pending); the vote that completes the quorum (the consume, with the
// votes read and ended); and that vote when a one-person policy was set
// after the first (two versions read and met). Rows were read first, as in
// the console.
func BenchmarkConsumeUnderPolicy(b *testing.B) {
	alice := model.Actor{Surface: model.SurfaceSSH, Name: "alice@laptop (SHA256:a)", Person: "alice", Key: "SHA256:a"}
	bob := model.Actor{Surface: model.SurfaceSSH, Name: "bob@desk (SHA256:b)", Person: "bob", Key: "SHA256:b"}
	for _, c := range []struct {
		name  string
		rule  *policy.Rule
		first bool // a first vote is cast before the timer
		lower bool // then a policy without rules is set
	}{
		{"no-policy", nil, false, false},
		{"rule-not-matching", &policy.Rule{Match: policy.Match{Session: "nowhere:*"}, Approvals: 2}, false, false},
		{"first-vote", &policy.Rule{Match: policy.Match{Risk: model.RiskHigh}, Approvals: 2}, false, false},
		{"final-vote", &policy.Rule{Match: policy.Match{Risk: model.RiskHigh}, Approvals: 2}, true, false},
		{"final-vote-pinned", &policy.Rule{Match: policy.Match{Risk: model.RiskHigh}, Approvals: 2}, true, true},
	} {
		b.Run(testBackend+"/"+c.name, func(b *testing.B) {
			s := benchStore(b, "NORMAL")
			if c.rule != nil {
				p := &policy.Policy{Rules: []policy.Rule{*c.rule}}
				if _, _, err := s.SetPolicy(ctx, []byte(c.name), p, agent); err != nil {
					b.Fatal(err)
				}
			}
			ids := submitBench(b, s, b.N)
			for _, id := range ids {
				if _, err := s.Get(ctx, id); err != nil {
					b.Fatal(err)
				}
				if c.first {
					var v *VoteRecorded
					if _, err := s.Consume(ctx, id, id, alice); !errors.As(err, &v) {
						b.Fatal(err)
					}
				}
			}
			if c.lower {
				if _, _, err := s.SetPolicy(ctx, []byte("lowered"), &policy.Policy{}, agent); err != nil {
					b.Fatal(err)
				}
			}
			latency.Each(b, func(i int) {
				_, err := s.Consume(ctx, ids[i], ids[i], bob)
				var v *VoteRecorded
				if err != nil && !errors.As(err, &v) {
					b.Fatal(err)
				}
				if c.lower && err != nil {
					b.Fatal("the lowered policy let the final vote fall short") // both versions are met by two
				}
			})
		})
	}
}

// BenchmarkPendingSummary is the cheap check a console and the notifier
// make after every commit, at 10,000 pending, now that it also counts the
// votes that count and reads the policy's version (none, and 1,000 votes).
func BenchmarkPendingSummary(b *testing.B) {
	for _, votes := range []int{0, 1000} {
		b.Run(testBackend+"/"+map[int]string{0: "no-votes", 1000: "1000-votes"}[votes], func(b *testing.B) {
			s := benchStore(b, "NORMAL")
			ids := submitBench(b, s, 10_000)
			if votes > 0 {
				p := &policy.Policy{Rules: []policy.Rule{{Match: policy.Match{}, Approvals: 2}}}
				if _, _, err := s.SetPolicy(ctx, []byte("two"), p, agent); err != nil {
					b.Fatal(err)
				}
				alice := model.Actor{Surface: model.SurfaceCLI, Name: "alice@host", Person: "alice"}
				for _, id := range ids[:votes] {
					var v *VoteRecorded
					if _, err := s.Consume(ctx, id, id, alice); !errors.As(err, &v) {
						b.Fatal(err)
					}
				}
			}
			latency.Each(b, func(int) {
				if _, _, err := s.PendingSummary(ctx); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
