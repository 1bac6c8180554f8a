package headless

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/tui"
)

var noDelay = time.Duration(0)

// tallH is a terminal tall enough to show the drop row's whole detail (its
// why section included), for tapes about approving it rather than about
// reading it all before approving.
const tallH = 40

// headless runs src (a tape) on f as the golden screens' console does:
// same actor, renderer, clock and label.
func headless(t *testing.T, f *fixture, src string, w, h int, configure ...func(*Options)) (*Result, []EventLine, error) {
	t.Helper()
	tape, err := ParseTape("test.tape", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var log eventSink
	opt := Options{
		Console:     tui.Options{Store: f.s, Actor: operator, Renderer: asciiRenderer(), Now: fixedNow, Label: "demo seed 1 (test)"},
		Width:       w,
		Height:      h,
		TypingSpeed: &noDelay,
		Events:      &log,
	}
	for _, c := range configure {
		c(&opt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, tape, opt)
	if res == nil {
		t.Fatal("no result")
	}
	return res, log.lines(t), err
}

// eventSink collects the event log; onLine, when set, sees each line as
// it is written (synchronously, from the driver's loop).
type eventSink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	onLine func(EventLine)
}

func (s *eventSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(p)
	on := s.onLine
	s.mu.Unlock()
	if on != nil {
		var e EventLine
		if err := json.Unmarshal(p, &e); err == nil {
			on(e)
		}
	}
	return len(p), nil
}

func (s *eventSink) lines(t *testing.T) []EventLine {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []EventLine
	for _, l := range strings.Split(strings.TrimSpace(s.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var e EventLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("event log line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

func hasEvent(evs []EventLine, source, kind, outcome string) *EventLine {
	for i, e := range evs {
		if e.Source == source && e.Kind == kind && (outcome == "" || e.Outcome == outcome) {
			return &evs[i]
		}
	}
	return nil
}

// sameAsGolden compares a headless screen with a golden screen that
// TestGoldenScreens renders by driving the model through Settle.
func sameAsGolden(t *testing.T, name, text string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(golden.Dir(), name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := text + "\n"; got != string(want) {
		t.Fatalf("headless screen differs from golden %s:\n--- headless\n%s\n--- golden\n%s", name, got, want)
	}
}

// The headless console is the interactive one: driven by a tape through
// the live event loop (watcher and clock running), it renders exactly the
// golden screens that the terminal's model renders when driven key by key.
// There is no second implementation of the screens to drift.
func TestHeadlessSharesTheConsoleModel(t *testing.T) {
	// The tapes go down the list to the drop row, as a user would; where it
	// sits depends on the seeded rows' levels.
	down := "Down " + strconv.Itoa(dropRowBelow(t)) + "\n"
	cases := []struct{ golden, tape string }{
		{"list-80x24", "Wait+Screen /15 pending/\n"},
		{"approve-prompt-partly-typed-80x24", down + "Enter\nType \"G\"\nType \"a\"\nType \"u7LxL\"\n"},
		{"approve-paste-refused-80x24", down + "Enter\nType \"G\"\nType \"a\"\nCopy \"u7LxLGT73E5T\"\nPaste\n"},
		{"deny-prompt-120x40", down + "Type \"d\"\nType \"not during business hours\"\n"},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			f := newFixture(t)
			w, h := 80, 24
			if strings.HasSuffix(tc.golden, "120x40") {
				w, h = 120, 40
			}
			res, _, err := headless(t, f, tc.tape, w, h)
			if err != nil {
				t.Fatal(err)
			}
			sameAsGolden(t, tc.golden, res.Text)
			// What the driver printed is the model's own View.
			if res.Screen != res.Model.View() {
				t.Fatal("the headless screen is not the model's View")
			}
		})
	}
}

// dropRowBelow is how many rows below the selected one, on the list as it
// opens, the drop row sits.
func dropRowBelow(t *testing.T) int {
	t.Helper()
	f := newFixture(t)
	res, _, err := headless(t, f, "Wait+Screen /15 pending/\n", 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	sel, drop := -1, -1
	for i, l := range strings.Split(res.Text, "\n") {
		if strings.HasPrefix(l, "▶") {
			sel = i
		}
		if strings.Contains(l, "DROP TABL") {
			drop = i
		}
	}
	if sel < 0 || drop < sel {
		t.Fatalf("no drop row below the selected one:\n%s", res.Text)
	}
	return drop - sel
}

func TestHeadlessApproveByTypingTheID(t *testing.T) {
	f := newFixture(t)
	id := f.ids["drop"]
	res, evs, err := headless(t, f, "Type \"/"+id+"\"\nEnter\nEnter\nType \"a"+id+"\"\nEnter\nWait+Screen /approved "+id+"/\n", 100, tallH)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Text)
	}
	rec := status(t, f, id)
	if rec.Status != model.StatusConsumed || rec.ConsumedBy != operator.String() {
		t.Fatalf("after the tape: %s by %q", rec.Status, rec.ConsumedBy)
	}
	for _, want := range [][3]string{
		{"console", "loaded", ""}, {"console", "prompt", "opened"}, {"console", "approve", "approved"},
		{"console", "prompt", "closed"}, {"tape", "Type", "done"}, {"tape", "Wait+Screen", "matched"},
		{"run", "start", ""}, {"run", "end", "ok"},
	} {
		if hasEvent(evs, want[0], want[1], want[2]) == nil {
			t.Errorf("no %v event in the log", want)
		}
	}
	if e := hasEvent(evs, "console", "approve", "approved"); e.ID != id || e.Line != 5 || !e.At.Equal(t0) {
		t.Errorf("approve event %+v", e)
	}
}

// A paste is refused in the approve prompt, exactly as on a terminal.
func TestHeadlessPasteIsRefused(t *testing.T) {
	f := newFixture(t)
	id := f.ids["drop"]
	res, evs, err := headless(t, f, "Type \"/"+id+"\"\nEnter\nEnter\nType \"a\"\nCopy \""+id+"\"\nPaste\nEnter\n"+
		"Wait+Screen /not approved: the id was pasted/\n", 100, tallH)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Text)
	}
	if status(t, f, id).Status != model.StatusPending {
		t.Fatal("a pasted id approved")
	}
	if hasEvent(evs, "console", "paste", "refused") == nil || hasEvent(evs, "console", "approve", "refused") == nil {
		t.Fatalf("refusals not logged: %+v", evs)
	}
}

// Another store (another process's connections) approves between the tape
// typing the id and pressing enter. Without the watcher the console learns
// it from the store at enter; with it, live, before enter. Either way the
// console says who won and the event log records the lost race.
func TestHeadlessLostRace(t *testing.T) {
	for _, live := range []bool{false, true} {
		name := "at-enter"
		if live {
			name = "noticed-live"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			id := f.ids["drop"]
			other, err := storage.Open(context.Background(), f.path, storage.Options{Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			tape := "Type \"/" + id + "\"\nEnter\nEnter\nType \"a" + id + "\"\nWait+Screen /approve: press enter/\n" +
				"Sleep 1s\nEnter\nWait+Screen /lost: " + id + " was already approved by alice|" + id + " was approved elsewhere by alice/\n"
			var raced error
			res, evs, err := headless(t, f, tape, 100, tallH, func(o *Options) {
				o.Console.NoWatch = !live
				o.Events.(*eventSink).onLine = func(e EventLine) {
					if e.Kind == "Sleep" && e.Outcome == "started" {
						_, raced = other.Consume(context.Background(), id, id, rival)
					}
				}
			})
			if raced != nil {
				t.Fatal(raced)
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, res.Text)
			}
			want := "lost: " + id + " was already approved by alice@laptop via cli"
			if live {
				want = id + " was approved elsewhere by alice@laptop via cli"
			}
			if !strings.Contains(res.Text, want) {
				t.Fatalf("screen lacks %q:\n%s", want, res.Text)
			}
			lost := hasEvent(evs, "console", "approve", tui.OutcomeLost)
			if lost == nil || lost.ID != id || !strings.Contains(lost.Detail, "alice@laptop via cli") {
				t.Fatalf("lost race not logged: %+v", evs)
			}
			if n := auditCount(t, f, id, storage.EventApprove, storage.OutcomeOK, ""); n != 1 {
				t.Fatalf("%d successful approvals", n)
			}
			if rec := status(t, f, id); rec.ConsumedBy != rival.String() {
				t.Fatalf("consumed by %q", rec.ConsumedBy)
			}
			if !live && auditCount(t, f, id, storage.EventApprove, storage.OutcomeRefused, "not_pending") != 1 {
				t.Fatal("the lost attempt was not audited")
			}
		})
	}
}

func TestHeadlessWaitTimeout(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	res, evs, err := headless(t, f, "Enter\nWait+Screen@300ms /no such text/\nEnter\n", 100, 30)
	var wt *WaitTimeoutError
	if !errors.As(err, &wt) || wt.Pos.Line != 2 || wt.Timeout != 300*time.Millisecond {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("the timeout did not end the run")
	}
	if !strings.Contains(res.Text, "15 pending") {
		t.Fatalf("no last screen:\n%s", res.Text)
	}
	if e := hasEvent(evs, "run", "end", "wait timed out"); e == nil {
		t.Fatalf("run end not logged: %+v", evs)
	}
	for _, e := range evs {
		if e.Source == "tape" && e.Line == 3 {
			t.Fatal("the tape went on after the timeout")
		}
	}
	// Wait (no scope) is Wait+Line, as in VHS: the hint says so.
	_, _, err = headless(t, f, "Wait@200ms /15 pending/\n", 100, 30)
	if !errors.As(err, &wt) || !strings.Contains(wt.Error(), "use Wait+Screen") {
		t.Fatalf("err %v", err)
	}
	// Wait's own timeout setting.
	start = time.Now()
	_, _, err = headless(t, f, "Set WaitTimeout 0.2\nWait+Screen /no such text/\n", 100, 30)
	if !errors.As(err, &wt) || wt.Timeout != 200*time.Millisecond || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v", err)
	}
}

func TestHeadlessQuit(t *testing.T) {
	f := newFixture(t)
	res, _, err := headless(t, f, "Type \"q\"\nSleep 10ms\nScreenshot \""+filepath.Join(t.TempDir(), "x.png")+"\"\n", 100, 30)
	if err != nil || !res.Quit {
		t.Fatalf("quit: %v %v", res.Quit, err)
	}
	_, _, err = headless(t, f, "Ctrl+C\nEnter\n", 100, 30)
	var re *RunError
	if !errors.As(err, &re) || re.Pos.Line != 2 || !errors.Is(err, ErrQuit) {
		t.Fatalf("err %v", err)
	}
}

func TestHeadlessScreenshotsFramesAndResize(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	frames := filepath.Join(dir, "frames")
	// The top block's font sizes the mid-tape resize: (1052-40)/(0.6*14).
	res, evs, err := headless(t, f, "Set FontSize 14\nSet Padding 20\nScreenshot shots/list.png\nSet Width 1052\nWait+Screen /RISK/\nScreenshot shots/wide.txt\n", 0, 0,
		func(o *Options) { o.ScreenshotDir = dir; o.FramesDir = frames })
	if err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join(dir, "shots", "list.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(string(list), "\n"), "\n"); len(lines) != DefaultHeadlessHeight {
		t.Fatalf("screenshot has %d lines, want %d", len(lines), DefaultHeadlessHeight)
	}
	if strings.Contains(string(list), "\x1b") {
		t.Fatal("escape sequences in a screenshot")
	}
	wide, _ := os.ReadFile(filepath.Join(dir, "shots", "wide.txt"))
	if first := strings.SplitN(string(wide), "\n", 2)[0]; len([]rune(first)) != 120 {
		t.Fatalf("after Set Width 1052: first line %d wide, want 120:\n%s", len([]rune(first)), wide)
	}
	if res.Frames < 2 {
		t.Fatalf("%d frames", res.Frames)
	}
	for _, name := range []string{"frame-00001.txt", "frame-00002.txt", "frames.jsonl"} {
		if _, err := os.Stat(filepath.Join(frames, name)); err != nil {
			t.Fatal(err)
		}
	}
	if e := hasEvent(evs, "tape", "Set Width", "done"); e == nil || !strings.Contains(e.Detail, "120x") {
		t.Fatalf("resize not logged: %+v", e)
	}
}

// The driver types one key per message, at the tape's speed.
func TestHeadlessTypingSpeed(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	_, _, err := headless(t, f, "Set TypingSpeed 40ms\nType \"/abcde\"\n", 100, 30, func(o *Options) { o.TypingSpeed = nil })
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 240*time.Millisecond {
		t.Fatalf("six keys at 40ms took %s", d)
	}
}

// A screen below the console's minimum shows only "Terminal too small":
// the tape fails at the line that made it, instead of typing into that
// notice and ending well. The tape: Set Width 100 is pixels to
// VHS, one cell here.
func TestHeadlessScreenTooSmall(t *testing.T) {
	f := newFixture(t)
	src := "Set Width 100\nType \"/u7LxLGT73E5T\"\nEnter\n"
	res, evs, err := headless(t, f, src, 0, 0)
	var se *ScreenTooSmallError
	if !errors.As(err, &se) || se.Pos != (Pos{"test.tape", 1}) || se.Name != "Set Width 100" || se.Started ||
		se.Width != 1 || se.Height != 16 {
		t.Fatalf("err %#v", err)
	}
	for _, want := range []string{
		`test.tape:1: Set Width 100: the screen would be 1x16 cells, smaller than the console's minimum 80x24, where it shows only "Terminal too small"`,
		"Width 100 px is 1 column at this tape's font and padding: Set Width 1176 or more gives 80",
		"Height, not set, is VHS's default 600 px: 16 rows at this tape's font and padding: Set Height 817 or more gives 24",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nwant …%s…", err, want)
		}
	}
	// Nothing ran: no key, no frame, and the end says why.
	if res.Screen != "" || hasEvent(evs, "tape", "Type", "") != nil || hasEvent(evs, "run", "start", "") != nil {
		t.Fatalf("the tape ran: %q %+v", res.Screen, evs)
	}
	if e := hasEvent(evs, "run", "end", "error"); e == nil || !strings.Contains(e.Detail, "test.tape:1: Set Width 100") {
		t.Fatalf("end event %+v", e)
	}
	// The hint is right: at 1176 x 817 px the tape runs.
	if err := CheckScreen(mustParse(t, "Set Width 1176\nSet Height 817\n"), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := CheckScreen(mustParse(t, "Set Width 1175\nSet Height 817\n"), Options{}); err == nil {
		t.Fatal("79 columns passed")
	}
	if err := CheckScreen(mustParse(t, src), Options{}); !errors.As(err, &se) || se.Pos.Line != 1 {
		t.Fatalf("CheckScreen: %v", err)
	}
	// A size in cells replaces the tape's.
	if err := CheckScreen(mustParse(t, src), Options{Width: 100, Height: 30}); err != nil {
		t.Fatal(err)
	}
	// Only the height too small: blamed on its own Set line.
	err = CheckScreen(mustParse(t, "Set Width 1200\nSet FontSize 14\nSet Height 300\n"), Options{})
	if !errors.As(err, &se) || se.Pos.Line != 3 || !strings.Contains(err.Error(), "Height 300 px is 9 rows") ||
		strings.Contains(err.Error(), "Width") {
		t.Fatalf("height: %v", err)
	}
	// Options too small: no line to blame.
	err = CheckScreen(mustParse(t, "Enter\n"), Options{Width: 60})
	if !errors.As(err, &se) || se.Pos != (Pos{File: "t.tape"}) || !strings.Contains(err.Error(), "t.tape: the screen would be 60x30 cells") ||
		!strings.Contains(err.Error(), "the width given is 60 columns") {
		t.Fatalf("options: %v", err)
	}
}

// Further down a tape, a Set that makes the screen too small fails at that
// line before the next command runs; Set lines in a row are one resize.
func TestHeadlessResizeTooSmall(t *testing.T) {
	f := newFixture(t)
	res, evs, err := headless(t, f, "Wait+Screen /15 pending/\nSet Width 500\nType \"/u7LxLGT73E5T\"\n", 0, 0)
	var se *ScreenTooSmallError
	if !errors.As(err, &se) || se.Pos.Line != 2 || !se.Started || se.Width != 28 || se.Height != DefaultHeadlessHeight {
		t.Fatalf("err %#v", err)
	}
	if !strings.HasPrefix(err.Error(), "test.tape:2: Set Width 500: the screen is 28x30 cells") {
		t.Fatalf("error %q", err)
	}
	if hasEvent(evs, "tape", "Type", "") != nil {
		t.Fatal("the Type after the resize ran")
	}
	if !strings.Contains(res.Text, "Terminal too small") {
		t.Fatalf("last screen:\n%s", res.Text)
	}
	// The last line of a tape is checked too.
	_, _, err = headless(t, f, "Wait+Screen /15 pending/\nSet Height 200\n", 0, 0)
	if !errors.As(err, &se) || se.Pos.Line != 2 || se.Height >= 24 {
		t.Fatalf("at the end: %v", err)
	}
	// Shrunk and grown again before anything runs: fine.
	if _, _, err := headless(t, f, "Wait+Screen /15 pending/\nSet Width 500\nSet Width 1200\nWait+Screen /15 pending/\n", 0, 0); err != nil {
		t.Fatal(err)
	}
	// A size given in cells ignores the tape's resizes.
	if _, _, err := headless(t, f, "Wait+Screen /15 pending/\nSet Width 500\nEnter\n", 100, 30); err != nil {
		t.Fatal(err)
	}
	// A console that has quit has no screen to mind.
	if res, _, err := headless(t, f, "Type \"q\"\nSet Width 100\n", 0, 0); err != nil || !res.Quit {
		t.Fatal(err)
	}
}
