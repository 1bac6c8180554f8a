package agent

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

var runnerActor = model.Actor{Surface: model.SurfaceRunner, Name: "agent@test", Person: "agent"}

type runOut struct {
	res RunResult
	err error
}

// runReq is a request for argv in dir, with a session and an hour to live.
func runReq(dir string, argv ...string) RunRequest {
	return RunRequest{
		Argv:           argv,
		Draft:          risk.Draft{SessionKey: "run:test", Requester: "approve-tui-run", Cwd: dir, Backend: "local", TTL: time.Hour},
		Stdin:          strings.NewReader(""),
		Stdout:         &syncbuf.Buffer{},
		Stderr:         &syncbuf.Buffer{},
		Log:            &syncbuf.Buffer{},
		Actor:          runnerActor,
		HeartbeatEvery: 50 * time.Millisecond,
	}
}

func startRun(s *storage.Store, req RunRequest) <-chan runOut {
	ch := make(chan runOut, 1)
	go func() {
		res, err := Run(context.Background(), s, req)
		ch <- runOut{res, err}
	}()
	return ch
}

func recvRun(t *testing.T, ch <-chan runOut) runOut {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
	return runOut{}
}

// awaitWaiting returns the one pending proposal once its runner waits on it.
func awaitWaiting(t *testing.T, o *storage.Store) *storage.Record {
	t.Helper()
	var rec *storage.Record
	eventually(t, 10*time.Second, "no pending proposal with a live waiter", func() bool {
		recs, err := o.List(context.Background(), storage.ListOptions{})
		if err != nil || len(recs) != 1 {
			return false
		}
		rec = recs[0]
		return waiterState(t, o, rec.ApprovalID).State == storage.WaiterLive
	})
	return rec
}

func get(t testing.TB, s *storage.Store, id string) *storage.Record {
	t.Helper()
	rec, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func approve(t *testing.T, o *storage.Store, id string) {
	t.Helper()
	if _, err := o.Consume(context.Background(), id, id, operator); err != nil {
		t.Fatal(err)
	}
}

func auditOf(t *testing.T, s *storage.Store, id string) []string {
	t.Helper()
	evs, err := s.Audit(context.Background(), storage.AuditQuery{ApprovalID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(evs) - 1; i >= 0; i-- {
		out = append(out, evs[i].Event+":"+evs[i].Reason)
	}
	return out
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Approved: the pinned bytes run exactly once, in the pinned directory;
// started is recorded while the command runs, executed with its exit code
// only once it has ended.
func TestRunApprovedRunsOnceAndRecordsAtTheBoundary(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	req := runReq(dir, "sh", "-c", "echo ran >> log.txt; while [ ! -e release ]; do sleep 0.02; done; exit 3")
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	if rec.Command != "sh -c 'echo ran >> log.txt; while [ ! -e release ]; do sleep 0.02; done; exit 3'" || rec.Cwd != dir ||
		rec.RiskLevel != model.RiskMedium || rec.SessionKey != "run:test" {
		t.Fatalf("pinned: %+v", rec.Proposal)
	}
	if exists(filepath.Join(dir, "log.txt")) {
		t.Fatal("ran before the decision")
	}
	approve(t, o, rec.ApprovalID)
	eventually(t, 10*time.Second, "the command never started", func() bool { return exists(filepath.Join(dir, "log.txt")) })
	// Running (it waits for the release file): started, with the pid, and
	// never executed before it ends.
	eventually(t, 10*time.Second, "started never recorded", func() bool {
		r := get(t, o, rec.ApprovalID)
		if r.ExecutionStatus == model.ExecExecuted {
			t.Fatal("executed recorded while the command runs")
		}
		return r.ExecutionStatus == model.ExecStarted && strings.HasPrefix(r.ExecutionReason, "pid ")
	})
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := recvRun(t, ch)
	if out.err != nil || out.res.Outcome != RunRan || out.res.ExitCode != 3 || out.res.ApprovalID != rec.ApprovalID {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(b) != "ran\n" {
		t.Fatalf("log: %q", b)
	}
	r := get(t, o, rec.ApprovalID)
	if r.ExecutionStatus != model.ExecExecuted || r.ExecutionReason != "exit code 3" {
		t.Fatalf("after: %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
	if got := strings.Join(auditOf(t, o, rec.ApprovalID), " "); got != "submit: approve: take: execution:started execution:executed" {
		t.Fatalf("audit: %s", got)
	}
	if log := req.Log.(*syncbuf.Buffer).String(); !strings.Contains(log, rec.ApprovalID+" needs approval") || !strings.Contains(log, "approved by alice@console via tui") {
		t.Fatalf("log: %s", log)
	}
}

func TestRunPassesOutputAndSignalsThrough(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	sigs := make(chan os.Signal, 1)
	req := runReq(dir, "sh", "-c", `trap 'echo got-term; exit 7' TERM; echo ready >&2; touch ready; while :; do sleep 0.02; done`)
	req.Signals = sigs
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	approve(t, o, rec.ApprovalID)
	eventually(t, 10*time.Second, "not ready", func() bool { return exists(filepath.Join(dir, "ready")) })
	sigs <- syscall.SIGTERM
	out := recvRun(t, ch)
	if out.err != nil || out.res.ExitCode != 7 {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if got := req.Stdout.(*syncbuf.Buffer).String(); got != "got-term\n" {
		t.Fatalf("stdout %q", got)
	}
	if got := req.Stderr.(*syncbuf.Buffer).String(); got != "ready\n" {
		t.Fatalf("stderr %q", got)
	}
	if r := get(t, o, rec.ApprovalID); r.ExecutionReason != "exit code 7" {
		t.Fatalf("reason %q", r.ExecutionReason)
	}
}

func TestRunRecordsDeathBySignal(t *testing.T) {
	s, o := emptyStore(t)
	ch := startRun(s, runReq(t.TempDir(), "sh", "-c", "kill -KILL $$"))
	rec := awaitWaiting(t, o)
	approve(t, o, rec.ApprovalID)
	out := recvRun(t, ch)
	if out.err != nil || out.res.ExitCode != 128+9 {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if r := get(t, o, rec.ApprovalID); r.ExecutionStatus != model.ExecExecuted || r.ExecutionReason != "killed by signal SIGKILL" {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
}

func TestRunDeniedNeverRuns(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	ch := startRun(s, runReq(dir, "sh", "-c", "echo ran >> log.txt"))
	rec := awaitWaiting(t, o)
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "not on a Friday"); err != nil {
		t.Fatal(err)
	}
	out := recvRun(t, ch)
	if out.err != nil || out.res.Outcome != RunDenied || out.res.ExitCode != ExitDenied ||
		!strings.Contains(out.res.Message, "denied by alice@console via tui: not on a Friday; not run") {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if exists(filepath.Join(dir, "log.txt")) {
		t.Fatal("a denied command ran")
	}
	if r := get(t, o, rec.ApprovalID); r.ExecutionStatus != model.ExecNotStarted {
		t.Fatalf("execution %s", r.ExecutionStatus)
	}
}

func TestRunExpiredNeverRuns(t *testing.T) {
	s, _ := emptyStore(t)
	dir := t.TempDir()
	req := runReq(dir, "sh", "-c", "echo ran >> log.txt")
	req.Draft.TTL = 300 * time.Millisecond
	out := recvRun(t, startRun(s, req))
	if out.err != nil || out.res.Outcome != RunExpired || out.res.ExitCode != ExitExpired {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if exists(filepath.Join(dir, "log.txt")) {
		t.Fatal("an expired command ran")
	}
}

// A timeout and an interrupt withdraw the proposal: denied by the requester,
// so nobody can approve it any more.
func TestRunGivingUpWithdraws(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		s, o := emptyStore(t)
		dir := t.TempDir()
		req := runReq(dir, "sh", "-c", "echo ran >> log.txt")
		req.Timeout = 300 * time.Millisecond
		req.ParkWindow = -1 // parking off: withdrawn as before
		out := recvRun(t, startRun(s, req))
		if out.err != nil || out.res.Outcome != RunTimedOut || out.res.ExitCode != ExitTimedOut {
			t.Fatalf("run: %+v %v", out.res, out.err)
		}
		checkWithdrawn(t, o, out.res.ApprovalID, "requester timed out after 300ms")
		if exists(filepath.Join(dir, "log.txt")) {
			t.Fatal("ran")
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		s, o := emptyStore(t)
		dir := t.TempDir()
		sigs := make(chan os.Signal, 1)
		req := runReq(dir, "sh", "-c", "echo ran >> log.txt")
		req.Signals = sigs
		ch := startRun(s, req)
		rec := awaitWaiting(t, o)
		sigs <- syscall.SIGINT
		out := recvRun(t, ch)
		if out.err != nil || out.res.Outcome != RunInterrupted || out.res.ExitCode != ExitInterrupted {
			t.Fatalf("run: %+v %v", out.res, out.err)
		}
		checkWithdrawn(t, o, rec.ApprovalID, "requester interrupted (SIGINT)")
		if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, operator); err == nil {
			t.Fatal("a withdrawn proposal was approved")
		}
		if exists(filepath.Join(dir, "log.txt")) {
			t.Fatal("ran")
		}
	})
}

func checkWithdrawn(t *testing.T, o *storage.Store, id, reason string) {
	t.Helper()
	r := get(t, o, id)
	if r.EffectiveStatus != model.StatusDenied || r.ConsumedBy != "requester via runner" {
		t.Fatalf("withdrawn? %s by %q", r.EffectiveStatus, r.ConsumedBy)
	}
	if got, _ := o.DenyReason(context.Background(), id); got != reason {
		t.Fatalf("deny reason %q, want %q", got, reason)
	}
	if ws := waiterState(t, o, id); ws.State != storage.WaiterNone {
		t.Fatalf("waiter %+v", ws)
	}
}

// Invariant 6: a proposal pinned low whose command now classifies high is
// consumed but not run, recorded blocked_after_consume.
func TestRunRuntimeGuardBlocksARiskThatRose(t *testing.T) {
	propose = func(d risk.Draft, now time.Time) (*model.Proposal, risk.Judgement, error) {
		p, v, err := risk.Propose(d, now)
		if err == nil {
			// As if the rules had changed since the proposal was pinned.
			p.RiskLevel, p.DefaultDecision = model.RiskLow, model.DefaultAllow
		}
		return p, v, err
	}
	defer func() { propose = risk.Propose }()
	s, o := emptyStore(t)
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	ch := startRun(s, runReq(dir, "rm", "-rf", victim))
	rec := awaitWaiting(t, o)
	if rec.RiskLevel != model.RiskLow || rec.ClassifierRisk != model.RiskHigh {
		t.Fatalf("pinned %s, classifier %s", rec.RiskLevel, rec.ClassifierRisk)
	}
	approve(t, o, rec.ApprovalID)
	out := recvRun(t, ch)
	if out.err != nil || out.res.Outcome != RunBlocked || out.res.ExitCode != ExitBlocked || !strings.Contains(out.res.Message, "risk guard") {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if !exists(victim) {
		t.Fatal("the guard let it run")
	}
	r := get(t, o, rec.ApprovalID)
	if r.Status != model.StatusConsumed || r.ExecutionStatus != model.ExecBlockedAfterConsume || !strings.Contains(r.ExecutionReason, "above its pinned risk low") {
		t.Fatalf("recorded %s %s %q", r.Status, r.ExecutionStatus, r.ExecutionReason)
	}
}

// Invariant 10: what runs is the consumed proposal's command, and only if
// it is the one submitted.
func TestRunRefusesCommandBytesThatDiffer(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	ch := startRun(s, runReq(dir, "sh", "-c", "echo good >> log.txt"))
	rec := awaitWaiting(t, o)
	db, err := sql.Open("sqlite", "file:"+o.Path()+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE gateway_approvals SET payload_json = replace(payload_json, 'echo good', 'echo evil') WHERE approval_id = ?`, rec.ApprovalID); err != nil {
		t.Fatal(err)
	}
	// The row alone rewritten would be refused at approve (tampered:
	// storage's tests); rewritten with its submit record too (the audit
	// chain then breaks, which `audit --verify` reports), the approval
	// goes through, and the runner still runs nothing but the bytes it
	// submitted.
	var payload string
	if err := db.QueryRow(`SELECT payload_json FROM gateway_approvals WHERE approval_id = ?`, rec.ApprovalID).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(payload))
	if _, err := db.Exec(`UPDATE approve_tui_audit SET detail = replace(detail, ?, ?) WHERE approval_id = ? AND event = 'submit'`,
		rec.PayloadSHA256, hex.EncodeToString(sum[:]), rec.ApprovalID); err != nil {
		t.Fatal(err)
	}
	if r := get(t, o, rec.ApprovalID); r.Command != "sh -c 'echo evil >> log.txt'" || r.Corrupt != "" {
		t.Fatalf("row and submit record rewritten: %q %q", r.Command, r.Corrupt)
	}
	approve(t, o, rec.ApprovalID)
	out := recvRun(t, ch)
	if out.err != nil || out.res.Outcome != RunBlocked || !strings.Contains(out.res.Message, "command bytes differ from the pinned ones") {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if exists(filepath.Join(dir, "log.txt")) {
		t.Fatal("ran")
	}
	if r := get(t, o, rec.ApprovalID); r.ExecutionStatus != model.ExecBlockedAfterConsume || r.ExecutionReason != "command bytes differ from the pinned ones" {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
}

func TestRunDispatchFailed(t *testing.T) {
	s, o := emptyStore(t)
	req := runReq(t.TempDir(), "/nonexistent/approve-tui-test-program", "x")
	req.Draft.Raise = model.RiskHigh
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	approve(t, o, rec.ApprovalID)
	out := recvRun(t, ch)
	if out.err != nil || out.res.Outcome != RunDispatchFailed || out.res.ExitCode != ExitNotFound {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	r := get(t, o, rec.ApprovalID)
	if r.ExecutionStatus != model.ExecDispatchFailed || !strings.Contains(r.ExecutionReason, "no such file or directory") {
		t.Fatalf("recorded %s %q", r.ExecutionStatus, r.ExecutionReason)
	}
	if got := strings.Join(auditOf(t, o, rec.ApprovalID), " "); got != "submit: approve: take: execution:dispatch_failed" {
		t.Fatalf("audit: %s", got)
	}
}

// Nothing matches: it runs at once, stdin and stdout passed through, and
// the audit log says it was allowed by policy, then how it ended.
func TestRunAllowedByPolicy(t *testing.T) {
	s, _ := emptyStore(t)
	req := runReq(t.TempDir(), "cat")
	req.Stdin = strings.NewReader("from stdin\n")
	out := recvRun(t, startRun(s, req))
	if out.err != nil || out.res.Outcome != RunRan || out.res.ExitCode != 0 || out.res.ApprovalID != "" {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if got := req.Stdout.(*syncbuf.Buffer).String(); got != "from stdin\n" {
		t.Fatalf("stdout %q", got)
	}
	if n, _ := s.CountPending(context.Background()); n != 0 {
		t.Fatal("submitted a proposal")
	}
	evs, _ := s.Audit(context.Background(), storage.AuditQuery{ApprovalID: out.res.PolicyRef})
	if len(evs) != 2 || evs[1].Reason != storage.PolicyAllow || evs[0].Reason != storage.PolicyExecuted ||
		evs[0].Detail["reason"] != "exit code 0" || evs[1].Detail["command"] != "cat" {
		t.Fatalf("audit: %+v", evs)
	}

	// Its exit code is passed through.
	out = recvRun(t, startRun(s, runReq(t.TempDir(), "ls", "/nonexistent-approve-tui")))
	if out.err != nil || out.res.Outcome != RunRan || out.res.ExitCode != 2 {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
}

func TestRunHardlineRefusedWithoutProposal(t *testing.T) {
	s, _ := emptyStore(t)
	out := recvRun(t, startRun(s, runReq(t.TempDir(), "mkfs.zz9", "/dev/null")))
	if out.err != nil || out.res.Outcome != RunHardline || out.res.ExitCode != ExitHardline || out.res.ApprovalID != "" {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	recs, _ := s.List(context.Background(), storage.ListOptions{Status: storage.ListAll})
	if len(recs) != 0 {
		t.Fatal("a hardline command was submitted")
	}
	evs, _ := s.Audit(context.Background(), storage.AuditQuery{})
	if len(evs) != 1 || evs[0].Event != storage.EventPolicy || evs[0].Reason != storage.PolicyDeny || evs[0].ApprovalID != out.res.PolicyRef {
		t.Fatalf("audit: %+v", evs)
	}
}

func TestRunShellMode(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "junk"), 0o755); err != nil {
		t.Fatal(err)
	}
	req := runReq(dir)
	req.Argv, req.Shell = nil, "rm -rf junk && echo gone"
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	if rec.Command != "rm -rf junk && echo gone" || rec.RiskLevel != model.RiskHigh {
		t.Fatalf("pinned %q %s", rec.Command, rec.RiskLevel)
	}
	approve(t, o, rec.ApprovalID)
	if out := recvRun(t, ch); out.err != nil || out.res.ExitCode != 0 {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if exists(filepath.Join(dir, "junk")) || req.Stdout.(*syncbuf.Buffer).String() != "gone\n" {
		t.Fatal("the shell line did not run")
	}
}

func TestRunStoreUnavailableRunsNothing(t *testing.T) {
	s, _ := emptyStore(t)
	ro, err := storage.Open(context.Background(), s.Path(), storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	dir := t.TempDir()
	for _, argv := range [][]string{{"sh", "-c", "echo ran >> log.txt"}, {"touch", "log.txt"}} {
		out := recvRun(t, startRun(ro, runReq(dir, argv...)))
		var roErr *storage.ReadOnlyError
		if !errors.As(out.err, &roErr) {
			t.Fatalf("%q: %+v %v", argv, out.res, out.err)
		}
	}
	if exists(filepath.Join(dir, "log.txt")) {
		t.Fatal("ran without an audit")
	}
}

func TestRunRequestErrors(t *testing.T) {
	s, _ := emptyStore(t)
	for _, req := range []RunRequest{{}, {Argv: []string{""}}, {Shell: "  "}, {Argv: []string{"ls"}, Shell: "ls"}} {
		if _, err := Run(context.Background(), s, req); err == nil {
			t.Errorf("%+v accepted", req)
		}
	}
	var lower *risk.LowerRiskError
	req := runReq(t.TempDir(), "rm", "-rf", "x")
	req.Draft.Raise = model.RiskLow
	if _, err := Run(context.Background(), s, req); !errors.As(err, &lower) {
		t.Fatalf("lowering the risk: %v", err)
	}
}
