package risk

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		cmd      string
		level    model.RiskLevel
		hardline bool
		reason   string
	}{
		{"ls -la", model.RiskLow, false, ""},
		{"", model.RiskLow, false, ""},
		{"git push --force", model.RiskMedium, false, "git force push (rewrites remote history)"},
		{"rm -rf build", model.RiskHigh, false, "recursive delete"},
		{"reboot", model.RiskHigh, true, "system shutdown/reboot"}, // hardline: high whatever its description
		{"sudo -S true", model.RiskMedium, false, "sudo password guessing via stdin (sudo -S); sudo with privilege flag (stdin/askpass/shell/list); sudo with combined-flag privilege escalation"},
		// fork bomb is both a hardline and a dangerous row: listed once, as hardline.
		{":(){ :|:& };:", model.RiskHigh, true, "fork bomb"},
		{"git push -f && rm -rf /tmp/x", model.RiskHigh, false, "delete in root path; recursive delete; git force push short flag (rewrites remote history)"},
	} {
		v := Classify(tc.cmd)
		if v.Level != tc.level || v.Hardline != tc.hardline || v.Reason() != tc.reason {
			t.Errorf("Classify(%q) = %s hardline=%v %q, want %s %v %q", tc.cmd, v.Level, v.Hardline, v.Reason(), tc.level, tc.hardline, tc.reason)
		}
	}
	if v := Classify("ls"); v.Matches != nil {
		t.Errorf("no match: Matches = %v, want nil", v.Matches)
	}
	v := Classify(":(){ :|:& };:")
	if len(v.Matches) != 1 || v.Matches[0] != (Match{Kind: KindHardline, Description: "fork bomb", Level: model.RiskHigh}) {
		t.Errorf("fork bomb matches = %+v", v.Matches)
	}
	v = Classify("echo pw | sudo -S id")
	if v.Matches[0].Kind != KindSudoGuard || v.Matches[0].Level != model.RiskMedium {
		t.Errorf("sudo guard match = %+v", v.Matches[0])
	}
}

// The level of every match is its description's risk, and hardline matches
// are high.
func TestMatchLevels(t *testing.T) {
	for _, c := range rowCases {
		for _, cmd := range c.pos {
			for _, m := range Classify(cmd).Matches {
				want := DescriptionRisk(m.Description)
				if m.Kind == KindHardline {
					want = model.RiskHigh
				}
				if m.Level != want {
					t.Errorf("%q: %+v, want level %s", cmd, m, want)
				}
			}
		}
	}
}

func TestDeleteWithoutWhere(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"DELETE FROM t", true},
		{"DELETE FROM t WHERE id=1", false},
		{"DELETE FROM t;\nSELECT * FROM x WHERE 1", true}, // the WHERE is on another line
		{"DELETE FROM t\nWHERE id=1", true},
		{"DELETE FROM a WHERE id=1; DELETE FROM b", true},  // two statements, the second unguarded
		{"DELETE FROM a; DELETE FROM b WHERE id=1", false}, // Hermes' lookahead sees the second WHERE
		{"DELETE FROM a; DELETE FROM b\nDELETE FROM c WHERE x", true},
		{"DELETE FROM a WHERE x\nDELETE FROM c WHERE x", false},
		{"delete\nfrom t where x", false}, // \s+ crosses lines, the lookahead does not need to
		{"delete from t where_clause", true},
		{"delete from t -- nowhere", true},
		{"delete from t éwhere", true},   // Python's \b is Unicode: é is a word character
		{"delete from t wheré", true},    //
		{"delete from t (where)", false}, //
		{"delete from t\twhere", false},  //
		{"delete from t where", false},   //
		{"delete fromage", false},
		{"undelete from t", false},
		{"DELETE FROM t WHERE", false},
		{"DELETE FROM t\r\nWHERE id=1", true},
	} {
		if got := slices.Contains(descs(Classify(tc.cmd)), "SQL DELETE without WHERE"); got != tc.want {
			t.Errorf("Classify(%q) has DELETE without WHERE = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

func TestDescriptionRisk(t *testing.T) {
	for desc, want := range map[string]model.RiskLevel{
		"":                          model.RiskHigh,
		"recursive delete":          model.RiskHigh,
		"Recursive Delete of stuff": model.RiskHigh,
		"SQL DROP":                  model.RiskHigh,
		"write to BLOCK DEVICE":     model.RiskHigh,
		"kill all processes":        model.RiskHigh,
		"git force push":            model.RiskMedium,
		"system shutdown/reboot":    model.RiskMedium,
		"anything else":             model.RiskMedium,
	} {
		if got := DescriptionRisk(desc); got != want {
			t.Errorf("DescriptionRisk(%q) = %s, want %s", desc, got, want)
		}
	}
}

func TestRank(t *testing.T) {
	order := []model.RiskLevel{model.RiskLow, model.RiskMedium, model.RiskHigh, model.RiskUnknown}
	for i := 1; i < len(order); i++ {
		if Rank(order[i-1]) >= Rank(order[i]) {
			t.Errorf("Rank(%s) >= Rank(%s)", order[i-1], order[i])
		}
	}
	for _, bad := range []model.RiskLevel{"", "HIGH", "critical", "unknown"} {
		if Rank(bad) != Rank(model.RiskUnknown) || Rank(bad) <= Rank(model.RiskHigh) {
			t.Errorf("Rank(%q) = %d, want unknown's rank above high", bad, Rank(bad))
		}
	}
}

func TestEffective(t *testing.T) {
	for _, tc := range []struct {
		pinned model.RiskLevel
		cmd    string
		want   model.RiskLevel
	}{
		{model.RiskLow, "ls", model.RiskLow},
		{model.RiskHigh, "ls", model.RiskHigh}, // never lowered
		{model.RiskMedium, "ls", model.RiskMedium},
		{model.RiskLow, "git push --force", model.RiskMedium},
		{model.RiskLow, "rm -rf /", model.RiskHigh},
		{model.RiskMedium, "rm -rf /", model.RiskHigh},
		{"", "ls", model.RiskUnknown},
		{"bogus", "rm -rf /", model.RiskUnknown},
		{model.RiskUnknown, "ls", model.RiskUnknown},
	} {
		got := Effective(tc.pinned, tc.cmd, Context{})
		if got != tc.want {
			t.Errorf("Effective(%q, %q) = %s, want %s", tc.pinned, tc.cmd, got, tc.want)
		}
		if Rank(got) < Rank(tc.pinned) {
			t.Errorf("Effective(%q, %q) = %s lowered the pinned risk", tc.pinned, tc.cmd, got)
		}
	}
}

func TestGuard(t *testing.T) {
	for _, tc := range []struct {
		pinned model.RiskLevel
		cmd    string
		refuse bool
		msg    string
	}{
		{model.RiskLow, "ls", false, ""},
		{model.RiskHigh, "rm -rf /", false, ""},
		{model.RiskHigh, "ls", false, ""},
		{model.RiskMedium, "git push --force", false, ""},
		{model.RiskLow, "git push --force", true, "above its pinned risk low; refusing to run (git force push (rewrites remote history)"},
		{model.RiskMedium, "rm -rf build", true, "classifies as high, above its pinned risk medium"},
		{"", "ls", true, `pinned risk level "" is not one of low, medium, high`},
		{model.RiskUnknown, "ls", true, "fail closed"},
		{"HIGH", "rm -rf /", true, `pinned risk level "HIGH"`},
	} {
		err := Guard(tc.pinned, tc.cmd, Context{})
		if !tc.refuse {
			if err != nil {
				t.Errorf("Guard(%q, %q) = %v, want nil", tc.pinned, tc.cmd, err)
			}
			continue
		}
		var ge *GuardError
		if !errors.As(err, &ge) {
			t.Errorf("Guard(%q, %q) = %v, want a *GuardError", tc.pinned, tc.cmd, err)
			continue
		}
		if j := Judge(tc.cmd, Context{}); ge.Pinned != tc.pinned || ge.Current != j.Level || ge.Reason != j.Reason() {
			t.Errorf("Guard(%q, %q) = %+v", tc.pinned, tc.cmd, ge)
		}
		if !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "risk guard: ") {
			t.Errorf("Guard(%q, %q).Error() = %q, want it to contain %q", tc.pinned, tc.cmd, err, tc.msg)
		}
	}
}

// The divergences from Hermes that doc.go documents.
func TestDocumentedDivergences(t *testing.T) {
	// Go's \b is ASCII: a non-ASCII letter before rm still leaves a boundary
	// (Hermes would not flag this).
	if got := descs(Classify("érm -rf x")); !slices.Contains(got, "recursive delete") {
		t.Errorf("érm -rf x: %q", got)
	}
	// Every match is returned, not only the first of each kind.
	if got := Classify("rm -rf / && git push -f"); len(got.Matches) != 4 {
		t.Errorf("all matches: %q", descs(got))
	}
}
