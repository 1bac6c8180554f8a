package cli

import (
	"github.com/spf13/cobra"
)

// refuseUnknownSubcommands makes every command group (a command with
// subcommands and no action of its own) refuse an argument that names
// none of its subcommands: "unknown command", exit 2. Called alone, a
// group prints its help and exits 0, as cobra does. (cobra itself checks
// only the root's arguments: a group given an unknown word printed its help
// and exited 0.)
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c == c.Root() || !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		return nil
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		return cmd.Help()
	}
}
