// Command approve-tui is the console in which a human approves or denies
// the dangerous shell commands AI agents propose. See package cli.
//
// updatemaxprocs=0: the runtime sets GOMAXPROCS from the CPU limit at
// start, and does not look at it again every second (a thread woken once
// a second for a cgroup read, in a console that is otherwise idle).

//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/approve-tui/approve-tui/cli"
)

// Stamped at release build (goreleaser's -X main.version=… and so on);
// empty in other builds, which take what Go recorded instead.
var version, commit, date string

func main() {
	cli.Build = cli.BuildInfo{Version: version, Commit: commit, Date: date}
	os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
