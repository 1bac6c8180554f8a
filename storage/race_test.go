package storage

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Invariant 1: however many processes race, each id has exactly one winner
// and every loser is told it lost, and to whom.
func TestExactlyOnceAcrossProcesses(t *testing.T) {
	const workers, n = 8, 200
	if testing.Short() {
		t.Log("running the full race even in -short: it is the invariant")
	}
	path := tempDB(t)
	s := openAt(t, path, nil)
	now := time.Now()
	var idList []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("race-%03d-%s", i, model.NewID())
		idList = append(idList, id)
		mustSubmit(t, s, proposal(id, "rm -rf /tmp/race", model.RiskHigh, now, time.Hour))
	}

	lists := make([][]string, workers)
	for w := range lists {
		lists[w] = idList
	}
	outs := startConsumers(t, path, lists)()
	type result struct {
		worker string
		lines  []string
	}
	results := make([]result, workers)
	for w, lines := range outs {
		results[w] = result{worker: fmt.Sprintf("worker-%d", w), lines: lines}
	}

	winners := map[string]string{}
	losses := 0
	for _, r := range results {
		if len(r.lines) != n {
			t.Fatalf("%s answered %d of %d ids: %v", r.worker, len(r.lines), n, r.lines)
		}
		for _, line := range r.lines {
			f := strings.Fields(line)
			switch f[0] {
			case "won":
				if prev, ok := winners[f[1]]; ok {
					t.Fatalf("%s consumed twice: by %s and %s", f[1], prev, r.worker)
				}
				winners[f[1]] = r.worker
			case "lost":
				losses++
				if len(f) < 4 || !strings.HasPrefix(f[3], "worker-") {
					t.Fatalf("a loser was not told who won: %q", line)
				}
			default:
				t.Fatalf("unexpected result: %q", line)
			}
		}
	}
	if len(winners) != n || losses != n*(workers-1) {
		t.Fatalf("%d winners, %d losses; want %d and %d", len(winners), losses, n, n*(workers-1))
	}
	db := rawDB(t, path)
	for id, w := range winners {
		var status, by string
		if err := db.QueryRow(`SELECT status, consumed_by FROM gateway_approvals WHERE approval_id = ?`, id).Scan(&status, &by); err != nil {
			t.Fatal(err)
		}
		if status != "consumed" || by != w+" via cli" {
			t.Fatalf("%s: row says %s by %s, winner was %s", id, status, by, w)
		}
	}
	if ok := countAudit(t, db, `event = 'approve' AND outcome = 'ok'`); ok != n {
		t.Fatalf("%d approve events, want %d", ok, n)
	}
	if lost := countAudit(t, db, `event = 'approve' AND outcome = 'refused' AND reason = 'not_pending'`); lost != n*(workers-1) {
		t.Fatalf("%d refused events, want %d", lost, n*(workers-1))
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("audit chain after the race: %+v %v", res, err)
	}
}

// startConsumers starts one consume-all helper process per list of ids
// (worker N consumes as worker-N, with env), and returns what lets them all
// go at once and waits for them: each one's output lines ("won ID",
// "lost ID by WHO", ...).
func startConsumers(tb testing.TB, path string, lists [][]string, env ...string) (release func() [][]string) {
	return startWorkers(tb, "consume-all", path, lists, env...)
}

// startWorkers is startConsumers for any of the roles roleConsumeAll
// plays: those that announce themselves ("ready": consume-interop,
// vote-all) are waited for before release lets them go.
func startWorkers(tb testing.TB, role, path string, lists [][]string, env ...string) (release func() [][]string) {
	tb.Helper()
	announce := role != "consume-all"
	outs := make([][]string, len(lists))
	ready := make(chan error, len(lists))
	var wg sync.WaitGroup
	stdins := make([]io.WriteCloser, len(lists))
	for w, ids := range lists {
		cmd := helperProcess(tb, role, path, append([]string{fmt.Sprintf("STORAGE_TEST_WORKER=%d", w)}, env...)...)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		stdins[w] = stdin
		fmt.Fprintln(stdin, strings.Join(ids, "\n"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(stdout)
			first := announce
			for sc.Scan() {
				if first {
					first = false
					if sc.Text() == "ready" {
						ready <- nil
						continue
					}
					ready <- fmt.Errorf("worker %d: %s", w, sc.Text())
				}
				outs[w] = append(outs[w], sc.Text())
			}
			if first {
				ready <- fmt.Errorf("worker %d said nothing", w)
			}
			cmd.Wait()
		}()
	}
	return func() [][]string {
		if announce {
			for range lists {
				if err := <-ready; err != nil {
					tb.Error(err)
				}
			}
		}
		for _, in := range stdins {
			fmt.Fprintln(in, "go")
			in.Close()
		}
		wg.Wait()
		return outs
	}
}
