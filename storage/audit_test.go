package storage

import (
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
