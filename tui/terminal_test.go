package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/storage"
)

func frameOf(f string) []string { return strings.Split(f, "\n") }

// The screen says which frames it wrote, and only those: a frame of a
// burst that a later one replaced before its turn was never on screen,
// and what it showed of the command and diff is not read; a frame already
// on screen is; a frame whose write failed is not.
func TestScreenSaysWhatItWrote(t *testing.T) {
	out := &syncbuf.Buffer{}
	s := newScreen(out)
	written := s.takeWritten
	a, b, c, d := shown{1, 0, 3}, shown{1, 3, 6}, shown{1, 6, 9}, shown{1, 9, 12}
	s.frame(frameOf("a\nb\nc"), 20, 3, &a)
	s.frame(frameOf("d\ne\nf"), 20, 3, &b)
	s.frame(frameOf("g\nh\ni"), 20, 3, &c) // held back: a third frame within 2 x frameGap
	s.frame(frameOf("j\nk\nl"), 20, 3, &d) // replaces it
	if got := written(); !slices.Equal(got, []shown{a, b}) {
		t.Fatalf("written at once: %v", got)
	}
	time.Sleep(4 * frameGap)
	if got := written(); !slices.Equal(got, []shown{d}) || strings.Contains(out.Take(), "g") {
		t.Fatalf("after the burst: %v (the replaced frame must not count)", got)
	}
	s.frame(frameOf("j\nk\nl"), 20, 3, &d) // on screen already
	if got := written(); !slices.Equal(got, []shown{d}) {
		t.Fatalf("a frame already on screen: %v", got)
	}

	bad := newScreen(failingWriter{})
	bad.frame(frameOf("a\nb\nc"), 20, 3, &a)
	if w := bad.takeWritten(); len(w) != 0 {
		t.Fatalf("a frame that could not be written counts: %v", w)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("connection lost") }

// On a screen, the command and diff count as read once a frame showed
// them: a console whose frames cannot be written (a dropped SSH channel)
// never opens the approve prompt, however the operator scrolls.
func TestNothingReadWhenNoFrameIsWritten(t *testing.T) {
	f := newFixture(t)
	m := New(Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, Label: "no frames"})
	m.screen = newScreen(failingWriter{})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	Settle(m, m.Init())
	selectThenPress(t, m, f.ids["low"], "enter", "pgdown", "end", "home", "a")
	if m.prompt != nil || m.detail.SeenAll() {
		t.Fatal("approve opened, though no frame was ever written")
	}

	m.screen = newScreen(&syncbuf.Buffer{})
	press(m, "esc", "pgdown", "a")
	if m.prompt == nil {
		t.Fatalf("frames written, the whole proposal shown, and approve refused: %q", m.note.text)
	}
}

// The screen writes a frame at once, only the lines that changed, nothing
// for a frame already shown, two frames in a row at once, and of a burst
// beyond that the last, once its turn comes (two per 2 x frameGap).
func TestScreenWritesWhatChanged(t *testing.T) {
	out := &syncbuf.Buffer{}
	s := newScreen(out)
	s.frame(frameOf("alpha\nbravo\ncharlie"), 20, 3, nil)
	got := out.Take()
	for _, w := range []string{"alpha", "bravo", "charlie", ansi.EraseLineRight} {
		if !strings.Contains(got, w) {
			t.Fatalf("first frame lacks %q: %q", w, got)
		}
	}
	time.Sleep(2 * frameGap)
	s.frame(frameOf("alpha\nbravo\ncharlie"), 20, 3, nil)
	if got := out.Take(); got != "" {
		t.Fatalf("the same frame written again: %q", got)
	}
	s.frame(frameOf("alpha\nBRAVO\ncharlie"), 20, 3, nil)
	got = out.Take()
	if !strings.Contains(got, "BRAVO") || strings.Contains(got, "alpha") || strings.Contains(got, "charlie") {
		t.Fatalf("one line changed, written: %q", got)
	}
	// A burst: a second frame right after the first goes out at once (a
	// wake-up's redraw, then the list it read); the ones after wait, and
	// only the latest is written, once its turn comes.
	time.Sleep(3 * frameGap)
	s.frame(frameOf("alpha\nzero\ncharlie"), 20, 3, nil)
	s.frame(frameOf("alpha\none\ncharlie"), 20, 3, nil)
	if got := out.Take(); !strings.Contains(got, "zero") || !strings.Contains(got, "one") {
		t.Fatalf("two frames in a row: %q", got)
	}
	s.frame(frameOf("alpha\ntwo\ncharlie"), 20, 3, nil)
	s.frame(frameOf("alpha\nthree\ncharlie"), 20, 3, nil)
	if got := out.Take(); got != "" {
		t.Fatalf("a third frame within 2 x frameGap of the first: %q", got)
	}
	time.Sleep(3 * frameGap)
	if got := out.Take(); !strings.Contains(got, "three") || strings.Contains(got, "two") {
		t.Fatalf("after the burst: %q", got)
	}
	// Fewer lines: the rest of the screen is erased. Wider than the
	// terminal: cut.
	time.Sleep(2 * frameGap)
	s.frame(frameOf(strings.Repeat("x", 30)), 20, 3, nil)
	if got := out.Take(); !strings.Contains(got, ansi.EraseScreenBelow) || strings.Contains(got, strings.Repeat("x", 21)) {
		t.Fatalf("short, wide frame: %q", got)
	}
	// Resized: everything again, on a cleared screen.
	s.frame(frameOf(strings.Repeat("x", 30)), 25, 3, nil)
	time.Sleep(3 * frameGap)
	if got := out.Take(); !strings.Contains(got, ansi.EraseEntireScreen) || !strings.Contains(got, strings.Repeat("x", 25)) {
		t.Fatalf("after a resize: %q", got)
	}
	s.frame(frameOf("last"), 25, 3, nil)
	s.close()
	if got := out.Take(); !strings.Contains(got, "last") || !strings.HasSuffix(got, ansi.ResetBracketedPasteMode+ansi.ShowCursor+ansi.ResetAltScreenSaveCursorMode) {
		t.Fatalf("close: %q", got)
	}
	s.frame(frameOf("after"), 25, 3, nil)
	if got := out.Take(); got != "" {
		t.Fatalf("written after close: %q", got)
	}
}

// TestRunTerminalInTmux runs the console with RunTerminal in a real
// terminal (tmux): what tmux shows is the console's frame, line for line,
// after keys and after a resize, and q ends it.
func TestRunTerminalInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is needed to run the console in a real terminal")
	}
	path, _, _ := golden.DemoFile(t, t0)
	sock := fmt.Sprintf("approve-tui-tui-%d", os.Getpid())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-u", "-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", "APPROVE_TUI_TEST_TERMINAL="+path, os.Args[0], "-test.run", "^TestRunTerminalHelper$")
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	tmux("set-option", "-t", "t", "status", "off") // the pane is the whole window

	// The same console in this process, driven by the same keys.
	s, err := storage.Open(context.Background(), path, storage.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := New(Options{Store: s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, NoWatch: true, NoPresence: true, Label: "terminal"})
	want.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	Settle(want, want.Init())
	if size := strings.TrimSpace(tmux("display-message", "-p", "-t", "t", "#{pane_width}x#{pane_height}")); size != "120x40" {
		t.Fatalf("pane %s", size)
	}

	shows := func(what string) {
		t.Helper()
		exp := plain(want.View())
		var got string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if got = plain(tmux("capture-pane", "-p", "-t", "t")); got == exp {
				return
			}
		}
		t.Fatalf("%s: tmux shows\n%s\nwant\n%s", what, got, exp)
	}
	shows("first frame")
	for _, k := range []string{"Down", "Down", "Enter"} {
		tmux("send-keys", "-t", "t", k)
		time.Sleep(50 * time.Millisecond)
	}
	press(want, "down", "down", "enter")
	shows("after keys")
	tmux("resize-window", "-t", "t", "-x", "100", "-y", "30")
	want.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	shows("after a resize")
	tmux("send-keys", "-t", "t", "q")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if exec.Command("tmux", "-L", sock, "has-session", "-t", "t").Run() != nil {
			break // the console quit and its session ended
		}
		if time.Now().After(deadline) {
			t.Fatalf("q did not end the console:\n%s", tmux("capture-pane", "-p", "-t", "t"))
		}
	}
}

// plain is a screen's text, trailing blanks and blank lines cut.
func plain(screen string) string {
	lines := strings.Split(ansi.Strip(screen), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// TestRunTerminalHelper is the console TestRunTerminalInTmux runs in tmux.
func TestRunTerminalHelper(t *testing.T) {
	path := os.Getenv("APPROVE_TUI_TEST_TERMINAL")
	if path == "" {
		t.Skip("run by TestRunTerminalInTmux")
	}
	s, err := storage.Open(context.Background(), path, storage.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := New(Options{Store: s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, Context: ctx, NoPresence: true, Label: "terminal"})
	defer m.Close()
	if err := RunTerminal(ctx, m, os.Stdin, os.Stdout); err != nil {
		os.WriteFile(filepath.Join(filepath.Dir(path), "helper.err"), []byte(err.Error()), 0o600)
		t.Fatal(err)
	}
}
