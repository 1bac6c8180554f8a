package notify

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
)

// A vote that leaves a two-person proposal short pages the channels paged
// so far, once per vote, saying who approved and who is still needed; the
// completing vote resolves it.
func TestVotePagesTheNextApprover(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	pol := &policy.Policy{Groups: map[string][]string{"dba": {"alice", "bob"}},
		Rules: []policy.Rule{{Match: policy.Match{Risk: model.RiskHigh}, Approvals: 2, From: map[string]int{"dba": 1}}}}
	if _, _, err := r.store.SetPolicy(ctx, []byte("two"), pol, model.Actor{Surface: model.SurfaceCLI, Name: "root@test", Person: "root"}); err != nil {
		t.Fatal(err)
	}
	id := "vote-page-0001"
	r.submit(id, "agent:prod:1", "rm -rf /srv/app", time.Hour)
	r.tick()
	if got := r.chans["push"].kinds(); got != "page:"+id {
		t.Fatalf("push got %q", got)
	}
	carol := model.Actor{Surface: model.SurfaceCLI, Name: "carol@ops-1", Person: "carol"}
	var v *storage.VoteRecorded
	if _, err := r.store.Consume(ctx, id, id, carol); !errors.As(err, &v) {
		t.Fatalf("first vote: %v", err)
	}
	r.tick()
	r.tick() // once per vote, whatever the passes
	evs := r.chans["push"].events()
	if len(evs) != 2 || evs[1].Kind != KindVote {
		t.Fatalf("push got %q", r.chans["push"].kinds())
	}
	ev := evs[1]
	if ev.Approvals != "1 of 2 approvals" || ev.Needed != "one more approver from dba" || len(ev.Voters) != 1 || !strings.HasPrefix(ev.Voters[0], "carol@") {
		t.Fatalf("vote event: %+v", ev)
	}
	title, body := Title(ev), Body(ev, r.tclock.Now())
	if !strings.Contains(title, "another approver needed (1 of 2 approvals)") || !strings.Contains(body, "Still needed: one more approver from dba") {
		t.Fatalf("title %q body %q", title, body)
	}
	if !strings.Contains(body, "cannot approve") {
		t.Fatalf("a vote page must say it cannot approve: %q", body)
	}
	if _, err := r.store.Consume(ctx, id, id, model.Actor{Surface: model.SurfaceCLI, Name: "alice@ops-1", Person: "alice"}); err != nil {
		t.Fatal(err)
	}
	r.tick()
	if got := r.chans["push"].kinds(); got != "page:"+id+" vote:"+id+" resolved:"+id {
		t.Fatalf("push got %q", got)
	}
}
