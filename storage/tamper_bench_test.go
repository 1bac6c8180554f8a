package storage

import (
	"context"
	"testing"
)

// BenchmarkTamperCheck is what the approval's transaction adds to check a
// payload against its submit record: one keyed read of the audit log
// through the writer's prepared statements and the detail's JSON, timed
// inside one write transaction, on a store of 2,000 submitted proposals
// (each with its submit event among 2,000 others).
//
//	go test -run '^$' -bench TamperCheck -benchtime 20000x ./storage/
func BenchmarkTamperCheck(b *testing.B) {
	s := benchStore(b, "NORMAL")
	ids := submitBench(b, s, 2000)
	recs := make([]*Record, len(ids))
	for i, id := range ids {
		r, err := s.Get(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		recs[i] = r
	}
	sb := s.bind()
	b.ResetTimer()
	err := sb.inWriteTx(ctx, "bench", func(ctx context.Context) error {
		for i := 0; i < b.N; i++ {
			r := recs[i%len(recs)]
			if err := sb.markTamperedTx(ctx, r); err != nil {
				return err
			}
			if r.Tampered != "" {
				b.Fatalf("%s tampered", r.ApprovalID)
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
