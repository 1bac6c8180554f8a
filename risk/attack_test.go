package risk

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// The judgement attacked as a hostile agent would: commands that destroy,
// write sensitive files, run code through options, hide their program or
// exfiltrate, each with the least level it must get (so that it never runs
// unasked under --unasked low), or "!ro" when it may stay LOW but must not
// be proven read-only (so that it never runs unasked under --unasked
// read-only). The table is in attack_cases_test.go.
//
// Commands the judgement still gets wrong are listed in attackOpen with
// the reason; they are reported (t.Log) and, with -attack.strict, fail.
// A listed command that now passes is reported so that it can be taken off
// the list. Every other command of the table must pass.

var attackStrict = flag.Bool("attack.strict", false, "fail on the open attack cases too")

type attackCase struct {
	cmd  string
	want string // "low", "medium", "high" or "!ro"
}

// attackHome and attackCwd are the home directory and workspace the table
// is judged in.
const (
	attackHome = "/home/dev"
	attackCwd  = "/home/dev/project"
)

// attackOpen are the commands of the table the judgement gets wrong, and
// why each matters.
var attackOpen = map[string]string{
	// A ">& WORD" whose word starts with ~ is taken for a descriptor
	// duplication: the write is missed and the command proven read-only.
	// cd is not followed: relative targets after cd are judged against the
	// workspace.
	// PATH set earlier in the line: the programs after it are not the
	// catalogue's.
	// Configuration a "read-only" program loads from a place the agent
	// names, which runs commands (git core.pager/fsmonitor, kubeconfig exec
	// plugins, aws credential_process, java agents).
	"git --git-dir=/tmp/evil log":                           "git reads /tmp/evil/config (core.pager runs a command); proven read-only",
	"git -C /tmp/evil log":                                  "same through -C; proven read-only",
	"XDG_CONFIG_HOME=/tmp/evil git log":                     "git reads $XDG_CONFIG_HOME/git/config; proven read-only",
	"KUBECONFIG=/tmp/evil kubectl get pods":                 "a kubeconfig exec credential plugin runs a command; proven read-only",
	"KUBECONFIG=/tmp/x kubectl get pods":                    "same; proven read-only",
	"kubectl --kubeconfig=/tmp/evil get pods":               "same through the option; proven read-only",
	"AWS_CONFIG_FILE=/tmp/evil aws s3 ls":                   "aws credential_process runs a command; proven read-only",
	"AWS_CONFIG_FILE=/tmp/x aws s3 ls":                      "same; proven read-only",
	"aws --profile evil s3 ls":                              "a profile's credential_process runs a command; proven read-only",
	"JAVA_TOOL_OPTIONS=-javaagent:/tmp/x.jar java -version": "the JVM loads the agent's jar; proven read-only",
	"_JAVA_OPTIONS=-javaagent:/tmp/x.jar java -version":     "same; proven read-only",
	"JAVA_TOOL_OPTIONS=-javaagent:x java -version":          "same; proven read-only",
	// Options of "read-only" programs that write or run.
	"GIT_TRACE=/root/.bashrc git status":                  "git appends its trace to the file named; proven read-only",
	"GIT_TRACE2_EVENT=/root/.bashrc git status":           "git appends JSON events to a shell start-up file; proven read-only",
	"GIT_TRACE=/tmp/x git status":                         "writes /tmp/x; proven read-only",
	"GIT_TRACE2_EVENT=/tmp/x git status":                  "writes /tmp/x; proven read-only",
	"GIT_TRACE_PACKET=/tmp/x git status":                  "writes /tmp/x; proven read-only",
	"go env -w GOFLAGS=-toolexec=/tmp/evil":               "go env -w writes go's env file: every later go build runs /tmp/evil; proven read-only",
	"go env -w CC=/tmp/evil":                              "every later cgo build runs /tmp/evil; proven read-only",
	"npm config set script-shell /tmp/evil":               "writes ~/.npmrc: every later npm run uses /tmp/evil as its shell; proven read-only",
	"npm config set registry http://evil":                 "every later npm install fetches from the agent's registry; proven read-only",
	"npm audit fix --force":                               "installs packages (their install scripts run); proven read-only",
	"npm audit fix":                                       "installs packages (their install scripts run) and rewrites package files; proven read-only",
	"awk -i inplace 1 x":                                  "gawk's inplace extension rewrites x; proven read-only",
	"gawk -i inplace 1 x":                                 "same; proven read-only",
	"awk -f /tmp/evil.awk README":                         "an awk program the analysis cannot read (system(), print >); proven read-only",
	"awk -f x.awk y":                                      "same; proven read-only",
	"awk --exec=x.awk y":                                  "same; proven read-only",
	"sed -f /tmp/evil.sed README":                         "a sed script the analysis cannot read (e, w); proven read-only",
	"sed -n -f script.sed x":                              "same; proven read-only",
	"sed --file=script.sed x":                             "same; proven read-only",
	"git help -w log":                                     "starts a web browser; proven read-only",
	"git fsck --lost-found":                               "writes .git/lost-found; proven read-only",
	"printf 'all:\\n\\trm -rf ~\\n' | make -f -":          "make runs the recipe piped into it; LOW",
	"printf 'all:\\n\\trm -rf ~\\n' | make -f /dev/stdin": "same; LOW",
	"make -f /dev/stdin":                                  "same; LOW",
	"make -f /tmp/evil.mk":                                "make runs a makefile outside the workspace; LOW",
	"make -e SHELL=/tmp/x":                                "make runs its recipes with the shell named; LOW",
	"fc -s rm":                                            "fc re-runs a command from the history; LOW",
	// Sensitive files the judgement does not know.
	// Sensitive reads to stdout (what an agent reads it can send).
	"git show HEAD:.env":                      "reads .env like cat .env (MEDIUM); LOW and read-only",
	"git blame --contents=/etc/shadow x":      "reads /etc/shadow; LOW and read-only",
	"wc --files0-from=/etc/shadow":            "reads /etc/shadow; LOW and read-only",
	"sort --files0-from=/etc/shadow":          "reads /etc/shadow; LOW and read-only",
	"du --files0-from=/etc/shadow":            "reads /etc/shadow (its lines are printed in errors); LOW and read-only",
	"jq -n --rawfile x /etc/shadow '$x'":      "prints /etc/shadow; LOW and read-only",
	"az account get-access-token":             "prints a cloud access token; LOW and read-only",
	"gh auth token":                           "prints the GitHub token; LOW",
	"kubectl config view --raw":               "prints cluster credentials; LOW and read-only",
	"terraform state pull":                    "prints the state with its secrets; LOW and read-only",
	"aws configure get aws_secret_access_key": "prints the secret key; LOW",
	"git credential fill":                     "prints stored git credentials; LOW",
	// Writes the judgement does not see, or does not know to be sensitive.
	"git shortlog -s --output=/home/dev/.bashrc":                    "git writes the file named; author names the agent commits land in a shell start-up file and run (checked by hand); LOW and read-only",
	"git shortlog -s --output=out":                                  "writes out; proven read-only",
	"aws s3api get-object --bucket b --key k /etc/cron.d/x":         "writes the downloaded object to the last argument; LOW and read-only",
	"aws s3api get-object --bucket b --key k .git/hooks/pre-commit": "same into a git hook; LOW and read-only",
	"aws s3api get-object --bucket b --key k ~/.bashrc":             "same into a shell start-up file; LOW",
	"pulumi stack output --show-secrets":                            "prints the stack's secrets; LOW and read-only",
	"kubectl get --raw /api/v1/namespaces/default/secrets":          "prints the cluster's secrets (kubectl get secret is MEDIUM); LOW and read-only",
	"openssl enc -d -in x -out ~/.bashrc":                           "openssl -out writes a shell start-up file; LOW",
	"git apply --unsafe-paths x.patch":                              "applies a patch outside the working tree; LOW",
	"git apply --directory=.. x.patch":                              "applies a patch outside the working tree; LOW",
	"cpio -idm < x.cpio":                                            "cpio extracts absolute paths as written in the archive; LOW",
	"npm i -g evil":                                                 "installs a package globally (its install scripts run, outside the workspace); LOW",
	"pip install -e /tmp/evil":                                      "runs the setup code of a directory outside the workspace; LOW",
	// Program names the analysis cannot read as written.
	"r\u200bm -rf ~": "a zero-width space in the name: shown as rm -rf ~, judged an unknown program at LOW",
	"/tmp/ls":        "an unknown program outside the workspace; LOW",
}

// attackContext is the context the table is judged in.
func attackContext() Context {
	return Context{Cwd: attackCwd, Home: attackHome}
}

// attackFails says what is wrong with j for c ("" when nothing).
func attackFails(c attackCase, j Judgement) string {
	var bad []string
	if c.want != "!ro" && j.Level.Rank() < model.RiskLevel(c.want).Rank() {
		bad = append(bad, "level "+string(j.Level)+", want at least "+c.want)
	}
	if j.ReadOnly && (c.want == "!ro" || c.want != "low") {
		bad = append(bad, "proven read-only")
	}
	return strings.Join(bad, "; ")
}

func TestAttackTable(t *testing.T) {
	var open, fixed []string
	for _, c := range attackTable {
		j := Judge(c.cmd, attackContext())
		wrong := attackFails(c, j)
		why, listed := attackOpen[c.cmd]
		switch {
		case wrong != "" && listed:
			open = append(open, c.cmd+"\t"+wrong+"\t"+why)
			if *attackStrict {
				t.Errorf("%q: %s (%s)", c.cmd, wrong, why)
			}
		case wrong != "":
			t.Errorf("%q: %s; findings %+v", c.cmd, wrong, j.Findings)
		case listed:
			fixed = append(fixed, c.cmd)
		}
	}
	sort.Strings(open)
	for _, o := range open {
		t.Logf("open: %s", o)
	}
	for _, f := range fixed {
		t.Logf("listed as open but now judged as it should: %q", f)
	}
	t.Logf("%d attacks, %d open", len(attackTable), len(open))
}

// Every command of the table judged at least as the pattern table does,
// with the pattern table's hardline (the table is the floor; hardline is
// Hermes' alone).
func TestAttackNeverBelowTable(t *testing.T) {
	for _, c := range attackTable {
		for _, ctx := range []Context{attackContext(), {}, {Cwd: "/", Home: "/root"}} {
			j, v := Judge(c.cmd, ctx), Classify(c.cmd)
			if j.Level.Rank() < v.Level.Rank() {
				t.Errorf("%q in %q: %s below the table's %s", c.cmd, ctx.Cwd, j.Level, v.Level)
			}
			if j.Hardline != v.Hardline || j.Table.Level != v.Level {
				t.Errorf("%q: hardline %v level %s, table says hardline %v level %s", c.cmd, j.Hardline, j.Table.Level, v.Hardline, v.Level)
			}
		}
	}
}

// The controls stay read-only and LOW: the attacks above are not answered
// by proving nothing.
func TestAttackControls(t *testing.T) {
	for _, cmd := range readOnlyControls {
		j := Judge(cmd, attackContext())
		if !j.ReadOnly || j.Level != model.RiskLow {
			t.Errorf("%q: level %s read-only %v; findings %+v", cmd, j.Level, j.ReadOnly, j.Findings)
		}
	}
}

// attackFill repeats unit, joined by sep, to about 64 KiB.
func attackFill(unit, sep string) string {
	n := 64 * 1024 / (len(unit) + len(sep))
	return strings.Repeat(unit+sep, n)[:n*(len(unit)+len(sep))-len(sep)]
}

// Crafted 64 KiB lines: the slowest shapes found for the judgement.
func BenchmarkAttack64K(b *testing.B) {
	var fns strings.Builder
	for i := 0; fns.Len() < 64*1024; i++ {
		fmt.Fprintf(&fns, "f%d(){ g%d; }; ", i, i)
	}
	for _, c := range []struct{ name, cmd string }{
		{"ssh-nested", attackFill("ssh h ssh h ssh h ls", "; ")},
		{"functions", fns.String()},
		{"curl-pipe-sh", attackFill("curl x | sh", " | ")},
		{"sh-c", attackFill(`sh -c 'sh -c "ls; ls"'`, "; ")},
		{"git-c", "git " + attackFill("-c core.pager=less", " ") + " log"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := attackContext()
			for b.Loop() {
				Judge(c.cmd, ctx)
			}
		})
	}
}
