package storage

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// fillForCopy gives s a bit of everything: decided, pending, executed and
// expired proposals, a refusal, a waiter, a hostile payload.
func fillForCopy(t *testing.T, s *Store, c *clock) {
	t.Helper()
	for _, id := range []string{"copy-pend-1", "copy-appr-1", "copy-deny-1", "copy-expi-1"} {
		mustSubmit(t, s, proposal(id, "rm -rf /srv/"+id+" \u202e\x1b[31m", model.RiskHigh, c.Now(), time.Hour))
	}
	if _, err := s.Consume(ctx, "copy-appr-1", "copy-appr-1", alice); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordExecution(ctx, "copy-appr-1", model.ExecStarted, "", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deny(ctx, "copy-deny-1", bob, "no"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, "copy-deny-1", "wrong", alice); err == nil {
		t.Fatal("consume of a denied row")
	}
	if err := s.Heartbeat(ctx, Waiter{ApprovalID: "copy-pend-1", Host: "hostA", PID: 42, StartedAt: model.Epoch(c.Now())}); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Hour)
	mustSubmit(t, s, proposal("copy-late-1", "ls", model.RiskLow, c.Now(), 0))
}

type storeDump struct {
	rows   map[string]string // id -> status|payload
	events []AuditEvent
}

func dump(t *testing.T, s *Store) storeDump {
	t.Helper()
	d := storeDump{rows: map[string]string{}}
	recs, err := s.List(ctx, ListOptions{Status: ListAll, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		d.rows[r.ApprovalID] = string(r.Status) + "|" + string(r.ExecutionStatus) + "|" + r.PayloadSHA256
	}
	if d.events, err = s.Audit(ctx, AuditQuery{Limit: 1000}); err != nil {
		t.Fatal(err)
	}
	return d
}

// A copy carries every proposal byte for byte and the audit chain with its
// hashes, adds one event saying so, and verifies; a second copy into the
// same target is refused unless told to replace. Between SQLite and
// PostgreSQL, both ways, in the PostgreSQL pass.
func TestCopyBetweenBackends(t *testing.T) {
	c := newClock()
	sqlitePath := filepath.Join(t.TempDir(), "from.db")
	src := openAt(t, sqlitePath, c)
	fillForCopy(t, src, c)
	want := dump(t, src)

	hops := []string{tempDB(t), filepath.Join(t.TempDir(), "back.db")}
	from := src
	for i, to := range hops {
		dst := openAt(t, to, c)
		res, err := Copy(ctx, from, dst, CopyOptions{}, alice)
		if err != nil {
			t.Fatalf("copy %d (%s -> %s): %v", i, from.Backend(), dst.Backend(), err)
		}
		if res.Proposals != int64(len(want.rows)) || !res.Verify.OK {
			t.Fatalf("copy %d: %+v", i, res)
		}
		got := dump(t, dst)
		if !reflect.DeepEqual(got.rows, want.rows) {
			t.Fatalf("copy %d rows:\n got %v\nwant %v", i, got.rows, want.rows)
		}
		// The copied chain, then one event per copy.
		if len(got.events) != len(want.events)+1 || got.events[0].Event != EventCopy {
			t.Fatalf("copy %d: %d events (newest %s), want %d + a copy event", i, len(got.events), got.events[0].Event, len(want.events))
		}
		for k := range want.events {
			g, w := got.events[k+1], want.events[k]
			if g.Hash != w.Hash || g.Seq != w.Seq || g.DetailRaw != w.DetailRaw {
				t.Fatalf("copy %d: event %d differs:\n got %+v\nwant %+v", i, w.Seq, g, w)
			}
		}
		// The copy decides like the original.
		if ws, _ := dst.Waiters(ctx, "copy-pend-1"); len(ws) != 1 || ws[0].Host != "hostA" {
			t.Fatalf("copy %d waiters: %+v", i, ws)
		}
		if _, err := dst.Consume(ctx, "copy-late-1", "copy-late-1", bob); err != nil {
			t.Fatalf("copy %d: consume in the copy: %v", i, err)
		}
		// Not again into a store that holds proposals...
		if _, err := Copy(ctx, from, dst, CopyOptions{}, alice); err == nil || !strings.Contains(err.Error(), "--replace") {
			t.Fatalf("copy into a non-empty target: %v", err)
		}
		// ...unless told to replace them.
		res, err = Copy(ctx, from, dst, CopyOptions{Replace: true}, alice)
		if err != nil || !res.Verify.OK {
			t.Fatalf("copy --replace: %+v %v", res, err)
		}
		if got := dump(t, dst); !reflect.DeepEqual(got.rows, want.rows) {
			t.Fatalf("after --replace: %v", got.rows)
		}
		want = dump(t, dst)
		from = dst
	}
}

// A source whose chain does not verify is not copied.
func TestCopyRefusesABrokenSource(t *testing.T) {
	s, c := newStore(t)
	fillForCopy(t, s, c)
	mustExec(t, rawDB(t, s.DSN()), `UPDATE approve_tui_audit SET actor = 'mallory' WHERE seq = 2`)
	dst := openAt(t, filepath.Join(t.TempDir(), "to.db"), c)
	_, err := Copy(ctx, s, dst, CopyOptions{}, alice)
	if err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("copy of a tampered store: %v", err)
	}
	if recs, _ := dst.List(ctx, ListOptions{Status: ListAll}); len(recs) != 0 {
		t.Fatal("rows copied from a broken source")
	}
}
