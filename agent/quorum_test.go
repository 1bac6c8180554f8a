package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
)

func twoApprovers(t *testing.T, o *storage.Store) {
	t.Helper()
	p := &policy.Policy{Rules: []policy.Rule{{Match: policy.Match{}, Approvals: 2}}}
	if _, _, err := o.SetPolicy(context.Background(), []byte("two"), p, model.Actor{Surface: model.SurfaceCLI, Name: "root@test", Person: "root"}); err != nil {
		t.Fatal(err)
	}
}

// run waits through the first vote, saying where the proposal stands, and
// runs only after the second person's.
func TestRunWaitsForTheQuorumAndSaysWhereItStands(t *testing.T) {
	s, o := emptyStore(t)
	twoApprovers(t, o)
	dir := t.TempDir()
	target := filepath.Join(dir, "build")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	req := runReq(dir, "rm", "-rf", target)
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	log := req.Log.(*syncbuf.Buffer)
	eventually(t, 10*time.Second, "run never said what it needs", func() bool {
		return strings.Contains(log.String(), rec.ApprovalID+": 0 of 2 approvals; still needed: 2 more approvers")
	})
	var v *storage.VoteRecorded
	if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, operator); !errors.As(err, &v) {
		t.Fatalf("first approval: %v", err)
	}
	eventually(t, 10*time.Second, "run never reported the vote", func() bool {
		return strings.Contains(log.String(), rec.ApprovalID+": 1 of 2 approvals (alice@console via tui); still needed: one more approver")
	})
	if _, err := os.Stat(target); err != nil {
		t.Fatal("ran after one vote of two")
	}
	if _, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, model.Actor{Surface: model.SurfaceSSH, Name: "bob@desk (SHA256:b)", Person: "bob", Key: "SHA256:b"}); err != nil {
		t.Fatal(err)
	}
	out := recvRun(t, ch)
	if out.err != nil || out.res.Outcome != RunRan {
		t.Fatalf("run: %+v %v", out.res, out.err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("the approved command did not run")
	}
}

// The engineer whose run asks cannot approve it, whatever surface.
func TestRunRequesterCannotApproveTheirOwn(t *testing.T) {
	s, o := emptyStore(t)
	twoApprovers(t, o)
	dir := t.TempDir()
	req := runReq(dir, "rm", "-rf", filepath.Join(dir, "x"))
	req.Draft.Origin = "alice@laptop"
	ch := startRun(s, req)
	rec := awaitWaiting(t, o)
	_, err := o.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, operator)
	var rf *storage.RefusedError
	if !errors.As(err, &rf) || rf.Code != storage.RefusedSelfApproval {
		t.Fatalf("alice approving her own run: %v, want self_approval", err)
	}
	if _, err := o.Deny(context.Background(), rec.ApprovalID, operator, "no"); err != nil {
		t.Fatal(err)
	}
	if out := recvRun(t, ch); out.res.Outcome == RunRan {
		t.Fatal("ran after a deny")
	}
}
