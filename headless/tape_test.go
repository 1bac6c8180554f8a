package headless

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

func mustParse(t *testing.T, src string) *Tape {
	t.Helper()
	tape, err := ParseTape("t.tape", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return tape
}

func TestTapeEveryCommand(t *testing.T) {
	enter := tea.KeyMsg{Type: tea.KeyEnter}
	cases := []struct {
		line  string
		check func(c TapeCommand) bool
	}{
		{`Type "/u7LxLGT73E5T"`, func(c TapeCommand) bool { return c.Kind == CmdType && c.Text == "/u7LxLGT73E5T" && !c.HasSpeed }},
		{`Type 'say "hi"'`, func(c TapeCommand) bool { return c.Kind == CmdType && c.Text == `say "hi"` }},
		{"Type `it's`", func(c TapeCommand) bool { return c.Kind == CmdType && c.Text == "it's" }},
		{`Type@500ms "slow"`, func(c TapeCommand) bool { return c.Text == "slow" && c.HasSpeed && c.Speed == 500*time.Millisecond }},
		{`Type@0.1 "x"`, func(c TapeCommand) bool { return c.Speed == 100*time.Millisecond }},
		{`Type "a" "b"`, func(c TapeCommand) bool { return c.Text == "a b" }},
		{`Type hello`, func(c TapeCommand) bool { return c.Text == "hello" }},
		{`Type ""`, func(c TapeCommand) bool { return c.Kind == CmdType && c.Text == "" }},
		{`Type "# not a comment"  # a comment`, func(c TapeCommand) bool { return c.Text == "# not a comment" }},
		{`Enter`, func(c TapeCommand) bool { return c.Kind == CmdKey && c.Key.Type == enter.Type && c.Repeat == 1 }},
		{`Enter 3`, func(c TapeCommand) bool { return c.Repeat == 3 }},
		{`Down@200ms 4`, func(c TapeCommand) bool {
			return c.Key.Type == tea.KeyDown && c.Repeat == 4 && c.Speed == 200*time.Millisecond
		}},
		{`Up`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyUp }},
		{`Left`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyLeft }},
		{`Right`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyRight }},
		{`Tab@1s 2`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyTab && c.Repeat == 2 && c.Speed == time.Second }},
		{`Escape`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyEsc }},
		{`Backspace 18`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyBackspace && c.Repeat == 18 }},
		{`Delete`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyDelete }},
		{`Insert`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyInsert }},
		{`Space 10`, func(c TapeCommand) bool { return c.Key.Type == tea.KeySpace && c.Key.String() == " " && c.Repeat == 10 }},
		{`PageUp`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyPgUp }},
		{`PageDown 2`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyPgDown && c.Repeat == 2 }},
		// Not keywords in VHS v0.10.0: bare words, typed.
		{`Type ScrollUp`, func(c TapeCommand) bool { return c.Kind == CmdType && c.Text == "ScrollUp" }},
		{`Type Subtitle`, func(c TapeCommand) bool { return c.Kind == CmdType && c.Text == "Subtitle" }},
		{`Ctrl+C`, func(c TapeCommand) bool { return c.Kind == CmdKey && c.Key.Type == tea.KeyCtrlC && c.Name == "Ctrl+C" }},
		{`Ctrl+r`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyCtrlR }},
		{`Ctrl+Alt+F`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyCtrlF && c.Key.Alt }},
		{`Ctrl+Shift+Left`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyCtrlShiftLeft }},
		{`Ctrl+@`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyCtrlAt }},
		{`Ctrl+[`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyEsc }},
		{`Ctrl+\`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyCtrlBackslash }},
		{`Ctrl+Left`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyCtrlLeft }},
		{`Alt+.`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyRunes && c.Key.Alt && string(c.Key.Runes) == "." }},
		{`Alt+Enter`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyEnter && c.Key.Alt }},
		{`Shift+Tab`, func(c TapeCommand) bool { return c.Key.Type == tea.KeyShiftTab }},
		{`Shift+g`, func(c TapeCommand) bool { return c.Key.String() == "G" }},
		{`Sleep 500ms`, func(c TapeCommand) bool { return c.Kind == CmdSleep && c.Dur == 500*time.Millisecond }},
		{`Sleep 2`, func(c TapeCommand) bool { return c.Dur == 2*time.Second }},
		{`Sleep 0.5`, func(c TapeCommand) bool { return c.Dur == 500*time.Millisecond }},
		{`Sleep 1.5s`, func(c TapeCommand) bool { return c.Dur == 1500*time.Millisecond }},
		{`Sleep 100 ms`, func(c TapeCommand) bool { return c.Dur == 100*time.Millisecond }},
		{`Sleep 1m`, func(c TapeCommand) bool { return c.Dur == time.Minute }},
		{`Wait`, func(c TapeCommand) bool { return c.Kind == CmdWait && c.Regex == nil && !c.Screen && c.Name == "Wait" }},
		{`Wait /approved/`, func(c TapeCommand) bool { return c.Regex.String() == "approved" && !c.Screen }},
		{`Wait+Screen /15 pending/`, func(c TapeCommand) bool {
			return c.Screen && c.Name == "Wait+Screen" && c.Regex.String() == "15 pending"
		}},
		{`Wait+Line /›/`, func(c TapeCommand) bool { return !c.Screen && c.Name == "Wait+Line" }},
		{`Wait@10s /x/`, func(c TapeCommand) bool { return c.HasSpeed && c.Speed == 10*time.Second }},
		{`Wait+Screen@500ms /a|b/`, func(c TapeCommand) bool { return c.Screen && c.Speed == 500*time.Millisecond }},
		{`Screenshot examples/captures/list.png`, func(c TapeCommand) bool {
			return c.Kind == CmdScreenshot && c.Text == "examples/captures/list.txt"
		}},
		{`Screenshot "out/list.txt"`, func(c TapeCommand) bool { return c.Text == "out/list.txt" }},
		{`Copy "u7LxLGT73E5T"`, func(c TapeCommand) bool { return c.Kind == CmdCopy && c.Text == "u7LxLGT73E5T" }},
		{`Set TypingSpeed 10ms`, func(c TapeCommand) bool {
			return c.Kind == CmdSet && c.Setting == "TypingSpeed" && c.Dur == 10*time.Millisecond
		}},
		{`Set TypingSpeed 0.1`, func(c TapeCommand) bool { return c.Dur == 100*time.Millisecond }},
		{`Set WaitTimeout 30s`, func(c TapeCommand) bool { return c.Dur == 30*time.Second }},
		{`Set WaitPattern /done$/`, func(c TapeCommand) bool { return c.Regex.String() == "done$" }},
		{`Set Width 1200`, func(c TapeCommand) bool { return c.Setting == "Width" && c.Cells == 81 }},
		{`Set Height 600`, func(c TapeCommand) bool { return c.Setting == "Height" && c.Cells == 16 }},
		{`Set FontSize 14`, func(c TapeCommand) bool { return c.Setting == "FontSize" && c.num == 14 }},
		{`Set FontSize 14.5`, func(c TapeCommand) bool { return c.Setting == "FontSize" && c.num == 14.5 }},
		{`Set FontSize .5`, func(c TapeCommand) bool { return c.num == 0.5 }},
		{`Set Theme "Dracula"`, func(c TapeCommand) bool { return c.Text == "Dracula" }},
		{`Set Theme { "name": "Whimsy", "black": "#535178" }`, func(c TapeCommand) bool { return strings.HasPrefix(c.Text, "{") }},
		{`Set Shell "bash"`, func(c TapeCommand) bool { return c.Setting == "Shell" }},
		{`Set LoopOffset 20%`, func(c TapeCommand) bool { return c.Text == "20%" }},
		{`Set MarginFill "#6B50FF"`, func(c TapeCommand) bool { return c.Text == "#6B50FF" }},
		{`Set CursorBlink false`, func(c TapeCommand) bool { return c.Setting == "CursorBlink" }},
		{`Set LineHeight 1.2`, func(c TapeCommand) bool { return c.Setting == "LineHeight" }},
		{`Set Padding 0`, func(c TapeCommand) bool { return c.Setting == "Padding" }},
		{`Set Framerate 30`, func(c TapeCommand) bool { return c.Setting == "Framerate" }},
		{`Set PlaybackSpeed 0.5`, func(c TapeCommand) bool { return c.Setting == "PlaybackSpeed" }},
		{`Set BorderRadius 8`, func(c TapeCommand) bool { return c.Setting == "BorderRadius" }},
		{`Set WindowBar Colorful`, func(c TapeCommand) bool { return c.Setting == "WindowBar" }},
		{`Output examples/approve.gif`, func(c TapeCommand) bool { return c.Kind == CmdIgnored && c.Text == "examples/approve.gif" }},
		{`Output frames/`, func(c TapeCommand) bool { return c.Kind == CmdIgnored }},
		{`Require approve-tui`, func(c TapeCommand) bool { return c.Kind == CmdIgnored && c.Text == "approve-tui" }},
		{`Env NO_COLOR "1"`, func(c TapeCommand) bool { return c.Kind == CmdIgnored && c.Text == "NO_COLOR=1" }},
		{`Hide`, func(c TapeCommand) bool { return c.Kind == CmdHide }},
		{`Show`, func(c TapeCommand) bool { return c.Kind == CmdShow }},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			src := tc.line
			if tc.line == "Hide" {
				src = "Enter\nHide\nShow" // not a leading or trailing block
			}
			tape := mustParse(t, src)
			want := 1
			if tc.line == "Hide" {
				want = 2
			}
			var c TapeCommand
			for _, cmd := range tape.Commands {
				if cmd.Pos.Line == want {
					c = cmd
				}
			}
			if c.Pos.File != "t.tape" || c.Pos.Line == 0 {
				t.Fatalf("position %v", c.Pos)
			}
			if !tc.check(c) {
				t.Fatalf("parsed %q as %+v", tc.line, c)
			}
		})
	}
}

func TestTapePasteAfterCopy(t *testing.T) {
	tape := mustParse(t, "Copy \"abc\"\nPaste\n")
	if tape.Commands[1].Kind != CmdPaste {
		t.Fatalf("%+v", tape.Commands[1])
	}
}

func TestTapeCommentsAndBlankLines(t *testing.T) {
	tape := mustParse(t, "# a tape\n\n   \n\t# indented comment\nEnter # press it\r\nTab\n")
	if len(tape.Commands) != 2 || tape.Commands[0].Pos.Line != 5 || tape.Commands[1].Pos.Line != 6 {
		t.Fatalf("%+v", tape.Commands)
	}
}

// Every error, with its line number; all of them at once, nothing run.
func TestTapeErrors(t *testing.T) {
	cases := []struct{ line, want string }{
		{`Jump`, `unknown command "Jump"`},
		{`enter`, `unknown command "enter"`},
		{`Home`, `unknown command "Home"`},
		{`"Type"`, `a line must start with a command, not "Type"`},
		{`Type`, `Type expects a string`},
		{`Type 42`, `Type expects quoted strings`},
		{`Type Enter`, `Type expects quoted strings`},
		{`Type "open`, `unterminated string: no closing "`},
		{`Type@ "x"`, `Type@ expects a time`},
		{`Type@fast "x"`, `Type@ expects a time such as 500ms, 2s or 0.5, got "fast"`},
		{`Type@5h "x"`, `unknown time unit in "5h"`},
		{`Copy`, `Copy expects a string`},
		{`Paste now`, `Paste takes no argument`},
		{`Hide please`, `Hide takes no argument`},
		{`Enter 0`, `repeat count of at least 1, got 0`},
		{`Enter twice`, `repeat count of at least 1, got twice`},
		{`Enter 2 3`, `unexpected 3 after Enter`},
		{`Down@`, `Down@ expects a time`},
		{`Sleep`, `Sleep expects a time`},
		{`Sleep soon`, `Sleep expects a time such as 500ms, 2s or 0.5, got "soon"`},
		{`Sleep 1e3`, `got "1e3"`},
		{`Sleep 2s now`, `unexpected now after Sleep 2s`},
		{`Sleep 48m 1`, `unexpected 1 after Sleep`},
		{`Sleep 100000m`, `is longer than 24h0m0s`},
		{`Wait+Page /x/`, `Wait+ expects Line or Screen`},
		{`Wait+ /x/`, `Wait+ expects Line or Screen`},
		{`Wait@0s /x/`, `Wait@ expects a positive timeout`},
		{`Wait "x"`, `Wait expects a regular expression between slashes`},
		{`Wait+Screen /(/`, `Wait+Screen: invalid regular expression /(/`},
		{`Wait /x/ /y/`, `unexpected /y/ after Wait`},
		{`Wait /unterminated`, `unterminated regular expression`},
		{`Screenshot`, `Screenshot expects one file path`},
		{`Screenshot shot.jpg`, `Screenshot expects a .png file (VHS) or .txt, got "shot.jpg"`},
		{`Screenshot /tmp/x.png`, `quote a path that starts with /`},
		{`Output`, `Output expects one file path`},
		{`Output demo`, `Output expects a file with an extension`},
		{`Require`, `Require expects one program name`},
		{`Env NAME`, `Env expects a name and a value`},
		{`ScrollUp`, `unknown command "ScrollUp": VHS v0.10.0 has no ScrollUp and refuses the tape ("Invalid command: ScrollUp")`},
		{`ScrollUp 3`, `unknown command "ScrollUp": VHS v0.10.0 has no ScrollUp`},
		{`ScrollDown`, `unknown command "ScrollDown": VHS v0.10.0 has no ScrollDown`},
		{`Subtitle`, `unknown command "Subtitle": VHS v0.10.0 has no Subtitle and refuses the tape ("Invalid command: Subtitle")`},
		{`Subtitle "approving"`, `unknown command "Subtitle": VHS v0.10.0 has no Subtitle`},
		{`Set SubtitleColor "#fff"`, `unknown setting "SubtitleColor": VHS v0.10.0 has no subtitle settings`},
		{`Set SubtitleFontSize 12`, `unknown setting "SubtitleFontSize"`},
		{`Set`, `Set expects a setting and a value`},
		{`Set Colour red`, `unknown setting "Colour"`},
		{`Set Width`, `Set Width expects a value`},
		{`Set Width wide`, `Set Width expects a whole number of at least 1, got "wide"`},
		{`Set Height 0`, `Set Height expects a whole number of at least 1, got "0"`},
		{`Set FontSize 0`, `Set FontSize expects a number more than 0 (14, 14.5), got "0"`},
		{`Set FontSize 1e3`, `Set FontSize expects a number more than 0 (14, 14.5), got "1e3"`},
		{`Set FontSize 14.5.1`, `Set FontSize expects a number more than 0`},
		{`Set FontSize big`, `Set FontSize expects a number more than 0`},
		{`Set Width 884.5`, `Set Width expects a whole number of at least 1, got "884.5"`},
		{`Set LineHeight tall`, `Set LineHeight expects a number`},
		{`Set LineHeight 0`, `Set LineHeight must be more than 0`},
		{`Set TypingSpeed quick`, `Set TypingSpeed expects a time`},
		{`Set WaitTimeout 0`, `Set WaitTimeout expects a positive time`},
		{`Set WaitTimeout 5s 6s`, `unexpected 6s after Set WaitTimeout`},
		{`Set WaitPattern /(/`, `Set WaitPattern: invalid regular expression`},
		{`Set CursorBlink maybe`, `Set CursorBlink expects true or false`},
		{`Set Theme { "name": "x"`, `unterminated JSON`},
		{`Ctrl`, `Ctrl expects +<key>`},
		{`Ctrl C`, `Ctrl expects +<key> (as in Ctrl+C), got C`},
		{`Ctrl+Foo`, `Ctrl+Foo: unknown control key "Foo"`},
		{`Ctrl+Shift+1`, `Ctrl+Shift+1: a terminal sends no distinct key for it`},
		{`Ctrl+Alt`, `Ctrl+Alt: a key must follow the modifiers`},
		{`Ctrl+C+Alt`, `only Alt and Shift may come between Ctrl and the key`},
		{`Alt+Home`, `Alt+Home: unknown key "Home"`},
		{`Shift+Home`, `Shift+Home: unknown key "Home"`},
		{`Ctrl+"x"`, `Ctrl+ expects a key, got "x"`},
		{`Source`, `Source expects one path to a .tape file`},
		{`Source other.txt`, `Source expects a file ending in .tape`},
		{`Source missing.tape`, `Source: open missing.tape`},
		{`Paste`, `Paste with nothing copied: headless has no system clipboard`},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			// The bad line is line 3, between two good ones.
			src := "Enter\n# comment\n" + tc.line + "\nEnter\n"
			_, err := ParseTape("bad.tape", []byte(src))
			var errs TapeErrors
			if !errors.As(err, &errs) {
				t.Fatalf("%q parsed without error", tc.line)
			}
			if len(errs) != 1 {
				t.Fatalf("%d errors: %v", len(errs), err)
			}
			if errs[0].Pos != (Pos{"bad.tape", 3}) {
				t.Fatalf("error at %v, want bad.tape:3: %v", errs[0].Pos, err)
			}
			if got := err.Error(); !strings.HasPrefix(got, "bad.tape:3: ") || !strings.Contains(got, tc.want) {
				t.Fatalf("error %q, want bad.tape:3: …%s…", got, tc.want)
			}
		})
	}
}

func TestTapeReportsEveryError(t *testing.T) {
	src := "Output x.gif\nJump\nEnter\nSleep soon\nPaste\nWait /(/\n"
	_, err := ParseTape("many.tape", []byte(src))
	var errs TapeErrors
	if !errors.As(err, &errs) {
		t.Fatal("no error")
	}
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Pos.Line)
	}
	if len(lines) != 4 || lines[0] != 2 || lines[1] != 4 || lines[2] != 5 || lines[3] != 6 {
		t.Fatalf("error lines %v, want [2 4 5 6]:\n%v", lines, err)
	}
	if n := strings.Count(err.Error(), "\n"); n != 3 {
		t.Fatalf("want one error per line:\n%v", err)
	}
}

func TestTapeNotUTF8(t *testing.T) {
	_, err := ParseTape("bin.tape", []byte("Type \"\xff\"\n"))
	if err == nil || !strings.Contains(err.Error(), "bin.tape:1: not UTF-8") {
		t.Fatalf("err %v", err)
	}
}

func TestTapeTopSettings(t *testing.T) {
	tape := mustParse(t, `Output examples/a.gif
Require approve-tui
Set FontSize 14
Set Width 884
Set Height 600
Set Padding 20
Set TypingSpeed 10ms
Set WaitTimeout 3s
Set WaitPattern /ready/
Enter
Set TypingSpeed 20ms
Set WaitTimeout 9s
Set Width 1052
`)
	if tape.TypingSpeed != 10*time.Millisecond || tape.WaitTimeout != 3*time.Second || tape.WaitPattern.String() != "ready" {
		t.Fatalf("top settings: %v %v %v", tape.TypingSpeed, tape.WaitTimeout, tape.WaitPattern)
	}
	// Padding comes after Width and Height, and still counts (VHS lays
	// out after the whole top block): (884-40)/(0.6*14) = 100.4 columns,
	// (600-40)/(1.32*14) = 30.3 rows.
	if w, h := tape.Size(); w != 100 || h != 30 {
		t.Fatalf("size %dx%d, want 100x30", w, h)
	}
	for _, c := range tape.Commands {
		wantTop := c.Pos.Line <= 9
		if c.Top != wantTop {
			t.Fatalf("line %d: Top=%v", c.Pos.Line, c.Top)
		}
	}
	// A Width further down is a resize, with the top block's font.
	if c := tape.Commands[len(tape.Commands)-1]; c.Cells != 120 {
		t.Fatalf("mid-tape Width: %d cells, want 120", c.Cells)
	}
}

func TestTapeDefaultSize(t *testing.T) {
	if w, h := mustParse(t, "Enter").Size(); w != DefaultHeadlessWidth || h != DefaultHeadlessHeight {
		t.Fatalf("%dx%d", w, h)
	}
	// Only a width: the height is VHS's default 600 px at the tape's font.
	if w, h := mustParse(t, "Set FontSize 10\nSet Width 1000").Size(); w != 146 || h != 36 {
		t.Fatalf("%dx%d, want 146x36", w, h)
	}
	tape := mustParse(t, "Set WindowBar Colorful\nSet MarginFill \"#000\"\nSet Margin 10\nSet Height 600")
	if _, h := tape.Size(); h != 14 { // (600 - 120 - 20 - 30) / 29.04
		t.Fatalf("height %d, want 14", h)
	}
	if tape := mustParse(t, "Enter"); tape.TypingSpeed != DefaultTypingSpeed || tape.WaitTimeout != DefaultWaitTimeout ||
		tape.WaitPattern.String() != DefaultWaitPattern {
		t.Fatal("defaults")
	}
}

func TestTapeVHSSetUpAndCleanUp(t *testing.T) {
	tape := mustParse(t, `Output x.gif
Set Width 1200
Hide
Type "approve-tui demo --seed 1"
Enter
Sleep 1s
Show
Type "/abc"
Hide
Type "x"
Show
Enter
Hide
Type "rm demo.db"
Enter
`)
	var skipped []int
	for _, c := range tape.Commands {
		if c.VHSOnly {
			skipped = append(skipped, c.Pos.Line)
		}
	}
	want := []int{3, 4, 5, 6, 7, 13, 14, 15}
	if len(skipped) != len(want) {
		t.Fatalf("VHS-only lines %v, want %v", skipped, want)
	}
	for i := range want {
		if skipped[i] != want[i] {
			t.Fatalf("VHS-only lines %v, want %v", skipped, want)
		}
	}
	// A Paste whose Copy is in a skipped block has nothing to paste.
	_, err := ParseTape("p.tape", []byte("Hide\nCopy \"x\"\nShow\nPaste\n"))
	if err == nil || !strings.Contains(err.Error(), "p.tape:4: Paste with nothing copied") {
		t.Fatalf("err %v", err)
	}
	// A leading Hide must end.
	_, err = ParseTape("h.tape", []byte("Set Width 1200\nHide\nType \"x\"\n"))
	if err == nil || !strings.Contains(err.Error(), "h.tape:2: Hide at the start has no Show") {
		t.Fatalf("err %v", err)
	}
}

func TestTapeSource(t *testing.T) {
	dir := t.TempDir()
	inc := filepath.Join(dir, "setup.tape")
	if err := os.WriteFile(inc, []byte("Output inner.gif\nType \"/abc\"\nEnter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tape := mustParse(t, "Source \""+inc+"\"\nTab\n")
	if len(tape.Commands) != 3 || tape.Commands[0].Pos != (Pos{inc, 2}) || tape.Commands[2].Pos != (Pos{"t.tape", 2}) {
		t.Fatalf("%+v", tape.Commands)
	}
	// Errors in a sourced tape name its own file and line; nesting is refused.
	bad := filepath.Join(dir, "bad.tape")
	if err := os.WriteFile(bad, []byte("Enter\nJump\nSource '"+inc+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ParseTape("main.tape", []byte("Sleep soon\nSource `"+bad+"`\n"))
	var errs TapeErrors
	if !errors.As(err, &errs) || len(errs) != 3 {
		t.Fatalf("err %v", err)
	}
	if errs[0].Pos != (Pos{"main.tape", 1}) || errs[1].Pos != (Pos{bad, 2}) || errs[2].Pos != (Pos{bad, 3}) ||
		!strings.Contains(errs[2].Msg, "VHS does not nest Source") {
		t.Fatalf("errors:\n%v", err)
	}
}

// The three differences from VHS v0.10.0's parser the issue found, with
// its tapes: that parser takes Set FontSize 14.5 and refuses ScrollUp and
// Subtitle, and so does headless now, naming the line.
func TestTapeAsVHSv0100Parses(t *testing.T) {
	tape := mustParse(t, "Set FontSize 14.5\n")
	if c := tape.Commands[0]; c.Kind != CmdSet || c.Setting != "FontSize" || c.num != 14.5 || c.Text != "14.5" {
		t.Fatalf("%+v", c)
	}
	// The half point counts in the conversion to cells: (884-40)/(0.6*14.5)
	// = 97.0 columns, (600-40)/(1.32*14.5) = 29.3 rows (at 14: 100x30).
	if w, h := mustParse(t, "Set FontSize 14.5\nSet Width 884\nSet Height 600\nSet Padding 20\n").Size(); w != 97 || h != 29 {
		t.Fatalf("size %dx%d, want 97x29", w, h)
	}
	for _, tc := range []struct{ src, want string }{
		{"ScrollUp\n", `scroll.tape:1: unknown command "ScrollUp": VHS v0.10.0 has no ScrollUp`},
		{"Subtitle \"approving\"\n", `scroll.tape:1: unknown command "Subtitle": VHS v0.10.0 has no Subtitle`},
		{"Enter\nScrollUp 2\n", `scroll.tape:2: unknown command "ScrollUp"`},
		{"Enter\n\nSubtitle \"\"\n", `scroll.tape:3: unknown command "Subtitle"`},
	} {
		_, err := ParseTape("scroll.tape", []byte(tc.src))
		var errs TapeErrors
		if !errors.As(err, &errs) || len(errs) != 1 || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %s…", tc.src, err, tc.want)
		}
	}
}

// The example tapes are valid, and each one's VHS set-up is skipped.
func TestTapeExamplesParse(t *testing.T) {
	paths, err := filepath.Glob("../examples/*.tape")
	if err != nil || len(paths) < 4 {
		t.Fatalf("example tapes: %v %v", paths, err)
	}
	for _, p := range paths {
		tape, err := ParseTapeFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if tape.Commands[0].Kind != CmdIgnored || tape.Commands[0].Name != "Output" {
			t.Errorf("%s does not start with Output, as a VHS tape does", p)
		}
	}
}
