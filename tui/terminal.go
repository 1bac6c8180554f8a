package tui

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"

	// Nothing asks the terminal for its background at start (see there).
	_ "github.com/approve-tui/approve-tui/internal/termbg/quiet"
)

// RunTerminal runs the console in a terminal (in and out are its input and
// output) until the operator quits or ctx ends, and restores the terminal.
//
// Frames are written by the console itself, as soon as a message changed
// what it shows, at most one per frameGap. Bubble Tea v1's standard
// renderer instead wakes up 60 times a second for as long as the program
// runs, to write a frame if there is a new one: left alone, the console
// spent about 0.7 % of a core on those wake-ups alone (BENCHMARKS.md, idle
// console). Here a console with nothing changing on screen does not run at
// all, and a frame goes out at once instead of at the renderer's next tick
// (up to 16 ms later).
//
// When in or out is not a terminal, it runs Bubble Tea's standard renderer.
func RunTerminal(ctx context.Context, m *Model, in io.Reader, out io.Writer) error {
	inF, inOK := in.(interface{ Fd() uintptr })
	outF, outOK := out.(interface{ Fd() uintptr })
	if !inOK || !outOK || !term.IsTerminal(int(inF.Fd())) || !term.IsTerminal(int(outF.Fd())) {
		_, err := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)).Run()
		return err
	}
	state, err := term.MakeRaw(int(inF.Fd()))
	if err != nil {
		return err
	}
	defer term.Restore(int(inF.Fd()), state) //nolint:errcheck
	m.UseScreen(out)
	defer m.closeScreen()

	// No renderer: Bubble Tea reads the keys, runs the commands and calls
	// Update and View; each update writes its frame (Model.render).
	p := tea.NewProgram(m, tea.WithoutRenderer(), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	// The clock's timer sends its ticks itself (Model.scheduleTick).
	m.send = p.Send
	stop := followSize(p, int(outF.Fd()))
	defer stop()
	_, err = p.Run()
	return err
}

// UseScreen makes the console write its own frames to out (a terminal's
// output, or an SSH session's channel) from now on, as RunTerminal does:
// run its program with tea.WithoutRenderer() and send it the terminal's
// size (tea.WindowSizeMsg) at the start and on every change. It switches
// out to the alternate screen at once; Close (or the end of RunTerminal)
// writes the last frame and leaves the terminal as it found it. Call it
// before the program starts.
func (m *Model) UseScreen(out io.Writer) {
	sc := newScreen(out)
	sc.open()
	m.screen = sc
}

// closeScreen ends UseScreen (once the program has ended).
func (m *Model) closeScreen() {
	if m.screen != nil {
		m.screen.close()
		m.screen = nil
	}
}

// followSize tells the program the terminal's size now and whenever it
// changes (SIGWINCH), until stop is called.
func followSize(p *tea.Program, fd int) (stop func()) {
	changed := make(chan os.Signal, 1)
	notifyResize(changed)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if w, h, err := term.GetSize(fd); err == nil {
				p.Send(tea.WindowSizeMsg{Width: w, Height: h}) // returns once the program has ended
			}
			select {
			case <-done:
				return
			case <-changed:
			}
		}
	}()
	return func() {
		// Called once Run has returned: a Send still waiting returns too.
		signal.Stop(changed)
		close(done)
		wg.Wait()
	}
}

// frameGap paces the frames written: at most two in any 2 x frameGap, so 60
// a second in a burst of messages (a paste, a hundred commits), the burst's
// last frame written once its turn comes. Two, not one: an update often
// draws twice in a row (a commit wakes the console, which redraws its
// countdowns, and the list read it started comes back milliseconds later),
// and the second frame, the one that shows the commit, must not wait a
// sixtieth of a second behind the first.
const frameGap = time.Second / 60

// screen writes frames to a terminal in its alternate screen, line by line
// where they changed since the last frame written (as Bubble Tea's standard
// renderer does, without its ticker).
type screen struct {
	out io.Writer

	mu            sync.Mutex
	width, height int
	lines         []string // the last frame written, line by line
	next          []string // a frame waiting for frameGap to pass
	waiting       bool
	timer         *time.Timer
	at, before    time.Time // when the last frame and the one before were written
	clear         bool      // erase the screen before the next frame
	closed        bool
	buf           bytes.Buffer
	// nextShown is what the waiting frame shows of the detail's command
	// and diff; written, what the frames written since the model last
	// asked showed of it (drainDrawn).
	nextShown *shown
	written   []shown
}

// drainDrawn marks as read what the frames drawn since the last update
// showed of the command and diff: the frames the screen wrote (a frame it
// held back and then replaced showed nothing), or the one the last update
// handed to its caller (render).
func (m *Model) drainDrawn() {
	if m.drawn != nil {
		m.detail.markDrawn(*m.drawn)
		m.drawn = nil
	}
	if m.screen == nil {
		return
	}
	for _, s := range m.screen.takeWritten() {
		m.detail.markDrawn(s)
	}
}

func newScreen(out io.Writer) *screen { return &screen{out: out} }

// open switches to the alternate screen, clears it, hides the cursor and
// turns bracketed paste on (the console refuses pasted ids).
func (s *screen) open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	io.WriteString(s.out, ansi.SetAltScreenSaveCursorMode+ansi.EraseEntireScreen+ansi.CursorHomePosition+ //nolint:errcheck
		ansi.HideCursor+ansi.SetBracketedPasteMode)
}

// close writes the frame still waiting, then leaves the terminal as it
// found it.
func (s *screen) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if s.waiting {
		s.writeLocked()
	}
	s.closed = true
	io.WriteString(s.out, ansi.ResetBracketedPasteMode+ansi.ShowCursor+ansi.ResetAltScreenSaveCursorMode) //nolint:errcheck
}

// frame takes the console's frame, its lines, for a w x h terminal:
// written now, or once frameGap has passed since the last one (then only
// the latest frame is written). The lines are kept: the caller must not
// change them. shows is what the frame shows of the detail's command and
// diff (nil: nothing), recorded as read once the frame is on screen.
func (s *screen) frame(f []string, w, h int, shows *shown) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || w <= 0 || h <= 0 {
		return
	}
	if w != s.width || h != s.height {
		// Resized: the terminal may have moved or cut what was drawn.
		s.width, s.height = w, h
		s.lines, s.clear = nil, true
	}
	if !s.waiting && slices.Equal(f, s.lines) {
		s.onScreen(shows) // it is there already
		return
	}
	s.next, s.nextShown, s.waiting = f, shows, true
	if wait := 2*frameGap - time.Since(s.before); wait > 0 {
		if s.timer == nil {
			s.timer = time.AfterFunc(wait, s.later)
		}
		return
	}
	s.writeLocked()
}

func (s *screen) later() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	if !s.closed && s.waiting {
		s.writeLocked()
	}
}

// takeWritten is what the frames written since it was last called showed
// of the command and diff.
func (s *screen) takeWritten() []shown {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.written
	s.written = nil
	return w
}

// onScreen records what a frame now on screen shows of the command and
// diff.
func (s *screen) onScreen(shows *shown) {
	if shows != nil {
		s.written = append(s.written, *shows)
	}
}

// alert rings the terminal: BEL, and the desktop notification escapes
// that common terminals show (OSC 9: iTerm2, Windows Terminal, WezTerm,
// kitty; OSC 777: foot, rxvt, Ghostty); a terminal that knows neither
// ignores them. text is the program's own words, never agent text.
func (s *screen) alert(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	io.WriteString(s.out, "\a\x1b]9;"+text+"\a\x1b]777;notify;approve-tui;"+text+"\a") //nolint:errcheck
}

// writeLocked writes s.next over s.lines.
func (s *screen) writeLocked() {
	lines, shows := s.next, s.nextShown
	s.next, s.nextShown, s.waiting = nil, nil, false
	if len(lines) > s.height {
		// Taller than the terminal (never, from the console): its top is
		// not drawn, and nothing of it counts as read.
		lines, shows = lines[len(lines)-s.height:], nil
	}
	if slices.Equal(lines, s.lines) {
		s.onScreen(shows)
		return
	}
	b := &s.buf
	b.Reset()
	if s.clear {
		b.WriteString(ansi.EraseEntireScreen)
		s.clear = false
	}
	b.WriteString(ansi.CursorHomePosition)
	for i, line := range lines {
		last := i == len(lines)-1
		if i < len(s.lines) && s.lines[i] == line {
			if !last {
				b.WriteByte('\n') // raw mode: down one line, same column (0)
			}
			continue
		}
		// The console's lines fit; a line that does not is cut here.
		w := ansi.StringWidth(line)
		if w > s.width {
			line = ansi.Truncate(line, s.width, "")
			w = ansi.StringWidth(line)
		}
		if w < s.width {
			line += ansi.EraseLineRight
		}
		b.WriteString(line)
		if !last {
			b.WriteString("\r\n")
		}
	}
	if len(s.lines) > len(lines) {
		b.WriteString(ansi.EraseScreenBelow)
	}
	b.WriteString(ansi.CursorPosition(0, len(lines)))
	if _, err := s.out.Write(b.Bytes()); err != nil {
		// Not on screen, or only part of it: the next frame is written
		// whole, and this one counts as nothing read.
		s.lines, s.clear = nil, true
		s.at, s.before = time.Now(), s.at
		return
	}
	s.onScreen(shows)
	s.lines, s.at, s.before = lines, time.Now(), s.at
}

// redraw paints the whole screen again (ctrl+l), over whatever another
// process wrote to the terminal: the screen forgets what it wrote and
// erases everything before the next frame. Without a screen of its own
// (Bubble Tea's renderer draws), Bubble Tea clears and repaints.
func (m *Model) redraw() tea.Cmd {
	if m.screen != nil {
		m.screen.repaint()
		return nil
	}
	return tea.ClearScreen
}

// repaint makes the next frame erase the screen and write every line.
func (s *screen) repaint() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines, s.clear = nil, true
}

// replyState follows a terminal's answer to a query (the background
// colour, OSC 11) that came after its asker stopped waiting (a slow link):
// Bubble Tea reads it as alt+], the answer's text as typed runes, then
// alt+\ or ctrl+g (its end, ST or BEL). Those keys are dropped: the
// answer's letters (a, d, f, g are in "rgb:ffff/dddd/aaaa") are not the
// operator's commands.
type replyState struct {
	on, esc bool
}

// replyKey reports whether k is part of a terminal's answer, and drops it.
func (m *Model) replyKey(k tea.KeyMsg) bool {
	r := &m.reply
	if !r.on {
		if k.Type == tea.KeyRunes && k.Alt && len(k.Runes) == 1 && k.Runes[0] == ']' {
			r.on = true
			return true
		}
		return false
	}
	switch {
	case k.Type == tea.KeyCtrlG: // BEL: the end
		*r = replyState{}
		return true
	case k.Type == tea.KeyEsc: // ST's first half, read alone
		r.esc = true
		return true
	case k.Type == tea.KeyRunes && (k.Alt || r.esc) && len(k.Runes) == 1 && k.Runes[0] == '\\': // ST
		*r = replyState{}
		return true
	case k.Type == tea.KeyRunes && !k.Alt && !k.Paste && !r.esc && replyText(k.Runes):
		return true
	}
	// Not an answer after all: the key is the operator's.
	*r = replyState{}
	return false
}

// replyText reports whether rs can be part of an answer's text
// ("11;rgb:1e1e/1e1e/1e1e").
func replyText(rs []rune) bool {
	for _, c := range rs {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == ';' || c == ':' || c == '/' || c == '?' || c == '#' || c == ',' || c == '.') {
			return false
		}
	}
	return true
}
