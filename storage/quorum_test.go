package storage

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
)

// The two-person rule as the store enforces it (SPEC §3.13): votes, the
// consume that completes a quorum, the refusals, vetoes, voided votes and
// the policy's own versions. Every test runs on both backends.

// admin sets policies.
var admin = model.Actor{Surface: model.SurfaceCLI, Name: "root@ops-1", Person: "root"}

// who is a person of their own on the command line: "NAME@host-NAME".
func who(name string) model.Actor {
	return model.Actor{Surface: model.SurfaceCLI, Name: name + "@host-" + name, Person: name}
}

// sshActor is a person over SSH, as the server makes them: the key's
// comment and fingerprint shown, the person and the verified key set apart.
func sshActor(comment, person, key string) model.Actor {
	return model.Actor{Surface: model.SurfaceSSH, Name: comment + " (" + key + ")", Person: person, Key: key}
}

// putPolicy reads src as a policy file and puts it in force.
func putPolicy(t testing.TB, s *Store, src string) *PolicyVersion {
	t.Helper()
	p, err := config.ParsePolicy("policy.yaml", []byte(src))
	if err != nil {
		t.Fatalf("policy file: %v", err)
	}
	v, _, err := s.SetPolicy(ctx, []byte(src), p, admin)
	if err != nil {
		t.Fatalf("set policy: %v", err)
	}
	return v
}

// highNeeds is a policy asking n approvers for every high-risk proposal.
func highNeeds(n int) string {
	return fmt.Sprintf("policy:\n  - match: {risk: high}\n    approvals: %d\n", n)
}

// submitHigh submits a high-risk proposal (no hardline rule) and reads it
// back.
func submitHigh(t testing.TB, s *Store, c *clock, id string, edit ...func(*model.Proposal)) *Record {
	t.Helper()
	now := time.Now()
	if c != nil {
		now = c.Now()
	}
	p := proposal(id, "systemctl stop postgresql", model.RiskHigh, now, time.Hour)
	for _, e := range edit {
		e(p)
	}
	mustSubmit(t, s, p)
	rec, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// approve is one approval naming the payload read.
func approve(s *Store, rec *Record, a model.Actor) (*Record, error) {
	return s.ConsumeRead(ctx, rec.ApprovalID, rec.ApprovalID, rec.PayloadSHA256, a)
}

func wantVote(t testing.TB, err error, votes, short int) *VoteRecorded {
	t.Helper()
	var vr *VoteRecorded
	if !errors.As(err, &vr) {
		t.Fatalf("want a vote recorded, got %v", err)
	}
	if vr.Quorum == nil || len(vr.Quorum.Votes) != votes || vr.Quorum.Votes[votes-1].Ended != "" ||
		vr.Quorum.Standing.Votes != votes || vr.Quorum.Short != short || vr.Quorum.Met() {
		t.Fatalf("vote recorded: want %d votes, %d short; got %+v", votes, short, vr.Quorum)
	}
	return vr
}

func wantRefused(t testing.TB, err error, code string) *RefusedError {
	t.Helper()
	var rf *RefusedError
	if !errors.As(err, &rf) || rf.Code != code {
		t.Fatalf("want refusal %s, got %v", code, err)
	}
	return rf
}

func wantNotPending(t testing.TB, err error) *NotPendingError {
	t.Helper()
	var np *NotPendingError
	if !errors.As(err, &np) {
		t.Fatalf("want not pending, got %v", err)
	}
	return np
}

// rowState reads a row's status and consumed_by as another program does.
func rowState(t testing.TB, db *pool, id string) (status string, by sql.NullString) {
	t.Helper()
	if err := db.QueryRow(`SELECT status, consumed_by FROM gateway_approvals WHERE approval_id = ?`, id).Scan(&status, &by); err != nil {
		t.Fatal(err)
	}
	return status, by
}

func wantPendingRow(t testing.TB, db *pool, id string) {
	t.Helper()
	if status, by := rowState(t, db, id); status != "pending" || by.Valid {
		t.Fatalf("%s: the row says %s by %v; want pending, consumed_by NULL", id, status, by)
	}
}

// events are id's audit events, oldest first.
func events(t testing.TB, s *Store, id string) []AuditEvent {
	t.Helper()
	evs, err := s.Audit(ctx, AuditQuery{ApprovalID: id, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(evs)
	return evs
}

// lastEvent is id's last audit event of that kind and outcome.
func lastEvent(t testing.TB, s *Store, id, event, outcome string) AuditEvent {
	t.Helper()
	evs := events(t, s, id)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Event == event && evs[i].Outcome == outcome {
			return evs[i]
		}
	}
	t.Fatalf("%s: no %s %s event in %+v", id, event, outcome, evs)
	return AuditEvent{}
}

func wantRefusalAudited(t testing.TB, s *Store, id, code string) {
	t.Helper()
	if e := lastEvent(t, s, id, EventApprove, OutcomeRefused); e.Reason != code {
		t.Fatalf("%s: the last refusal is audited as %q, want %q", id, e.Reason, code)
	}
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, x := range list {
		out[i], _ = x.(string)
	}
	return out
}

func wantVotes(t testing.TB, s *Store, id string, ended ...string) []Vote {
	t.Helper()
	vs, err := s.Votes(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Ended)
		if (v.Ended == "") != (v.EndedAt == nil) {
			t.Fatalf("%s: vote %+v: ended and ended_at disagree", id, v)
		}
	}
	if !slices.Equal(got, ended) {
		t.Fatalf("%s: votes ended %q, want %q (%+v)", id, got, ended, vs)
	}
	return vs
}

// newRawStore is newStore with a plain connection to the same database.
func newRawStore(t testing.TB) (*Store, *clock, *pool) {
	t.Helper()
	path := tempDB(t)
	c := newClock()
	return openAt(t, path, c), c, rawDB(t, path)
}

func payloadOf(t testing.TB, db *pool, id string) string {
	t.Helper()
	var payload string
	if err := db.QueryRow(`SELECT payload_json FROM gateway_approvals WHERE approval_id = ?`, id).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	return payload
}

func verifyOK(t testing.TB, s *Store) {
	t.Helper()
	res, err := s.VerifyAudit(ctx)
	if err != nil || !res.OK {
		t.Fatalf("audit: %+v %v", res, err)
	}
}

// 1. Below the quorum an approval is a vote: committed, audited, the row
// untouched; the vote that completes it consumes, naming every approver.
func TestQuorumVotesThenConsumes(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("quorum-%d", n), func(t *testing.T) {
			path := tempDB(t)
			c := newClock()
			s := openAt(t, path, c)
			db := rawDB(t, path)
			pv := putPolicy(t, s, highNeeds(n))
			rec := submitHigh(t, s, c, "quorum-stop-pg")
			people := []model.Actor{who("alice"), who("bob"), who("carol")}[:n]
			people[0] = sshActor("alice@laptop", "alice", "SHA256:aaa")
			var names []string
			for _, a := range people {
				names = append(names, a.String())
			}
			if _, err := approve(s, rec, watcher); !errors.As(err, new(*ReadOnlyError)) {
				t.Fatalf("a watcher voted: %v", err)
			}
			wantVotes(t, s, rec.ApprovalID)
			for k := 1; k < n; k++ {
				_, err := approve(s, rec, people[k-1])
				vr := wantVote(t, err, k, n-k)
				if got := vr.Quorum.Progress(); got != fmt.Sprintf("%d of %d approvals", k, n) {
					t.Fatalf("progress %q", got)
				}
				if vr.Quorum.Policy == nil || vr.Quorum.Policy.Version != pv.Version || !strings.Contains(err.Error(), "still needed") {
					t.Fatalf("vote: %v %+v", err, vr.Quorum.Policy)
				}
				wantPendingRow(t, db, rec.ApprovalID)
				q, err := s.Quorum(ctx, rec)
				if err != nil || q == nil || !slices.Equal(q.Voters(), names[:k]) || q.Met() {
					t.Fatalf("quorum after %d votes: %+v %v", k, q, err)
				}
				if got, _ := s.Get(ctx, rec.ApprovalID); got.EffectiveStatus != model.StatusPending {
					t.Fatalf("the store reads %s after a vote", got.EffectiveStatus)
				}
				c.Advance(time.Second)
			}
			if got := countAudit(t, db, `approval_id = ? AND event = 'vote' AND outcome = 'ok'`, rec.ApprovalID); got != n-1 {
				t.Fatalf("%d vote events, want %d", got, n-1)
			}
			done, err := approve(s, rec, people[n-1])
			if err != nil || done.Status != model.StatusConsumed {
				t.Fatalf("the completing vote: %v", err)
			}
			want := strings.Join(names, ", ")
			if done.ConsumedBy != want {
				t.Fatalf("consumed_by %q, want %q", done.ConsumedBy, want)
			}
			if status, by := rowState(t, db, rec.ApprovalID); status != "consumed" || by.String != want {
				t.Fatalf("the row says %s by %v", status, by)
			}
			vs := wantVotes(t, s, rec.ApprovalID, slices.Repeat([]string{VoteConsumed}, n)...)
			for i, v := range vs {
				if v.Actor != names[i] || v.PayloadSHA256 != rec.PayloadSHA256 || v.ApprovalID != rec.ApprovalID {
					t.Fatalf("vote %d: %+v", i, v)
				}
			}
			if vs[0].Key != "SHA256:aaa" || vs[0].Person != "alice" || vs[0].Surface != "ssh" {
				t.Fatalf("the ssh vote: %+v", vs[0])
			}
			e := lastEvent(t, s, rec.ApprovalID, EventApprove, OutcomeOK)
			if got := strs(e.Detail["approvers"]); !slices.Equal(got, names) ||
				e.Detail["quorum"] != float64(n) || e.Detail["policy_version"] != float64(pv.Version) {
				t.Fatalf("approve detail %v", e.Detail)
			}
			// Nothing more counts.
			_, err = approve(s, rec, who("dave"))
			if np := wantNotPending(t, err); np.By != want {
				t.Fatalf("not pending by %q", np.By)
			}
			// A proposal no rule matches takes one approver, as without a
			// policy, and leaves no vote.
			low := proposal("quorum-low-risk", "ls -la", model.RiskLow, c.Now(), time.Hour)
			mustSubmit(t, s, low)
			if r, err := s.Consume(ctx, low.ApprovalID, low.ApprovalID, who("dave")); err != nil || r.ConsumedBy != "dave@host-dave via cli" {
				t.Fatalf("an unruled proposal: %v", err)
			}
			wantVotes(t, s, low.ApprovalID)
			if e := lastEvent(t, s, low.ApprovalID, EventApprove, OutcomeOK); e.Detail["approvers"] != nil {
				t.Fatalf("an unruled approval has approvers: %v", e.Detail)
			}
			verifyOK(t, s)
		})
	}
}

// 2. Real processes race their votes: each worker is a person of its own,
// voting on every id. Each id is consumed once, by exactly quorum distinct
// people, never fewer; every other attempt is a vote or a loss. In the
// "final" case all but one vote are cast beforehand, and the four workers
// race for the last one only.
func TestQuorumRaceAcrossProcesses(t *testing.T) {
	const workers = 4
	scale := 1
	if testing.Short() {
		scale = 5
	}
	for _, tc := range []struct {
		name              string
		ids, quorum, seed int
	}{{"quorum-2", 500, 2, 0}, {"quorum-3", 500, 3, 0}, {"quorum-3-final", 150, 3, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			quorum, n := tc.quorum, tc.ids/scale
			path := tempDB(t)
			s := openAt(t, path, nil)
			putPolicy(t, s, highNeeds(quorum))
			now := time.Now()
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("vote-%03d-%s", i, model.NewID())
				mustSubmit(t, s, proposal(ids[i], "systemctl stop postgresql", model.RiskHigh, now, time.Hour))
				for k := 0; k < tc.seed; k++ {
					_, err := s.Consume(ctx, ids[i], ids[i], who(fmt.Sprintf("seed%d", k)))
					wantVote(t, err, k+1, quorum-k-1)
				}
			}
			outs := raceVoters(t, path, workers, ids)

			won := map[string]string{}
			voted := map[string][]string{}
			lost := map[string]int{}
			for w, lines := range outs {
				me := fmt.Sprintf("worker-%d@host-%d via cli", w, w)
				if len(lines) != n {
					t.Fatalf("worker %d answered %d of %d ids: %q", w, len(lines), n, lines)
				}
				for _, line := range lines {
					verb, rest, _ := strings.Cut(line, " ")
					id, by, _ := strings.Cut(rest, " ")
					switch verb {
					case "won":
						if prev, ok := won[id]; ok {
							t.Fatalf("%s consumed twice: by %s and %s", id, prev, me)
						}
						won[id] = me
					case "voted":
						voted[id] = append(voted[id], me)
					case "lost":
						lost[id]++
						if names := strings.Split(strings.TrimPrefix(by, "by "), ", "); len(names) != quorum {
							t.Fatalf("a loser was told %q: want the %d approvers", line, quorum)
						}
					default:
						t.Fatalf("worker %d: %q", w, line)
					}
				}
			}
			if len(won) != n {
				t.Fatalf("%d of %d ids consumed", len(won), n)
			}
			wins := map[string]int{}
			for _, w := range won {
				wins[w]++
			}
			t.Logf("consumes by worker: %v", wins)
			if len(wins) < 2 {
				t.Fatalf("one worker consumed everything (%v): that was no race", wins)
			}
			db := rawDB(t, path)
			rows, err := db.Query(`SELECT approval_id, status, consumed_by FROM gateway_approvals`)
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				status string
				by     sql.NullString
			}
			table := map[string]row{}
			for rows.Next() {
				var id string
				var r row
				if err := rows.Scan(&id, &r.status, &r.by); err != nil {
					t.Fatal(err)
				}
				table[id] = r
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if wantVoted, wantLost := quorum-1-tc.seed, workers-quorum+tc.seed; len(voted[id]) != wantVoted || lost[id] != wantLost {
					t.Fatalf("%s: %d votes and %d losses, want %d and %d", id, len(voted[id]), lost[id], wantVoted, wantLost)
				}
				status, by := table[id].status, table[id].by
				names := strings.Split(by.String, ", ")
				if status != "consumed" || len(names) != quorum || !slices.Contains(names, won[id]) {
					t.Fatalf("%s: the row says %s by %q; won by %s", id, status, by.String, won[id])
				}
				seen := map[string]bool{}
				for _, name := range names {
					if seen[name] {
						t.Fatalf("%s: %s counted twice in %q", id, name, by.String)
					}
					seen[name] = true
				}
				for _, v := range voted[id] {
					if !seen[v] {
						t.Fatalf("%s: %s voted but consumed_by is %q", id, v, by.String)
					}
				}
			}
			if got := countAudit(t, db, `event = 'approve' AND outcome = 'ok'`); got != n {
				t.Fatalf("%d approve events, want %d", got, n)
			}
			if got := countAudit(t, db, `event = 'vote' AND outcome = 'ok'`); got != n*(quorum-1) {
				t.Fatalf("%d vote events, want %d", got, n*(quorum-1))
			}
			if got := countAudit(t, db, `event = 'approve' AND outcome = 'refused' AND reason = 'not_pending'`); got != n*(workers-quorum+tc.seed) {
				t.Fatalf("%d not_pending refusals, want %d", got, n*(workers-quorum+tc.seed))
			}
			if got := countAudit(t, db, `outcome = 'refused' AND reason <> 'not_pending'`); got != 0 {
				t.Fatalf("%d other refusals", got)
			}
			evs, err := s.Audit(ctx, AuditQuery{Limit: 100 * n})
			if err != nil {
				t.Fatal(err)
			}
			approved := 0
			for _, e := range evs {
				if e.Event != EventApprove || e.Outcome != OutcomeOK {
					continue
				}
				approved++
				a := strs(e.Detail["approvers"])
				if len(a) != quorum || len(slices.Compact(slices.Sorted(slices.Values(a)))) != quorum || e.Detail["quorum"] != float64(quorum) {
					t.Fatalf("%s approved by %q, quorum %v", e.ApprovalID, a, e.Detail["quorum"])
				}
				if by := table[e.ApprovalID].by; by.String != strings.Join(a, ", ") {
					t.Fatalf("%s: audit approvers %q, consumed_by %q", e.ApprovalID, a, by.String)
				}
			}
			if approved != n {
				t.Fatalf("%d approve events read, want %d", approved, n)
			}
			var counting, consumed int
			if err := db.QueryRow(`SELECT count(*) FROM approve_tui_votes WHERE ended = ''`).Scan(&counting); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`SELECT count(*) FROM approve_tui_votes WHERE ended = 'consumed'`).Scan(&consumed); err != nil {
				t.Fatal(err)
			}
			if counting != 0 || consumed != n*quorum {
				t.Fatalf("votes: %d still counting, %d consumed; want 0 and %d", counting, consumed, n*quorum)
			}
			var odd int
			if err := db.QueryRow(`SELECT count(*) FROM (SELECT approval_id FROM approve_tui_votes GROUP BY approval_id
				HAVING count(*) <> ? OR count(DISTINCT person) <> ?) odd`, quorum, quorum).Scan(&odd); err != nil {
				t.Fatal(err)
			}
			if odd != 0 {
				t.Fatalf("%d proposals have other than %d votes by %d people", odd, quorum, quorum)
			}
			verifyOK(t, s)
		})
	}
}

// raceVoters starts workers vote-all processes on ids, lets them go at once
// when all are ready, and returns each one's lines.
func raceVoters(t *testing.T, path string, workers int, ids []string) [][]string {
	t.Helper()
	lists := make([][]string, workers)
	for w := range lists {
		lists[w] = ids
	}
	// The pace makes it a race: without it, on SQLite, whichever process
	// holds the write lock re-takes it on every commit.
	outs := startWorkers(t, "vote-all", path, lists, "STORAGE_TEST_PACE=2ms")()
	if t.Failed() {
		t.FailNow()
	}
	return outs
}

// 3. One person counts once, whatever the surface, host or key comment.
func TestQuorumSamePersonTwiceIsRefused(t *testing.T) {
	s, c, db := newRawStore(t)
	putPolicy(t, s, highNeeds(2))

	byName := submitHigh(t, s, c, "dup-by-name")
	_, err := approve(s, byName, sshActor("alice@laptop", "alice", "SHA256:aaa"))
	wantVote(t, err, 1, 1)
	for _, again := range []model.Actor{
		{Surface: model.SurfaceCLI, Name: "alice@ops-1", Person: "alice"},
		{Surface: model.SurfaceTUI, Name: "ALICE@ops-2", Person: "ALICE"},
		{Surface: model.SurfaceCLI, Name: "root@ops-1", Person: "alice"}, // sudo
		sshActor("laptop-key", "laptop-key", "SHA256:aaa"),
	} {
		_, err = approve(s, byName, again)
		rf := wantRefused(t, err, RefusedDuplicateApprover)
		if !strings.Contains(rf.Reason, "alice@laptop (SHA256:aaa) via ssh") {
			t.Fatalf("the refusal does not name the first vote: %s", rf.Reason)
		}
		wantRefusalAudited(t, s, byName.ApprovalID, RefusedDuplicateApprover)
	}
	wantVotes(t, s, byName.ApprovalID, "")
	wantPendingRow(t, db, byName.ApprovalID)

	byKey := submitHigh(t, s, c, "dup-by-key")
	_, err = approve(s, byKey, sshActor("alice", "alice", "SHA256:k"))
	wantVote(t, err, 1, 1)
	_, err = approve(s, byKey, sshActor("mallory", "mallory", "SHA256:k"))
	if rf := wantRefused(t, err, RefusedDuplicateApprover); !strings.Contains(rf.Reason, "by key SHA256:k") {
		t.Fatalf("reason %q", rf.Reason)
	}
	wantRefusalAudited(t, s, byKey.ApprovalID, RefusedDuplicateApprover)
	// Another key of another person counts.
	if r, err := approve(s, byKey, sshActor("bob", "bob", "SHA256:b")); err != nil ||
		r.ConsumedBy != "alice (SHA256:k) via ssh, bob (SHA256:b) via ssh" {
		t.Fatalf("a second person: %v", err)
	}
	verifyOK(t, s)
}

// 4. Nobody approves their own agent's proposal where a rule applies; with
// no rule applying, the requester approves it alone, as before.
func TestQuorumSelfApproval(t *testing.T) {
	s, c := newStore(t)
	bobs := who("bob")
	// No policy at all: one approver, the requester included.
	free := submitHigh(t, s, c, "self-no-policy", func(p *model.Proposal) { p.Requester = "bob@laptop" })
	if r, err := approve(s, free, bobs); err != nil || r.Status != model.StatusConsumed {
		t.Fatalf("without a policy: %v", err)
	}

	putPolicy(t, s, highNeeds(2))
	mine := submitHigh(t, s, c, "self-requester", func(p *model.Proposal) { p.Requester = "bob@laptop" })
	_, err := approve(s, mine, bobs)
	if rf := wantRefused(t, err, RefusedSelfApproval); !strings.Contains(rf.Reason, "requester bob@laptop") {
		t.Fatalf("reason %q", rf.Reason)
	}
	wantRefusalAudited(t, s, mine.ApprovalID, RefusedSelfApproval)
	_, err = approve(s, mine, who("alice"))
	wantVote(t, err, 1, 1)
	_, err = approve(s, mine, sshActor("Bob", "Bob", "SHA256:bbb"))
	wantRefused(t, err, RefusedSelfApproval)
	if q, err := s.Quorum(ctx, mine); err != nil || !slices.Equal(q.Requesters, []string{"bob"}) {
		t.Fatalf("requesters %+v %v", q, err)
	}

	viaRun := submitHigh(t, s, c, "self-origin", func(p *model.Proposal) {
		p.Requester, p.Origin = "approve-tui-run", "bob@laptop"
	})
	if viaRun.Origin != "bob@laptop" {
		t.Fatalf("origin %q was not kept", viaRun.Origin)
	}
	_, err = approve(s, viaRun, bobs)
	if rf := wantRefused(t, err, RefusedSelfApproval); !strings.Contains(rf.Reason, "submitted by bob@laptop") {
		t.Fatalf("reason %q", rf.Reason)
	}
	wantRefusalAudited(t, s, viaRun.ApprovalID, RefusedSelfApproval)
	wantVotes(t, s, viaRun.ApprovalID)

	// A rule that does not match: the requester approves alone.
	low := proposal("self-low-risk", "ls -la", model.RiskLow, c.Now(), time.Hour)
	low.Requester = "bob@laptop"
	mustSubmit(t, s, low)
	if r, err := s.Consume(ctx, low.ApprovalID, low.ApprovalID, bobs); err != nil || r.ConsumedBy != bobs.String() {
		t.Fatalf("no rule applies: %v", err)
	}
	verifyOK(t, s)
}

// 5. A deny vetoes at once, whatever votes exist.
func TestQuorumDenyVetoes(t *testing.T) {
	s, c, db := newRawStore(t)
	putPolicy(t, s, highNeeds(3))
	rec := submitHigh(t, s, c, "veto-stop-pg")
	_, err := approve(s, rec, who("alice"))
	wantVote(t, err, 1, 2)
	c.Advance(time.Second)
	_, err = approve(s, rec, who("bob"))
	wantVote(t, err, 2, 1)
	d, err := s.Deny(ctx, rec.ApprovalID, who("carol"), "not during business hours")
	if err != nil || d.Status != model.StatusDenied {
		t.Fatalf("deny: %v", err)
	}
	wantVotes(t, s, rec.ApprovalID, VoteDenied, VoteDenied)
	e := lastEvent(t, s, rec.ApprovalID, EventDeny, OutcomeOK)
	if got := strs(e.Detail["vetoed_votes"]); !slices.Equal(got, []string{who("alice").String(), who("bob").String()}) {
		t.Fatalf("deny detail %v", e.Detail)
	}
	if status, _ := rowState(t, db, rec.ApprovalID); status != "denied" {
		t.Fatalf("the row says %s", status)
	}
	_, err = approve(s, rec, who("dave"))
	wantNotPending(t, err)
	// A deny with no votes has no vetoed_votes.
	plain := submitHigh(t, s, c, "veto-no-votes")
	if _, err := s.Deny(ctx, plain.ApprovalID, who("carol"), ""); err != nil {
		t.Fatal(err)
	}
	if e := lastEvent(t, s, plain.ApprovalID, EventDeny, OutcomeOK); e.Detail["vetoed_votes"] != nil {
		t.Fatalf("deny detail %v", e.Detail)
	}
	verifyOK(t, s)
}

// 6. A vote names the payload it read: rewritten behind the store's back,
// the payload is another proposal and the vote no longer counts (a row
// Hermes wrote, with no submit record: one approve-tui submitted is
// refused as tampered, TestTamperedPayloadIsRefused). Expiry ends votes
// too.
func TestQuorumRewriteAndExpiryVoidVotes(t *testing.T) {
	s, c, db := newRawStore(t)
	putPolicy(t, s, highNeeds(2))
	insertRaw(t, db, proposal("rewrite-stop-pg", "systemctl stop postgresql", model.RiskHigh, c.Now(), time.Hour))
	rec, err := s.Get(ctx, "rewrite-stop-pg")
	if err != nil {
		t.Fatal(err)
	}
	_, err = approve(s, rec, who("alice"))
	wantVote(t, err, 1, 1)

	// A fork rewrites the payload (another cwd: the same command elsewhere).
	var payload map[string]any
	orig := payloadOf(t, db, rec.ApprovalID)
	if err := json.Unmarshal([]byte(orig), &payload); err != nil {
		t.Fatal(err)
	}
	payload["cwd"] = "/srv/other"
	b, _ := json.Marshal(payload)
	mustExec(t, db, `UPDATE gateway_approvals SET payload_json = ? WHERE approval_id = ?`, string(b), rec.ApprovalID)
	now, err := s.Get(ctx, rec.ApprovalID)
	if err != nil || now.PayloadSHA256 == rec.PayloadSHA256 || now.Corrupt != "" {
		t.Fatalf("after the rewrite: %+v %v", now, err)
	}
	q, err := s.Quorum(ctx, now)
	if err != nil || q == nil || len(q.Votes) != 0 || q.Standing.Votes != 0 || q.Short != 2 {
		t.Fatalf("the old vote still counts: %+v %v", q, err)
	}
	// The old hash is refused; the new one is a first vote again.
	c.Advance(time.Second)
	_, err = approve(s, rec, who("bob"))
	wantRefused(t, err, RefusedContentChanged)
	_, err = approve(s, now, who("bob"))
	vr := wantVote(t, err, 1, 1)
	if vr.Quorum.Votes[0].Actor != who("bob").String() {
		t.Fatalf("votes %+v", vr.Quorum.Votes)
	}
	wantVotes(t, s, rec.ApprovalID, VoteContentChanged, "")
	void := lastEvent(t, s, rec.ApprovalID, EventVoteVoid, OutcomeOK)
	if void.Reason != VoteContentChanged || void.Detail["voter"] != who("alice").String() ||
		void.Detail["payload_sha256"] != rec.PayloadSHA256 || void.Detail["now_sha256"] != now.PayloadSHA256 {
		t.Fatalf("vote_void %+v", void)
	}
	// Alice reads the new payload and votes again: that completes it.
	c.Advance(time.Second)
	done, err := approve(s, now, who("alice"))
	if err != nil || done.ConsumedBy != who("bob").String()+", "+who("alice").String() {
		t.Fatalf("the completing vote: %v", err)
	}
	wantVotes(t, s, rec.ApprovalID, VoteContentChanged, VoteConsumed, VoteConsumed)
	// The audit chain is intact (the row has no submit record to check).
	verifyOK(t, s)

	// Expiry: the votes end expired, and nothing consumes it.
	exp := proposal("expire-stop-pg", "systemctl stop postgresql", model.RiskHigh, c.Now(), 10*time.Minute)
	mustSubmit(t, s, exp)
	_, err = s.Consume(ctx, exp.ApprovalID, exp.ApprovalID, who("alice"))
	wantVote(t, err, 1, 1)
	c.Advance(11 * time.Minute)
	_, err = s.Consume(ctx, exp.ApprovalID, exp.ApprovalID, who("bob"))
	wantNotPending(t, err)
	ids, err := s.ExpireDue(ctx, model.Actor{Surface: model.SurfaceSystem, Name: "expiry"})
	if err != nil || !slices.Contains(ids, exp.ApprovalID) {
		t.Fatalf("expire: %v %v", ids, err)
	}
	wantVotes(t, s, exp.ApprovalID, VoteExpired)
	_, err = s.Consume(ctx, exp.ApprovalID, exp.ApprovalID, who("bob"))
	if np := wantNotPending(t, err); np.Status != model.StatusExpired {
		t.Fatalf("not pending as %s", np.Status)
	}
	if status, by := rowState(t, db, exp.ApprovalID); status != "expired" || by.Valid {
		t.Fatalf("the row says %s by %v", status, by)
	}
	verifyOK(t, s)
}

// 7. Groups: places kept for a group are filled only by its members, and
// of several rules the strictest demand wins.
func TestQuorumGroups(t *testing.T) {
	const groups = "groups:\n  dba: [alice, dave]\n"
	t.Run("one-from-dba", func(t *testing.T) {
		s, c := newStore(t)
		putPolicy(t, s, groups+"policy:\n  - match: {risk: high}\n    approvals: 2\n    from: {dba: 1}\n")
		rec := submitHigh(t, s, c, "group-one-dba")
		_, err := approve(s, rec, who("carol"))
		vr := wantVote(t, err, 1, 1)
		if got := vr.Quorum.Needed(); got != "one more approver from dba" {
			t.Fatalf("needed %q", got)
		}
		_, err = approve(s, rec, who("erin"))
		if rf := wantRefused(t, err, RefusedNotEligible); !strings.Contains(rf.Reason, "one more approver from dba") {
			t.Fatalf("reason %q", rf.Reason)
		}
		wantRefusalAudited(t, s, rec.ApprovalID, RefusedNotEligible)
		wantVotes(t, s, rec.ApprovalID, "")
		if r, err := approve(s, rec, sshActor("Alice", "Alice", "SHA256:a1")); err != nil ||
			r.Status != model.StatusConsumed {
			t.Fatalf("a dba completes it: %v", err)
		}
		// dba first, anyone second.
		rec = submitHigh(t, s, c, "group-dba-first")
		_, err = approve(s, rec, who("dave"))
		if vr := wantVote(t, err, 1, 1); vr.Quorum.Needed() != "one more approver" {
			t.Fatalf("needed %q", vr.Quorum.Needed())
		}
		if _, err := approve(s, rec, who("erin")); err != nil {
			t.Fatalf("anyone completes it: %v", err)
		}
		verifyOK(t, s)
	})
	t.Run("two-from-dba", func(t *testing.T) {
		s, c := newStore(t)
		putPolicy(t, s, groups+"policy:\n  - match: {risk: high}\n    approvals: 2\n    from: {dba: 2}\n")
		rec := submitHigh(t, s, c, "group-two-dba")
		_, err := approve(s, rec, who("carol"))
		wantRefused(t, err, RefusedNotEligible)
		_, err = approve(s, rec, who("alice"))
		if vr := wantVote(t, err, 1, 1); vr.Quorum.Needed() != "one more approver from dba" {
			t.Fatalf("needed %q", vr.Quorum.Needed())
		}
		_, err = approve(s, rec, who("carol"))
		wantRefused(t, err, RefusedNotEligible)
		if r, err := approve(s, rec, who("dave")); err != nil || r.ConsumedBy != who("alice").String()+", "+who("dave").String() {
			t.Fatalf("two dbas: %v", err)
		}
		verifyOK(t, s)
	})
	t.Run("overlapping-rules", func(t *testing.T) {
		s, c := newStore(t)
		putPolicy(t, s, groups+`policy:
  - match: {risk: high}
    approvals: 2
  - match: {command: "psql *"}
    approvals: 3
    from: {dba: 1}
`)
		rec := submitHigh(t, s, c, "overlap-psql", func(p *model.Proposal) { p.Command = "psql -c 'DELETE FROM sessions'" })
		q, err := s.Quorum(ctx, rec)
		if err != nil || q == nil || q.Approvals != 3 || q.From["dba"] != 1 || !slices.Equal(q.Rules, []int{0, 1}) {
			t.Fatalf("requirement %+v %v", q, err)
		}
		_, err = approve(s, rec, who("carol"))
		wantVote(t, err, 1, 2)
		c.Advance(time.Second)
		_, err = approve(s, rec, who("erin"))
		wantVote(t, err, 2, 1)
		_, err = approve(s, rec, who("frank"))
		wantRefused(t, err, RefusedNotEligible)
		if r, err := approve(s, rec, who("alice")); err != nil || len(strings.Split(r.ConsumedBy, ", ")) != 3 {
			t.Fatalf("the dba completes it: %v", err)
		}
		// Only the first rule: two approvers, anyone.
		only := submitHigh(t, s, c, "overlap-stop")
		low := proposal("overlap-low", "ls", model.RiskLow, c.Now(), time.Hour)
		mustSubmit(t, s, low)
		lowRec, _ := s.Get(ctx, low.ApprovalID)
		qs, pv, err := s.Quorums(ctx, []*Record{only, lowRec})
		if err != nil || pv == nil || pv.Version != 1 || len(qs) != 1 || qs[only.ApprovalID] == nil ||
			qs[only.ApprovalID].Approvals != 2 || qs[only.ApprovalID].From != nil {
			t.Fatalf("quorums %+v %+v %v", qs, pv, err)
		}
		_, err = approve(s, only, who("carol"))
		wantVote(t, err, 1, 1)
		if _, err := approve(s, only, who("erin")); err != nil {
			t.Fatal(err)
		}
		verifyOK(t, s)
	})
}

// 8. The tier-2 phrase gate votes as the id gate does.
func TestQuorumTier2Phrase(t *testing.T) {
	s, py := openUpgraded(t)
	putPolicy(t, s, "policy:\n  - match: {}\n    approvals: 2\n")

	id := py.run("submit", "restart-tier2", "vaultwarden", "0427")
	r, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	const phrase = "RESTART-TIER2 VAULTWARDEN 0427"
	_, err = s.ConsumePhrase(ctx, id, phrase, r.PayloadSHA256, PhraseOptions{}, who("alice"))
	wantVote(t, err, 1, 1)
	if m := py.get(id); m["status"] != "pending_confirm" || m["consumed_by"] != nil {
		t.Fatalf("python reads %v", m)
	}
	_, err = s.ConsumePhrase(ctx, id, phrase, r.PayloadSHA256, PhraseOptions{}, sshActor("alice", "alice", "SHA256:x"))
	wantRefused(t, err, RefusedDuplicateApprover)
	wantRefusalAudited(t, s, id, RefusedDuplicateApprover)
	// By its id, a tier-2 proposal is refused before any vote.
	_, err = s.ConsumeRead(ctx, id, id, r.PayloadSHA256, who("bob"))
	wantRefused(t, err, RefusedTextConfirm)
	rec, err := s.ConsumePhrase(ctx, id, phrase, r.PayloadSHA256, PhraseOptions{}, who("bob"))
	want := who("alice").String() + ", " + who("bob").String()
	if err != nil || rec.Status != model.StatusConsumed || rec.ConsumedBy != want {
		t.Fatalf("the completing phrase: %+v %v", rec, err)
	}
	if m := py.get(id); m["status"] != "consumed" || m["consumed_by"] != want {
		t.Fatalf("python reads %v", m)
	}
	wantVotes(t, s, id, VoteConsumed, VoteConsumed)
	e := lastEvent(t, s, id, EventApprove, OutcomeOK)
	if e.Detail["text_confirm"] != true || len(strs(e.Detail["approvers"])) != 2 || e.Detail["quorum"] != float64(2) {
		t.Fatalf("approve detail %v", e.Detail)
	}

	// Wrong phrases block it with a vote cast: the vote ends blocked.
	bad := py.run("submit", "restart-tier2", "postgres", "1111")
	_, err = s.ConsumePhrase(ctx, bad, "RESTART-TIER2 POSTGRES 1111", "", PhraseOptions{}, who("alice"))
	wantVote(t, err, 1, 1)
	for i := 0; i < DefaultPhraseLimit; i++ {
		_, err = s.ConsumePhrase(ctx, bad, "RESTART-TIER2 POSTGRES 9999", "", PhraseOptions{}, who("bob"))
	}
	wantRefused(t, err, RefusedPhraseLimit)
	wantVotes(t, s, bad, VoteBlocked)
	verifyOK(t, s)
}

// 9. The policy's versions: audited, no-ops ignored, watchers refused; a
// policy that cannot be read stops every approval, never deny.
func TestQuorumSetPolicy(t *testing.T) {
	s, c, db := newRawStore(t)
	if v, err := s.Policy(ctx); err != nil || v != nil {
		t.Fatalf("a new store has a policy: %+v %v", v, err)
	}
	src1 := highNeeds(2)
	p1, err := config.ParsePolicy("p.yaml", []byte(src1))
	if err != nil {
		t.Fatal(err)
	}
	v1, changed, err := s.SetPolicy(ctx, []byte(src1), p1, admin)
	if err != nil || !changed || v1.Version != 1 || v1.SHA256 != sha256Hex([]byte(src1)) || v1.SetBy != admin.String() {
		t.Fatalf("first set: %+v %v %v", v1, changed, err)
	}
	if v1.Label() != "v1 "+v1.SHA256[:8] {
		t.Fatalf("label %q", v1.Label())
	}
	again, changed, err := s.SetPolicy(ctx, []byte(src1), p1, who("alice"))
	if err != nil || changed || again.Version != 1 {
		t.Fatalf("same source: %+v %v %v", again, changed, err)
	}
	if n := countAudit(t, db, `event = 'policy_set'`); n != 1 {
		t.Fatalf("%d policy_set events after a no-op, want 1", n)
	}
	src2 := "# two-person rule\t(ops)\n" + highNeeds(3)
	p2, _ := config.ParsePolicy("p.yaml", []byte(src2))
	v2, changed, err := s.SetPolicy(ctx, []byte(src2), p2, admin)
	if err != nil || !changed || v2.Version != 2 {
		t.Fatalf("second set: %+v %v %v", v2, changed, err)
	}
	e := lastEvent(t, s, PolicyRef, EventPolicySet, OutcomeOK)
	if e.Detail["old_sha256"] != v1.SHA256 || e.Detail["new_sha256"] != v2.SHA256 || e.Detail["version"] != float64(2) ||
		e.Actor != admin.Name {
		t.Fatalf("policy_set event %+v", e)
	}
	if cur, err := s.Policy(ctx); err != nil || cur.Version != 2 || cur.Source != src2 || sha256Hex([]byte(cur.Source)) != cur.SHA256 ||
		cur.Policy.Rules[0].Approvals != 3 {
		t.Fatalf("in force: %+v %v", cur, err)
	}
	// A watcher cannot set it; nor is an invalid policy taken.
	if _, _, err := s.SetPolicy(ctx, []byte(src1), p1, watcher); !errors.As(err, new(*ReadOnlyError)) {
		t.Fatalf("a watcher set the policy: %v", err)
	}
	if e := lastEvent(t, s, PolicyRef, EventPolicySet, OutcomeRefused); e.Reason != "read_only" {
		t.Fatalf("the watcher's attempt is audited as %+v", e)
	}
	bad := &policy.Policy{Rules: []policy.Rule{{Approvals: 0}}}
	if _, _, err := s.SetPolicy(ctx, []byte("policy: [{match: {}, approvals: 0}]"), bad, admin); !errors.As(err, new(*model.ValidationError)) {
		t.Fatalf("an invalid policy: %v", err)
	}
	if _, _, err := s.SetPolicy(ctx, []byte(src1+"# \x00\xff\n"), p1, admin); !errors.As(err, new(*model.ValidationError)) {
		t.Fatalf("a policy file that is not text: %v", err)
	}
	if cur, _ := s.Policy(ctx); cur.Version != 2 {
		t.Fatalf("version %d after refused sets", cur.Version)
	}

	// Votes count under the version in force at each vote.
	rec := submitHigh(t, s, c, "policy-stop-pg")
	_, err = approve(s, rec, who("alice"))
	if vr := wantVote(t, err, 1, 2); vr.Quorum.Policy.Version != 2 {
		t.Fatalf("voted under %s", vr.Quorum.Policy.Label())
	}

	// The stored rules turn to garbage: approvals fail closed, deny works.
	mustExec(t, db, `UPDATE approve_tui_policy SET rules = ? WHERE version = 2`, `{"policy": "garbage`)
	_, err = approve(s, rec, who("bob"))
	if rf := wantRefused(t, err, RefusedPolicyUnreadable); rf.ID != rec.ApprovalID || !strings.Contains(err.Error(), "proposal "+rec.ApprovalID+" ") {
		t.Fatalf("the refusal names %q: %v", rf.ID, err)
	}
	wantRefusalAudited(t, s, rec.ApprovalID, RefusedPolicyUnreadable)
	low := proposal("policy-low-risk", "ls -la", model.RiskLow, c.Now(), time.Hour)
	mustSubmit(t, s, low)
	_, err = s.Consume(ctx, low.ApprovalID, low.ApprovalID, who("bob"))
	wantRefused(t, err, RefusedPolicyUnreadable)
	if _, err := s.Policy(ctx); !errors.As(err, new(*RefusedError)) {
		t.Fatalf("reading an unreadable policy: %v", err)
	}
	if _, _, err := s.Quorums(ctx, []*Record{rec}); err == nil {
		t.Fatal("quorums under an unreadable policy")
	}
	if d, err := s.Deny(ctx, rec.ApprovalID, who("bob"), ""); err != nil || d.Status != model.StatusDenied {
		t.Fatalf("deny under an unreadable policy: %v", err)
	}
	wantVotes(t, s, rec.ApprovalID, VoteDenied)
	// Valid JSON that is not a valid policy fails closed too.
	mustExec(t, db, `UPDATE approve_tui_policy SET rules = ? WHERE version = 2`, `{"policy": [{"match": {}, "approvals": 0}]}`)
	_, err = s.Consume(ctx, low.ApprovalID, low.ApprovalID, who("bob"))
	wantRefused(t, err, RefusedPolicyUnreadable)
	for _, rules := range []string{`{"policy": [], "extra": 1}`, `null`, `{}`, `{"policy": []} {"policy": []}`} {
		mustExec(t, db, `UPDATE approve_tui_policy SET rules = ? WHERE version = 2`, rules)
		_, err = s.Consume(ctx, low.ApprovalID, low.ApprovalID, who("bob"))
		wantRefused(t, err, RefusedPolicyUnreadable)
	}
	// Setting the same file again replaces the unreadable version.
	v3, changed, err := s.SetPolicy(ctx, []byte(src2), p2, admin)
	if err != nil || !changed || v3.Version != 3 {
		t.Fatalf("set over an unreadable version: %+v %v %v", v3, changed, err)
	}
	// A proposal submitted under the damaged version stays refused: what
	// that version asked of it cannot be known, and no later version
	// lowers it. One submitted now is decided under v3.
	_, err = s.Consume(ctx, low.ApprovalID, low.ApprovalID, who("bob"))
	if rf := wantRefused(t, err, RefusedPolicyUnreadable); !strings.Contains(rf.Reason, "policy v2") {
		t.Fatalf("the refusal does not name v2: %v", err)
	}
	low2 := proposal("policy-low-risk-2", "ls -la", model.RiskLow, c.Now(), time.Hour)
	mustSubmit(t, s, low2)
	if r, err := s.Consume(ctx, low2.ApprovalID, low2.ApprovalID, who("bob")); err != nil || r.Status != model.StatusConsumed {
		t.Fatalf("after the policy is set again: %v", err)
	}
	verifyOK(t, s)
}

// A vote is told to a decision observer (metrics, a server's log) as a
// vote, never as an approval.
func TestQuorumVoteIsObservedAsAVote(t *testing.T) {
	s, c := newStore(t)
	putPolicy(t, s, highNeeds(2))
	rec := submitHigh(t, s, c, "observe-vote")
	var seen []Decision
	octx := WithDecisionObserver(ctx, func(d Decision) { seen = append(seen, d) })
	_, err := s.ConsumeRead(octx, rec.ApprovalID, rec.ApprovalID, rec.PayloadSHA256, who("alice"))
	wantVote(t, err, 1, 1)
	if _, err := s.ConsumeRead(octx, rec.ApprovalID, rec.ApprovalID, rec.PayloadSHA256, who("bob")); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Event != EventVote || seen[0].Outcome != OutcomeOK || seen[1].Event != EventApprove {
		t.Fatalf("observed %+v", seen)
	}
}
