package tui

import (
	"testing"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// The history shows a policy event's decision (allow, deny, executed) in
// the outcome column, as it shows an execution event's outcome.
func TestHistoryShowsPolicyDecisions(t *testing.T) {
	f := newFixture(t)
	runner := model.Actor{Surface: model.SurfaceRunner, Name: "dev@laptop"}
	for _, r := range []*storage.PolicyRecord{
		{Decision: storage.PolicyAllow, Reason: "no dangerous pattern matched", Command: "ls -la", Risk: model.RiskLow},
		{Decision: storage.PolicyDeny, Reason: "hardline: format filesystem (mkfs)", Command: "mkfs.ext4 /dev/sdz", Risk: model.RiskHigh},
	} {
		if err := f.s.RecordPolicy(t.Context(), r, runner); err != nil {
			t.Fatal(err)
		}
	}
	m := console(t, f, operator, 120, 40)
	press(m, "tab")
	screenHas(t, m, "policy    allow", "policy    deny", "reason=hardline: format filesystem")
}
