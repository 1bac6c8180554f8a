package impact

import (
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// Raised (the I mark) is the impact's level only when it is strictly above
// the classifier's and not below the risk the proposal carries.
func TestRaisedOnlyAboveTheClassifier(t *testing.T) {
	drops := &model.Impact{Complete: true, Targets: []model.ImpactTarget{{Path: "origin/main", Op: model.OpForcePush, Exists: true, Commits: 2}}}
	live := &model.Impact{Complete: true, Targets: []model.ImpactTarget{{Path: "/srv/web/current", Op: "delete", Exists: true, Entries: 1, Mounts: []string{"/srv/web/current"}}}}
	small := &model.Impact{Complete: true, Targets: []model.ImpactTarget{{Path: "build", Op: "delete", Exists: true, Entries: 3}}}
	for _, c := range []struct {
		name    string
		m       *model.Impact
		command string
		pinned  model.RiskLevel
		want    model.RiskLevel
	}{
		{"force-push, MEDIUM by the classifier, at least MEDIUM by its impact", drops, "git push --force origin main", model.RiskMedium, ""},
		{"push of +ref, LOW by the classifier, MEDIUM by its impact", drops, "git push origin +main", model.RiskMedium, model.RiskMedium},
		{"the submitter raised it higher than the impact", drops, "git push origin +main", model.RiskHigh, ""},
		{"live, on a MEDIUM command", live, "find current -delete", model.RiskHigh, model.RiskHigh},
		{"live, on a HIGH command", live, "rm -rf /srv/web/current", model.RiskHigh, ""},
		{"nothing asked", small, "rm build/a", model.RiskLow, ""},
		{"no preview", nil, "rm build/a", model.RiskLow, ""},
		{"tier 2 carried", drops, "git push origin +main", model.RiskTier2, ""},
	} {
		got, why := Raised(c.m, c.command, c.pinned)
		if got != c.want || (got == "") != (why == "") || Marked(c.m, c.command, c.pinned) != (c.want != "") {
			t.Errorf("%s: Raised = %q (%q), want %q", c.name, got, why, c.want)
		}
	}
}
