package storage

// Regression tests for two store bugs the Hermes interop tests found.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Was a bug: the store wrote actor names and execution reasons into TEXT columns
// byte for byte. When they are not valid UTF-8 (an SSH user name is
// arbitrary bytes; a headless script path or an exec error quoting a path
// can be too) Python's sqlite3 cannot fetch the row at all:
// "OperationalError: Could not decode to UTF-8 column 'consumed_by'". Hermes
// then fails on every read of that proposal. The payload codec escapes such
// bytes; the columns need the same care (or the actor must be refused).
func TestInvalidUTF8ActorAndReasonStayReadableByHermes(t *testing.T) {
	sqliteOnly(t, "Hermes (Python) reads a SQLite file")
	path := tempDB(t)
	s := openAt(t, path, nil)
	py := newPyStore(t, path)
	now := time.Now()

	p1 := proposal(model.NewID(), "rm -rf /srv/a", model.RiskHigh, now, time.Hour)
	p2 := proposal(model.NewID(), "rm -rf /srv/b", model.RiskHigh, now, time.Hour)
	mustSubmit(t, s, p1)
	mustSubmit(t, s, p2)
	sshUser := model.Actor{Surface: model.SurfaceSSH, Name: "b\xffob"}
	if _, err := s.Consume(ctx, p1.ApprovalID, p1.ApprovalID, sshUser); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, p2.ApprovalID, p2.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordExecution(ctx, p2.ApprovalID, model.ExecDispatchFailed, "fork/exec /opt/b\xe9n: no such file or directory", agent); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{p1.ApprovalID, p2.ApprovalID} {
		out, err := py.command(context.Background(), "get", id).CombinedOutput()
		if err != nil { // python exits 1: "Could not decode to UTF-8 column ..."
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			t.Errorf("Hermes cannot read %s: %s", id, lines[len(lines)-1])
		}
	}
}

// Was a bug: approve_tui_rank (the pending-rank index behind List) can miss a
// pending row for good. catchUpRank detects rows it lacks only by comparing
// counts (index entries vs pending rows with rowid <= the high-water mark)
// and by max(rowid) falling below that mark. A stale entry (a row Hermes
// decided) and a missing one (a row whose rowid is at or below the mark)
// cancel out. Here Hermes denies the newest proposal, a cleanup deletes
// decided rows, and Hermes submits a new proposal, which SQLite gives the
// freed rowid: List never shows it, now or after approve-tui restarts,
// although Get finds it pending. The operator never sees the proposal; the
// agent waits until it expires.
func TestRankIndexFindsHermesRowThatReusedARowid(t *testing.T) {
	sqliteOnly(t, "SQLite reuses rowids")
	path := tempDB(t)
	py := newPyStore(t, path)
	ids := py.submit(map[string]any{"command": "rm -rf /srv/a"}, map[string]any{"command": "rm -rf /srv/b"})
	s := openAt(t, path, nil)
	if l, err := s.List(ctx, ListOptions{}); err != nil || len(l) != 2 {
		t.Fatalf("list: %v %v", idsOf(l), err)
	}
	if d := py.decide("deny", ids[1], "hermes:op"); !d.OK {
		t.Fatalf("deny: %+v", d)
	}
	mustExec(t, rawDB(t, path), `DELETE FROM gateway_approvals WHERE status != 'pending'`)
	newID := py.submit(map[string]any{"command": "rm -rf /srv/c"})[0]

	if r, err := s.Get(ctx, newID); err != nil || r.EffectiveStatus != model.StatusPending {
		t.Fatalf("get %s: %v %v", newID, r, err)
	}
	for _, st := range []*Store{s, openAt(t, path, nil)} { // also after a restart
		l, err := st.List(ctx, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != 2 {
			t.Fatalf("List pending shows %v; want %s and the new Hermes proposal %s", idsOf(l), ids[0], newID)
		}
	}
}
