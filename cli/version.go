package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// BuildInfo is what a build says of itself: the release version, the
// commit and the commit's date (not the build's: a rebuild of one commit
// says the same), stamped by the release build (see .goreleaser.yaml). Fields left empty are taken from what the Go toolchain
// recorded in the binary (the module version of `go install …@v1.2.3`, the
// VCS revision and commit time of a build in a checkout).
type BuildInfo struct {
	Version, Commit, Date string
}

// Build is set by main before Execute.
var Build BuildInfo

// resolved fills what the release build did not stamp.
func (b BuildInfo) resolved() BuildInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if b.Version == "" {
		b.Version = info.Main.Version
	}
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(b.Commit) > 12 {
		b.Commit = b.Commit[:12]
	}
	if modified && b.Commit != "" && !strings.HasSuffix(b.Commit, "-dirty") {
		b.Commit += "-dirty"
	}
	return b
}

// String is the one line `approve-tui --version` prints after the name:
// "v1.2.3 (commit 1a2b3c4d5e6f, committed 2026-12-04T10:00:00Z, go1.26.8,
// linux/amd64)", each part in parentheses there only when known.
func (b BuildInfo) String() string {
	b = b.resolved()
	v := b.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var parts []string
	if b.Commit != "" {
		parts = append(parts, "commit "+b.Commit)
	}
	if b.Date != "" {
		parts = append(parts, "committed "+b.Date)
	}
	parts = append(parts, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
	return v + " (" + strings.Join(parts, ", ") + ")"
}
