package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

// The same call sent again minutes after it was allowed (the same
// tool_use_id, so the same proposal id): the hook rejoins the consumed
// proposal, and its signatures, made before this hook asked, are not
// this call's approval, whatever the row's created_at says. A second
// hook process joining the call while it waits is still allowed.
func TestHookReplayedCallRefused(t *testing.T) {
	s, o := emptyStore(t)
	r := newTrustRig(t, storage.DefaultIdentity(o.Path()), "alice", "carol")
	opts := hookOpts(s)
	opts.Timeout = 15 * time.Minute // the README's hooks wait 900 s
	opts.Trust = r.set
	// Parking off: the allow's take is recorded after every check (with
	// parking on, the replay is refused as taken by this call before the
	// signatures are read), so that the signature check is what refuses it.
	opts.ParkWindow = -1
	call := bashCall("rm -rf /srv/app/build", "tu1")
	first := hookAsync(call, opts)
	rec := awaitWaiting(t, o)
	second := hookAsync(call, opts) // a second hook on the same call
	time.Sleep(300 * time.Millisecond)
	approveAs(t, o, rec, r.actor("alice", r.sign(t, r.set, "alice", rec)))
	for i, ch := range []<-chan HookAnswer{first, second} {
		if ans := recvHook(t, ch); ans.Decision != "allow" {
			t.Fatalf("hook %d on the call: %+v", i+1, ans)
		}
	}
	// Three minutes on, the agent's user resets the row and sends the call again.
	if _, err := rawDB(t, o).Exec(`UPDATE gateway_approvals SET execution_status = 'not_started', execution_reason = NULL, created_at = ? WHERE approval_id = ?`,
		float64(time.Now().Add(time.Minute).Unix()), rec.ApprovalID); err != nil {
		t.Fatal(err)
	}
	later := opts
	later.Open = func(ctx context.Context) (*storage.Store, error) {
		return storage.Open(ctx, s.Path(), storage.Options{BusyTimeout: 2 * time.Second, Now: func() time.Time { return time.Now().Add(3 * time.Minute) }})
	}
	ans := recvHook(t, hookAsync(call, later))
	if ans.Decision == "allow" {
		t.Fatalf("the call sent again was allowed on the approval of the first: %+v", ans)
	}
	if !strings.Contains(ans.Reason, "stale (a replayed signature)") {
		t.Fatalf("the refusal does not say the signature is a replay: %s", ans.Reason)
	}
}
