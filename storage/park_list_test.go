package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/latency"
	"github.com/approve-tui/approve-tui/model"
)

// Parks reads the park rows of many ids at once, across more than one run
// of the IN list; an id never parked is absent, and FillParks sets each
// record's Park as Get would.
func TestParksBulkRead(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newRawStore(t)
	var ids []string
	parked := map[string]bool{}
	for i := range 450 {
		p := proposal(fmt.Sprintf("bulk-park-%03d-%s", i, model.NewID()), fmt.Sprintf("rm -rf /srv/%d", i), model.RiskHigh, c.Now(), time.Hour)
		mustSubmit(t, s, p)
		ids = append(ids, p.ApprovalID)
		if i%7 == 0 {
			if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(30*time.Minute), "hook timeout", agent); err != nil {
				t.Fatal(err)
			}
			parked[p.ApprovalID] = true
		}
	}
	ps, err := s.Parks(ctx, append(ids, "no-such-id"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(parked) {
		t.Fatalf("%d parks read, %d parked", len(ps), len(parked))
	}
	for id := range parked {
		one, err := s.ParkOf(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := ps[id]; got == nil || *got != *one {
			t.Fatalf("%s: bulk %+v, one %+v", id, got, one)
		}
	}
	recs, err := s.List(ctx, ListOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FillParks(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if (r.Park != nil) != parked[r.ApprovalID] {
			t.Fatalf("%s: park %+v, parked %v", r.ApprovalID, r.Park, parked[r.ApprovalID])
		}
	}
	if ps, err := s.Parks(ctx, nil); err != nil || len(ps) != 0 {
		t.Fatalf("no ids: %v %v", ps, err)
	}
}

// The park signature moves with a park and a park again, and not with a
// commit elsewhere.
func TestParkSignatureMoves(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newRawStore(t)
	p := proposal("park-sig-"+model.NewID(), "rm -rf /srv/x", model.RiskHigh, c.Now(), time.Hour)
	mustSubmit(t, s, p)
	sig := func() ParkSignature {
		t.Helper()
		g, err := s.ParkSignature(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	s0 := sig()
	if s0 != (ParkSignature{}) {
		t.Fatalf("no park: %+v", s0)
	}
	mustSubmit(t, s, proposal("park-sig-other-"+model.NewID(), "rm -rf /srv/y", model.RiskHigh, c.Now(), time.Hour))
	if sig() != s0 {
		t.Fatal("another proposal moved it")
	}
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(30*time.Minute), "hook timeout", agent); err != nil {
		t.Fatal(err)
	}
	s1 := sig()
	if s1 == s0 || s1.Count != 1 {
		t.Fatalf("park: %+v", s1)
	}
	c.Advance(time.Minute)
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(30*time.Minute), "hook timeout", agent); err != nil {
		t.Fatal(err)
	}
	if s2 := sig(); s2 == s1 {
		t.Fatalf("park again: %+v", s2)
	}
}

// BenchmarkParkSurfaces measures what the surfaces add to read parks, on
// a store holding 10,000 open proposals, every one parked: the console's
// ParkSignature at every reload of its list ("signature"), and the bulk
// read of the parks of a list's rows: 200 (list's default page) and 5,000
// (the console's whole list).
func BenchmarkParkSurfaces(b *testing.B) {
	const open = 10_000
	s := benchStore(b, "NORMAL")
	now := time.Now()
	ids := make([]string, open)
	for i := range ids {
		p := benchProposal(i, now)
		if err := s.Submit(ctx, p, agent); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Park(ctx, p.ApprovalID, now.Add(30*time.Minute), "hook timeout", agent); err != nil {
			b.Fatal(err)
		}
		ids[i] = p.ApprovalID
	}
	b.Run("signature", func(b *testing.B) {
		latency.Each(b, func(int) {
			if sig, err := s.ParkSignature(ctx); err != nil || sig.Count != open {
				b.Fatal(sig, err)
			}
		})
	})
	for _, n := range []int{200, 5000} {
		b.Run(fmt.Sprintf("parks-%d", n), func(b *testing.B) {
			latency.Each(b, func(i int) {
				from := (i * n) % (open - n)
				if ps, err := s.Parks(ctx, ids[from:from+n]); err != nil || len(ps) != n {
					b.Fatal(len(ps), err)
				}
			})
		})
	}
}
