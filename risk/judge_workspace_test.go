package risk

import (
	"testing"

	"github.com/approve-tui/approve-tui/model"
)

// A working directory that is no workspace (/, a system directory, a home
// directory itself) makes nothing inside it: the directory is the
// requester's claim, and claiming / must not make rm srv/data harmless.
func TestWorkspaceClaimedAtRoot(t *testing.T) {
	for _, cwd := range []string{"/", "/srv", "/home/dev", "/etc/nginx", "/usr/local/lib", "/var/lib/postgresql", "relative/dir"} {
		j := Judge("rm srv/data", Context{Cwd: cwd, Home: "/home/dev"})
		if j.Level == model.RiskLow {
			t.Errorf("cwd %q: rm srv/data is LOW: %+v", cwd, j.Findings)
		}
	}
	for _, cwd := range []string{"/home/dev/project", "/srv/app", ""} {
		if j := Judge("rm build/out.o", Context{Cwd: cwd, Home: "/home/dev"}); j.Level != model.RiskLow {
			t.Errorf("cwd %q: rm build/out.o is %s: %+v", cwd, j.Level, j.Findings)
		}
	}
}

// What agents set so that nothing waits at a terminal is not a command run
// through the environment; a pager that runs something is.
func TestPlainPaging(t *testing.T) {
	for _, c := range []string{"PAGER=cat git log -3", "GIT_PAGER= git log", "GH_PAGER=cat gh pr list", "LESS=-R less README.md", "GIT_PAGER='less -FRX' git log"} {
		if j := Judge(c, Context{Cwd: "/home/dev/p"}); j.Level != model.RiskLow || !j.ReadOnly {
			t.Errorf("%s: %s read-only %v: %+v", c, j.Level, j.ReadOnly, j.Findings)
		}
	}
	for _, c := range []string{"PAGER='sh -c id' git log", "GIT_PAGER=id git log", "LESS='+!id' less x", "LESS=-kkeys less x", "GH_PAGER='cat; rm -rf ~' gh pr list", "PAGER='less +!id' git log", "GIT_PAGER='tee /etc/x' git log"} {
		if j := Judge(c, Context{Cwd: "/home/dev/p"}); j.ReadOnly || j.Level == model.RiskLow {
			t.Errorf("%s: %s read-only %v", c, j.Level, j.ReadOnly)
		}
	}
}
