package storage

import (
	"context"
	"database/sql"
	"errors"
	"testing"
)

// BenchmarkTamperCheck is what checking a payload against its submit
// record costs as a statement of its own: one keyed read of the audit log
// through the writer's prepared statements and the detail's JSON, timed
// inside one write transaction, on a store of 2,000 submitted proposals
// (each with its submit event among 2,000 others). The approval's
// transaction reads the submit event in its one deciding read (openRow).
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

// markTamperedTx marks rec, read in the write transaction, when its
// payload is not the one its submit event recorded: one keyed read through
// the writer's prepared statements (the check as a statement of its own).
func (s bound) markTamperedTx(ctx context.Context, rec *Record) error {
	var seq int64
	var detail string
	err := s.w.QueryRowPrepared(ctx, selectSubmit, rec.ApprovalID).Scan(&seq, &detail)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	submitRecord{seq: seq, sha256: submitPayload(detail)}.mark(rec)
	return nil
}
