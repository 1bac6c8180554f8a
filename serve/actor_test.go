package serve

import (
	"testing"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
)

// A session's actor carries the verified key and the access file's name
// for it as structured fields: what the comment's text looks like counts
// for nothing.
func TestActorOfIsTheVerifiedKey(t *testing.T) {
	for _, tc := range []struct {
		p          Person
		person     string
		readOnly   bool
		wantVoter  policy.Voter
		wantInName string
	}{
		{Person{Name: "alice@laptop", Fingerprint: "SHA256:aaa", Role: RoleApprover}, "alice", false,
			policy.Voter{Person: "alice", Key: "SHA256:aaa"}, "alice@laptop (SHA256:aaa)"},
		{Person{Name: "bob (SHA256:ccc)", Fingerprint: "SHA256:bbb", Role: RoleApprover}, "bob (SHA256:ccc)", false,
			policy.Voter{Person: "bob (sha256:ccc)", Key: "SHA256:bbb"}, "bob (SHA256:ccc) (SHA256:bbb)"},
		{Person{Name: "SHA256:ddd", Fingerprint: "SHA256:ddd", Role: RoleWatcher}, "SHA256:ddd", true,
			policy.Voter{Person: "sha256:ddd", Key: "SHA256:ddd"}, "SHA256:ddd (SHA256:ddd)"},
	} {
		a := actorOf(tc.p)
		if a.Surface != model.SurfaceSSH || a.Person != tc.person || a.Key != tc.p.Fingerprint || a.ReadOnly != tc.readOnly || a.Name != tc.wantInName {
			t.Errorf("actorOf(%+v) = %+v", tc.p, a)
		}
		if v := policy.VoterOf(a); v != tc.wantVoter {
			t.Errorf("voter of %+v = %+v, want %+v", tc.p, v, tc.wantVoter)
		}
	}
}
