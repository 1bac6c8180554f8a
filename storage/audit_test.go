package storage

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// auditedStore runs one of each transition, accepted and refused.
func auditedStore(t *testing.T) (*Store, *clock) {
	s, c := newStore(t)
	now := c.Now()
	mustSubmit(t, s, proposal("aud00001", "rm -rf /srv/a", model.RiskHigh, now, time.Hour))
	mustSubmit(t, s, proposal("a2", "git push --force", model.RiskMedium, now, time.Hour))
	mustSubmit(t, s, proposal("a3", "git reset --hard", model.RiskMedium, now, time.Minute))
	if _, err := s.Consume(ctx, "aud00001", "wrong", alice); err == nil {
		t.Fatal("mismatch accepted")
	}
	if _, err := s.Consume(ctx, "aud00001", "aud00001", alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, "aud00001", "aud00001", bob); err == nil {
		t.Fatal("double consume")
	}
	if err := s.RecordExecution(ctx, "aud00001", model.ExecExecuted, "exit code 0", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deny(ctx, "a2", bob, "too broad"); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Minute)
	if _, err := s.ExpireDue(ctx, model.Actor{Surface: model.SurfaceSystem, Name: "expiry"}); err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestAuditRecordsEveryTransitionAndRefusal(t *testing.T) {
	s, _ := auditedStore(t)
	evs, err := s.Audit(ctx, AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		got = append(got, e.Event+":"+e.ApprovalID+":"+e.Outcome+":"+e.Reason)
	}
	want := []string{
		"submit:aud00001:ok:", "submit:a2:ok:", "submit:a3:ok:",
		"approve:aud00001:refused:confirmation_mismatch", "approve:aud00001:ok:", "approve:aud00001:refused:not_pending",
		"execution:aud00001:ok:executed", "deny:a2:ok:", "expire:a3:ok:",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	res, err := s.VerifyAudit(ctx)
	if err != nil || !res.OK || res.Events != int64(len(want)) {
		t.Fatalf("verify: %+v %v", res, err)
	}
}

func TestAuditTamperingIsDetected(t *testing.T) {
	cases := []struct {
		name, sql, want string
		seq             int64
	}{
		{"edit actor", `UPDATE approve_tui_audit SET actor = 'mallory' WHERE seq = 5`, "event 5", 5},
		{"edit detail", `UPDATE approve_tui_audit SET detail = '{}' WHERE seq = 8`, "event 8", 8},
		{"edit and rehash one", `UPDATE approve_tui_audit SET outcome = 'ok', hash = prev_hash WHERE seq = 4`, "event 4", 4},
		{"delete middle", `DELETE FROM approve_tui_audit WHERE seq = 3`, "event 3", 3},
		{"delete tail", `DELETE FROM approve_tui_audit WHERE seq >= 8`, "events 8 to 9", 8},
		{"delete everything", `DELETE FROM approve_tui_audit`, "events 1 to 9", 1},
		{"rewrite payload", `UPDATE gateway_approvals SET payload_json = replace(payload_json, 'git push --force', 'echo hi') WHERE approval_id = 'a2'`, "a2", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := auditedStore(t)
			mustExec(t, rawDB(t, s.Path()), tc.sql)
			res, err := s.VerifyAudit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || !strings.Contains(res.Problem, tc.want) || res.BrokenSeq != tc.seq {
				t.Fatalf("verify after %s: %+v", tc.name, res)
			}
		})
	}
}

// No change without its record, no record without its change: make either
// half of a transition fail inside SQLite and check the other half is gone.
func TestTransitionAndAuditShareOneTransaction(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("tx1", "rm -rf /srv/a", model.RiskHigh, c.Now(), time.Hour))
	db := rawDB(t, s.Path())

	failOn(t, db, "approve_tui_audit", "INSERT", "NEW.event = 'approve'")
	if _, err := s.Consume(ctx, "tx1", "tx1", alice); err == nil {
		t.Fatal("consume succeeded although its audit insert failed")
	}
	if r, _ := s.Get(ctx, "tx1"); r.Status != model.StatusPending {
		t.Fatal("the state changed without its audit record")
	}
	dropFail(t, db, "approve_tui_audit")

	failOn(t, db, "gateway_approvals", "UPDATE", "")
	before := countAudit(t, db, `event = 'deny' AND outcome = 'ok'`)
	if _, err := s.Deny(ctx, "tx1", alice, ""); err == nil {
		t.Fatal("deny succeeded although its update failed")
	}
	if n := countAudit(t, db, `event = 'deny' AND outcome = 'ok'`); n != before {
		t.Fatal("an audit record exists for a change that did not happen")
	}
	// The failed attempt itself is on record as a store error.
	if n := countAudit(t, db, `event = 'deny' AND outcome = 'refused' AND reason = 'store_error'`); n != 1 {
		t.Fatalf("store error refusals recorded: %d", n)
	}
	dropFail(t, db, "gateway_approvals")
	if res, _ := s.VerifyAudit(ctx); !res.OK {
		t.Fatalf("chain broken by the failures: %+v", res)
	}
}

// failOn makes every INSERT or UPDATE (op) of table fail where cond holds
// (always when cond is empty), with a trigger in the backend's language.
func failOn(t *testing.T, db *pool, table, op, cond string) {
	t.Helper()
	if testBackend == "postgres" {
		body := `RAISE EXCEPTION 'injected failure';`
		if cond != "" {
			body = `IF ` + cond + ` THEN ` + body + ` END IF;`
		}
		mustExec(t, db, `CREATE FUNCTION fail_`+table+`() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN `+body+` RETURN NEW; END $$`)
		mustExec(t, db, `CREATE TRIGGER fail_`+table+` BEFORE `+op+` ON `+table+` FOR EACH ROW EXECUTE FUNCTION fail_`+table+`()`)
		return
	}
	when := ""
	if cond != "" {
		when = " WHEN " + cond
	}
	mustExec(t, db, `CREATE TRIGGER fail_`+table+` BEFORE `+op+` ON `+table+when+`
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`)
}

func dropFail(t *testing.T, db *pool, table string) {
	t.Helper()
	if testBackend == "postgres" {
		mustExec(t, db, `DROP TRIGGER fail_`+table+` ON `+table)
		return
	}
	mustExec(t, db, `DROP TRIGGER fail_`+table)
}

// An audit log made with AUTOINCREMENT (approve-tui before 2026-12) is
// rebuilt without it at the first writable open, every event and the chain
// unchanged; appends go on from the head, and SQLite's sqlite_sequence is
// no longer written at each decision.
func TestAuditRefitDropsAutoincrement(t *testing.T) {
	sqliteOnly(t, "AUTOINCREMENT is SQLite's")
	path := tempDB(t)
	c := newClock()
	s := openAt(t, path, c)
	mustSubmit(t, s, proposal("refit-001", "rm -rf /a", model.RiskHigh, c.Now(), time.Hour))
	mustSubmit(t, s, proposal("refit-002", "rm -rf /b", model.RiskHigh, c.Now(), time.Hour))
	if _, err := s.Deny(ctx, "refit-001", alice, "no"); err != nil {
		t.Fatal(err)
	}
	before, err := s.Audit(ctx, AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// The table as approve-tui made it before.
	db := rawDB(t, path)
	for _, q := range []string{
		`CREATE TABLE old_audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, approval_id TEXT NOT NULL,
			event TEXT NOT NULL, outcome TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '', actor TEXT NOT NULL,
			surface TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '', prev_hash TEXT NOT NULL, hash TEXT NOT NULL)`,
		`INSERT INTO old_audit SELECT * FROM approve_tui_audit`,
		`DROP TABLE approve_tui_audit`,
		`ALTER TABLE old_audit RENAME TO approve_tui_audit`,
		`CREATE INDEX IF NOT EXISTS approve_tui_audit_by_id ON approve_tui_audit(approval_id, seq)`,
	} {
		mustExec(t, db, q)
	}
	autoinc := func() int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, auditAutoincrement).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var seqRows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_sequence WHERE name = 'approve_tui_audit'`).Scan(&seqRows); err != nil || autoinc() != 1 || seqRows != 1 {
		t.Fatalf("the old table was not made: autoincrement %d, sqlite_sequence rows %d, %v", autoinc(), seqRows, err)
	}

	// A read-only open leaves it as it is, and reads it.
	ro, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if evs, err := ro.Audit(ctx, AuditQuery{Limit: 100}); err != nil || len(evs) != len(before) {
		t.Fatalf("read-only: %d events, %v", len(evs), err)
	}
	ro.Close()
	if autoinc() != 1 {
		t.Fatal("a read-only open changed the file")
	}

	s = openAt(t, path, c)
	if autoinc() != 0 {
		t.Fatal("a writable open left AUTOINCREMENT")
	}
	after, err := s.Audit(ctx, AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("the events changed:\n%+v\n%+v", before, after)
	}
	if _, err := s.Consume(ctx, "refit-002", "refit-002", alice); err != nil {
		t.Fatal(err)
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK || res.Events != int64(len(before)+1) {
		t.Fatalf("verify after the refit and an append: %+v, %v", res, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_sequence WHERE name = 'approve_tui_audit'`).Scan(&seqRows); err != nil || seqRows != 0 {
		t.Fatalf("sqlite_sequence still has the audit log: %d, %v", seqRows, err)
	}
	var idx int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'approve_tui_audit_by_id'`).Scan(&idx); err != nil || idx != 1 {
		t.Fatalf("the index by proposal: %d, %v", idx, err)
	}
}

// An event's detail is read in key order, each value as text: a string as
// it is, anything else as its JSON; a detail that is not an object has
// none.
func TestAuditDetailItems(t *testing.T) {
	e := AuditEvent{Detail: map[string]any{"risk": "high", "attempts": float64(2), "from": []any{"a", "b"}}}
	var got []string
	for _, d := range e.DetailItems() {
		got = append(got, d.Key+"="+d.Text())
	}
	if strings.Join(got, " ") != `attempts=2 from=["a","b"] risk=high` {
		t.Fatalf("%q", got)
	}
	if items := (&AuditEvent{DetailRaw: "not json"}).DetailItems(); len(items) != 0 {
		t.Fatalf("%v", items)
	}
}
