package cli

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/demo"
	"github.com/approve-tui/approve-tui/internal/termbg"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/tui"
)

// consoleRun is the root command's action: the interactive console on the
// database named by the global flags.
func (a *app) consoleRun(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if args[0] == "open" {
			// A page's ssh form (ssh -t HOST open ID), typed locally.
			return usageErrorf("open ID is the command of a session over ssh (ssh -t HOST open ID); here it is %s --open ID", cmd.Root().Name())
		}
		return unknownCommand(cmd.Root(), args[0])
	}
	if cmd.Flags().Changed("open") {
		if err := a.checkOpen(); err != nil {
			return err
		}
	}
	if _, err := bellLevel(a.bell); err != nil {
		return err
	}
	if err := a.needTerminal("the console"); err != nil {
		return err
	}
	s, err := a.open(cmd.Context(), false)
	if err != nil {
		return err
	}
	defer s.Close()
	return a.runConsole(cmd.Context(), s)
}

// bellLevel is the risk --bell names ("": no bell).
func bellLevel(v string) (model.RiskLevel, error) {
	switch lv := model.RiskLevel(strings.ToLower(strings.TrimSpace(v))); lv {
	case "", "off", "none":
		return "", nil
	case model.RiskLow, model.RiskMedium, model.RiskHigh:
		return lv, nil
	}
	return "", usageErrorf("--bell %q: want low, medium or high (the least risk that rings)", model.Sanitize(v, model.Line))
}

// runConsole runs the Bubble Tea console on s until the operator quits.
func (a *app) runConsole(ctx context.Context, s *storage.Store) error {
	actor := model.LocalActor(model.SurfaceTUI)
	actor.ReadOnly = a.readOnly
	r := a.consoleRenderer()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bell, _ := bellLevel(a.bell)
	jc, jerr := a.riskContext("") // each proposal's cwd is its own
	if jerr != nil {
		return jerr
	}
	m := tui.New(tui.Options{Store: s, Actor: actor, Renderer: r, Context: ctx, Follow: a.follow, Open: a.openID, Bell: bell, Judge: jc,
		Signing: a.consoleSigning()})
	err := tui.RunTerminal(ctx, m, a.in, a.rawOut)
	cancel() // stop the console's background work before releasing it
	m.Close()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// consoleSigning is where the console's decisions get their signatures
// when the store requires them: the key file of --key, else the ssh-agent
// at $SSH_AUTH_SOCK, read here once (the console reads no environment).
func (a *app) consoleSigning() tui.Signing {
	sg := tui.AgentSocket(a.getenv("SSH_AUTH_SOCK"))
	if a.consoleKey != "" {
		sg = tui.Signing{KeyFile: a.consoleKey}
	}
	sg.PolicyMemory, _ = a.policyMemory() // none to be had: the console keeps none
	return sg
}

// consoleRenderer is the console's renderer on its terminal. The colour
// profile is the terminal's (TERM, COLORTERM), none with --color never,
// NO_COLOR (unless --color always) or a monochrome terminal. Where colour
// shows, the background is what COLORFGBG says, else what the terminal
// answers to one query within termbg.Timeout, else dark; without colour
// the terminal is asked nothing (the background changes nothing then).
func (a *app) consoleRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(a.rawOut, termenv.WithEnvironment(envOf(a.getenv)))
	p := a.colorProfile(a.rawOut)
	r.SetColorProfile(p)
	dark := termbg.Default
	if p != termenv.Ascii {
		in, _ := a.in.(*os.File)
		out, _ := a.rawOut.(*os.File)
		dark, _ = termbg.Dark(in, out, a.getenv, termbg.Timeout)
	}
	r.SetHasDarkBackground(dark)
	return r
}

// colorProfile is the colour profile of w's terminal, as its environment
// gives it (TERM, COLORTERM; NO_COLOR and CLICOLOR_FORCE included): none
// with --color never or when w is no terminal, at least 16 colours with
// --color always. It asks the terminal nothing.
func (a *app) colorProfile(w io.Writer) termenv.Profile {
	o := termenv.NewOutput(w, termenv.WithEnvironment(envOf(a.getenv)))
	switch a.color {
	case "never":
		return termenv.Ascii
	case "always":
		if p := o.ColorProfile(); p != termenv.Ascii {
			return p
		}
		return termenv.ANSI
	}
	return o.EnvColorProfile()
}

// envOf is getenv as termenv reads an environment.
type envOf func(string) string

func (e envOf) Getenv(k string) string { return e(k) }
func (e envOf) Environ() []string      { return nil }

// checkOpen validates --open: an id, not empty, and not a flag the option
// swallowed (--open --read-only would open "--read-only" and drop the
// watcher's role): an id that starts with - is given as --open=ID. It
// does not go with --follow, which would move the selection away from it.
func (a *app) checkOpen() error {
	if strings.TrimSpace(a.openID) == "" {
		return usageErrorf("--open needs the approval id of a proposal: --open ID")
	}
	if strings.HasPrefix(a.openID, "-") {
		for i, arg := range a.args {
			if arg == "--" {
				break
			}
			if arg == "--open" && i+1 < len(a.args) && a.args[i+1] == a.openID {
				return usageErrorf("--open %s: an id that starts with - is given as --open=%s (else it would be taken for an option)", line(a.openID), line(a.openID))
			}
		}
	}
	if a.follow != "" {
		return usageErrorf("--open and --follow both choose what the console shows first: give one of them")
	}
	return nil
}

func (a *app) demoCmd() *cobra.Command {
	var seed int64
	cmd := &cobra.Command{
		Use:   "demo [--db PATH] [--seed N]",
		Short: "Open the console on a fresh demo database with a simulated agent",
		Long: `Create a fresh demo database (in a temporary directory unless --db names a
file that does not exist yet), seed it with a varied set of proposals (every
risk level, diffs, a long command, a heredoc, hostile strings, one about to
expire, one expired, one corrupt, one written the way Hermes writes it), and
open the console on it. A simulated agent in the same process keeps
submitting proposals every few seconds, waits on them as a live waiter, and
records an execution outcome for those approved (it runs nothing).

With --seed N the ids and contents are the same on every run, so scripts
and documentation can refer to them.
` + exitCodes(ExitOK, ExitError, ExitUsage, ExitUnavailable, ExitInterrupted),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			if err := a.needTerminal("the demo console"); err != nil {
				return err
			}
			s, cleanup, err := a.freshStore(ctx, cmd.Flags().Changed("db"), "the demo", nil)
			if err != nil {
				return err
			}
			defer cleanup()
			if !cmd.Flags().Changed("seed") {
				seed = time.Now().UnixNano()
			}
			if _, err := demo.Seed(ctx, s, seed, s.Now()); err != nil {
				return err
			}
			agentDone := make(chan struct{})
			go func() {
				defer close(agentDone)
				_ = demo.RunAgent(ctx, s, demo.AgentOptions{Seed: seed})
			}()
			err = a.runConsole(ctx, s)
			cancel()
			<-agentDone
			return err
		},
	}
	cmd.Flags().Int64Var(&seed, "seed", 0, "make ids and contents deterministic")
	return cmd
}
