package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

	"github.com/approve-tui/approve-tui/demo"
	"github.com/approve-tui/approve-tui/headless"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/tui"
)

// ExitWaitTimedOut: headless, a Wait of the script timed out (the same
// number as wait's timeout).
const ExitWaitTimedOut = ExitWaitTimeout

var headlessHelp = `Run the console — the same one a terminal gets — with no terminal, driven by
a script in the VHS tape language (github.com/charmbracelet/vhs), so that the
tape that demonstrates or tests something can also be recorded to a GIF
with VHS where it is installed. For demos, documentation and CI.

The database is --db (an existing file), or with --demo-seed N a fresh
database seeded with the demo proposals of seed N (ids fixed by the seed; see
examples/). With --demo-seed and an explicit --db the file, which must not
exist, is created and kept; otherwise it lives in a temporary directory.
The simulated demo agent does not run unless --demo-agent: its submissions
come at random moments and would make screens differ from run to run.

Decisions go through the same decision path as the console's, as the actor
"headless:<script file name>" (consumed_by and the audit log): a tape
approves only by typing the id, a Paste into the approve prompt is refused,
and --read-only makes the tape a watcher whose decisions are refused.

Commands (one per line; # comments and blank lines are fine):
  Type "text"           one key per character ("…", '…' or ` + "`…`" + `);
                        Type@<time> "text" sets the delay between keys
  Enter Backspace Delete Insert Tab Space Up Down Left Right PageUp
  PageDown Escape       a key; Key@<time> N presses it N times
  Ctrl+<key> Alt+<key> Shift+<key>   e.g. Ctrl+C, Alt+Enter, Shift+Tab
  Sleep <time>          keep the console running: 500ms, 2s, 1m, 0.5 (seconds)
  Wait+Screen /regex/   wait until the screen (escape sequences removed)
                        matches; Wait or Wait+Line match its last line, as
                        in VHS; Wait@<time> sets the timeout (default 15s,
                        or Set WaitTimeout)
  Screenshot FILE.png   write the screen as text to FILE.txt (VHS writes a
                        PNG there); FILE.txt is written as is. Relative to
                        --screenshot-dir (default: the working directory)
  Copy "text" / Paste   paste text in one piece, as a terminal's bracketed
                        paste delivers it
  Set Width N / Set Height N   VHS's pixels, converted to cells with the
                        tape's FontSize (14 or 14.5), Padding, LineHeight,
                        LetterSpacing, Margin and WindowBar (VHS's default
                        font); further down a tape they resize the screen.
                        Without them the screen is 100x30; --width/--height
                        fix it in cells. A screen below the console's
                        minimum, 80x24 cells, is an error at the Set line
                        that made it (Set Width 100 is 1 column)
  Set TypingSpeed <time>   delay after each key (default 50ms)
  Set WaitTimeout <time>, Set WaitPattern /regex/
  Source FILE.tape      include another tape

Accepted for VHS, no effect headless: Output, Require, Env, Hide, Show,
and Set Shell, FontFamily, Framerate, PlaybackSpeed, Theme, LoopOffset,
BorderRadius, CursorBlink (FontSize, Padding, Margin, MarginFill,
LineHeight, LetterSpacing, WindowBar and WindowBarSize only convert Width
and Height). A Hide…Show block right after the top settings is the VHS
set-up that starts the console in a shell, and a final Hide block is the
clean-up: headless skips both. Anything else fails before anything runs,
every problem listed as file:line: reason; so do ScrollUp, ScrollDown,
Subtitle and the Subtitle… settings, which VHS v0.10.0 refuses too (they
are newer than it).

The tape starts once the console has loaded its list. Typing is real time;
--typing-speed 0 types as fast as the console takes keys: one key per
message, each once the console has finished with the one before, so that
CI runs are the same every time. Sleep and Wait are real time; the store
watcher and the clock run live, so other processes' decisions appear as on
a terminal. A Screenshot waits until the console has finished what it
started (loading a waiter's state, say).

Output: the final screen on stdout, in colour when --color says so (auto:
only on a terminal, without NO_COLOR or TERM=dumb; --plain is --color
never);
--frames DIR writes every distinct screen (frame-00001.txt…, frames.jsonl);
--events FILE writes a JSON-lines log of every tape command and of every
action the console took and its outcome, with timestamps.

Exit codes: 0 the script ran to its end; 1 a command failed (a Screenshot
could not be written, the console quit before the end, a Set Width or Set
Height further down made the screen smaller than 80x24); 2 usage, or the
script is invalid or its screen is smaller than 80x24 (nothing ran); 6
store unavailable; 12 a Wait timed out (the last screen is printed); 130
interrupted.`

func (a *app) headlessCmd() *cobra.Command {
	var (
		script, frames, events, shots string
		demoSeed                      int64
		demoAgent, plain              bool
		width, height                 int
		typing                        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "headless --script FILE.tape [--db PATH | --demo-seed N] [flags]",
		Short: "Drive the console with a VHS tape, no terminal (demos, docs, CI)",
		Long:  headlessHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			switch {
			case script == "":
				return usageErrorf("--script FILE.tape is required")
			case (fl.Changed("width") && width < tui.MinWidth) || (fl.Changed("height") && height < tui.MinHeight) || width > 1000 || height > 1000:
				return usageErrorf("--width and --height are cells: from the console's minimum, %dx%d, to 1000", tui.MinWidth, tui.MinHeight)
			case typing < 0:
				return usageErrorf("--typing-speed must not be negative")
			case demoAgent && !fl.Changed("demo-seed"):
				return usageErrorf("--demo-agent needs --demo-seed")
			}
			tape, err := headless.ParseTapeFile(script)
			if err != nil {
				var errs headless.TapeErrors
				if errors.As(err, &errs) {
					for _, e := range errs {
						fmt.Fprintln(a.err, line(e.Error()))
					}
					return exitf(ExitUsage, "%s: %d problem(s), nothing ran", script, len(errs))
				}
				return usageErrorf("--script: %v", err)
			}
			// A screen too small for the console shows only "Terminal too
			// small": the tape is refused before anything runs.
			if err := headless.CheckScreen(tape, headless.Options{Width: width, Height: height}); err != nil {
				fmt.Fprintln(a.err, line(err.Error()))
				return exitf(ExitUsage, "%s: the screen is too small for the console, nothing ran", script)
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()

			s, label, cleanup, err := a.headlessStore(ctx, fl.Changed("demo-seed"), fl.Changed("db"), demoSeed)
			if err != nil {
				return err
			}
			defer cleanup()
			if demoAgent {
				done := make(chan struct{})
				go func() {
					defer close(done)
					_ = demo.RunAgent(ctx, s, demo.AgentOptions{Seed: demoSeed})
				}()
				defer func() { cancel(); <-done }()
			}

			opt := headless.Options{
				Console: tui.Options{
					Store:    s,
					Actor:    model.Actor{Surface: model.SurfaceHeadless, Name: "headless:" + tape.Name(), Detail: fmt.Sprintf("pid %d", os.Getpid()), ReadOnly: a.readOnly, Person: model.LocalPerson()},
					Renderer: headlessRenderer(plain || !a.colorful()),
					Now:      a.now,
					Label:    label,
					// Where signatures are required, a tape's approvals
					// sign with the operator's agent, as the console's do.
					Signing: a.headlessSigning(),
				},
				Width: width, Height: height,
				ScreenshotDir: shots,
				FramesDir:     frames,
			}
			if fl.Changed("typing-speed") {
				opt.TypingSpeed = &typing
			}
			if frames != "" {
				if err := clearFrames(frames); err != nil {
					return err
				}
			}
			if events != "" {
				f, err := os.Create(events)
				if err != nil {
					return fmt.Errorf("--events: %w", err)
				}
				defer f.Close()
				opt.Events = f
			}
			res, err := headless.Run(ctx, tape, opt)
			if plain || !a.colorful() {
				a.printf("%s\n", res.Text)
			} else {
				a.printf("%s\n", res.Screen)
			}
			var wt *headless.WaitTimeoutError
			switch {
			case err == nil:
				return nil
			case errors.As(err, &wt):
				return exitf(ExitWaitTimedOut, "%s", wt.Error())
			case errors.Is(err, context.Canceled):
				return err
			}
			return exitf(ExitError, "%v", err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&script, "script", "", "the `FILE.tape` to run")
	f.Int64Var(&demoSeed, "demo-seed", 0, "run on a fresh database seeded with the demo proposals of seed `N`")
	f.BoolVar(&demoAgent, "demo-agent", false, "also run the simulated demo agent (with --demo-seed)")
	f.StringVar(&frames, "frames", "", "write every distinct screen to `DIR`")
	f.StringVar(&events, "events", "", "write the JSON-lines event log to `FILE`")
	f.StringVar(&shots, "screenshot-dir", "", "write Screenshot files relative to `DIR` (default: the working directory)")
	f.IntVar(&width, "width", 0, "screen width in cells (overrides the tape's Set Width)")
	f.IntVar(&height, "height", 0, "screen height in cells (overrides the tape's Set Height)")
	f.BoolVar(&plain, "plain", false, "print the final screen and frames without colours (--color never)")
	f.DurationVar(&typing, "typing-speed", 0, "delay between keys for every Type and key, overriding the tape (0: as fast as the console takes them)")
	return cmd
}

// headlessStore opens the store a headless run works on: a fresh demo
// database, or the one --db names. cleanup closes it (and removes a
// temporary demo database).
func (a *app) headlessStore(ctx context.Context, seeded, dbGiven bool, seed int64) (*storage.Store, string, func(), error) {
	if !seeded {
		s, err := a.open(ctx, false)
		if err != nil {
			return nil, "", nil, err
		}
		return s, "", func() { s.Close() }, nil
	}
	s, cleanup, err := a.freshStore(ctx, dbGiven, "--demo-seed", a.now)
	if err != nil {
		return nil, "", nil, err
	}
	if _, err := demo.Seed(ctx, s, seed, s.Now()); err != nil {
		cleanup()
		return nil, "", nil, err
	}
	return s, fmt.Sprintf("demo seed %d", seed), cleanup, nil
}

// freshStore opens a store for demo data: --db when given (a file that does
// not exist yet, or a PostgreSQL database with no proposals in it), else a
// file in a new temporary directory. cleanup closes it (and removes the
// temporary directory).
func (a *app) freshStore(ctx context.Context, dbGiven bool, who string, now func() time.Time) (*storage.Store, func(), error) {
	path, cleanup := a.db, func() {}
	if !dbGiven {
		dir, err := os.MkdirTemp("", "approve-tui-demo-")
		if err != nil {
			return nil, nil, err
		}
		path = filepath.Join(dir, "state.db")
		cleanup = func() { os.RemoveAll(dir) }
	} else if !storage.IsPostgresURL(path) {
		if _, err := os.Stat(path); err == nil {
			return nil, nil, usageErrorf("--db %s exists: %s needs a fresh file (it writes demo data)", path, who)
		}
	}
	rc, err := a.riskContext("")
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	s, err := storage.Open(ctx, path, storage.Options{Create: true, BusyTimeout: a.lockTimeout, Now: now, Risk: rc})
	if err != nil {
		cleanup()
		return nil, nil, &storeOpenError{err: err}
	}
	if dbGiven && storage.IsPostgresURL(path) {
		if recs, err := s.List(ctx, storage.ListOptions{Status: storage.ListAll, Limit: 1}); err != nil || len(recs) > 0 {
			s.Close()
			if err != nil {
				return nil, nil, &storeOpenError{err: err}
			}
			return nil, nil, usageErrorf("--db %s holds proposals: %s needs an empty database (it writes demo data)", s.Path(), who)
		}
	}
	return s, func() { s.Close(); cleanup() }, nil
}

// headlessRenderer renders for no terminal: 24-bit colour on a dark
// background, or plain text.
func headlessRenderer(plain bool) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	if plain {
		r.SetColorProfile(termenv.Ascii)
	} else {
		r.SetColorProfile(termenv.TrueColor)
	}
	r.SetHasDarkBackground(true)
	return r
}

// clearFrames makes dir and removes the frames an earlier run left there
// (only files named as headless names them).
func clearFrames(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--frames: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "frame-*.txt"))
	old = append(old, filepath.Join(dir, "frames.jsonl"))
	for _, p := range old {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--frames: %w", err)
		}
	}
	return nil
}
