package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/spf13/cobra"
)

func (a *app) hookUninstallCmd() *cobra.Command {
	var o hookInstallOpts
	cmd := &cobra.Command{
		Use:   "uninstall claude-code|codex|gemini [--scope user|project] [--dir DIR]",
		Short: "Take approve-tui's hook out of an agent's settings",
		Long: `Undo "approve-tui hook install": remove approve-tui's own entries for that
agent (a command running "approve-tui hook AGENT", by any path) from the
file install writes (the same files, --scope and --dir):

  claude-code  ~/.claude/settings.json ($CLAUDE_CONFIG_DIR), or
               .claude/settings.json with --scope project
  codex        ~/.codex/hooks.json ($CODEX_HOME), or .codex/hooks.json; and,
               in ~/.codex/config.toml, the [hooks.state."KEY"] trust tables
               of the entries removed. Codex keys trust by position: a hook
               of yours that moves up keeps its trust when it is the hook
               that was trusted, else uninstall names it for /hooks
  gemini       ~/.gemini/settings.json, or .gemini/settings.json;
               "hooksConfig.enabled" is left as it is (other hooks may need
               it)

Everything else is kept: other hooks, events and keys, in their order. A
matcher group, an event's list or "hooks" is dropped only when the removal
leaves it empty. With nothing installed it says so and writes nothing;
running it again changes nothing. A file that does not parse is left
untouched, and uninstall fails. The store is not needed.
` + exitCodes(ExitOK, ExitError, ExitUsage),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			who, err := parseInstallAgent(args)
			if err != nil {
				return err
			}
			return a.hookUninstall(who, o)
		},
	}
	o.flags(cmd, false)
	return cmd
}

func (a *app) hookUninstall(who agent.Agent, o hookInstallOpts) error {
	t, err := a.installTarget(who, o)
	if err != nil {
		return err
	}
	settings, _, err := readAgentSettings(t)
	if err != nil {
		return err
	}
	removed, moves, err := agent.RemoveHooks(settings, who)
	if err != nil {
		return exitf(ExitError, "%s: %v; nothing written", line(t.settings), err)
	}
	var notes []string
	var cfgPath string
	var cfgOut []byte
	cfgChanged := false
	var dropped int
	if who == agent.AgentCodex {
		cfgPath = filepath.Join(t.codex, "config.toml")
		csrc, _, err := readSettings(cfgPath)
		if err != nil {
			return exitf(ExitError, "%s: %v; nothing written", line(cfgPath), line(err.Error()))
		}
		cfg, err := agent.ParseCodexConfig(csrc)
		if err != nil {
			return exitf(ExitError, "%s is %v; nothing written: fix it (Codex cannot read it either)", line(cfgPath), err)
		}
		if n := codexInlineOurs(cfg); n > 0 {
			notes = append(notes, "config.toml has approve-tui hook(s) written inline under [hooks], which uninstall does not edit: remove them from "+line(cfgPath))
		}
		if len(removed) > 0 {
			abs, err := filepath.Abs(t.settings)
			if err != nil {
				return exitf(ExitError, "%v", err)
			}
			// The trust of the entries removed, and of the hooks that moved
			// from their old positions, goes; a moved hook that was trusted
			// as it is now is trusted at its new position.
			drop := map[string]bool{}
			for _, h := range removed {
				drop[agent.CodexHookKey(abs, codexEvent(h.Event), h.Group, h.Handler)] = true
			}
			var off []string
			for _, m := range moves {
				k := agent.CodexHookKey(abs, codexEvent(m.Event), m.OldGroup, m.OldHandler)
				drop[k] = true
				if st, ok := cfg.HookState(k); ok && st.HasEnabled && !st.Enabled {
					c, _ := m.Fields.Get("command")
					s, _ := c.(string)
					off = append(off, line(s))
				}
			}
			if len(off) > 0 {
				notes = append(notes, "hooks of yours you had turned off in Codex's /hooks moved, and Codex runs them at their new place: turn them off again in /hooks: "+strings.Join(off, "; "))
			}
			hashes := map[string]string{}
			if lost := codexMovedTrust(cfg, abs, moves, hashes); len(lost) > 0 {
				notes = append(notes, "hooks of yours moved in "+line(t.settings)+" and were trusted as they were before: trust them again in Codex's /hooks: "+strings.Join(lost, "; "))
			}
			for k := range drop {
				if _, ok := cfg.HookState(k); ok {
					if _, set := hashes[k]; !set {
						dropped++
					}
				}
			}
			if cfgOut, err = cfg.EditHookTrust(hashes, drop); err != nil {
				return exitf(ExitError, "%s: %v; nothing written", line(cfgPath), err)
			}
			cfgChanged = !bytes.Equal(cfgOut, cfg.Bytes())
			if len(hashes) > 0 {
				a.printf("kept the trust of %d hook(s) of yours that moved\n", len(hashes))
			}
		}
	}
	if len(removed) == 0 {
		a.printf("no approve-tui hook for %s in %s: nothing to remove, nothing written\n", who, line(t.settings))
		for _, n := range notes {
			a.printf("  to do: %s\n", n)
		}
		return nil
	}
	out, err := agent.FormatJSON(settings)
	if err != nil {
		return exitf(ExitError, "%s: %v", line(t.settings), err)
	}
	paths := []string{t.settings}
	if cfgChanged {
		paths = append(paths, cfgPath)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			if why := notOurs(fi); why != "" {
				return exitf(ExitError, "%s: %s; nothing written", line(p), why)
			}
		}
	}
	if _, err := writeAtomic(t.settings, out, t.project == ""); err != nil {
		return exitf(ExitError, "writing %s: %v", line(t.settings), err)
	}
	a.printf("removed from %s:\n", line(t.settings))
	for _, h := range removed {
		a.printf("  %s (matcher %s): %s\n", line(h.Event), line(h.Matcher), line(h.Command))
	}
	if cfgChanged {
		if _, err := writeAtomic(cfgPath, cfgOut, true); err != nil {
			return exitf(ExitError, "writing %s: %v (the hooks are removed, their trust is not: remove their [hooks.state] tables by hand)", line(cfgPath), err)
		}
		a.printf("removed %d trust table(s) from %s\n", dropped, line(cfgPath))
	}
	if who == agent.AgentGemini {
		if hc, ok := settings.Object("hooksConfig"); ok {
			if v, has := hc.Get("enabled"); has {
				a.printf("  left as it is: \"hooksConfig\": {\"enabled\": %v} (other hooks may rely on it)\n", v)
			}
		}
	}
	for _, n := range notes {
		a.printf("  to do: %s\n", n)
	}
	return nil
}
