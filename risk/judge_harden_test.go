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
		{"builtin cd /etc && echo x > sudoers", model.RiskHigh, "target", false},
		{"sh -c 'cd /etc && echo x > sudoers'", model.RiskHigh, "target", false},
		{"bash -c \"cd ~/.ssh && cat id_rsa\"", model.RiskMedium, "target", false},
		{"command cd ~ && echo x > .bashrc", model.RiskHigh, "target", false},
		{"cd /etc; popd; echo x > notes.txt", model.RiskMedium, "target", false},
		{"env -C /etc cp x sudoers", model.RiskHigh, "target", false},
		{"env -C /etc ls > out.txt", model.RiskLow, "", false},
		{"make -C /tmp/evil", model.RiskMedium, "flow", false},
		{"make -C build", model.RiskLow, "", false},
		{"terraform -chdir=/tmp/x plan", model.RiskMedium, "flow", false},
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

// Options that write, run a file's program, or choose a configuration
// that runs commands.
func TestJudgeOptionsThatWriteOrRun(t *testing.T) {
	checkJudge(t, ws, []judgeCase{
		{"git shortlog -s --output=/home/dev/.bashrc", model.RiskHigh, "target", false},
		{"aws s3api get-object --bucket b --key k /etc/cron.d/x", model.RiskHigh, "target", false},
		{"aws s3api get-object --bucket b --key k ~/.bashrc", model.RiskHigh, "target", false},
		{"aws s3api get-object --bucket b --key k out.json", model.RiskLow, "", false},
		{"openssl enc -d -in x -out ~/.bashrc", model.RiskHigh, "target", false},
		{"git apply --unsafe-paths x.patch", model.RiskMedium, "target", false},
		{"git apply --directory=.. x.patch", model.RiskMedium, "target", false},
		{"git apply x.patch", model.RiskLow, "", false},
		{"cpio -idm < x.cpio", model.RiskMedium, "target", false},
		{"awk -f /tmp/evil.awk README", model.RiskMedium, "effect", false},
		{"awk -f x.awk y", model.RiskLow, "", false},
		{"awk -i inplace 1 x", model.RiskLow, "", false},
		{"sed -f /tmp/evil.sed README", model.RiskMedium, "effect", false},
		{"sed -n -f script.sed x", model.RiskLow, "", false},
		{"printf 'all:\\n\\trm -rf ~\\n' | make -f -", model.RiskMedium, "effect", false},
		{"make -f /tmp/evil.mk", model.RiskMedium, "effect", false},
		{"make -f build/ci.mk test", model.RiskLow, "", false},
		{"make -e SHELL=/tmp/x", model.RiskMedium, "flow", false},
		{"make SHELL=/bin/bash", model.RiskLow, "", false},
		{"fc -s rm", model.RiskMedium, "opaque", false},
		{"fc -l", model.RiskLow, "", false},
		{"GIT_TRACE=/root/.bashrc git status", model.RiskHigh, "target", false},
		{"GIT_TRACE=/tmp/x git status", model.RiskLow, "", false},
		{"GIT_TRACE=1 git status", model.RiskLow, "", true},
		{"go env -w GOFLAGS=-toolexec=/tmp/evil", model.RiskMedium, "effect", false},
		{"go env GOPATH", model.RiskLow, "", true},
		{"npm config set script-shell /tmp/evil", model.RiskMedium, "effect", false},
		{"npm config get registry", model.RiskLow, "", true},
		{"npm audit fix", model.RiskMedium, "effect", false},
		{"npm audit", model.RiskLow, "", true},
		{"git fsck --lost-found", model.RiskLow, "", false},
		{"git help -w log", model.RiskMedium, "effect", false},
		{"file -C -m x", model.RiskLow, "", false},
		{"npm i -g evil", model.RiskMedium, "target", false},
		{"pip install -e /tmp/evil", model.RiskMedium, "target", false},
		{"pip install -e .", model.RiskLow, "", false},
	})
}

// Configuration chosen on the line: a repository, kubeconfig, profile or
// JVM options from elsewhere run commands.
func TestJudgeConfigElsewhere(t *testing.T) {
	checkJudge(t, ws, []judgeCase{
		{"git --git-dir=/tmp/evil log", model.RiskMedium, "flow", false},
		{"git -C /tmp/evil log", model.RiskMedium, "flow", false},
		{"git --exec-path=/tmp/x log", model.RiskMedium, "effect", false},
		{"git -C web status", model.RiskLow, "", false},
		{"XDG_CONFIG_HOME=/tmp/evil git log", model.RiskMedium, "flow", false},
		{"HOME=/tmp/evil git log", model.RiskMedium, "flow", false},
		{"KUBECONFIG=/tmp/evil kubectl get pods", model.RiskMedium, "flow", false},
		{"kubectl --kubeconfig=/tmp/evil get pods", model.RiskMedium, "flow", false},
		{"AWS_CONFIG_FILE=/tmp/evil aws s3 ls", model.RiskMedium, "flow", false},
		{"aws --profile evil s3 ls", model.RiskMedium, "flow", false},
		{"JAVA_TOOL_OPTIONS=-javaagent:/tmp/x.jar java -version", model.RiskMedium, "flow", false},
		{"_JAVA_OPTIONS=-javaagent:x java -version", model.RiskMedium, "flow", false},
		{"kubectl get pods", model.RiskLow, "", true},
		{"aws s3 ls", model.RiskLow, "", true},
		{"git status", model.RiskLow, "", true},
	})
}

// Secrets printed: by path inside a revision, through options that read a
// file, and by commands that print tokens.
func TestJudgeSecretsPrinted(t *testing.T) {
	checkJudge(t, ws, []judgeCase{
		{"git show HEAD:.env", model.RiskMedium, "target", false},
		{"git show HEAD:README.md", model.RiskLow, "", true},
		{"git blame --contents=/etc/shadow x", model.RiskMedium, "target", false},
		{"wc --files0-from=/etc/shadow", model.RiskMedium, "target", false},
		{"du --files0-from=/etc/shadow", model.RiskMedium, "target", false},
		{"jq -n --rawfile x /etc/shadow '$x'", model.RiskMedium, "target", false},
		{"gh auth token", model.RiskMedium, "effect", false},
		{"az account get-access-token", model.RiskMedium, "effect", false},
		{"kubectl config view --raw", model.RiskMedium, "effect", false},
		{"kubectl config view", model.RiskLow, "", true},
		{"terraform state pull", model.RiskMedium, "effect", false},
		{"aws configure get aws_secret_access_key", model.RiskMedium, "effect", false},
		{"aws configure get region", model.RiskLow, "", false},
		{"git credential fill", model.RiskMedium, "effect", false},
		{"pulumi stack output --show-secrets", model.RiskMedium, "effect", false},
		{"kubectl get --raw /api/v1/namespaces/default/secrets", model.RiskMedium, "effect", false},
	})
}

// Program names that are not what they look like.
func TestJudgeOddProgramNames(t *testing.T) {
	for _, cmd := range []string{"r\u200bm -rf ~", "l\u00a0s", "\u202els", "\u0441at x", "l\u0085s", "/tmp/ls", "~/.cache/x/tool"} {
		j := Judge(cmd, ws)
		if j.Level.Rank() < model.RiskMedium.Rank() || j.ReadOnly {
			t.Errorf("%q: %s read-only %v: %+v", cmd, j.Level, j.ReadOnly, j.Findings)
		}
	}
	checkJudge(t, ws, []judgeCase{
		{"./scripts/build.sh", model.RiskLow, "", false},
		{"/usr/bin/ls", model.RiskLow, "", true},
	})
}

// Variants of the rules above an agent would try next.
func TestJudgeHardenVariants(t *testing.T) {
	checkJudge(t, ws, []judgeCase{
		{"GIT_TRACE=~/.bashrc git status", model.RiskHigh, "target", false},
		{"SSLKEYLOGFILE=/home/dev/.bashrc curl https://example.com", model.RiskHigh, "target", false},
		{"cd $HOME && echo x > .bashrc", model.RiskHigh, "target", false},
		{"cd \"$HOME/.ssh\" && cat id_rsa", model.RiskMedium, "target", false},
		{"git diff --no-index /dev/null ~/.ssh/id_rsa", model.RiskMedium, "target", false},
		{"git log -p -- .env", model.RiskMedium, "target", false},
		{"git show HEAD:src/a.go", model.RiskLow, "", true},
		{"pip install /tmp/evil", model.RiskMedium, "target", false},
		{"npm i ../evil.tgz", model.RiskMedium, "target", false},
		{"npm --prefix /tmp/evil run build", model.RiskMedium, "flow", false},
		{"gh auth status -t", model.RiskMedium, "effect", false},
		{"npm install", model.RiskLow, "", false},
		{"pip install -r requirements.txt", model.RiskLow, "", false},
	})
	for _, cmd := range []string{"gcloud auth print-access-token"} {
		if j := Judge(cmd, ws); j.Level.Rank() < model.RiskMedium.Rank() || j.ReadOnly {
			t.Errorf("%q: %s read-only %v", cmd, j.Level, j.ReadOnly)
		}
	}
}

func TestJudgeGitInfoExclude(t *testing.T) {
	checkJudge(t, ws, []judgeCase{
		{"echo dist >> .git/info/exclude", model.RiskLow, "", false},
		{"echo x > .pnpmfile.cjs", model.RiskHigh, "target", false},
		{"echo x > .devcontainer/devcontainer.json", model.RiskHigh, "target", false},
	})
}
