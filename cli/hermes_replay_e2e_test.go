package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/internal/pgtest"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// hermesHookInput is what the plugin writes on `hook hermes`' stdin for a
// request of Hermes (presentedAt zero: none).
func hermesHookInput(requestID, command string, timeout float64, presentedAt time.Time) []byte {
	m := map[string]any{
		"event": "present", "schema_version": 1, "request_id": requestID, "digest": strings.Repeat("cd", 32),
		"command": command, "description": "recursive delete", "pattern_key": "recursive delete",
		"pattern_keys": []string{"recursive delete"}, "surface": "gateway", "timeout_seconds": timeout,
		"allowed_choices": []string{"once", "deny"}, "session_key": "agent:main:replay",
	}
	if !presentedAt.IsZero() {
		m["presented_at"] = model.Epoch(presentedAt)
	}
	b, _ := json.Marshal(m)
	return b
}

// hookAnswer is `hook hermes`' one-line answer.
type hookAnswer struct {
	Choice     string `json:"choice"`
	ApprovalID string `json:"approval_id"`
	Reason     string `json:"reason"`
}

// runHermesHook runs the real binary's `hook hermes` on input and decodes
// its answer.
func runHermesHook(t *testing.T, bin, db string, input []byte) hookAnswer {
	t.Helper()
	cmd := exec.Command(bin, "--db", db, "hook", "hermes")
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("hook hermes: %v\n%s", err, stderr.String())
		return hookAnswer{}
	}
	var a hookAnswer
	if err := json.Unmarshal(bytes.TrimSpace(out), &a); err != nil {
		t.Errorf("hook hermes answered %q: %v", out, err)
	}
	return a
}

// A request id replayed to approve-tui is answered once once, across
// processes: five `hook hermes` processes wait on one request, one
// approval is given, and exactly one of them answers once; a replay run
// after that, before Hermes' report arrives, is denied; each refusal is
// in the audit log. On SQLite, and on PostgreSQL when the test server is
// set.
func TestHermesReplayedRequestIsAnsweredOnce(t *testing.T) {
	dir := t.TempDir()
	bin := buildBinaryTB(t, dir)
	dbs := map[string]string{"sqlite": filepath.Join(dir, "state.db")}
	if pgtest.Available() {
		dbs["postgres"] = pgtest.Schema(t)
	}
	for name, db := range dbs {
		t.Run(name, func(t *testing.T) { hermesReplayOnce(t, bin, db) })
	}
}

func hermesReplayOnce(t *testing.T, bin, db string) {
	runBin(t, bin, 0, "--db", db, "init")
	const procs = 5
	command := "rm -rf /srv/replay"
	input := hermesHookInput("req-replayed", command, 120, time.Now())
	answers := make([]hookAnswer, procs)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			answers[i] = runHermesHook(t, bin, db, input)
		}(i)
	}
	id := agent.HermesHookID("req-replayed")
	s, err := storage.Open(context.Background(), db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eventually(t, 60*time.Second, "not every process joined the request's proposal", func() bool {
		evs, _ := s.Audit(context.Background(), storage.AuditQuery{ApprovalID: id})
		n := 0
		for _, e := range evs {
			if e.Event == storage.EventSubmit {
				n++
			}
		}
		return n == procs
	})
	runBin(t, bin, 0, "--db", db, "approve", "--confirm", id, "--", id)
	wg.Wait()
	once := 0
	for _, a := range answers {
		switch {
		case a.Choice == "once":
			once++
		case a.Choice != "deny" || !strings.Contains(a.Reason, "request req-replayed was already answered once by "+id):
			t.Errorf("a run answered %+v", a)
		}
	}
	if once != 1 {
		t.Fatalf("%d of %d runs on one request answered once: %+v", once, procs, answers)
	}
	// Replayed now, before Hermes reports: deny.
	if a := runHermesHook(t, bin, db, input); a.Choice != "deny" || !strings.Contains(a.Reason, "already answered") {
		t.Fatalf("a replay before the report: %+v", a)
	}
	ans, err := s.AnswerOf(context.Background(), "hermes", "req-replayed")
	if err != nil || ans.ApprovalID != id || ans.Decision != "once" {
		t.Fatalf("recorded answer %+v %v", ans, err)
	}
	evs, err := s.Audit(context.Background(), storage.AuditQuery{ApprovalID: id})
	if err != nil {
		t.Fatal(err)
	}
	given, refused := 0, 0
	for _, e := range evs {
		if e.Event == storage.EventAnswer {
			switch {
			case e.Outcome == storage.OutcomeOK:
				given++
			case e.Reason == storage.RefusedAlreadyAnswered:
				refused++
			}
		}
	}
	if given != 1 || refused != procs {
		t.Fatalf("audit: %d answers given, %d refused; want 1 and %d", given, refused, procs)
	}
	if rec, err := s.Get(context.Background(), id); err != nil || rec.ExecutionStatus != model.ExecNotStarted {
		t.Fatalf("the execution of the answered proposal: %+v %v", rec, err)
	}
}

// A request without presented_at, through the real binary: denied as
// stale, nothing submitted.
func TestHermesRequestWithoutPresentedAtIsStale(t *testing.T) {
	dir := t.TempDir()
	bin := buildBinaryTB(t, dir)
	db := filepath.Join(dir, "state.db")
	runBin(t, bin, 0, "--db", db, "init")
	a := runHermesHook(t, bin, db, hermesHookInput("req-undated", "rm -rf /srv/undated", 120, time.Time{}))
	if a.Choice != "deny" || !strings.Contains(a.Reason, "no presented_at") || !strings.Contains(a.Reason, "stale") {
		t.Fatalf("answered %+v", a)
	}
	out := runBin(t, bin, 0, "--db", db, "list", "--status", "all")
	if strings.Contains(out, "undated") {
		t.Fatalf("submitted:\n%s", out)
	}
}
