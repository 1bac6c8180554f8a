package cli

import (
	"runtime"
	"strings"
	"testing"
)

// --version names the commit's date as what it is: the date of the commit
// (goreleaser's CommitDate, or Go's vcs.time), not of the build.
func TestVersionSaysCommitDate(t *testing.T) {
	got := BuildInfo{Version: "v1.2.3", Commit: "1a2b3c4", Date: "2026-12-04T10:00:00Z"}.String()
	want := "v1.2.3 (commit 1a2b3c4, committed 2026-12-04T10:00:00Z, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if got != want {
		t.Fatalf("--version says %q, want %q", got, want)
	}
	if strings.Contains(got, "built") {
		t.Fatalf("the commit date is called the build's: %q", got)
	}
}
