// Command approve-tui is the console in which a human approves or denies
// the dangerous shell commands AI agents propose. See package cli.
package main

import (
	"os"

	"github.com/approve-tui/approve-tui/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
