package tui

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The two-person rule as the console shows it: the policy in force in the
// header, votes so far in the list, the votes block in the detail, which
// vote an approval is in the prompt, a vote's outcome, the policy's
// refusals, and a policy the store cannot read.

// twoPerson asks two approvers, one of them from dba, for every proposal
// at high risk.
const twoPerson = `groups:
  dba: [alice, bob]
policy:
  - match: {risk: high}
    approvals: 2
    from: {dba: 1}
`

var (
	admin = model.Actor{Surface: model.SurfaceCLI, Name: "admin@ops-1", Person: "admin"}
	bob   = model.Actor{Surface: model.SurfaceSSH, Name: "bob@desk (SHA256:bobkey)", Person: "bob", Key: "SHA256:bobkey"}
)

// setPolicy puts src in force on s.
func setPolicy(t testing.TB, s *storage.Store, src string) *storage.PolicyVersion {
	t.Helper()
	p, err := config.ParsePolicy("policy.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := s.SetPolicy(context.Background(), []byte(src), p, admin)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// otherHandle is a second store handle on f's file, with its own clock.
func otherHandle(t testing.TB, f *fixture, now time.Time) *storage.Store {
	t.Helper()
	s, err := storage.Open(context.Background(), f.path, storage.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// voteAs approves id on s as actor and wants it recorded as a vote.
func voteAs(t testing.TB, s *storage.Store, id string, actor model.Actor) *storage.VoteRecorded {
	t.Helper()
	_, err := s.ConsumeRead(context.Background(), id, id, "", actor)
	vr, ok := err.(*storage.VoteRecorded)
	if !ok {
		t.Fatalf("approve %s as %s: %v, want a vote recorded", id, actor.Name, err)
	}
	return vr
}

// votesFixture is the demo file under the two-person rule, alice (dba)
// having voted on drop 30 seconds before the console's clock.
func votesFixture(t testing.TB) *fixture {
	t.Helper()
	f := newFixture(t)
	setPolicy(t, f.s, twoPerson)
	voteAs(t, otherHandle(t, f, t0.Add(-30*time.Second)), f.ids["drop"], rival)
	return f
}

// rowOf is the list row (as drawn) of proposal id.
func rowOf(t testing.TB, m *Model, id string) string {
	t.Helper()
	cmd := model.Sanitize(golden.Record(t, m.opt.Store, id).Command, model.Line)
	for _, l := range strings.Split(m.listView(), "\n") {
		if strings.Contains(l, cmd[:min(len(cmd), 20)]) {
			return l
		}
	}
	t.Fatalf("no row for %s in:\n%s", id, m.listView())
	return ""
}

func TestVotesShowAndCount(t *testing.T) {
	f := votesFixture(t)
	var events []Event
	m := New(Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, Label: "votes",
		OnEvent: func(e Event) { events = append(events, e) }})
	m.Update(windowSize(80, 24))
	Settle(m, m.Init())
	drop, summary := f.ids["drop"], f.ids["summary"]

	// The header names the version in force; the list, the votes so far.
	screenHas(t, m, "policy v1 · ", "VOTE")
	if r := rowOf(t, m, drop); !strings.Contains(r, " 1/2 ") {
		t.Fatalf("drop's row: %q", r)
	}
	if r := rowOf(t, m, summary); !strings.Contains(r, " 0/2 ") {
		t.Fatalf("summary's row: %q", r)
	}
	if r := rowOf(t, m, f.ids["low"]); strings.Contains(r, "/2") {
		t.Fatalf("a row no rule applies to: %q", r)
	}
	for _, l := range strings.Split(m.View(), "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Fatalf("a line of %d cells: %q", w, l)
		}
	}

	// The detail: what is required, who voted when, what is left, who may
	// not approve.
	selectThenPress(t, m, drop, "enter")
	screenHas(t, m, "votes      needs 2 approvers, at least one from dba (policy v1 ",
		"✓ alice@laptop via cli, 30s ago", "still needed: one more approver (1 of 2 approvals so far)",
		"not by ops-agent (who asked for it)")

	// The prompt says this approval completes it.
	press(m, "end", "a")
	screenHas(t, m, "vote 2 of 2: alice voted; yours completes the approval (policy v1 ")
	press(m, "esc", "esc")

	// summary: the operator's vote is the first, and leaves one from dba.
	readThenPress(t, m, summary, "a")
	screenHas(t, m, "vote 1 of 2: after you, one more approver from dba is still needed")
	typeText(m, summary)
	press(m, "enter")
	if !strings.Contains(m.note.text, "vote recorded on "+summary+": 1 of 2 approvals; still needed: one more approver from dba") {
		t.Fatalf("after the first vote: %q", m.note.text)
	}
	if e := events[len(events)-2]; e.Kind != "approve" || e.Outcome != OutcomeVoted {
		t.Fatalf("the vote's event: %+v", e)
	}
	if rec := golden.Record(t, f.s, summary); rec.Status != model.StatusPending {
		t.Fatalf("after one vote of two: %s", rec.Status)
	}
	if m.indexOf(summary) < 0 || m.selID != summary {
		t.Fatalf("the proposal voted on left the list (selected %q)", m.selID)
	}
	press(m, "home")
	screenHas(t, m, "✓ oncall@ops-1 via tui, just now (you)")
	if r := rowOf(t, m, summary); !strings.Contains(r, " 1/2 ") {
		t.Fatalf("summary's row after the vote: %q", r)
	}

	// Voting again: the prompt says so, and the store refuses.
	press(m, "a")
	screenHas(t, m, "you voted already (as oncall@ops-1 via tui)")
	typeText(m, summary)
	press(m, "enter")
	if !strings.Contains(m.note.text, "NOT approved, voted already: oncall voted already") {
		t.Fatalf("a second vote: %q", m.note.text)
	}

	// bob (dba), on another handle, completes it: the row leaves the list,
	// approved by both.
	if _, err := otherHandle(t, f, t0).ConsumeRead(t.Context(), summary, summary, "", bob); err != nil {
		t.Fatalf("the completing vote: %v", err)
	}
	Settle(m, m.reload())
	m.View()
	if m.indexOf(summary) >= 0 {
		t.Fatal("a consumed proposal is still listed")
	}
	rec := golden.Record(t, f.s, summary)
	if rec.Status != model.StatusConsumed || rec.ConsumedBy != operator.String()+", "+bob.String() {
		t.Fatalf("consumed %s by %q", rec.Status, rec.ConsumedBy)
	}
	if !strings.Contains(m.note.text, summary+" was approved elsewhere by "+operator.String()+", "+bob.String()) {
		t.Fatalf("the note: %q", m.note.text)
	}

	// The history tells of the votes and the policy in words.
	press(m, "tab")
	screenHas(t, m, "vote recorded", "policy v1 set")
}

// The console's own completing vote consumes, as any approval does.
func TestVoteThatCompletesConsumes(t *testing.T) {
	f := votesFixture(t)
	m := console(t, f, operator, 200, 40)
	drop := f.ids["drop"]
	typedApproval(t, m, drop)
	press(m, "enter")
	if !strings.HasPrefix(m.note.text, "approved "+drop) {
		t.Fatalf("the completing vote: %q", m.note.text)
	}
	if rec := golden.Record(t, f.s, drop); rec.Status != model.StatusConsumed || rec.ConsumedBy != rival.String()+", "+operator.String() {
		t.Fatalf("consumed %s by %q", rec.Status, rec.ConsumedBy)
	}
	press(m, "tab")
	screenHas(t, m, "approvers: "+rival.String()+", "+operator.String()+" (policy v1)")
}

// The requester's own console may not approve: the prompt says so before
// the store refuses, and the refusal is in words.
func TestSelfApprovalIsRefused(t *testing.T) {
	f := votesFixture(t)
	self := model.Actor{Surface: model.SurfaceTUI, Name: "ops-agent@ops-1", Person: "ops-agent"}
	m := console(t, f, self, 80, 24)
	drop := f.ids["drop"]
	selectThenPress(t, m, drop, "enter")
	screenHas(t, m, "not by ops-agent (who asked for it): that is you")
	press(m, "end", "a")
	screenHas(t, m, "you asked for it: under policy v1 ")
	typeText(m, drop)
	press(m, "enter")
	if !strings.Contains(m.note.text, "NOT approved, own proposal: ops-agent asked for it") {
		t.Fatalf("a self-approval: %q", m.note.text)
	}
	if rec := golden.Record(t, f.s, drop); rec.Status != model.StatusPending {
		t.Fatalf("after a self-approval: %s", rec.Status)
	}
	if n := golden.AuditCount(t, f.s, drop, storage.EventApprove, storage.OutcomeRefused, storage.RefusedSelfApproval); n != 1 {
		t.Fatalf("self-approvals audited: %d", n)
	}
	press(m, "tab")
	screenHas(t, m, "refused: own proposal")
}

// A policy the store cannot read is a problem on screen, never no policy.
func TestUnreadablePolicyIsAProblem(t *testing.T) {
	f := votesFixture(t)
	db, err := sql.Open("sqlite", "file:"+f.path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE approve_tui_policy SET rules = '{"policy": "garbage'`); err != nil {
		t.Fatal(err)
	}
	m := console(t, f, operator, 80, 24)
	screenHas(t, m, "[policy v1 UNREADABLE]", "policy v1 in the store cannot be used")
	selectThenPress(t, m, f.ids["low"], "enter")
	screenHas(t, m, "votes      policy v1 in the store cannot be used")
	press(m, "end", "a")
	screenHas(t, m, "the store refuses every approval: policy v1")
	typeText(m, f.ids["low"])
	press(m, "enter")
	if !strings.Contains(m.note.text, "NOT approved, policy unreadable: policy v1") {
		t.Fatalf("an approval under an unreadable policy: %q", m.note.text)
	}
	for _, l := range strings.Split(m.View(), "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Fatalf("a line of %d cells: %q", w, l)
		}
	}
}

// A vote cast elsewhere shows at the next load: the row's count, the
// detail's block, and the prompt open on it.
func TestVoteElsewhereShows(t *testing.T) {
	f := newFixture(t)
	setPolicy(t, f.s, twoPerson)
	m := console(t, f, operator, 120, 40)
	summary := f.ids["summary"]
	readThenPress(t, m, summary, "a")
	screenHas(t, m, "vote 1 of 2: after you, one more approver from dba is still needed")
	voteAs(t, otherHandle(t, f, t0), summary, rival)
	Settle(m, m.reload())
	screenHas(t, m, "vote 2 of 2: alice voted; yours completes the approval")
	press(m, "esc")
	screenHas(t, m, "✓ alice@laptop via cli, just now", " 1/2 ")
}

func windowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// votesScenarios are screens under the two-person rule (votesFixture).
func votesScenarios() []scenario {
	return []scenario{
		{name: "votes-list", run: func(t *testing.T, f *fixture, m *Model) { selectID(t, m, f.ids["drop"]) }},
		{name: "votes-detail", run: func(t *testing.T, f *fixture, m *Model) {
			selectThenPress(t, m, f.ids["drop"], "enter")
		}},
		{name: "votes-prompt", run: func(t *testing.T, f *fixture, m *Model) {
			readThenPress(t, m, f.ids["drop"], "a")
		}},
		{name: "votes-recorded", run: func(t *testing.T, f *fixture, m *Model) {
			id := f.ids["summary"]
			typedApproval(t, m, id)
			press(m, "enter")
		}},
		{name: "votes-history", run: func(t *testing.T, f *fixture, m *Model) { press(m, "tab") }},
	}
}

// Golden screens under the two-person rule, at the console's two fixed
// sizes.
func TestGoldenVotes(t *testing.T) {
	for _, sc := range votesScenarios() {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			name := fmt.Sprintf("%s-%dx%d", sc.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				f := votesFixture(t)
				m := console(t, f, operator, size[0], size[1])
				sc.run(t, f, m)
				golden.Assert(t, name, m.View())
			})
		}
	}
}

// Presence with votes: another console's open approve prompt is a vote
// being cast, said so with what the proposal needs; once it is cast, this
// console's prompt counts it.
func TestPresenceWithVotes(t *testing.T) {
	f := newFixture(t)
	setPolicy(t, f.s, twoPerson)
	person := func(name string) *Model {
		m := New(Options{Store: f.s, Actor: model.Actor{Surface: model.SurfaceSSH, Name: name + " (SHA256:" + name + "key)", Person: name, Key: "SHA256:" + name + "key"}, Name: name,
			Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, Label: "presence"})
		_, cmd := m.Update(windowSize(120, 40))
		Settle(m, tea.Batch(cmd, m.Init()))
		return m
	}
	alice, oncall := person("alice"), person("oncall")
	id := f.ids["drop"]
	readThenPress(t, alice, id, "a")
	Settle(oncall, oncall.reload())
	if r := rowOf(t, oncall, id); !strings.HasPrefix(r, " *") || !strings.Contains(r, " 0/2 ") {
		t.Fatalf("alice's prompt on oncall's list: %q", r)
	}
	readThenPress(t, oncall, id, "a")
	screenHas(t, oncall, "alice is voting on this proposal right now: it needs 2 approvers, at least one from dba, each person counted once",
		"vote 1 of 2: after you, one more approver from dba is still needed")

	// alice votes; oncall's prompt now completes the approval.
	typeText(alice, id)
	press(alice, "enter")
	if !strings.Contains(alice.note.text, "vote recorded on "+id) {
		t.Fatalf("alice's vote: %q", alice.note.text)
	}
	Settle(oncall, oncall.reload())
	screenHas(t, oncall, "vote 2 of 2: alice voted; yours completes the approval")
	typeText(oncall, id)
	press(oncall, "enter")
	if !strings.HasPrefix(oncall.note.text, "approved "+id) {
		t.Fatalf("the completing vote: %q", oncall.note.text)
	}
	Settle(alice, alice.reload())
	if !strings.Contains(alice.note.text, "approved elsewhere by alice (SHA256:alicekey) via ssh, oncall (SHA256:oncallkey) via ssh") {
		t.Fatalf("alice's note: %q", alice.note.text)
	}
}

// The frame under votes is the one drawn from scratch, as the clock moves
// (the votes' ages), after a vote cast elsewhere and a resize.
func TestViewMemoUnderVotes(t *testing.T) {
	for _, sc := range votesScenarios() {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				f := votesFixture(t)
				m, now, same := memoConsole(t, f, operator, size)
				sc.run(t, f, m)
				same("scenario")
				for _, d := range []time.Duration{time.Second, 59 * time.Second} {
					*now = now.Add(d)
					m.Update(tickMsg{at: *now})
					same(fmt.Sprintf("clock +%v", d))
				}
				voteAs(t, otherHandle(t, f, *now), f.ids["heredoc"], rival)
				Settle(m, m.reload())
				same("a vote elsewhere")
				m.Update(windowSize(size[0]+7, size[1]+3))
				same("resized")
			})
		}
	}
}

// The history says the policy's and the votes' events in words, every
// value sanitised.
func TestHistoryQuorumWords(t *testing.T) {
	for _, c := range []struct {
		e                     storage.AuditEvent
		outcome, detailPrefix string
	}{
		{storage.AuditEvent{Event: storage.EventVote, Outcome: storage.OutcomeOK, Detail: map[string]any{
			"progress": "1 of 2 approvals", "needed": "one more approver from dba", "voters": []any{"alice@laptop via cli"}}},
			"vote recorded", "1 of 2 approvals; still needed: one more approver from dba; voters: alice@laptop via cli"},
		{storage.AuditEvent{Event: storage.EventVoteVoid, Outcome: storage.OutcomeOK, Reason: storage.VoteContentChanged,
			Detail: map[string]any{"voter": "mallory\x1b]0;pwned\x07"}},
			"vote void: content changed", "mallory\\x1b]0;pwned\\x07's vote no longer counts"},
		{storage.AuditEvent{Event: storage.EventPolicySet, Outcome: storage.OutcomeOK, Detail: map[string]any{
			"version": 3.0, "rules": 2.0, "groups": 1.0, "old_sha256": "9f8e7d6c5b4a", "new_sha256": "1a2b3c4d5e6f"}},
			"policy v3 set", "2 rules, 1 group; sha256 1a2b3c4d (was 9f8e7d6c)"},
		{storage.AuditEvent{Event: storage.EventDeny, Outcome: storage.OutcomeOK, Detail: map[string]any{
			"vetoed_votes": []any{"alice@laptop via cli"}, "reason": "no"}},
			"ok", "vetoed votes: alice@laptop via cli reason=no"},
		{storage.AuditEvent{Event: storage.EventApprove, Outcome: storage.OutcomeRefused, Reason: storage.RefusedDuplicateApprover},
			"refused: voted already", ""},
	} {
		r := historyRow(c.e)
		if r.outcome != c.outcome || !strings.HasPrefix(r.detail, c.detailPrefix) {
			t.Errorf("%s: outcome %q detail %q; want %q, %q…", c.e.Event, r.outcome, r.detail, c.outcome, c.detailPrefix)
		}
		if strings.ContainsAny(r.detail, "\x1b\x07") {
			t.Errorf("%s: raw control in %q", c.e.Event, r.detail)
		}
	}
}

// A first page of a long list keeps where the rows below it stood, under
// the same policy; under another, they are read again with the rest.
func TestQuorumTakeKeepsTheRowsBelowAPage(t *testing.T) {
	pv1 := &storage.PolicyVersion{Version: 1, SHA256: "aaaaaaaaaaaa"}
	pv2 := &storage.PolicyVersion{Version: 2, SHA256: "bbbbbbbbbbbb"}
	rec := func(id string) *storage.Record {
		r := &storage.Record{}
		r.ApprovalID = id
		return r
	}
	a, b := rec("page-row"), rec("tail-row")
	rows := []row{{rec: a}, {rec: b}}
	var q quorumState
	q.take(pendingMsg{qread: true, policy: pv1, rows: []*storage.Record{a, b},
		quorums: map[string]*storage.Quorum{"page-row": {Policy: pv1}, "tail-row": {Policy: pv1}}}, rows, false)
	q.take(pendingMsg{qread: true, policy: pv1, rows: []*storage.Record{a},
		quorums: map[string]*storage.Quorum{"page-row": {Policy: pv1}}}, rows, true)
	if q.of("tail-row") == nil || q.of("page-row") == nil {
		t.Fatalf("under the same policy: %v", q.byID)
	}
	q.take(pendingMsg{qread: true, policy: pv2, rows: []*storage.Record{a},
		quorums: map[string]*storage.Quorum{"page-row": {Policy: pv2}}}, rows, true)
	if q.of("tail-row") != nil {
		t.Fatal("a row below the page kept the standing of another policy")
	}
	// A failure to read keeps what was read, and says so.
	q.take(pendingMsg{qread: true, qerr: &storage.UnavailableError{Reason: "database is locked"}}, rows, false)
	if q.of("page-row") == nil || q.policy != pv2 || q.problem == "" || q.unreadable {
		t.Fatalf("after a failed read: %+v", q)
	}
}

// The deny prompt says that a deny vetoes the votes cast.
func TestDenyPromptSaysItVetoes(t *testing.T) {
	f := votesFixture(t)
	m := console(t, f, operator, 80, 24)
	selectThenPress(t, m, f.ids["drop"], "d")
	screenHas(t, m, "a deny vetoes the vote cast (alice): one deny ends it, whatever the votes")
	typeText(m, "no")
	press(m, "enter")
	if !strings.Contains(m.note.text, "denied "+f.ids["drop"]) {
		t.Fatalf("the deny: %q", m.note.text)
	}
	press(m, "tab", "enter")
	screenHas(t, m, `vetoed_votes=["alice@laptop via cli"]`)
}
