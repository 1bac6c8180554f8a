package risk

import (
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// >&WORD onto a word that is not a descriptor writes the file.
func TestJudgeDupOntoFile(t *testing.T) {
	checkJudge(t, ws, []judgeCase{
		{"ls >& ~/.bashrc", model.RiskHigh, "target", false},
		{"ls 2>& ~/.ssh/authorized_keys", model.RiskHigh, "target", false},
		{"echo >& \"$F\"", model.RiskMedium, "target", false},
		{"go test ./... 2>&1", model.RiskLow, "", false},
		{"ls >&2", model.RiskLow, "", true},
		{"ls 2>&-", model.RiskLow, "", true},
	})
}

// Relative words after cd are judged where cd went.
func TestJudgeAfterCd(t *testing.T) {
	checkJudge(t, ws, []judgeCase{
		{"cd /etc && echo x >> sudoers", model.RiskHigh, "target", false},
		{"cd ~ && echo x > .bashrc", model.RiskHigh, "target", false},
		{"cd && echo x > .bashrc", model.RiskHigh, "target", false},
		{"cd .git/hooks && echo x > pre-commit", model.RiskHigh, "target", false},
		{"cd .git && cd hooks && cp x pre-commit", model.RiskHigh, "target", false},
		{"cd .claude && cp x settings.json", model.RiskHigh, "target", false},
		{"cd /etc && cat shadow", model.RiskMedium, "target", false},
		{"cd /etc && sed -i s/x/y/ sudoers", model.RiskHigh, "target", false},
		{"cd \"$D\" && echo x > notes.txt", model.RiskMedium, "target", false},
		{"cd - && echo x > notes.txt", model.RiskMedium, "target", false},
		{"CDPATH=/etc; cd ssh && echo x > notes.txt", model.RiskMedium, "target", false},
		{"cd ..; echo x > notes.txt", model.RiskMedium, "target", false},
		{"cd src && echo x > notes.txt", model.RiskLow, "", false},
		{"cd src && ls", model.RiskLow, "", true},
		{"cd /home/dev/project/web && cat package.json", model.RiskLow, "", true},
	})
}

// PATH set earlier in the line: later names may not be the catalogue's.
func TestJudgePathChanged(t *testing.T) {
	checkJudge(t, ws, []judgeCase{
		{"PATH=/tmp/evil; ls", model.RiskMedium, "unknown", false},
		{"printf -v PATH /tmp/evil; ls", model.RiskMedium, "unknown", false},
		{"read PATH <<< /tmp/evil; ls", model.RiskMedium, "unknown", false},
		{"read -r -d '' PATH <<< /tmp; ls", model.RiskMedium, "unknown", false},
		{"PATH=/usr/bin:/bin; ls", model.RiskLow, "", false},
		{"PATH=/tmp/evil; echo hi", model.RiskLow, "", true},
		{"PATH=/tmp/evil; /bin/ls", model.RiskLow, "", true},
	})
}

// Files other tools run, git internals, and names on file systems that
// ignore case.
func TestJudgeMoreSensitiveTargets(t *testing.T) {
	for _, cmd := range []string{
		"echo x > .GIT/hooks/pre-commit", "echo x > .git/HOOKS/pre-commit", "echo x > .Claude/settings.json",
		"echo x > .mcp.json", "echo x > .envrc", "echo x > .git/info/attributes", "echo x > .gitmodules",
		"echo x > .git/modules/x/hooks/pre-commit", "echo x > .git/HEAD", "echo x > .git/refs/heads/main",
		"echo x > .git/packed-refs", "echo x > .github/workflows/x.yml", "echo x > .cargo/config.toml",
		"echo x > .yarnrc.yml", "echo x > .npmrc",
	} {
		if j := Judge(cmd, ws); j.Level != model.RiskHigh {
			t.Errorf("%q: %s, want high: %+v", cmd, j.Level, j.Findings)
		}
	}
	checkJudge(t, ws, []judgeCase{
		{"cat .github/workflows/ci.yml", model.RiskLow, "", true},
		{"echo x > docs/Notes.md", model.RiskLow, "", false},
	})
}
