package storage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// answerCommand is the command every proposal of these tests pins.
const answerCommand = "rm -rf /tmp/answer"

// approvedProposal submits and approves a proposal of answerCommand.
func approvedProposal(t testing.TB, s *Store, id string, now time.Time) {
	t.Helper()
	mustSubmit(t, s, proposal(id, answerCommand, model.RiskHigh, now, time.Hour))
	if _, err := s.Consume(context.Background(), id, id, alice); err != nil {
		t.Fatal(err)
	}
}

// roleAnswerAll reads "APPROVAL_ID REQUEST_ID" lines on stdin (until "go":
// every worker starts together), says "ready" first, and records each
// answer as hermes' "once", printing "gave REQUEST_ID APPROVAL_ID",
// "refused REQUEST_ID APPROVAL_ID PRIOR_APPROVAL_ID" or "error ...".
func roleAnswerAll(path, worker string) int {
	s, err := Open(context.Background(), path, Options{BusyTimeout: time.Minute})
	if err != nil {
		fmt.Println("open-error", err)
		return 1
	}
	defer s.Close()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	var lines []string
	for in.Scan() && in.Text() != "go" {
		lines = append(lines, in.Text())
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	actor := model.Actor{Surface: model.SurfaceHook, Name: "hermes-" + worker}
	for _, l := range lines {
		f := strings.Fields(l)
		err := s.RecordAnswer(context.Background(), Answer{Source: "hermes", RequestID: f[1], ApprovalID: f[0], Command: answerCommand, Decision: "once"}, actor)
		var aa *AlreadyAnsweredError
		switch {
		case err == nil:
			fmt.Fprintln(out, "gave", f[1], f[0])
		case errors.As(err, &aa):
			fmt.Fprintln(out, "refused", f[1], f[0], aa.Prior.ApprovalID)
		default:
			fmt.Fprintln(out, "error", l, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	return 0
}

// One request id is answered once, however many processes give it and
// through however many proposals: 8 processes race to answer each of 40
// request ids through each of its 2 approved proposals; exactly one answer
// per request id is given and recorded, every other is refused naming it,
// and each refusal is audited.
func TestAnswerOncePerRequestAcrossProcesses(t *testing.T) {
	const workers, n = 8, 40
	path := tempDB(t)
	s := openAt(t, path, nil)
	now := time.Now()
	var lines []string
	for i := 0; i < n; i++ {
		req := fmt.Sprintf("req-%02d", i)
		for _, side := range []string{"a", "b"} {
			id := fmt.Sprintf("hm-answer-%02d-%s", i, side)
			approvedProposal(t, s, id, now)
			lines = append(lines, id+" "+req)
		}
	}
	lists := make([][]string, workers)
	for w := range lists {
		// Each worker in its own order, so that the races differ.
		l := append([]string(nil), lines...)
		for i := range l {
			j := (i*7 + w*13) % len(l)
			l[i], l[j] = l[j], l[i]
		}
		lists[w] = l
	}
	outs := startWorkers(t, "answer-all", path, lists)()
	given := map[string]string{} // request id -> approval id
	refused := 0
	for w, lines := range outs {
		if len(lines) != 2*n {
			t.Fatalf("worker %d answered %d of %d: %v", w, len(lines), 2*n, lines)
		}
		for _, l := range lines {
			f := strings.Fields(l)
			switch f[0] {
			case "gave":
				if prev, ok := given[f[1]]; ok {
					t.Fatalf("request %s answered twice: through %s and %s", f[1], prev, f[2])
				}
				given[f[1]] = f[2]
			case "refused":
				refused++
			default:
				t.Fatalf("worker %d: %q", w, l)
			}
		}
	}
	if len(given) != n || refused != n*(2*workers-1) {
		t.Fatalf("%d given, %d refused; want %d and %d", len(given), refused, n, n*(2*workers-1))
	}
	for _, lines := range outs {
		for _, l := range lines {
			if f := strings.Fields(l); f[0] == "refused" && f[3] != given[f[1]] {
				t.Fatalf("%q does not name the answer given (%s)", l, given[f[1]])
			}
		}
	}
	for req, id := range given {
		a, err := s.AnswerOf(context.Background(), "hermes", req)
		if err != nil || a.ApprovalID != id || a.Decision != "once" || !strings.HasPrefix(a.Actor, "hermes-") {
			t.Fatalf("%s: recorded %+v %v, given through %s", req, a, err, id)
		}
	}
	db := rawDB(t, path)
	if ok := countAudit(t, db, `event = 'answer' AND outcome = 'ok'`); ok != n {
		t.Fatalf("%d answer events, want %d", ok, n)
	}
	if r := countAudit(t, db, `event = 'answer' AND outcome = 'refused' AND reason = 'already_answered'`); r != n*(2*workers-1) {
		t.Fatalf("%d refused answer events, want %d", r, n*(2*workers-1))
	}
	if res, err := s.VerifyAudit(context.Background()); err != nil || !res.OK {
		t.Fatalf("audit chain after the race: %+v %v", res, err)
	}
}

// In one process: the same request again, another request through the
// same approval, and proposals that are not approved, not the command, or
// answered otherwise already: each refused, nothing recorded.
func TestAnswerRefusals(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	approvedProposal(t, s, "hm-answer-one", c.Now())
	give := func(id, req, command string) error {
		return s.RecordAnswer(ctx, Answer{Source: "hermes", RequestID: req, ApprovalID: id, Command: command, Decision: "once"}, agent)
	}
	if err := give("hm-answer-one", "r1", answerCommand); err != nil {
		t.Fatal(err)
	}
	var aa *AlreadyAnsweredError
	if err := give("hm-answer-one", "r1", answerCommand); !errors.As(err, &aa) || !strings.Contains(err.Error(), "hermes request r1 was already answered once by hm-answer-one") {
		t.Fatalf("the same request again: %v", err)
	}
	if err := give("hm-answer-one", "r2", answerCommand); !errors.As(err, &aa) || !strings.Contains(err.Error(), "proposal hm-answer-one already answered hermes request r1") {
		t.Fatalf("another request through the same approval: %v", err)
	}
	if _, err := s.AnswerOf(ctx, "hermes", "r2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("r2 recorded: %v", err)
	}
	// Not approved (pending, then denied); another command; an execution
	// recorded already; no such proposal.
	mustSubmit(t, s, proposal("hm-answer-pending", answerCommand, model.RiskHigh, c.Now(), time.Hour))
	var it *InvalidTransitionError
	if err := give("hm-answer-pending", "r3", answerCommand); !errors.As(err, &it) {
		t.Fatalf("pending: %v", err)
	}
	if _, err := s.Deny(ctx, "hm-answer-pending", alice, "no"); err != nil {
		t.Fatal(err)
	}
	if err := give("hm-answer-pending", "r3", answerCommand); !errors.As(err, &it) {
		t.Fatalf("denied: %v", err)
	}
	approvedProposal(t, s, "hm-answer-two", c.Now())
	if err := give("hm-answer-two", "r4", "rm -rf /"); !errors.As(err, &it) {
		t.Fatalf("another command: %v", err)
	}
	if err := s.RecordExecution(ctx, "hm-answer-two", model.ExecHandedOff, "", agent); err != nil {
		t.Fatal(err)
	}
	if err := give("hm-answer-two", "r4", answerCommand); !errors.As(err, &it) {
		t.Fatalf("execution recorded: %v", err)
	}
	if err := give("hm-answer-none", "r5", answerCommand); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no proposal: %v", err)
	}
	for _, req := range []string{"r3", "r4", "r5"} {
		if _, err := s.AnswerOf(ctx, "hermes", req); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s recorded: %v", req, err)
		}
	}
	evs, err := s.Audit(ctx, AuditQuery{ApprovalID: "hm-answer-one"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.Event == EventAnswer {
			got = append(got, e.Outcome+":"+e.Reason)
		}
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "ok:hermes: once refused:already_answered refused:already_answered" {
		t.Fatalf("audit of hm-answer-one: %v", got)
	}
	// A watcher may not answer.
	approvedProposal(t, s, "hm-answer-three", c.Now())
	var ro *ReadOnlyError
	if err := s.RecordAnswer(ctx, Answer{Source: "hermes", RequestID: "r6", ApprovalID: "hm-answer-three", Command: answerCommand, Decision: "once"}, watcher); !errors.As(err, &ro) {
		t.Fatalf("watcher: %v", err)
	}
}
