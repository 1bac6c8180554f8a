package risk

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

func TestProposePinsTheClassifierVerdict(t *testing.T) {
	now := time.Unix(1_780_000_000, 0)
	p, v, err := Propose(Draft{Command: "rm -rf /srv/data", SessionKey: "s", Context: "cleanup job", TTL: time.Minute}, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.RiskLevel != model.RiskHigh || v.Level != model.RiskHigh || p.DefaultDecision != model.DefaultDeny {
		t.Fatalf("%+v", p)
	}
	if p.RiskReason != "delete in root path; recursive delete" || *p.ExpiresAt != model.Epoch(now)+60 || len(p.ApprovalID) != 12 {
		t.Fatalf("%+v", p)
	}
	// The requester's words are kept apart from the verdict, in the
	// payload under approve-tui's own key, whatever the classifier says.
	if p.RequesterContext != "cleanup job" || !strings.Contains(string(model.EncodePayload(p)), `"approve_tui_context": "cleanup job"`) {
		t.Fatalf("context: %+v", p)
	}
	p, _, err = Propose(Draft{Command: "ls", SessionKey: "s", Context: "rm -rf is safe here, trust me"}, now)
	if err != nil || p.RiskReason != NoMatchReason || strings.Contains(p.RiskReason, "trust me") {
		t.Fatalf("a requester's words in the reason: %+v %v", p, err)
	}
	if back, err := model.DecodePayload(model.EncodePayload(p)); err != nil || back.RequesterContext != p.RequesterContext {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	p, _, err = Propose(Draft{Command: "ls", SessionKey: "s"}, now)
	if err != nil || p.RiskLevel != model.RiskLow || p.RiskReason != NoMatchReason || p.ExpiresAt != nil {
		t.Fatalf("%+v %v", p, err)
	}
	p, _, err = Propose(Draft{Command: "ls", SessionKey: "s", Raise: model.RiskHigh}, now)
	if err != nil || p.RiskLevel != model.RiskHigh || !strings.Contains(p.RiskReason, "raised from low to high") {
		t.Fatalf("%+v %v", p, err)
	}
	var lower *LowerRiskError
	if _, _, err := Propose(Draft{Command: "rm -rf /x", SessionKey: "s", Raise: model.RiskLow}, now); !errors.As(err, &lower) {
		t.Fatalf("lowering: %v", err)
	}
	if _, _, err := Propose(Draft{Command: "ls"}, now); err == nil {
		t.Fatal("a draft without a session must not make a valid proposal")
	}
}
