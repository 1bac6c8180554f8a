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
	if !strings.HasPrefix(p.RiskReason, "delete in root path; recursive delete") || *p.ExpiresAt != model.Epoch(now)+60 || len(p.ApprovalID) != 12 {
		t.Fatalf("%+v", p)
	}
	// The requester's words are kept apart from the verdict, in the
	// payload under approve-tui's own key, whatever the classifier says.
	if p.RequesterContext != "cleanup job" || !strings.Contains(string(model.EncodePayload(p)), `"approve_tui_context": "cleanup job"`) {
		t.Fatalf("context: %+v", p)
	}
	p, _, err = Propose(Draft{Command: "ls", SessionKey: "s", Context: "rm -rf is safe here, trust me"}, now)
	if err != nil || strings.Contains(p.RiskReason, "trust me") {
		t.Fatalf("a requester's words in the reason: %+v %v", p, err)
	}
	if back, err := model.DecodePayload(model.EncodePayload(p)); err != nil || back.RequesterContext != p.RequesterContext {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	p, _, err = Propose(Draft{Command: "ls", SessionKey: "s"}, now)
	if err != nil || p.RiskLevel != model.RiskLow || p.RiskReason == "" || p.ExpiresAt != nil {
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

// Propose pins the judgement, not the pattern table alone: a command the
// table finds nothing in but the analysis cannot read (it does not parse)
// is pinned at the judgement's level with its reason; a Raise at the
// table's level but below the judgement changes nothing, and Effective and
// Guard compare with the same judgement (invariant 6).
func TestProposePinsTheJudgement(t *testing.T) {
	now := time.Unix(1_780_000_000, 0)
	const cmd = "echo 'unterminated"
	if Classify(cmd).Level != model.RiskLow {
		t.Fatalf("the table: %+v", Classify(cmd))
	}
	for _, raise := range []model.RiskLevel{"", model.RiskLow} {
		p, j, err := Propose(Draft{Command: cmd, SessionKey: "s", Cwd: "/work", Raise: raise}, now)
		if err != nil {
			t.Fatal(err)
		}
		if j.Level.Rank() < model.RiskMedium.Rank() || p.RiskLevel != j.Level || !strings.Contains(p.RiskReason, "could not parse") {
			t.Fatalf("raise %q: %+v %+v", raise, p, j)
		}
		if Effective(model.RiskLow, cmd, Context{Cwd: "/work"}) != j.Level || Guard(model.RiskLow, cmd, Context{Cwd: "/work"}) == nil {
			t.Fatal("Effective and Guard must compare with the judgement")
		}
		if Guard(p.RiskLevel, cmd, Context{Cwd: "/work"}) != nil {
			t.Fatal("the guard refused the level Propose pinned")
		}
	}
	p, _, err := Propose(Draft{Command: cmd, SessionKey: "s", Raise: model.RiskHigh, RaiseWhy: "by the impact preview"}, now)
	if err != nil || p.RiskLevel != model.RiskHigh || !strings.Contains(p.RiskReason, "raised from medium to high by the impact preview") {
		t.Fatalf("%+v %v", p, err)
	}
	// The draft's cwd is the judgement's workspace, whatever Judging says.
	d := Draft{Cwd: "/a", Judging: Context{Cwd: "/b", Home: "/home/u"}}
	if c := d.JudgeContext(); c.Cwd != "/a" || c.Home != "/home/u" {
		t.Fatalf("%+v", c)
	}
}
