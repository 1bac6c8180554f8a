package approvals

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

var (
	ctx   = context.Background()
	t0    = time.Unix(1_780_000_000, 0)
	admin = model.Actor{Surface: model.SurfaceCLI, Name: "root@ops-1", Person: "root"}
	agent = model.Actor{Surface: model.SurfaceRunner, Name: "agent@host"}
)

func person(name string) model.Actor {
	return model.Actor{Surface: model.SurfaceCLI, Name: name + "@host-" + name, Person: name}
}

// rig is a real SQLite store on a pinned clock, with one high-risk
// proposal "quorum-1" asked for by alice.
func rig(t *testing.T) (*storage.Store, *time.Time) {
	t.Helper()
	return rigWith(t, false)
}

// rigWith is rig; reserved submits quorum-1 with its reservation, as a
// waiter that may park it does.
func rigWith(t *testing.T, reserved bool) (*storage.Store, *time.Time) {
	t.Helper()
	now := t0
	s, err := storage.Open(ctx, filepath.Join(t.TempDir(), "state.db"), storage.Options{Create: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p := &model.Proposal{
		ApprovalID: "quorum-1", CreatedAt: model.Epoch(now), SessionKey: "agent:main:test",
		Requester: "alice@laptop", Command: "terraform destroy -auto-approve", Cwd: "/srv/app", Backend: "local",
		RiskLevel: model.RiskHigh, RiskReason: "test", PolicyDecision: model.PolicyNeedsApproval,
		PolicyVersion: "test/1", RequiresExplicitApproval: true, DefaultDecision: model.DefaultDeny,
		ExpiresAt: model.F64(model.Epoch(now.Add(time.Hour))),
	}
	submit := s.Submit
	if reserved {
		submit = func(ctx context.Context, p *model.Proposal, a model.Actor) error {
			return s.SubmitReserved(ctx, p, model.FromEpoch(*p.ExpiresAt), a)
		}
	}
	if err := submit(ctx, p, agent); err != nil {
		t.Fatal(err)
	}
	return s, &now
}

func setPolicy(t *testing.T, s *storage.Store, src string) {
	t.Helper()
	p, err := config.ParsePolicy("policy.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SetPolicy(ctx, []byte(src), p, admin); err != nil {
		t.Fatal(err)
	}
}

func texts(fs []Field) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Label + "|" + f.Text + "\n")
	}
	return b.String()
}

func TestQuorumWithoutPolicySaysNothing(t *testing.T) {
	s, now := rig(t)
	p, err := Read(ctx, s, "quorum-1")
	if err != nil {
		t.Fatal(err)
	}
	if fs := QuorumFields(p.Record, p.Quorum, *now); len(fs) != 0 {
		t.Errorf("no policy, no votes: want no fields, got\n%s", texts(fs))
	}
	got := WithQuorumJSON(model.NewJSONObject(), p.Record, p.Quorum).String()
	want := `{"votes": [], "approvals_needed": 0, "approvals_required": 1, "needed": "", "approval_policy_version": null}`
	if got != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
}

func TestQuorumOneVoteOfTwo(t *testing.T) {
	s, now := rig(t)
	setPolicy(t, s, "policy:\n  - match: {risk: high}\n    approvals: 2\n")
	var vr *storage.VoteRecorded
	if _, err := s.Consume(ctx, "quorum-1", "quorum-1", person("bob")); !errors.As(err, &vr) {
		t.Fatalf("bob's approval: want a vote recorded, got %v", err)
	}
	*now = now.Add(90 * time.Second)
	p, err := Read(ctx, s, "quorum-1")
	if err != nil {
		t.Fatal(err)
	}
	got := texts(QuorumFields(p.Record, p.Quorum, *now))
	for _, want := range []string{
		"quorum|2 approvers (policy v1 ",
		", rule 1)\n",
		"needs|one more approver (1 of 2 approvals so far)\n",
		"not by|alice (who asked for it: nobody approves their own agent's proposal)\n",
		"votes|bob@host-bob via cli 1m30s ago (2026-05-28T20:26:40Z): counts\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("fields lack %q:\n%s", want, got)
		}
	}
	j := WithQuorumJSON(model.NewJSONObject(), p.Record, p.Quorum).String()
	for _, want := range []string{`"counts": true`, `"approvals_needed": 1`, `"approvals_required": 2`, `"needed": "one more approver"`, `"approval_policy_version": 1`} {
		if !strings.Contains(j, want) {
			t.Errorf("JSON lacks %s: %s", want, j)
		}
	}
	// The page read carries the votes that count, as list gives them.
	page, err := ReadQuorums(ctx, s, []*storage.Record{p.Record})
	if err != nil {
		t.Fatal(err)
	}
	if q := page["quorum-1"]; q == nil || len(q.Votes) != 1 || q.Q == nil || q.Q.Progress() != "1 of 2 approvals" {
		t.Errorf("page quorum = %+v", q)
	}
	if Voters(p.Quorum.Votes) != "bob@host-bob via cli" {
		t.Errorf("Voters = %q", Voters(p.Quorum.Votes))
	}
	if got := len(Cast(p.Quorum.Votes)); got != 1 {
		t.Errorf("Cast: %d voters", got)
	}
}

func TestVoteStateWords(t *testing.T) {
	now := t0
	rec := &storage.Record{Proposal: model.Proposal{ApprovalID: "x"}, EffectiveStatus: model.StatusPending, PayloadSHA256: "aa"}
	ended := model.F64(model.Epoch(now.Add(-time.Minute)))
	for _, c := range []struct {
		v    storage.Vote
		st   model.Status
		want string
	}{
		{storage.Vote{PayloadSHA256: "aa"}, model.StatusPending, "counts"},
		{storage.Vote{PayloadSHA256: "aa", Ended: "consumed", EndedAt: ended}, model.StatusPending, "ended: consumed 1m00s ago"},
		{storage.Vote{PayloadSHA256: "bb"}, model.StatusPending, "does not count: cast on another payload (sha256 bb)"},
		{storage.Vote{PayloadSHA256: "aa"}, model.StatusDenied, "does not count: the proposal is denied"},
	} {
		rec.EffectiveStatus = c.st
		if got := VoteState(rec, c.v, now); got != c.want {
			t.Errorf("VoteState = %q, want %q", got, c.want)
		}
		if VoteCounts(rec, c.v) != (c.want == "counts") {
			t.Errorf("VoteCounts disagrees with %q", c.want)
		}
	}
	for _, c := range []struct {
		v    storage.Vote
		want string
	}{
		{storage.Vote{Actor: "alice@laptop via cli", Person: "alice"}, "alice@laptop via cli"},
		{storage.Vote{Actor: "root@laptop via cli", Person: "alice"}, "root@laptop via cli (as alice)"},
		{storage.Vote{Actor: "alice (SHA256:abc) via ssh", Person: "alice"}, "alice (SHA256:abc) via ssh"},
		{storage.Vote{Actor: "root\x1b[31m", Person: "bob\x07"}, `root\x1b[31m (as bob\x07)`},
	} {
		if got := VoteWho(c.v); got != c.want {
			t.Errorf("VoteWho(%q) = %q, want %q", c.v.Actor, got, c.want)
		}
	}
}

func TestWaiterWordsInEachForm(t *testing.T) {
	now := t0
	pending := &storage.Record{EffectiveStatus: model.StatusPending}
	done := &storage.Record{EffectiveStatus: model.StatusDenied}
	w := &storage.Waiter{Host: "h1", PID: 42, Surface: "hook", StartedAt: model.Epoch(now.Add(-3 * time.Minute)), HeartbeatAt: model.Epoch(now.Add(-70 * time.Second))}
	live := &storage.WaiterStatus{State: storage.WaiterLive, Waiter: w}
	dead := &storage.WaiterStatus{State: storage.WaiterDead, Waiter: w}
	none := &storage.WaiterStatus{State: storage.WaiterNone}
	for _, c := range []struct {
		rec        *storage.Record
		ws         *storage.WaiterStatus
		f          Form
		mark, text string
	}{
		{pending, live, Text, "", "live: pid 42 on h1 (hook) waiting since 3m00s ago"},
		{pending, dead, Text, "", "gone: pid 42 on h1 stopped heartbeating 1m10s ago; approving may run nothing"},
		{done, dead, Text, "", "gone: pid 42 on h1 stopped heartbeating 1m10s ago"},
		{pending, none, Text, "", "none: no process is waiting on this id; approving may run nothing"},
		{done, none, Text, "", "none"},
		{pending, nil, Text, "", "none: no process is waiting on this id; approving may run nothing"},
		{pending, live, Console, "● live", " — h1 pid 42 waiting since 3m ago, heartbeat 1m ago"},
		{pending, dead, Console, "✗ dead", " — h1 pid 42 stopped heartbeating 1m ago: approving will not run anything"},
		{pending, none, Console, "○ none", " — no live waiter: approving will not run anything"},
		{pending, nil, Console, "checking…", ""},
	} {
		mark, text := WaiterWords(c.rec, c.ws, now, c.f)
		if mark != c.mark || text != c.text {
			t.Errorf("WaiterWords(%v, form %d) = %q, %q; want %q, %q", c.ws, c.f, mark, text, c.mark, c.text)
		}
	}
	started := &storage.Record{Proposal: model.Proposal{Status: model.StatusConsumed, ExecutionStatus: model.ExecStarted}, EffectiveStatus: model.StatusConsumed}
	if got := RunWords(started, *live, now); got != "running (runner pid 42 on h1, heartbeat 1m10s ago)" {
		t.Errorf("run, live = %q", got)
	}
	if got := RunWords(started, *dead, now); got != "runner died, outcome unknown (runner pid 42 on h1 is gone, last heartbeat 1m10s ago)" {
		t.Errorf("run, dead = %q", got)
	}
	if got := RunWords(started, *none, now); got != "outcome unknown: no runner heartbeat" {
		t.Errorf("run, none = %q", got)
	}
	if got := ExecutionWords(started, none, now); got != "started; outcome unknown: no runner heartbeat" {
		t.Errorf("execution = %q", got)
	}
	if got := StatusWords(pending, true); got != "pending (waiter gone)" {
		t.Errorf("status = %q", got)
	}
}

func TestSignedWords(t *testing.T) {
	sigs := []Signer{
		{Principal: "alice", Event: storage.EventApprove, Verified: true},
		{Principal: "bob", Event: storage.EventVote, Verified: true},
		{Principal: "alice", Event: storage.EventVote, Verified: true},
		{Principal: "mallory", Event: storage.EventApprove, Reason: "unknown key"},
		{Principal: "carol", Event: storage.EventDeny, Verified: true},
	}
	for _, c := range []struct {
		st       model.Status
		sigs     []Signer
		required bool
		want     string
	}{
		{model.StatusConsumed, sigs, false, "; signed: alice, bob"},
		{model.StatusDenied, sigs, false, "; signed: carol"},
		{model.StatusConsumed, sigs[3:4], true, "; unsigned"},
		{model.StatusConsumed, nil, false, ""},
		{model.StatusExpired, sigs, true, ""},
		{model.StatusPending, nil, true, ""},
	} {
		if got := SignedWords(c.st, c.sigs, c.required); got != c.want {
			t.Errorf("SignedWords(%s, required %v) = %q, want %q", c.st, c.required, got, c.want)
		}
	}
	if got := SignerWords(sigs[3]); got != "approve by mallory, key : does NOT verify (unknown key)" {
		t.Errorf("SignerWords = %q", got)
	}
	short := func(k string) string { return k + "…" }
	for _, c := range []struct {
		sg    Signer
		words string
		state SigState
	}{
		{sigs[0], "approve signed by alice …, verified", SigVerified},
		{sigs[3], "approve signed by mallory …: does NOT verify (unknown key)", SigBad},
		{Signer{Principal: "bob\x1b", Key: "SHA256:k", Event: "vote", Reason: storage.CheckNoTrustFile}, `vote signed by bob\x1b SHA256:k… (not checked: no trust file here)`, SigNotChecked},
	} {
		if words, state := SignatureWords(c.sg, short, Console); words != c.words || state != c.state {
			t.Errorf("SignatureWords(Console) = %q, %d; want %q, %d", words, state, c.words, c.state)
		}
	}
	if got := SignersJSON(sigs[:1]); got != `[{"principal": "alice", "key": "", "event": "approve", "verified": true, "reason": ""}]` {
		t.Errorf("SignersJSON = %s", got)
	}
}

func TestVoteSignature(t *testing.T) {
	short := func(k string) string { return k[:min(len(k), 10)] }
	sigs := []Signer{
		{Event: storage.EventDeny, Principal: "eve", Key: "SHA256:k1", Verified: true},
		{Event: storage.EventVote, Principal: "bob", Key: "SHA256:k2", Verified: true},
		{Event: storage.EventApprove, Principal: "carol", Key: "SHA256:k3", Reason: "expired"},
		{Event: storage.EventVote, Principal: "dan", Key: "SHA256:k4", Reason: storage.CheckNoTrustFile},
	}
	for _, c := range []struct {
		key   string
		words string
		state SigState
	}{
		{"SHA256:k1", "unsigned", SigUnsigned}, // a deny's signature signs no vote
		{"SHA256:k2", "signed: bob SHA256:k2", SigVerified},
		{"SHA256:k3", "signature does NOT verify (expired), claimed by carol SHA256:k3", SigBad},
		{"SHA256:k4", "signed (not checked here): dan SHA256:k4", SigNotChecked},
		{"", "unsigned", SigUnsigned},
	} {
		words, state := VoteSignature(c.key, sigs, short)
		if words != c.words || state != c.state {
			t.Errorf("VoteSignature(%s) = %q, %d; want %q, %d", c.key, words, state, c.words, c.state)
		}
	}
}

func TestGetAndRecordJSON(t *testing.T) {
	s, _ := rig(t)
	if _, err := Get(ctx, s, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing id: %v", err)
	}
	p, err := Get(ctx, s, "quorum-1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Waiter.State != storage.WaiterNone || p.Quorum != nil || p.Signers != nil {
		t.Errorf("Get read more than the record and its waiter: %+v", p)
	}
	j := RecordJSON(p.Record, &p.Waiter).String()
	for _, want := range []string{`"approval_id": "quorum-1"`, `"status": "pending"`, `"waiter": {"state": "none"}`, `"corrupt": ""`} {
		if !strings.Contains(j, want) {
			t.Errorf("RecordJSON lacks %s: %s", want, j)
		}
	}
	if strings.Contains(RecordJSON(p.Record, nil).String(), `"waiter"`) {
		t.Error("RecordJSON without a waiter read says one")
	}
	if RiskBanner(p.Record, Text) != "HIGH RISK — default: deny" {
		t.Errorf("banner = %q", RiskBanner(p.Record, Text))
	}
}

func TestPageWords(t *testing.T) {
	now := t0
	done := model.F64(model.Epoch(now.Add(-2 * time.Minute)))
	long := strings.Repeat("x", 70)
	for _, c := range []struct {
		dl   storage.Delivery
		want Page
	}{
		{storage.Delivery{DeliveryKey: storage.DeliveryKey{Channel: "ops", Kind: "page"}, State: storage.DeliveryDelivered, DoneAt: done},
			Page{storage.DeliveryDelivered, "✓", "ops 2m ago"}},
		{storage.Delivery{DeliveryKey: storage.DeliveryKey{Channel: "ops", Kind: "escalation", Step: 1}, State: storage.DeliveryFailed, LastError: long},
			Page{storage.DeliveryFailed, "✗", "ops (step 2) failed: " + model.CutRunes(long, 60)}},
		{storage.Delivery{DeliveryKey: storage.DeliveryKey{Channel: "ops\x1b", Kind: "reminder"}, State: storage.DeliveryCancelled},
			Page{storage.DeliveryCancelled, "", `ops\x1b (reminder) not sent`}},
		{storage.Delivery{DeliveryKey: storage.DeliveryKey{Channel: "ops", Kind: "resolved"}, State: storage.DeliveryPending, Attempts: 3, LastError: "503"},
			Page{storage.DeliveryPending, "", "ops (resolved) retrying (3 tries): 503"}},
		{storage.Delivery{DeliveryKey: storage.DeliveryKey{Channel: "ops", Kind: "page"}, State: storage.DeliveryPending},
			Page{storage.DeliveryPending, "", "ops sending"}},
	} {
		if got := PageWords(c.dl, now); got != c.want {
			t.Errorf("PageWords = %+v, want %+v", got, c.want)
		}
	}
}

func TestImpactLinesInEachForm(t *testing.T) {
	m := &model.Impact{Summary: "deletes 8 directories", Unknown: []string{"$(evil)"}, Incomplete: []string{"the 1s time bound ran out"}}
	for i := range 8 {
		m.Targets = append(m.Targets, model.ImpactTarget{Op: "delete", Path: "/srv/d" + string(rune('0'+i)), Exists: true, Entries: 1, Files: 1, Complete: true})
	}
	m.Targets = append(m.Targets, model.ImpactTarget{Op: "delete", Path: "/srv/gone"})
	count := func(ls []ImpactLine, k ImpactKind) (n int) {
		for _, l := range ls {
			if l.Kind == k {
				n++
			}
		}
		return n
	}
	text, console := ImpactLines(m, false, Text), ImpactLines(m, false, Console)
	if n := count(text, ImpactTarget); n != 9 {
		t.Errorf("Text lists every target: %d", n)
	}
	if n := count(console, ImpactTarget); n != MaxImpactTargets {
		t.Errorf("Console lists the first %d targets that it touches: %d", MaxImpactTargets, n)
	}
	var more, unknown ImpactLine
	for _, l := range console {
		switch l.Kind {
		case ImpactMore:
			more = l
		case ImpactUnknown:
			unknown = l
		}
	}
	if more.Lead != "and 2 more targets" {
		t.Errorf("Console's more line = %+v", more)
	}
	if unknown.Lead != "could not preview: " || unknown.Text != "$(evil)" {
		t.Errorf("the agent's words stay as they are, for the surface to sanitise: %+v", unknown)
	}
	if count(text, ImpactIncomplete) != 1 || count(text, ImpactMore) != 0 {
		t.Errorf("Text = %+v", text)
	}
}

func TestRunStateWordsInEachForm(t *testing.T) {
	now := t0
	w := &storage.Waiter{Host: "h1\x1b", PID: 42, HeartbeatAt: model.Epoch(now.Add(-70 * time.Second))}
	for _, c := range []struct {
		run            storage.RunState
		f              Form
		outcome, words string
	}{
		{storage.RunRunning, Console, "started, running", `runner pid 42 on h1\x1b, heartbeat 1m ago`},
		{storage.RunDied, Console, "runner died", `outcome unknown: runner pid 42 on h1\x1b is gone (last heartbeat 1m ago)`},
		{storage.RunUnknown, Console, "outcome unknown", "outcome unknown: no runner heartbeat"},
		{storage.RunRunning, Text, "", `running (runner pid 42 on h1\x1b, heartbeat 1m10s ago)`},
		{storage.RunNone, Text, "", ""},
	} {
		if o, wd := RunStateWords(c.run, w, now, c.f); o != c.outcome || wd != c.words {
			t.Errorf("RunStateWords(%s, form %d) = %q, %q; want %q, %q", c.run, c.f, o, wd, c.outcome, c.words)
		}
	}
}

func TestRiskBannerInEachForm(t *testing.T) {
	for _, c := range []struct {
		r             model.RiskLevel
		text, console bool
	}{
		{model.RiskMedium, false, false},
		{model.RiskHigh, true, true},
		{model.RiskTier2, true, false}, // the console has the phrase's own lines
		{model.RiskUnknown, true, true},
	} {
		rec := &storage.Record{EffectiveRisk: c.r}
		if got := RiskBanner(rec, Text) != ""; got != c.text {
			t.Errorf("%s, Text: banner %v", c.r, got)
		}
		if got := RiskBanner(rec, Console) != ""; got != c.console {
			t.Errorf("%s, Console: banner %v", c.r, got)
		}
	}
}
