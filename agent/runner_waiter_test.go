package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

// seenAtPrint is a log that, the moment "needs approval" is written, reads
// the store as a console would: is the proposal it names waited on by a
// live waiter?
type seenAtPrint struct {
	o     *storage.Store
	mu    sync.Mutex
	lines []string
	state map[string]storage.Liveness
}

func (l *seenAtPrint) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := string(b)
	l.lines = append(l.lines, line)
	if rest, ok := strings.CutPrefix(line, "approve-tui: "); ok {
		if id, _, ok := strings.Cut(rest, " needs approval"); ok {
			ws, err := l.o.WaiterState(context.Background(), id)
			if err != nil {
				ws.State = "error: " + storage.Liveness(err.Error())
			}
			l.state[id] = ws.State
		}
	}
	return len(b), nil
}

// run says a proposal needs approval only once it waits on it: whoever
// reads the line and opens the console finds a live waiter, never a
// proposal that looks abandoned.
func TestRunSaysNeedsApprovalOnceItWaits(t *testing.T) {
	s, o := emptyStore(t)
	dir := t.TempDir()
	log := &seenAtPrint{o: o, state: map[string]storage.Liveness{}}
	req := runReq(dir, "sh", "-c", "echo ran >> log.txt")
	req.Log = log
	req.HeartbeatEvery = time.Hour // only the first heartbeat, written when the wait starts
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "no"); err != nil {
		t.Fatal(err)
	}
	if out := recvRun(t, ch); out.res.Outcome != RunDenied {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	state, ok := log.state[rec.ApprovalID]
	if !ok {
		t.Fatalf("run never said %s needs approval: %q", rec.ApprovalID, log.lines)
	}
	if state != storage.WaiterLive {
		t.Fatalf("when run said %s needs approval, its waiter was %s, want live", rec.ApprovalID, state)
	}
}
