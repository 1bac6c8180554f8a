// Package headless drives the console with no terminal: a subset of the
// VHS tape language (charmbracelet/vhs) goes in, screens, frames and an
// event log come out. It is a surface like the local console and the SSH
// server, over the same tui.Model and storage.
package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/tui"
)

// Headless mode runs the console a terminal runs — the same *tui.Model, its
// Update and View — with no terminal: a tape's keys go in, the rendered
// screen comes out. The driver is a small real-time event loop, as Bubble
// Tea's own: every tea.Cmd the model returns runs in its own goroutine and
// posts its message to one channel; the loop applies one message at a time
// to the model and runs the tape's commands in between. The store watcher
// and the clock run live, so rows written by other processes appear while
// a tape runs, exactly as on a terminal.

// pollInterval is how often a Wait re-reads the screen besides after every
// message.
const pollInterval = 25 * time.Millisecond

// Options configure Run.
type Options struct {
	// Console configures the console as for a terminal: Store, Actor,
	// Renderer, Now, Context and Label. Its OnEvent hook, if any, is
	// called as well as the event log. NoWatch is for tests.
	Console tui.Options
	// Width and Height, when positive, fix the screen in cells: the tape's
	// Set Width and Set Height are then ignored.
	Width, Height int
	// TypingSpeed, when not nil, replaces every delay between keys the tape
	// asks for (Set TypingSpeed and @<time>). 0 types as fast as the
	// console takes keys: one key per message, each once the console has
	// finished with the one before (same screens on every run).
	TypingSpeed *time.Duration
	// ScreenshotDir is where relative Screenshot paths are written ("":
	// the working directory, as VHS does).
	ScreenshotDir string
	// FramesDir, when set, receives every distinct screen as rendered:
	// frame-00001.txt, … and frames.jsonl (frame, time, tape line).
	FramesDir string
	// Events, when set, receives the event log: one JSON object per line
	// (see EventLine), written as things happen.
	Events io.Writer
}

// EventLine is one line of the headless event log.
type EventLine struct {
	At time.Time `json:"at"`
	// Source: "run" (start, quit, end), "tape" (a command of the script)
	// or "console" (an tui.Event of the console).
	Source string `json:"source"`
	// File and Line: the tape command being run (File only for a
	// sourced tape).
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Kind    string `json:"kind"`
	ID      string `json:"id,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Result is how a run ended.
type Result struct {
	// Screen is the last screen as rendered (the renderer's colours);
	// Text is the same without escape sequences.
	Screen, Text string
	// Model is the console that ran.
	Model *tui.Model
	// Quit: the console quit (q or ctrl+c).
	Quit bool
	// Frames is how many frames were written.
	Frames int
}

// WaitTimeoutError is a Wait that did not match in time.
type WaitTimeoutError struct {
	Pos     Pos
	Name    string // Wait, Wait+Line, Wait+Screen
	Pattern string
	Timeout time.Duration
	Hint    string
}

func (e *WaitTimeoutError) Error() string {
	s := fmt.Sprintf("%s: %s timed out after %s", e.Pos, e.Name, e.Timeout)
	if e.Pattern != "" {
		s = fmt.Sprintf("%s: %s /%s/ timed out after %s", e.Pos, e.Name, e.Pattern, e.Timeout)
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// RunError is a tape command that could not run.
type RunError struct {
	Pos Pos
	Err error
}

func (e *RunError) Error() string { return e.Pos.String() + ": " + e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// ErrQuit: the tape goes on after the console quit.
var ErrQuit = errors.New("the console has quit: nothing is left to act on")

// ScreenTooSmallError is a screen smaller than the console's minimum
// (tui.MinWidth x tui.MinHeight), where the console shows only its
// "Terminal too small" notice and no key a tape sends does what the tape
// means. Run returns it before the console starts when the tape's top
// settings (or Options) give such a screen, and before the next command
// (or at the end of the tape) when a Set Width or Set Height further down
// makes one.
type ScreenTooSmallError struct {
	// Pos is the line that made the screen that size (File only: the
	// size came from Options.Width and Options.Height).
	Pos Pos
	// Name is that line's command and value: "Set Width 100".
	Name          string
	Width, Height int
	// Started: the console was running (a resize further down the tape).
	Started bool
	// Hints say, per dimension too small, where it came from and what
	// gives the minimum.
	Hints []string
}

func (e *ScreenTooSmallError) Error() string {
	verb := "would be"
	if e.Started {
		verb = "is"
	}
	s := fmt.Sprintf("the screen %s %dx%d cells, smaller than the console's minimum %dx%d, where it shows only \"Terminal too small\"",
		verb, e.Width, e.Height, tui.MinWidth, tui.MinHeight)
	if e.Name != "" {
		s = e.Name + ": " + s
	}
	if len(e.Hints) > 0 {
		s += " (" + strings.Join(e.Hints, "; ") + ")"
	}
	return e.Pos.String() + ": " + s
}

// CheckScreen is nil when a run of t with opt starts on a screen the
// console can use, else the *ScreenTooSmallError Run would return before
// starting it (naming the tape line that sized it).
func CheckScreen(t *Tape, opt Options) error {
	w, h, wc, hc := startScreen(t, opt)
	return screenTooSmall(t, w, h, wc, hc, false)
}

// startScreen is the screen a run starts on, in cells, and the top Set
// lines its width and height come from (nil: the default or Options).
// A dimension the tape does not set, when it sets the other, is VHS's
// default pixels converted: the other Set line is what sized it.
func startScreen(t *Tape, opt Options) (w, h int, wc, hc *TapeCommand) {
	w, h = t.Size()
	if t.widthSet != nil || t.heightSet != nil {
		wc, hc = t.widthSet, t.heightSet
		if wc == nil {
			wc = t.heightSet
		}
		if hc == nil {
			hc = t.widthSet
		}
	}
	if opt.Width > 0 {
		w, wc = opt.Width, nil
	}
	if opt.Height > 0 {
		h, hc = opt.Height, nil
	}
	return w, h, wc, hc
}

// screenTooSmall is nil for a screen of at least the console's minimum,
// else the error blaming the line that sized the dimension too small (the
// width's first).
func screenTooSmall(t *Tape, w, h int, wc, hc *TapeCommand, started bool) error {
	narrow, short := w < tui.MinWidth, h < tui.MinHeight
	if !narrow && !short {
		return nil
	}
	e := &ScreenTooSmallError{Pos: Pos{File: t.File}, Width: w, Height: h, Started: started}
	var cause *TapeCommand
	switch {
	case narrow && wc != nil:
		cause = wc
	case short && hc != nil:
		cause = hc
	}
	if cause != nil {
		e.Pos, e.Name = cause.Pos, cause.Name+" "+cause.Text
	}
	g := t.geo
	hint := func(dim string, cells, min int, c *TapeCommand, conv func(int) int, defaultPx int, unit string) string {
		unit = human.Plural(cells, unit, unit+"s")
		var s string
		switch {
		case c == nil:
			return fmt.Sprintf("the %s given is %d %s", strings.ToLower(dim), cells, unit)
		case c.Setting == dim:
			s = fmt.Sprintf("%s %s px is %d %s at this tape's font and padding", dim, c.Text, cells, unit)
		default:
			s = fmt.Sprintf("%s, not set, is VHS's default %d px: %d %s at this tape's font and padding", dim, defaultPx, cells, unit)
		}
		if c != cause {
			s = c.Pos.String() + ": " + s
		}
		return s + fmt.Sprintf(": Set %s %d or more gives %d", dim, pixelsFor(min, conv), min)
	}
	if narrow {
		e.Hints = append(e.Hints, hint("Width", w, tui.MinWidth, wc, g.cols, defaultGeometry().width, "column"))
	}
	if short {
		e.Hints = append(e.Hints, hint("Height", h, tui.MinHeight, hc, g.rows, defaultGeometry().height, "row"))
	}
	return e
}

type driver struct {
	t   *Tape
	opt Options
	m   *tui.Model
	ctx context.Context

	// drive runs the console's commands and hands their messages to it.
	drive *tui.Driver

	typing      time.Duration
	waitTimeout time.Duration
	waitPattern *regexp.Regexp
	width       int
	height      int
	// wCause and hCause: the Set lines that gave width and height (nil:
	// the default or Options).
	wCause, hCause *TapeCommand

	pos          Pos // the command running
	screen, text string
	frames       int
	clip         string
	quit, loaded bool

	logMu  sync.Mutex
	logErr error
}

// Run runs tape against a new console made from opt.Console, and
// returns when the tape is done, a Wait times out, a command fails or ctx
// ends. The result is never nil: it holds the last screen whatever the
// error.
func Run(ctx context.Context, t *Tape, opt Options) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	d := &driver{t: t, opt: opt, ctx: ctx,
		typing: t.TypingSpeed, waitTimeout: t.WaitTimeout, waitPattern: t.WaitPattern}
	copt := opt.Console
	copt.Context = ctx
	user := copt.OnEvent
	copt.OnEvent = func(e tui.Event) {
		d.consoleEvent(e)
		if user != nil {
			user(e)
		}
	}
	d.m = tui.New(copt)
	d.drive = tui.NewDriver(ctx, d.m)
	err := d.run()
	d.shutdown(cancel)
	res := &Result{Screen: d.screen, Text: d.text, Model: d.m, Quit: d.quit, Frames: d.frames}
	end := EventLine{Source: "run", Kind: "end", Outcome: "ok"}
	var wt *WaitTimeoutError
	switch {
	case errors.As(err, &wt):
		end.Outcome, end.Detail = "wait timed out", err.Error()
	case err != nil:
		end.Outcome, end.Detail = "error", err.Error()
	}
	d.pos = Pos{}
	d.log(end)
	if err == nil {
		err = d.logErr
	}
	return res, err
}

func (d *driver) run() error {
	d.width, d.height, d.wCause, d.hCause = startScreen(d.t, d.opt)
	// A screen too small gets only the console's "Terminal too small":
	// nothing starts on it.
	if err := screenTooSmall(d.t, d.width, d.height, d.wCause, d.hCause, false); err != nil {
		return err
	}
	if d.opt.FramesDir != "" {
		if err := os.MkdirAll(d.opt.FramesDir, 0o755); err != nil {
			return fmt.Errorf("frames: %w", err)
		}
	}
	d.log(EventLine{Source: "run", Kind: "start", Detail: fmt.Sprintf("script %s; screen %dx%d; actor %s",
		d.t.File, d.width, d.height, d.opt.Console.Actor)})
	d.apply(tea.WindowSizeMsg{Width: d.width, Height: d.height})
	d.drive.Exec(d.m.Init())
	// A person looks at the screen before typing: the tape starts once the
	// first list is on it.
	ok, err := d.pump(time.Now().Add(d.waitTimeout), func() bool { return d.loaded })
	if err != nil {
		return err
	}
	if !ok && !d.quit {
		return &WaitTimeoutError{Pos: Pos{File: d.t.File}, Name: "the console's first load", Timeout: d.waitTimeout}
	}
	for _, c := range d.t.Commands {
		d.pos = c.Pos
		// A resize further down takes effect with the next command that
		// is not a Set (Set Width and Set Height in a row are one resize).
		if err := d.checkScreen(c); err != nil {
			return err
		}
		if err := d.do(c); err != nil {
			var wt *WaitTimeoutError
			if errors.As(err, &wt) || errors.Is(err, context.Canceled) {
				return err
			}
			return &RunError{Pos: c.Pos, Err: err}
		}
	}
	d.pos = Pos{}
	if err := d.checkScreen(TapeCommand{}); err != nil {
		return err
	}
	d.settle()
	return nil
}

// checkScreen fails when the screen a Set further down made is too small
// for the console, before next runs (next zero: the end of the tape). A
// console that has quit has no screen to mind.
func (d *driver) checkScreen(next TapeCommand) error {
	if next.Kind == CmdSet || d.quit {
		return nil
	}
	return screenTooSmall(d.t, d.width, d.height, d.wCause, d.hCause, true)
}

// do runs one tape command.
func (d *driver) do(c TapeCommand) error {
	if c.VHSOnly {
		d.logTape(c, "skipped", "VHS only: a Hide block at the start or the end sets up or cleans up VHS's shell")
		return nil
	}
	if d.quit {
		switch c.Kind {
		case CmdSleep, CmdSet, CmdIgnored, CmdHide, CmdShow, CmdCopy, CmdScreenshot:
		default:
			return ErrQuit
		}
	}
	switch c.Kind {
	case CmdType:
		delay := d.delay(c)
		for _, r := range c.Text {
			if err := d.press(runeKey(r), delay); err != nil {
				return err
			}
		}
		d.logTape(c, "done", c.Text)
	case CmdKey:
		delay := d.delay(c)
		for i := 0; i < c.Repeat; i++ {
			if err := d.press(c.Key, delay); err != nil {
				return err
			}
		}
		d.logTape(c, "done", repeatDetail(c.Repeat))
	case CmdCopy:
		d.clip = c.Text
		d.logTape(c, "done", c.Text)
	case CmdPaste:
		// One message with every rune, marked as pasted: what a terminal
		// with bracketed paste delivers.
		if err := d.press(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(d.clip), Paste: true}, d.delay(c)); err != nil {
			return err
		}
		d.logTape(c, "done", d.clip)
	case CmdSleep:
		d.logTape(c, "started", c.Dur.String())
		if _, err := d.pump(time.Now().Add(c.Dur), nil); err != nil {
			return err
		}
		d.logTape(c, "done", "")
	case CmdWait:
		return d.wait(c)
	case CmdScreenshot:
		// A picture of the console at rest: what it started (loading a
		// waiter's state, say) is on it.
		if err := d.quiesce(); err != nil {
			return err
		}
		path := c.Text
		if !filepath.IsAbs(path) {
			path = filepath.Join(d.opt.ScreenshotDir, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("Screenshot: %w", err)
		}
		if err := os.WriteFile(path, []byte(d.text+"\n"), 0o644); err != nil {
			return fmt.Errorf("Screenshot: %w", err)
		}
		d.logTape(c, "done", path)
	case CmdSet:
		d.set(c)
	default: // Hide, Show, Output, Require, Env
		d.logTape(c, "ignored", "no effect headless")
	}
	return nil
}

func repeatDetail(n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("%d times", n)
}

// set applies a setting the tape changes as it runs. Top settings were
// applied before the start.
func (d *driver) set(c TapeCommand) {
	switch {
	case c.Top && (c.Setting == "Width" || c.Setting == "Height"):
		d.logTape(c, "done", fmt.Sprintf("%s px: the screen is %dx%d cells", c.Text, d.width, d.height))
	case c.Top:
		d.logTape(c, "done", c.Text)
	case c.Setting == "TypingSpeed":
		d.typing = c.Dur
		d.logTape(c, "done", c.Text)
	case c.Setting == "Width" || c.Setting == "Height":
		if (c.Setting == "Width" && d.opt.Width > 0) || (c.Setting == "Height" && d.opt.Height > 0) {
			d.logTape(c, "ignored", "the screen size was given on the command line")
			return
		}
		cause := c
		if c.Setting == "Width" {
			d.width, d.wCause = c.Cells, &cause
		} else {
			d.height, d.hCause = c.Cells, &cause
		}
		d.apply(tea.WindowSizeMsg{Width: d.width, Height: d.height})
		d.logTape(c, "done", fmt.Sprintf("%dx%d cells (VHS applies sizes only at the top)", d.width, d.height))
	default:
		d.logTape(c, "ignored", "VHS applies this setting only at the top of a tape")
	}
}

func (d *driver) wait(c TapeCommand) error {
	re := c.Regex
	if re == nil {
		re = d.waitPattern
	}
	timeout := d.waitTimeout
	if c.HasSpeed {
		timeout = c.Speed
	}
	d.logTape(c, "started", "/"+re.String()+"/")
	ok, err := d.pump(time.Now().Add(timeout), func() bool { return re.MatchString(d.scope(c.Screen)) })
	switch {
	case err != nil:
		return err
	case ok:
		d.logTape(c, "matched", "/"+re.String()+"/")
		return nil
	case d.quit:
		return fmt.Errorf("%s /%s/: %w", c.Name, re, ErrQuit)
	}
	e := &WaitTimeoutError{Pos: c.Pos, Name: c.Name, Pattern: re.String(), Timeout: timeout}
	if !c.Screen && re.MatchString(d.text) {
		e.Hint = "the screen matches, its last line does not: Wait checks the last line, as in VHS; use Wait+Screen"
	}
	d.logTape(c, "timeout", e.Error())
	return e
}

// scope is what a Wait matches: the screen, or its last line that is not
// blank (VHS matches the cursor's line; the console hides its cursor and
// ends with its key help).
func (d *driver) scope(screen bool) string {
	if screen {
		return d.text
	}
	lines := strings.Split(d.text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return lines[i]
		}
	}
	return ""
}

func (d *driver) delay(c TapeCommand) time.Duration {
	switch {
	case d.opt.TypingSpeed != nil:
		return *d.opt.TypingSpeed
	case c.HasSpeed:
		return c.Speed
	}
	return d.typing
}

// runeKey is the key message a terminal sends for one typed character.
func runeKey(r rune) tea.KeyMsg {
	switch r {
	case ' ':
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case '\t':
		return tea.KeyMsg{Type: tea.KeyTab}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}
}

// press sends one key, then keeps the console running for delay. With no
// delay, the next key comes once the console has finished with this one
// (its loads and decisions applied): as fast as the console takes keys,
// and the same on every run.
func (d *driver) press(k tea.KeyMsg, delay time.Duration) error {
	if d.quit {
		return ErrQuit
	}
	d.apply(k)
	if delay <= 0 {
		return d.quiesce()
	}
	_, err := d.pump(time.Now().Add(delay), nil)
	return err
}

// pump applies messages as they arrive until cond holds (true), the time
// is up or the console quit (false), or the run is cancelled. Messages
// already waiting are applied even when the time is already up.
func (d *driver) pump(until time.Time, cond func() bool) (bool, error) {
	var tick <-chan time.Time
	if cond != nil {
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		tick = t.C
	}
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	for {
		if cond != nil && cond() {
			return true, nil
		}
		if d.quit {
			return false, nil
		}
		select {
		case msg := <-d.drive.Messages():
			d.apply(msg)
			continue
		default:
		}
		if !time.Now().Before(until) {
			return false, nil
		}
		select {
		case msg := <-d.drive.Messages():
			d.apply(msg)
		case <-tick:
			d.render()
		case <-timer.C:
		case <-d.ctx.Done():
			return false, d.ctx.Err()
		}
	}
}

// quiesceLimit bounds how long the console may take to come to rest.
const quiesceLimit = 5 * time.Second

// quiesce runs the console until no command is in flight and every result
// has been applied (at most quiesceLimit: a store locked by another
// process may hold a decision longer).
func (d *driver) quiesce() error {
	_, err := d.pump(time.Now().Add(quiesceLimit), func() bool { return !d.m.Busy() && d.drive.Pending() == 0 })
	return err
}

// settle lets the console finish what the last command started.
func (d *driver) settle() { _ = d.quiesce() }

// apply hands one message to the model (which starts the command it
// returns) and renders.
func (d *driver) apply(msg tea.Msg) {
	if d.drive.Apply(msg) {
		if !d.quit {
			d.quit = true
			d.log(EventLine{Source: "run", Kind: "quit", Detail: "the console quit"})
		}
		if _, ok := msg.(tea.QuitMsg); !ok {
			d.render()
		}
		return
	}
	d.render()
}

// render takes the screen as the terminal would draw it, and writes it as
// a frame when it changed.
func (d *driver) render() {
	v := d.m.View()
	if v == d.screen {
		return
	}
	d.screen = v
	d.text = PlainScreen(v)
	if d.opt.FramesDir == "" {
		return
	}
	d.frames++
	name := fmt.Sprintf("frame-%05d.txt", d.frames)
	err := os.WriteFile(filepath.Join(d.opt.FramesDir, name), []byte(v+"\n"), 0o644)
	if err == nil {
		var f *os.File
		f, err = os.OpenFile(filepath.Join(d.opt.FramesDir, "frames.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err == nil {
			b, _ := json.Marshal(struct {
				Frame string    `json:"frame"`
				At    time.Time `json:"at"`
				Line  int       `json:"line,omitempty"`
			}{name, d.now(), d.pos.Line})
			_, err = f.Write(append(b, '\n'))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		d.setLogErr(fmt.Errorf("frames: %w", err))
	}
}

// PlainScreen is a rendered screen as text: escape sequences removed,
// trailing spaces trimmed from every line. Waits match it and Screenshot
// writes it.
func PlainScreen(view string) string {
	lines := strings.Split(ansi.Strip(view), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// shutdown stops the console's background work and waits for the commands
// in flight (but the clock's sleep), so that the store is not closed under
// them.
func (d *driver) shutdown(cancel context.CancelFunc) {
	cancel()
	done := make(chan struct{})
	go func() {
		d.drive.Wait()
		close(done)
	}()
	select {
	case <-done:
		d.m.Close()
	case <-time.After(5 * time.Second):
	}
}

func (d *driver) now() time.Time {
	if d.opt.Console.Now != nil {
		return d.opt.Console.Now()
	}
	return time.Now()
}

func (d *driver) consoleEvent(e tui.Event) {
	switch e.Kind {
	case "loaded", "load":
		d.loaded = true
	}
	d.log(EventLine{At: e.At, Source: "console", Kind: e.Kind, ID: e.ID, Outcome: e.Outcome, Detail: e.Detail})
}

func (d *driver) logTape(c TapeCommand, outcome, detail string) {
	d.log(EventLine{Source: "tape", Kind: c.Name, Outcome: outcome, Detail: detail})
}

// log writes one event line, stamped with the console's clock and the
// tape line running.
func (d *driver) log(e EventLine) {
	if d.opt.Events == nil {
		return
	}
	if e.At.IsZero() {
		e.At = d.now()
	}
	e.At = e.At.UTC()
	e.Line = d.pos.Line
	if d.pos.File != d.t.File {
		e.File = d.pos.File
	}
	b, err := json.Marshal(e)
	if err == nil {
		_, err = d.opt.Events.Write(append(b, '\n'))
	}
	if err != nil {
		d.setLogErr(fmt.Errorf("event log: %w", err))
	}
}

func (d *driver) setLogErr(err error) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	if d.logErr == nil {
		d.logErr = err
	}
}
