package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// BenchmarkParkedRetry is the retry of an approved parked call as its
// agent feels it: the built binary exec'd as Claude Code runs its hook, a
// PreToolUse input on stdin (a file), timed from the start of the process
// to its exit with the allow written (each answer is checked after the
// timing). Every iteration is another call: before the timing, b.N hooks
// (20 at a time) ask, stop at their own --timeout (1s) and park; each
// proposal is approved; then each call is asked again with a new
// tool_use_id, so the hook finds the parked proposal, takes it, re-checks
// it and answers allow.
//
// Two stores, the retries alternating between them (in alternating
// order) so that both are measured under the same load: "empty" holds
// only those parked calls; "open10k" 10,000 more open proposals of other
// sessions, every one parked (the match index at its largest). The
// lookup's cost on every hook call at 10k open is the difference.
//
// Metrics, for each store: STORE-p50-µs, STORE-p99-µs (wall),
// STORE-cpu-p50-µs, STORE-cpu-p99-µs (the process's user and system
// time); lookup-p50-µs: open10k's wall p50 less empty's. Goal: p99 ≤ 50 ms.
//
//	go test ./cli -run '^$' -bench BenchmarkParkedRetry -benchtime 200x
func BenchmarkParkedRetry(b *testing.B) {
	dir := b.TempDir()
	bin := startupBuild(b, dir)
	type store struct {
		name      string
		open      int
		db        string
		ins, outs []string
		ids       []string
		wall, cpu []time.Duration
	}
	stores := []*store{{name: "empty"}, {name: "open10k", open: 10_000}}
	n := b.N + 1 // the first of each is a warm-up
	for _, st := range stores {
		st.db = filepath.Join(b.TempDir(), "state.db")
		if out, err := exec.Command(bin, "init", "--db", st.db).CombinedOutput(); err != nil {
			b.Fatalf("init: %v\n%s", err, out)
		}
		if st.open > 0 {
			fillParked(b, st.db, st.open)
		}
		work := b.TempDir()
		st.ids = parkCalls(b, bin, st.db, work, n)
		approveAll(b, st.db, st.ids)
		for i := range n {
			in := filepath.Join(work, fmt.Sprintf("retry-%d.json", i))
			if err := os.WriteFile(in, []byte(benchCall(work, i, "toolu_retry")), 0o644); err != nil {
				b.Fatal(err)
			}
			st.ins, st.outs = append(st.ins, in), append(st.outs, filepath.Join(work, fmt.Sprintf("answer-%d.json", i)))
		}
	}
	run := func(st *store, i int) {
		w, c := retryRun(b, bin, st.ins[i], st.outs[i], "--db", st.db, "hook", "claude-code", "--timeout", "30s", "--park-window", "1h")
		if i > 0 {
			st.wall, st.cpu = append(st.wall, w), append(st.cpu, c)
		}
	}
	run(stores[0], 0)
	run(stores[1], 0)
	b.ResetTimer()
	for i := 1; i < n; i++ {
		first, second := stores[i%2], stores[1-i%2]
		run(first, i)
		run(second, i)
	}
	b.StopTimer()
	for _, st := range stores {
		for i := range n {
			ans, err := os.ReadFile(st.outs[i])
			if err != nil || !bytes.Contains(ans, []byte(`"permissionDecision":"allow"`)) {
				b.Fatalf("%s: retry %d of %s answered %q (%v)", st.name, i, st.ids[i], ans, err)
			}
		}
		b.ReportMetric(startupPct(st.wall, 0.50), st.name+"-p50-µs")
		b.ReportMetric(startupPct(st.wall, 0.99), st.name+"-p99-µs")
		b.ReportMetric(startupPct(st.cpu, 0.50), st.name+"-cpu-p50-µs")
		b.ReportMetric(startupPct(st.cpu, 0.99), st.name+"-cpu-p99-µs")
	}
	b.ReportMetric(startupPct(stores[1].wall, 0.50)-startupPct(stores[0].wall, 0.50), "lookup-p50-µs")
}

// benchCall is call i of the benchmark's session: a Claude Code
// PreToolUse input whose command a rule matches (a shell via -c).
func benchCall(cwd string, i int, key string) string {
	return mustJSON(map[string]any{"session_id": "bench-session", "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": fmt.Sprintf("sh -c 'echo call %d > out-%d'", i, i)},
		"tool_use_id": fmt.Sprintf("%s_%d", key, i)})
}

// parkCalls asks n calls, 20 hook processes at a time, each stopping at
// its own timeout and parking its proposal; it returns their ids in order.
func parkCalls(b *testing.B, bin, db, work string, n int) []string {
	b.Helper()
	ids := make([]string, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 20)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cmd := exec.Command(bin, "--db", db, "hook", "claude-code", "--timeout", "1s", "--park-window", "1h")
			cmd.Stdin = strings.NewReader(benchCall(work, i, "toolu_first"))
			cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
			out, err := cmd.Output()
			m := parkedWords.FindStringSubmatch(string(hookReason(out)))
			if err != nil || m == nil {
				errs[i] = fmt.Errorf("call %d: %v: %s", i, err, out)
				return
			}
			ids[i] = m[1]
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return ids
}

// hookReason is the permissionDecisionReason of a Claude Code answer.
func hookReason(out []byte) string {
	i := bytes.Index(out, []byte(`"permissionDecisionReason":"`))
	if i < 0 {
		return ""
	}
	s := string(out[i+len(`"permissionDecisionReason":"`):])
	if j := strings.Index(s, `"`); j >= 0 {
		s = s[:j]
	}
	return s
}

// approveAll approves every id, as an operator would with approve --confirm.
func approveAll(b *testing.B, db string, ids []string) {
	b.Helper()
	ctx := context.Background()
	s, err := storage.Open(ctx, db, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	op := model.Actor{Surface: model.SurfaceCLI, Name: "bench-operator"}
	for _, id := range ids {
		if _, err := s.Consume(ctx, id, id, op); err != nil {
			b.Fatalf("approve %s: %v", id, err)
		}
	}
}

// fillParked adds n open proposals of other sessions, each parked.
func fillParked(b *testing.B, db string, n int) {
	b.Helper()
	ctx := context.Background()
	s, err := storage.Open(ctx, db, storage.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	actor := model.Actor{Surface: model.SurfaceHook, Name: "filler"}
	for i := range n {
		p := &model.Proposal{
			ApprovalID: fmt.Sprintf("fill-%06d", i), CreatedAt: model.Epoch(now), SessionKey: fmt.Sprintf("claude-code:other-%d", i%97),
			Requester: "claude-code", Command: fmt.Sprintf("rm -rf /srv/build/%d", i), Cwd: "/srv/app", Backend: "local",
			RiskLevel: model.RiskHigh, RiskReason: "filler", PolicyDecision: model.PolicyNeedsApproval,
			PolicyVersion: "bench/1", RequiresExplicitApproval: true, DefaultDecision: model.DefaultDeny,
			ExpiresAt: model.F64(model.Epoch(now.Add(2 * time.Hour))),
		}
		if err := s.Submit(ctx, p, actor); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Park(ctx, p.ApprovalID, now.Add(time.Hour), "hook timeout", actor); err != nil {
			b.Fatal(err)
		}
	}
}

// retryRun execs bin with args, stdin and stdout files, and returns the
// wall time from start to exit and the CPU time the process used.
func retryRun(b *testing.B, bin, stdin, stdout string, args ...string) (wall, cpu time.Duration) {
	b.Helper()
	in, err := os.Open(stdin)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(stdout)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, null
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("hook: %v", err)
	}
	wall = time.Since(start)
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}
