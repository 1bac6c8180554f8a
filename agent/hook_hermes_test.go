package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// hermesRequest is the plugin's input for a request of Hermes: the
// ApprovalRequest's fields, the session key and presented_at.
func hermesRequest(requestID, command string, timeout float64, presentedAt time.Time, extra map[string]any) string {
	m := map[string]any{
		"event": "present", "schema_version": 1, "request_id": requestID,
		"digest":  strings.Repeat("ab", 32),
		"command": command, "description": "recursive delete", "pattern_key": "recursive delete",
		"pattern_keys": []string{"recursive delete"}, "surface": "gateway", "timeout_seconds": timeout,
		"allowed_choices": []string{"once", "session", "always", "deny"}, "session_key": "agent:main:telegram:dm:7",
	}
	if !presentedAt.IsZero() {
		m["presented_at"] = model.Epoch(presentedAt)
	}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// hermesAnswer decodes an answer as the plugin reads it: exactly a choice
// (once or deny), the approval id and a reason.
func hermesAnswer(t *testing.T, a HookAnswer) (choice, reason string) {
	t.Helper()
	var out struct {
		Choice     string `json:"choice"`
		ApprovalID string `json:"approval_id"`
		Reason     string `json:"reason"`
	}
	decodeStrict(t, a.JSON(), &out)
	if out.Choice != "once" && out.Choice != "deny" {
		t.Fatalf("choice %q", out.Choice)
	}
	return out.Choice, out.Reason
}

func hermesRun(input string, o HookOptions, margin time.Duration) <-chan HookAnswer {
	ch := make(chan HookAnswer, 1)
	o.Timeout = 0 // Hermes' deadline only
	go func() { ch <- HermesHook(context.Background(), strings.NewReader(input), o, margin) }()
	return ch
}

func TestHermesHookApprovedIsOnce(t *testing.T) {
	s, o := emptyStore(t)
	start := time.Now()
	opts := hookOpts(s)
	opts.ParkWindow = -1 // parking off: the proposal expires before Hermes' deadline
	ch := hermesRun(hermesRequest("req-approve-1", "rm -rf build/", 300, start, nil), opts, 0)
	rec := awaitHookProposal(t, o)
	if rec.ApprovalID != HermesHookID("req-approve-1") || len(rec.ApprovalID) < storage.MinApprovableID ||
		rec.SessionKey != "agent:main:telegram:dm:7" || rec.Requester != "hermes" || rec.RequesterContext != "recursive delete" ||
		rec.RiskLevel != model.RiskHigh || rec.Hermes == nil || rec.Hermes.RequestID != "req-approve-1" || rec.Hermes.Surface != "gateway" {
		t.Fatalf("proposal %+v", rec.Proposal)
	}
	// Hermes' deadline is presented_at + timeout; the proposal expires
	// before it, by about the margin.
	deadline := model.Epoch(start) + 300
	if d := rec.Hermes.Deadline; d < deadline-0.01 || d > deadline+0.01 {
		t.Fatalf("deadline %v, want %v", d, deadline)
	}
	if exp := *rec.ExpiresAt; exp >= deadline-HermesMargin.Seconds()+1 || exp < deadline-HermesMargin.Seconds() {
		t.Fatalf("expires %v: want within a second after deadline-margin %v", exp, deadline-HermesMargin.Seconds())
	}
	approve(t, o, rec.ApprovalID)
	if c, reason := hermesAnswer(t, recvHook(t, ch)); c != "once" || !strings.Contains(reason, "approved by alice@console via tui") {
		t.Fatalf("%s %q", c, reason)
	}
}

// Nobody decides: the hook answers deny before Hermes' deadline, having
// withdrawn the proposal, which cannot be approved any more.
func TestHermesHookSilenceIsDenyBeforeTheDeadline(t *testing.T) {
	s, o := emptyStore(t)
	start := time.Now()
	const timeout = 2.0
	margin := 800 * time.Millisecond
	opts := hookOpts(s)
	opts.ParkWindow = -1 // parking off: withdrawn as before
	a := recvHook(t, hermesRun(hermesRequest("req-silent", "rm -rf build/", timeout, start, nil), opts, margin))
	answered := time.Now()
	c, reason := hermesAnswer(t, a)
	if c != "deny" || !strings.Contains(reason, "Hermes stops waiting in 800ms (approvals.timeout 2s): no decision on") {
		t.Fatalf("%s %q", c, reason)
	}
	if late := answered.Sub(start.Add(time.Duration(timeout * float64(time.Second)))); late >= 0 {
		t.Fatalf("answered %v after Hermes' deadline", late)
	}
	id := HermesHookID("req-silent")
	if r := get(t, o, id); r.EffectiveStatus != model.StatusDenied || r.ConsumedBy != "requester via hook" {
		t.Fatalf("not withdrawn: %s %q", r.EffectiveStatus, r.ConsumedBy)
	}
	if _, err := o.Consume(context.Background(), id, id, operator); err == nil {
		t.Fatal("approved after the answer")
	}
}

// A request presented a while ago has less time left: the wait is from
// presented_at, not from when the hook started; too little is a deny at
// once, submitting nothing.
func TestHermesHookDeadlineIsHermes(t *testing.T) {
	s, o := emptyStore(t)
	a := recvHook(t, hermesRun(hermesRequest("req-late", "rm -rf build/", 10, time.Now().Add(-9500*time.Millisecond), nil), hookOpts(s), 0))
	if c, reason := hermesAnswer(t, a); c != "deny" || !strings.Contains(reason, "leaves no time for a decision") {
		t.Fatalf("%s %q", c, reason)
	}
	if recs, _ := o.List(context.Background(), storage.ListOptions{Status: storage.ListAll}); len(recs) != 0 {
		t.Fatal("submitted")
	}
}

func TestHermesHookRefusesWhatDoesNotValidate(t *testing.T) {
	now := time.Now()
	for name, in := range map[string]string{
		"garbage":               "{",
		"empty":                 "",
		"array":                 "[1]",
		"no request_id":         hermesRequest("", "rm -rf x", 300, now, nil),
		"spaced id":             hermesRequest("a b", "rm -rf x", 300, now, nil),
		"no schema":             hermesRequest("r1", "rm -rf x", 300, now, map[string]any{"schema_version": nil}),
		"schema 2":              hermesRequest("r1", "rm -rf x", 300, now, map[string]any{"schema_version": 2}),
		"no digest":             hermesRequest("r1", "rm -rf x", 300, now, map[string]any{"digest": ""}),
		"no command":            hermesRequest("r1", "rm -rf x", 300, now, map[string]any{"command": nil}),
		"empty command":         hermesRequest("r1", "  ", 300, now, nil),
		"zero timeout":          hermesRequest("r1", "rm -rf x", 0, now, nil),
		"negative timeout":      hermesRequest("r1", "rm -rf x", -3, now, nil),
		"no once":               hermesRequest("r1", "rm -rf x", 300, now, map[string]any{"allowed_choices": []string{"deny"}}),
		"wrong types":           hermesRequest("r1", "rm -rf x", 300, now, map[string]any{"pattern_keys": "x"}),
		"stale":                 hermesRequest("r1", "rm -rf x", 300, now.Add(-time.Hour), nil),
		"no presented_at":       hermesRequest("r1", "rm -rf x", 300, time.Time{}, nil),
		"zero presented_at":     hermesRequest("r1", "rm -rf x", 300, now, map[string]any{"presented_at": 0}),
		"negative presented_at": hermesRequest("r1", "rm -rf x", 300, now, map[string]any{"presented_at": -5}),
		"unknown event":         hermesRequest("r1", "rm -rf x", 300, now, map[string]any{"event": "approve_please"}),
		"lone surrogate":        `{"schema_version":1,"request_id":"r1","digest":"d","command":"rm -rf \ud800","timeout_seconds":300,"allowed_choices":["once","deny"]}`,
	} {
		c, reason := hermesAnswer(t, HermesHook(context.Background(), strings.NewReader(in), noStore(t), 0))
		if c != "deny" || !strings.HasPrefix(reason, "approve-tui: ") {
			t.Errorf("%s: %s %q", name, c, reason)
		}
	}
}

// A request without presented_at is stale: how long Hermes has waited
// cannot be known. Denied at once, nothing submitted.
func TestHermesHookWithoutPresentedAtIsStale(t *testing.T) {
	s, o := emptyStore(t)
	for _, in := range []string{
		hermesRequest("req-nopresented", "rm -rf build/", 300, time.Time{}, nil),
		hermesRequest("req-nopresented", "rm -rf build/", 300, time.Now(), map[string]any{"presented_at": 0}),
	} {
		a := recvHook(t, hermesRun(in, hookOpts(s), 0))
		if c, reason := hermesAnswer(t, a); c != "deny" || !strings.Contains(reason, "no presented_at") || !strings.Contains(reason, "treated as stale") {
			t.Fatalf("%s %q", c, reason)
		}
	}
	if recs, _ := o.List(context.Background(), storage.ListOptions{Status: storage.ListAll}); len(recs) != 0 {
		t.Fatal("submitted")
	}
}

// The answer is once only for an allow; anything else, silence included,
// is a deny; never session or always.
func TestHermesAnswerJSON(t *testing.T) {
	for _, a := range []HookAnswer{
		{Agent: AgentHermes, Decision: "allow", Reason: "ok", ApprovalID: "hm-x"},
		{Agent: AgentHermes, Decision: "session"},
		{Agent: AgentHermes, Decision: "always"},
		{Agent: AgentHermes, Silent: true},
		{Agent: AgentHermes, Silent: true, Decision: "allow"},
		Denied(AgentHermes, "approve-tui: no \x1b[31m"),
	} {
		c, reason := hermesAnswer(t, a)
		if (a.Decision == "allow" && !a.Silent) != (c == "once") {
			t.Fatalf("%+v answered %s", a, c)
		}
		if strings.ContainsRune(reason, 0x1b) {
			t.Fatalf("raw escape in %q", reason)
		}
	}
}

// A repeated request_id joins its one row, and is answered once once: of
// two runs waiting on it, one answers once and the other deny, and a
// replay before Hermes' report is a deny too (the answer was recorded
// before it was given), as is one after it.
func TestHermesHookRepeatedRequestIsOneRow(t *testing.T) {
	s, o := emptyStore(t)
	in := hermesRequest("req-twice", "rm -rf build/", 300, time.Now(), nil)
	a, b := hermesRun(in, hookOpts(s), 0), hermesRun(in, hookOpts(s), 0)
	rec := awaitHookProposal(t, o)
	awaitDuplicateSubmit(t, o, rec.ApprovalID, "the second run never joined")
	approve(t, o, rec.ApprovalID)
	answers := map[string]int{}
	for _, ch := range []<-chan HookAnswer{a, b} {
		c, reason := hermesAnswer(t, recvHook(t, ch))
		answers[c]++
		if c == "deny" && !strings.Contains(reason, "hermes request req-twice was already answered once by "+rec.ApprovalID) {
			t.Fatalf("the second run's reason: %q", reason)
		}
	}
	if answers["once"] != 1 || answers["deny"] != 1 {
		t.Fatalf("two runs on one request answered %v", answers)
	}
	if ans, err := o.AnswerOf(context.Background(), "hermes", "req-twice"); err != nil || ans.ApprovalID != rec.ApprovalID || ans.Decision != "once" {
		t.Fatalf("answer recorded: %+v %v", ans, err)
	}
	// Replayed before Hermes' report arrives.
	if c, reason := hermesAnswer(t, recvHook(t, hermesRun(in, hookOpts(s), 0))); c != "deny" || !strings.Contains(reason, "already answered") {
		t.Fatalf("replay before the report: %s %q", c, reason)
	}
	if evs := auditOf(t, o, rec.ApprovalID); !strings.Contains(strings.Join(evs, " "), "answer:already_answered") {
		t.Fatalf("the refused replay is not audited: %v", evs)
	}
	report(t, s, "req-twice", "once")
	if c, reason := hermesAnswer(t, recvHook(t, hermesRun(in, hookOpts(s), 0))); c != "deny" || !strings.Contains(reason, "already answered") {
		t.Fatalf("%s %q", c, reason)
	}
	if recs, _ := o.List(context.Background(), storage.ListOptions{Status: storage.ListAll}); len(recs) != 1 {
		t.Fatalf("%d rows", len(recs))
	}
}

func report(t *testing.T, s *storage.Store, requestID, choice string) Report {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"event": "post_approval_response", "request_id": requestID, "choice": choice, "decided_by": "transport:approve-tui"})
	a := HermesHook(context.Background(), strings.NewReader(string(in)), hookOpts(s), 0)
	if a.Report == nil {
		t.Fatalf("not a report answer: %+v", a)
	}
	var out struct {
		Recorded   bool   `json:"recorded"`
		ApprovalID string `json:"approval_id"`
		Reason     string `json:"reason"`
	}
	decodeStrict(t, a.JSON(), &out)
	return *a.Report
}

// What Hermes reports is recorded on the proposal: once hands an approved
// one to Hermes; a transport failure after an approval means nothing ran.
func TestHermesHookRecordsWhatHermesDid(t *testing.T) {
	s, o := emptyStore(t)
	for _, tc := range []struct {
		choice string
		want   model.ExecutionStatus
	}{{"once", model.ExecHandedOff}, {"transport_timeout", model.ExecBlockedAfterConsume}} {
		rid := "req-report-" + tc.choice
		ch := hermesRun(hermesRequest(rid, "rm -rf build/", 300, time.Now(), nil), hookOpts(s), 0)
		rec := awaitHookProposal(t, o)
		approve(t, o, rec.ApprovalID)
		if c, _ := hermesAnswer(t, recvHook(t, ch)); c != "once" {
			t.Fatal(c)
		}
		if r := report(t, s, rid, tc.choice); !r.Recorded {
			t.Fatalf("%s: not recorded: %s", tc.choice, r.Reason)
		}
		got := get(t, o, rec.ApprovalID)
		if got.ExecutionStatus != tc.want {
			t.Fatalf("%s: execution %s, want %s", tc.choice, got.ExecutionStatus, tc.want)
		}
		if evs := auditOf(t, o, rec.ApprovalID); !strings.Contains(strings.Join(evs, " "), "report:hermes: "+tc.choice) {
			t.Fatalf("%s: audit %v", tc.choice, evs)
		}
	}
	// A denied one: the report is recorded, the execution left alone.
	ch := hermesRun(hermesRequest("req-report-deny", "rm -rf build/", 300, time.Now(), nil), hookOpts(s), 0)
	rec := awaitHookProposal(t, o)
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "no"); err != nil {
		t.Fatal(err)
	}
	recvHook(t, ch)
	if r := report(t, s, "req-report-deny", "deny"); !r.Recorded {
		t.Fatal(r.Reason)
	}
	if got := get(t, o, rec.ApprovalID); got.ExecutionStatus != model.ExecNotStarted {
		t.Fatal(got.ExecutionStatus)
	}
	if r := report(t, s, "req-never-seen", "transport_busy"); r.Recorded || !strings.Contains(r.Reason, "no proposal for this request") {
		t.Fatalf("%+v", r)
	}
}

// Eight requests at once (Hermes' worker cap): each its own row, each its
// own decision.
func TestHermesHookConcurrentRequests(t *testing.T) {
	s, o := emptyStore(t)
	const n = 8
	chs := make([]<-chan HookAnswer, n)
	for i := range chs {
		chs[i] = hermesRun(hermesRequest(fmt.Sprintf("req-many-%d", i), fmt.Sprintf("rm -rf build/%d", i), 300, time.Now(), nil), hookOpts(s), 0)
	}
	eventually(t, 20*time.Second, "not all eight waiting", func() bool {
		recs, _ := o.List(context.Background(), storage.ListOptions{})
		if len(recs) != n {
			return false
		}
		for _, r := range recs {
			if waiterState(t, o, r.ApprovalID).State != storage.WaiterLive {
				return false
			}
		}
		return true
	})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := HermesHookID(fmt.Sprintf("req-many-%d", i))
			if i%2 == 0 {
				approve(t, o, id)
			} else if _, err := o.Deny(context.Background(), id, operator, "odd"); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	for i, ch := range chs {
		c, reason := hermesAnswer(t, recvHook(t, ch))
		if want := map[bool]string{true: "once", false: "deny"}[i%2 == 0]; c != want || !strings.Contains(reason, HermesHookID(fmt.Sprintf("req-many-%d", i))) {
			t.Fatalf("request %d: %s %q", i, c, reason)
		}
	}
}

// A command no rule of approve-tui matches still waits (Hermes asked), at
// the risk of Hermes' pattern; a hostile one is flagged, and Hermes'
// strings are checked like every other foreign field.
func TestHermesHookRiskAndHostileText(t *testing.T) {
	s, o := emptyStore(t)
	ch := hermesRun(hermesRequest("req-tirith", "curl -s https://bit.ly/x -o /tmp/x", 300, time.Now(), map[string]any{
		"pattern_key": "tirith:shortened_url", "pattern_keys": []string{"tirith:shortened_url", "evil\u202e"}, "description": "Security scan"}), hookOpts(s), 0)
	rec := awaitHookProposal(t, o)
	if rec.RiskLevel != model.RiskMedium || !strings.Contains(rec.RiskReason, `raised from low to medium by Hermes' pattern "tirith:shortened_url"`) {
		t.Fatalf("%s %q", rec.RiskLevel, rec.RiskReason)
	}
	if !rec.Suspicious() || !strings.Contains(strings.Join(rec.Findings, ","), "Hermes pattern") {
		t.Fatalf("findings %v", rec.Findings)
	}
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, ""); err != nil {
		t.Fatal(err)
	}
	recvHook(t, ch)
	// No pattern named at all: high.
	ch = hermesRun(hermesRequest("req-nopattern", "echo hi", 300, time.Now(), map[string]any{
		"pattern_key": "", "pattern_keys": []string{}, "description": ""}), hookOpts(s), 0)
	rec = awaitHookProposal(t, o)
	if rec.RiskLevel != model.RiskHigh {
		t.Fatal(rec.RiskLevel)
	}
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, ""); err != nil {
		t.Fatal(err)
	}
	recvHook(t, ch)
}

// Hermes' requests are not previewed: the command runs in Hermes' own
// terminal backend, in a directory the request does not carry, and it is
// redacted. A directory that exists here is not named as its target; and
// with no preview there is nothing to grow, so the approval answers once.
func TestHermesHookIsNotPreviewed(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ch := hermesRun(hermesRequest("req-nopreview", "rm -rf "+dir, 300, time.Now(), nil), hookOpts(s), 0)
	rec := awaitHookProposal(t, o)
	if rec.Impact != nil || strings.Contains(rec.DiffSummary, "impact") {
		t.Fatalf("a Hermes request was previewed: %+v %q", rec.Impact, rec.DiffSummary)
	}
	if err := os.WriteFile(filepath.Join(dir, "g"), make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	approve(t, o, rec.ApprovalID)
	if c, _ := hermesAnswer(t, recvHook(t, ch)); c != "once" {
		t.Fatalf("answered %s", c)
	}
}

// A presented_at ahead of this clock (beyond a small skew) is not a time
// Hermes called at: refused, saying so, nothing submitted. Within the skew
// it is believed as now.
func TestHermesHookFuturePresentedAtRefused(t *testing.T) {
	s, o := emptyStore(t)
	for _, at := range []any{1e308, model.Epoch(time.Now().Add(time.Minute)), model.Epoch(time.Now().Add(3 * time.Second))} {
		in := hermesRequest("req-future", "rm -rf build/", 300, time.Now(), map[string]any{"presented_at": at})
		a := recvHook(t, hermesRun(in, hookOpts(s), 0))
		if c, reason := hermesAnswer(t, a); c != "deny" || !strings.Contains(reason, "presented_at is in the future") || strings.Contains(reason, "longer ago") {
			t.Fatalf("%v: %s %q", at, c, reason)
		}
	}
	if recs, _ := o.List(context.Background(), storage.ListOptions{Status: storage.ListAll}); len(recs) != 0 {
		t.Fatal("submitted")
	}
	// Within the skew: decided as usual (here, submitted and waited on).
	c, deny := decodeHermes([]byte(hermesRequest("req-skew", "rm -rf build/", 300, time.Now().Add(time.Second), nil)), time.Second, time.Now())
	if deny != "" || c.answerBy.IsZero() {
		t.Fatalf("a presented_at within the skew was refused: %q", deny)
	}
}
