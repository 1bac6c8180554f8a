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
