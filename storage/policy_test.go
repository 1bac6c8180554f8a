package storage

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

func TestRecordPolicyAppendsChainedEventsAndChangesNothingElse(t *testing.T) {
	s, _ := newStore(t)
	allow := &PolicyRecord{Decision: PolicyAllow, Reason: "no dangerous pattern matched", Command: "ls -la",
		Cwd: "/srv", SessionKey: "run:alice@host", Requester: "approve-tui-run", Risk: model.RiskLow}
	if err := s.RecordPolicy(ctx, allow, agent); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(allow.Ref, PolicyRefPrefix) || len(allow.Ref) != len(PolicyRefPrefix)+12 {
		t.Fatalf("ref %q", allow.Ref)
	}
	done := &PolicyRecord{Ref: allow.Ref, Decision: PolicyExecuted, Reason: "exit code 0", Command: "ls -la"}
	if err := s.RecordPolicy(ctx, done, agent); err != nil {
		t.Fatal(err)
	}
	deny := &PolicyRecord{Decision: PolicyDeny, Reason: "format filesystem (mkfs)", Command: "mkfs.ext4 /dev/sdz", Risk: model.RiskHigh}
	if err := s.RecordPolicy(ctx, deny, agent); err != nil {
		t.Fatal(err)
	}
	if deny.Ref == allow.Ref {
		t.Fatal("two commands share a reference")
	}

	evs, err := s.Audit(ctx, AuditQuery{ApprovalID: allow.Ref})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Reason != PolicyAllow || evs[0].Reason != PolicyExecuted {
		t.Fatalf("events of %s: %+v", allow.Ref, evs)
	}
	first := evs[1]
	if first.Event != EventPolicy || first.Outcome != OutcomeOK || first.Actor != agent.Name || first.Surface != string(agent.Surface) {
		t.Fatalf("allow event: %+v", first)
	}
	for k, want := range map[string]string{"command": "ls -la", "risk": "low", "cwd": "/srv", "session": "run:alice@host",
		"requester": "approve-tui-run", "reason": "no dangerous pattern matched", "command_sha256": sha256Hex([]byte("ls -la"))} {
		if got, _ := first.Detail[k].(string); got != want {
			t.Errorf("detail %s = %q, want %q", k, got, want)
		}
	}
	if _, ok := evs[0].Detail["command"]; ok {
		t.Error("the outcome event repeats the command")
	}
	if got, _ := evs[0].Detail["command_sha256"].(string); got != sha256Hex([]byte("ls -la")) {
		t.Errorf("outcome event hash %q", got)
	}

	// No proposal was created; the chain still verifies.
	n, err := s.CountPending(ctx)
	if err != nil || n != 0 {
		t.Fatalf("pending %d %v", n, err)
	}
	if _, err := s.Get(ctx, allow.Ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a policy reference reads as a proposal: %v", err)
	}
	res, err := s.VerifyAudit(ctx)
	if err != nil || !res.OK || res.Events != 3 {
		t.Fatalf("verify: %+v %v", res, err)
	}
}

func TestRecordPolicyRefusesBadInputAndWatchers(t *testing.T) {
	s, _ := newStore(t)
	for _, r := range []*PolicyRecord{
		{Decision: "maybe", Command: "ls"},
		{Decision: PolicyAllow},
		{Decision: PolicyAllow, Command: "ls", Ref: "Xa1b2c3d4e5f"},
	} {
		if err := s.RecordPolicy(ctx, r, agent); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
	var ro *ReadOnlyError
	if err := s.RecordPolicy(ctx, &PolicyRecord{Decision: PolicyAllow, Command: "ls"}, watcher); !errors.As(err, &ro) {
		t.Fatalf("watcher: %v", err)
	}
	evs, _ := s.Audit(ctx, AuditQuery{})
	if len(evs) != 1 || evs[0].Outcome != OutcomeRefused || evs[0].Reason != "read_only" {
		t.Fatalf("audit after refusals: %+v", evs)
	}
}

func TestRecordPolicyCapsLongCommands(t *testing.T) {
	s, _ := newStore(t)
	long := strings.Repeat("x", maxPolicyCommand+100)
	r := &PolicyRecord{Decision: PolicyDeny, Command: long, Risk: model.RiskHigh}
	if err := s.RecordPolicy(ctx, r, agent); err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Audit(ctx, AuditQuery{ApprovalID: r.Ref})
	if got, _ := evs[0].Detail["command"].(string); len(got) != maxPolicyCommand || evs[0].Detail["command_truncated"] != true {
		t.Fatalf("detail: len %d truncated %v", len(got), evs[0].Detail["command_truncated"])
	}
	if got, _ := evs[0].Detail["command_sha256"].(string); got != sha256Hex([]byte(long)) {
		t.Fatal("hash is not over the whole command")
	}
}

// A rule of the policy in force that names a command refuses to record it
// as allowed unasked, whatever its risk: decided in the transaction that
// would record the allow (nothing is recorded), and said by PolicyAsks.
func TestPolicyRuleRefusesAnUnaskedAllow(t *testing.T) {
	s, _ := newStore(t)
	allow := func(command string) *PolicyRecord {
		return &PolicyRecord{Decision: PolicyAllow, Reason: "no dangerous pattern matched", Command: command,
			SessionKey: "run:alice@host", Requester: "approve-tui-run", Risk: model.RiskLow}
	}
	if err := s.PolicyAsks(ctx, allow("terraform apply plan.out")); err != nil {
		t.Fatalf("no policy: %v", err)
	}
	putPolicy(t, s, "policy:\n  - match: {risk: high}\n    approvals: 2\n  - match: {command: \"terraform apply*\"}\n    approvals: 2\n")
	const why = `policy v1 asks for approval (2 approvers): rule 2 (line 4): the command matches "terraform apply*"`
	for name, err := range map[string]error{
		"PolicyAsks":   s.PolicyAsks(ctx, allow("terraform apply plan.out")),
		"RecordPolicy": s.RecordPolicy(ctx, allow("terraform apply plan.out"), agent),
	} {
		var asks *PolicyAsksError
		if !errors.As(err, &asks) || err.Error() != why {
			t.Errorf("%s: %v, want %q", name, err, why)
		}
	}
	// The refused allow is audited as refused, and nothing else changed.
	if evs, _ := s.Audit(ctx, AuditQuery{}); len(evs) != 2 || evs[1].Event != EventPolicySet ||
		evs[0].Event != EventPolicy || evs[0].Outcome != OutcomeRefused || evs[0].Reason != RefusedPolicyAsks {
		t.Fatalf("recorded: %+v", evs)
	}
	// Rules that do not match (risk high, another command) leave it alone.
	if err := s.PolicyAsks(ctx, allow("terraform plan")); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordPolicy(ctx, allow("terraform plan"), agent); err != nil {
		t.Fatal(err)
	}
	// Submitted (submit, or run and a hook once asked), the low-risk
	// command needs the rule's two approvers on every surface that
	// approves: the one decision path counts the votes.
	c := newClock()
	mustSubmit(t, s, proposal("tf-apply-low", "terraform apply plan.out", model.RiskLow, c.Now(), time.Hour))
	rec, err := s.Get(ctx, "tf-apply-low")
	if err != nil {
		t.Fatal(err)
	}
	_, err = approve(s, rec, who("alice"))
	wantVote(t, err, 1, 1)
	if done, err := approve(s, rec, who("bob")); err != nil || done.Status != model.StatusConsumed {
		t.Fatalf("the second approver: %v", err)
	}
}

// A rule on the judgement's effects binds like a command rule: a LOW
// in-workspace `rm build/x` is not allowed unasked where `effect: delete`
// names deletes, and once submitted it needs the rule's approvers; a
// command without the effect is left alone.
func TestEffectRuleBindsInTheTransaction(t *testing.T) {
	s, _ := newStore(t)
	allow := func(command string) *PolicyRecord {
		return &PolicyRecord{Decision: PolicyAllow, Reason: "no dangerous pattern matched", Command: command, Cwd: "/work/repo",
			SessionKey: "run:alice@host", Requester: "approve-tui-run", Risk: model.RiskLow}
	}
	putPolicy(t, s, "policy:\n  - match: {effect: delete}\n    approvals: 2\n")
	const why = `policy v1 asks for approval (2 approvers): rule 1 (line 2): the command has the effect delete`
	for name, err := range map[string]error{
		"PolicyAsks":   s.PolicyAsks(ctx, allow("rm build/x")),
		"RecordPolicy": s.RecordPolicy(ctx, allow("rm build/x"), agent),
	} {
		var asks *PolicyAsksError
		if !errors.As(err, &asks) || err.Error() != why {
			t.Errorf("%s: %v, want %q", name, err, why)
		}
	}
	if err := s.RecordPolicy(ctx, allow("git status"), agent); err != nil {
		t.Fatalf("a command without the effect: %v", err)
	}
	c := newClock()
	p := proposal("rm-build-x", "rm build/x", model.RiskLow, c.Now(), time.Hour)
	p.Cwd = "/work/repo"
	mustSubmit(t, s, p)
	rec, err := s.Get(ctx, "rm-build-x")
	if err != nil || !slices.Contains(rec.Effects, "delete") || SubjectOf(rec).Effects == nil {
		t.Fatalf("%+v %v", rec, err)
	}
	_, err = approve(s, rec, who("alice"))
	wantVote(t, err, 1, 1)
	if done, err := approve(s, rec, who("bob")); err != nil || done.Status != model.StatusConsumed {
		t.Fatalf("the second approver: %v", err)
	}
}

// The store judges with the extras it was opened with: two Stores of one
// process on one file with other extras never share a decoded judgement.
func TestStoreJudgesWithItsOwnExtras(t *testing.T) {
	s, _ := newStore(t)
	other, err := Open(ctx, s.Path(), Options{Risk: risk.Context{Paths: []string{"/srv/prod/"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if s.judge.key == other.judge.key {
		t.Fatal("two extras, one fingerprint")
	}
	c := newClock()
	mustSubmit(t, s, proposal("extras01", "ls /srv/prod", model.RiskLow, c.Now(), time.Hour))
	if _, err := s.Get(ctx, "extras01"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, "extras01"); err != nil {
		t.Fatal(err)
	}
	f := other.bind().dbfile
	f.decoded.mu.Lock()
	pv := f.decoded.cur["extras01"]
	f.decoded.mu.Unlock()
	if pv == nil || pv.judgeKey != other.judge.key {
		t.Fatalf("the view kept was judged with %+v", pv)
	}
}

// A process that only checks the policy (a hook) reads it on the writer
// connection it opened, with no second connection, and sees what other
// programs committed last, as a reader would: a rule set before, a
// policy made unreadable by another program (refused, never taken for no
// rule), all while another program holds the write lock (a read waits for
// no writer). Once the store reads through its pool, PolicyAsks does too.
func TestPolicyAsksOnTheWriterConnection(t *testing.T) {
	sqliteOnly(t, "SQLite's reader connections")
	path := tempDB(t)
	s := openAt(t, path, nil)
	putPolicy(t, s, "policy:\n  - match: {command: \"terraform apply*\"}\n    approvals: 2\n")
	allow := &PolicyRecord{Decision: PolicyAllow, Reason: "no dangerous pattern matched", Command: "terraform apply plan.out",
		SessionKey: "run:alice@host", Requester: "approve-tui-run", Risk: model.RiskLow}
	readers := func() int { return s.bind().rdb.Stats().OpenConnections }
	if n := readers(); n != 0 {
		t.Fatalf("%d reader connections open before any read", n)
	}

	raw := rawDB(t, path)
	c, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	var asks *PolicyAsksError
	if err := s.PolicyAsks(ctx, allow); !errors.As(err, &asks) {
		t.Fatalf("the rule, while another program holds the write lock: %v", err)
	}
	if _, err := c.ExecContext(ctx, `UPDATE approve_tui_policy SET rules = 'not a policy'`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	var rf *RefusedError
	if err := s.PolicyAsks(ctx, allow); !errors.As(err, &rf) || rf.Code != RefusedPolicyUnreadable {
		t.Fatalf("a policy another program made unreadable: %v, want refused (%s)", err, RefusedPolicyUnreadable)
	}
	if n := readers(); n != 0 {
		t.Fatalf("PolicyAsks opened %d reader connections", n)
	}

	// A store that reads through its pool keeps reading the policy there.
	if _, err := s.Policy(ctx); !errors.As(err, &rf) {
		t.Fatalf("Policy: %v", err)
	}
	if n := readers(); n == 0 {
		t.Fatal("Policy read on no reader connection")
	}
	if err := s.PolicyAsks(ctx, allow); !errors.As(err, &rf) || rf.Code != RefusedPolicyUnreadable {
		t.Fatalf("through the pool: %v", err)
	}
}
