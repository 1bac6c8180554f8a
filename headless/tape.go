package headless

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
)

// Tapes are the subset of the VHS tape language (charmbracelet/vhs) that
// headless mode runs, so that one script can drive the console without a
// terminal and also be recorded to a GIF by VHS. This file parses them; the
// parser is written from the language's documented syntax.
//
// One command per line; blank lines and # comments are skipped. Every line
// is checked before anything runs, and every problem is reported as
// file:line: reason.

// Defaults, as VHS has them.
const (
	DefaultTypingSpeed = 50 * time.Millisecond // Set TypingSpeed
	DefaultWaitTimeout = 15 * time.Second      // Set WaitTimeout
	DefaultWaitPattern = ">$"                  // Set WaitPattern (a shell prompt)
)

// DefaultHeadlessWidth and DefaultHeadlessHeight are the screen of a tape
// that sets neither Width nor Height (VHS's own default, 1200x600 pixels
// at 22 px, is smaller than the console's minimum).
const (
	DefaultHeadlessWidth  = 100
	DefaultHeadlessHeight = 30
)

// Pos is where a command was written.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// TapeError is one problem in a tape.
type TapeError struct {
	Pos Pos
	Msg string
}

func (e *TapeError) Error() string { return e.Pos.String() + ": " + e.Msg }

// TapeErrors is every problem found in a tape, in line order.
type TapeErrors []*TapeError

func (es TapeErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// CommandKind is what a tape command does headless.
type CommandKind int

const (
	// CmdType types Text one key per rune.
	CmdType CommandKind = iota
	// CmdKey presses Key Repeat times.
	CmdKey
	// CmdSleep keeps the console running for Dur.
	CmdSleep
	// CmdWait waits until Regex matches the screen (Screen) or its last line.
	CmdWait
	// CmdScreenshot writes the screen as text to Text.
	CmdScreenshot
	// CmdCopy puts Text on the tape's clipboard.
	CmdCopy
	// CmdPaste sends the clipboard as one pasted chunk.
	CmdPaste
	// CmdSet changes Setting.
	CmdSet
	// CmdHide and CmdShow only matter to a recording.
	CmdHide
	CmdShow
	// CmdIgnored is accepted for VHS and does nothing headless (Output,
	// Require, Env).
	CmdIgnored
)

// TapeCommand is one parsed line.
type TapeCommand struct {
	Pos  Pos
	Name string // as written: "Type", "Enter", "Ctrl+C", "Wait+Screen", "Set"
	Kind CommandKind
	// Text: Type and Copy: the text; Screenshot: the file headless writes
	// (".txt"); Set: the value as written; ignored commands: their argument.
	Text string
	Key  tea.KeyMsg // CmdKey
	// Repeat is how many times a key is pressed.
	Repeat int
	// Speed is the @<time> of Type and keys (the delay after each key), or
	// the @<time> timeout of Wait; HasSpeed says whether it was given.
	Speed    time.Duration
	HasSpeed bool
	Dur      time.Duration // Sleep; Set TypingSpeed and WaitTimeout
	// Regex: Wait's pattern (nil: the tape's WaitPattern); Set WaitPattern.
	Regex *regexp.Regexp
	// Screen: Wait+Screen (else Wait+Line, VHS's default).
	Screen bool
	// Setting is the name of a Set command; Cells its Width or Height in
	// terminal cells, converted from VHS's pixels.
	Setting string
	Cells   int
	num     float64 // a numeric setting's value
	// Top: a Set, Output or Require before the first other command, where
	// VHS applies settings.
	Top bool
	// VHSOnly: part of the leading Hide…Show block (the VHS set-up that
	// starts the console in a shell) or of a trailing Hide block (clean-up).
	// Headless already runs the console and has no shell: it skips them.
	VHSOnly bool
}

// Tape is a parsed script.
type Tape struct {
	File     string
	Commands []TapeCommand

	// What the top settings give (VHS applies settings only at the top).
	TypingSpeed time.Duration
	WaitTimeout time.Duration
	WaitPattern *regexp.Regexp
	// Width and Height in cells from the top Set Width/Height (0: not set).
	Width, Height int
	geo           geometry
	// widthSet and heightSet are the top Set Width and Set Height (nil:
	// not set), which a screen too small is blamed on.
	widthSet, heightSet *TapeCommand
}

// Name is the script's base name, as the headless actor names it.
func (t *Tape) Name() string { return filepath.Base(t.File) }

// Size is the screen the tape asks for: its top Set Width/Height converted
// to cells, or the headless default when it sets neither.
func (t *Tape) Size() (w, h int) {
	if t.Width == 0 && t.Height == 0 {
		return DefaultHeadlessWidth, DefaultHeadlessHeight
	}
	g := t.geo
	w, h = t.Width, t.Height
	if w == 0 {
		w = g.cols(g.width)
	}
	if h == 0 {
		h = g.rows(g.height)
	}
	return w, h
}

// ParseTapeFile reads and parses the tape at path.
func ParseTapeFile(path string) (*Tape, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTape(path, src)
}

// ParseTape parses src, read from file. It returns TapeErrors listing every
// problem when any line is wrong. Source includes another tape: its path is
// read as written (relative to the working directory, as VHS does).
func ParseTape(file string, src []byte) (*Tape, error) {
	p := &tapeParser{readFile: os.ReadFile}
	cmds := p.parseFile(file, src, false)
	t := &Tape{File: file, Commands: cmds, geo: defaultGeometry(), TypingSpeed: DefaultTypingSpeed, WaitTimeout: DefaultWaitTimeout,
		WaitPattern: regexp.MustCompile(DefaultWaitPattern)}
	p.resolve(t)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return t, nil
}

// geometry is how VHS lays out its terminal, to turn its pixel Width and
// Height into cells: the viewport minus padding, margin (when a margin fill
// is set) and window bar (when one is set), divided by the cell of VHS's
// default font (JetBrains Mono: 0.6 em wide, 1.32 em tall, times
// LineHeight; LetterSpacing px added to each cell's width). It is close,
// not exact: give --width/--height for an exact size.
type geometry struct {
	width, height, padding, margin, barSize int
	marginFill, windowBar                   bool
	fontSize, lineHeight, letterSpacing     float64
}

func defaultGeometry() geometry {
	return geometry{width: 1200, height: 600, fontSize: 22, padding: 60, barSize: 30, lineHeight: 1}
}

// set takes a top-level setting of the font or frame (others leave g as
// it is).
func (g *geometry) set(c TapeCommand) {
	ints := map[string]*int{"Width": &g.width, "Height": &g.height, "Padding": &g.padding, "Margin": &g.margin, "WindowBarSize": &g.barSize}
	floats := map[string]*float64{"FontSize": &g.fontSize, "LineHeight": &g.lineHeight, "LetterSpacing": &g.letterSpacing}
	flags := map[string]*bool{"MarginFill": &g.marginFill, "WindowBar": &g.windowBar}
	if v, ok := ints[c.Setting]; ok {
		*v = int(c.num)
	}
	if v, ok := floats[c.Setting]; ok {
		*v = c.num
	}
	if v, ok := flags[c.Setting]; ok {
		*v = c.Text != ""
	}
}

func (g geometry) cols(px int) int {
	avail := float64(px - 2*g.padding)
	if g.marginFill {
		avail -= float64(2 * g.margin)
	}
	return max(int(math.Floor(avail/(0.6*g.fontSize+g.letterSpacing))), 1)
}

func (g geometry) rows(px int) int {
	avail := float64(px - 2*g.padding)
	if g.marginFill {
		avail -= float64(2 * g.margin)
	}
	if g.windowBar {
		avail -= float64(g.barSize)
	}
	return max(int(math.Floor(avail/(1.32*g.fontSize*g.lineHeight))), 1)
}

// pixelsFor is the least of VHS's pixels that cells (of cols or rows)
// turns into n cells or more.
func pixelsFor(n int, cells func(int) int) int {
	lo, hi := 1, 1
	for cells(hi) < n {
		if hi > 1<<24 {
			return hi
		}
		lo, hi = hi, hi*2
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if cells(mid) >= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

type tapeParser struct {
	errs     TapeErrors
	readFile func(string) ([]byte, error)
}

func (p *tapeParser) errorf(pos Pos, format string, args ...any) {
	p.errs = append(p.errs, &TapeError{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (p *tapeParser) parseFile(file string, src []byte, sourced bool) []TapeCommand {
	if !utf8.Valid(src) {
		p.errorf(Pos{file, 1}, "not UTF-8 text")
		return nil
	}
	var cmds []TapeCommand
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	for i, raw := range strings.Split(text, "\n") {
		pos := Pos{File: file, Line: i + 1}
		toks, err := lexLine(raw)
		if err != "" {
			p.errorf(pos, "%s", err)
			continue
		}
		if len(toks) == 0 {
			continue
		}
		if toks[0].kind == tokWord && toks[0].text == "Source" {
			cmds = append(cmds, p.source(pos, toks, sourced)...)
			continue
		}
		if c, ok := p.command(pos, toks); ok {
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// source inlines another tape, as VHS does: its Output lines are dropped
// and it may not Source again.
func (p *tapeParser) source(pos Pos, toks []token, sourced bool) []TapeCommand {
	if len(toks) != 2 || !toks[1].isText() {
		p.errorf(pos, "Source expects one path to a .tape file")
		return nil
	}
	path := toks[1].text
	switch {
	case sourced:
		p.errorf(pos, "Source inside a sourced tape: VHS does not nest Source")
		return nil
	case filepath.Ext(path) != ".tape":
		p.errorf(pos, "Source expects a file ending in .tape, got %q", path)
		return nil
	}
	src, err := p.readFile(path)
	if err != nil {
		p.errorf(pos, "Source: %v", err)
		return nil
	}
	var out []TapeCommand
	for _, c := range p.parseFile(path, src, true) {
		if c.Kind == CmdIgnored && c.Name == "Output" {
			continue
		}
		out = append(out, c)
	}
	return out
}

// Lexing: one line at a time.

type tokKind int

const (
	tokWord   tokKind = iota // a bare word: Type, 500ms, examples/a.png, C
	tokString                // "…", '…' or `…`
	tokRegex                 // /…/
	tokJSON                  // {…}
	tokAt                    // @
	tokPlus                  // +
)

type token struct {
	kind tokKind
	text string
}

// isText: a word or a string, which VHS reads alike as an argument.
func (t token) isText() bool { return t.kind == tokWord || t.kind == tokString }

func (t token) String() string {
	switch t.kind {
	case tokString:
		return strconv.Quote(t.text)
	case tokRegex:
		return "/" + t.text + "/"
	case tokJSON:
		return "{…}"
	case tokAt:
		return "@"
	case tokPlus:
		return "+"
	}
	return t.text
}

// lexLine splits a line into tokens. Strings and regular expressions end
// at their closing delimiter (VHS has no escapes in them); # at the start
// of a token begins a comment.
func lexLine(line string) ([]token, string) {
	var toks []token
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '#':
			return toks, ""
		case c == '"' || c == '\'' || c == '`' || c == '/':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				if c == '/' {
					return nil, "unterminated regular expression (a /…/ ends at the next /; quote a path that starts with /)"
				}
				return nil, fmt.Sprintf("unterminated string: no closing %c on this line", c)
			}
			kind := tokString
			if c == '/' {
				kind = tokRegex
			}
			toks = append(toks, token{kind: kind, text: line[i+1 : i+1+end]})
			i += end + 2
		case c == '{':
			end := strings.IndexByte(line[i:], '}')
			if end < 0 {
				return nil, "unterminated JSON: headless reads one command per line, so a theme's { … } must close on its line"
			}
			toks = append(toks, token{kind: tokJSON, text: line[i : i+end+1]})
			i += end + 1
		case c == '@':
			toks = append(toks, token{kind: tokAt, text: "@"})
			i++
		case c == '+':
			toks = append(toks, token{kind: tokPlus, text: "+"})
			i++
		default:
			j := i
			for j < len(line) && !strings.ContainsRune(" \t@+\"'`", rune(line[j])) {
				j++
			}
			toks = append(toks, token{kind: tokWord, text: line[i:j]})
			i = j
		}
	}
	return toks, ""
}

// Parsing one command.

// keyNames are VHS's key commands.
var keyNames = map[string]tea.KeyMsg{
	"Enter":     {Type: tea.KeyEnter},
	"Backspace": {Type: tea.KeyBackspace},
	"Delete":    {Type: tea.KeyDelete},
	"Insert":    {Type: tea.KeyInsert},
	"Tab":       {Type: tea.KeyTab},
	"Space":     {Type: tea.KeySpace, Runes: []rune{' '}},
	"Up":        {Type: tea.KeyUp},
	"Down":      {Type: tea.KeyDown},
	"Left":      {Type: tea.KeyLeft},
	"Right":     {Type: tea.KeyRight},
	"PageUp":    {Type: tea.KeyPgUp},
	"PageDown":  {Type: tea.KeyPgDown},
	"Escape":    {Type: tea.KeyEsc},
}

// notInVHS are commands that VHS v0.10.0, the release tapes follow (its
// latest), does not know: its parser says "Invalid command: …" and runs
// nothing. VHS's main branch has them, in no release yet.
var notInVHS = map[string]string{
	"ScrollUp":   "scrolling came to VHS after v0.10.0",
	"ScrollDown": "scrolling came to VHS after v0.10.0",
	"Subtitle":   "subtitles came to VHS after v0.10.0",
}

// settings are VHS's Set names. Width, Height, TypingSpeed, WaitTimeout and
// WaitPattern are honoured; the font and frame settings only size the
// screen (converting VHS's pixels to cells); the rest concern the
// recording and are ignored.
var settings = map[string]bool{
	"Width": true, "Height": true, "TypingSpeed": true, "WaitTimeout": true, "WaitPattern": true,
	"FontSize": true, "Padding": true, "Margin": true, "MarginFill": true, "LineHeight": true,
	"LetterSpacing": true, "WindowBar": true, "WindowBarSize": true,
	"Shell": true, "FontFamily": true, "Framerate": true, "PlaybackSpeed": true, "Theme": true,
	"LoopOffset": true, "BorderRadius": true, "CursorBlink": true,
}

// IgnoredCommands and IgnoredSettings are accepted for VHS and have no
// effect headless (the help lists them).
var (
	IgnoredCommands = []string{"Output", "Require", "Env", "Hide", "Show"}
	IgnoredSettings = []string{"Shell", "FontFamily", "Framerate", "PlaybackSpeed", "Theme", "LoopOffset",
		"BorderRadius", "CursorBlink",
		"FontSize", "Padding", "Margin", "MarginFill", "LineHeight", "LetterSpacing", "WindowBar", "WindowBarSize"}
)

// commandList is what a tape may contain, for error messages.
const commandList = "Type, Enter, Backspace, Delete, Insert, Tab, Space, Up, Down, Left, Right, PageUp, PageDown, " +
	"Escape, Ctrl+…, Alt+…, Shift+…, Sleep, Wait, Screenshot, Copy, Paste, Set, " +
	"Output, Require, Env, Source, Hide, Show"

func (p *tapeParser) command(pos Pos, toks []token) (TapeCommand, bool) {
	head := toks[0]
	c := TapeCommand{Pos: pos, Name: head.text}
	if head.kind != tokWord {
		p.errorf(pos, "a line must start with a command, not %s", head)
		return c, false
	}
	rest := toks[1:]
	name := head.text
	if k, ok := keyNames[name]; ok {
		c.Kind, c.Key = CmdKey, k
		ok := p.keyArgs(&c, rest)
		return c, ok
	}
	switch name {
	case "Type", "Copy":
		c.Kind = CmdType
		if name == "Copy" {
			c.Kind = CmdCopy
		} else if len(rest) > 0 && rest[0].kind == tokAt {
			var ok bool
			if c.Speed, rest, ok = p.speed(pos, name, rest); !ok {
				return c, false
			}
			c.HasSpeed = true
		}
		if len(rest) == 0 {
			p.errorf(pos, "%s expects a string: %s \"text\"", name, name)
			return c, false
		}
		var parts []string
		for _, t := range rest {
			if !(t.kind == tokString || t.kind == tokWord && bareString(t.text)) {
				p.errorf(pos, "%s expects quoted strings (\"…\", '…' or `…`), got %s", name, t)
				return c, false
			}
			parts = append(parts, t.text)
		}
		c.Text = strings.Join(parts, " ") // VHS joins consecutive strings with a space
		return c, true
	case "Paste", "Hide", "Show":
		c.Kind = map[string]CommandKind{"Paste": CmdPaste, "Hide": CmdHide, "Show": CmdShow}[name]
		if len(rest) > 0 {
			p.errorf(pos, "%s takes no argument, got %s", name, rest[0])
			return c, false
		}
		return c, true
	case "Sleep":
		c.Kind = CmdSleep
		d, rest, ok := p.duration(pos, name, rest)
		if !ok {
			return c, false
		}
		if len(rest) > 0 {
			p.errorf(pos, "unexpected %s after Sleep %s", rest[0], d)
			return c, false
		}
		c.Dur = d
		return c, true
	case "Wait":
		return p.wait(c, rest)
	case "Screenshot":
		return p.pathCommand(c, CmdScreenshot, pos, name, rest, func(path string) (string, string) {
			switch filepath.Ext(path) {
			case ".png":
				return strings.TrimSuffix(path, ".png") + ".txt", ""
			case ".txt":
				return path, ""
			}
			return "", fmt.Sprintf("Screenshot expects a .png file (VHS) or .txt, got %q", path)
		})
	case "Set":
		return p.set(c, rest)
	case "Output":
		return p.pathCommand(c, CmdIgnored, pos, name, rest, func(path string) (string, string) {
			if filepath.Ext(path) == "" && !strings.HasSuffix(path, "/") {
				return "", fmt.Sprintf("Output expects a file with an extension (.gif, .mp4, .webm, .txt…) or a folder ending in /, got %q", path)
			}
			return path, ""
		})
	case "Require":
		c.Kind = CmdIgnored
		if len(rest) != 1 || !rest[0].isText() {
			p.errorf(pos, "Require expects one program name")
			return c, false
		}
		c.Text = rest[0].text
		return c, true
	case "Env":
		c.Kind = CmdIgnored
		if len(rest) != 2 || rest[0].kind != tokWord || !rest[1].isText() {
			p.errorf(pos, "Env expects a name and a value: Env NAME \"value\"")
			return c, false
		}
		c.Text = rest[0].text + "=" + rest[1].text
		return c, true
	case "Ctrl", "Alt", "Shift":
		return p.modified(c, rest)
	}
	if why, ok := notInVHS[name]; ok {
		p.errorf(pos, "unknown command %q: VHS v0.10.0 has no %s and refuses the tape (\"Invalid command: %s\"); %s",
			name, name, name, why)
		return c, false
	}
	p.errorf(pos, "unknown command %q (a tape may contain: %s)", name, commandList)
	return c, false
}

// bareString reports whether VHS reads an unquoted word as a string: it
// starts with a letter or a dot and is no keyword.
func bareString(w string) bool {
	if w == "" || !(w[0] == '.' || w[0] >= 'a' && w[0] <= 'z' || w[0] >= 'A' && w[0] <= 'Z') {
		return false
	}
	_, key := keyNames[w]
	return !key && !settings[w] && !strings.Contains(" "+commandList+" ", " "+w+",") && w != "ms" && w != "s" && w != "m"
}

// keyArgs parses a key's optional @<time> and repeat count.
func (p *tapeParser) keyArgs(c *TapeCommand, rest []token) bool {
	c.Repeat = 1
	if len(rest) > 0 && rest[0].kind == tokAt {
		var ok bool
		if c.Speed, rest, ok = p.speed(c.Pos, c.Name, rest); !ok {
			return false
		}
		c.HasSpeed = true
	}
	if len(rest) > 0 {
		n, err := strconv.Atoi(rest[0].text)
		if rest[0].kind != tokWord || err != nil || n < 1 {
			p.errorf(c.Pos, "%s expects an optional @<time> and a repeat count of at least 1, got %s", c.Name, rest[0])
			return false
		}
		c.Repeat = n
		rest = rest[1:]
	}
	if len(rest) > 0 {
		p.errorf(c.Pos, "unexpected %s after %s", rest[0], c.Name)
		return false
	}
	return true
}

// speed parses "@<time>".
func (p *tapeParser) speed(pos Pos, name string, rest []token) (time.Duration, []token, bool) {
	d, rest, ok := p.duration(pos, name+"@", rest[1:])
	return d, rest, ok
}

// duration parses VHS's <number>[ms|s|m], the unit possibly a word of its
// own; a bare number is seconds.
func (p *tapeParser) duration(pos Pos, what string, rest []token) (time.Duration, []token, bool) {
	if len(rest) == 0 || rest[0].kind != tokWord {
		p.errorf(pos, "%s expects a time such as 500ms, 2s or 0.5", what)
		return 0, rest, false
	}
	s := rest[0].text
	rest = rest[1:]
	m := numberRE().FindStringSubmatch(s)
	if m == nil {
		p.errorf(pos, "%s expects a time such as 500ms, 2s or 0.5, got %q", what, s)
		return 0, rest, false
	}
	num, unit := m[1], m[2]
	if unit == "" && len(rest) > 0 && rest[0].kind == tokWord && (rest[0].text == "ms" || rest[0].text == "s" || rest[0].text == "m") {
		unit = rest[0].text
		rest = rest[1:]
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		p.errorf(pos, "%s expects a time such as 500ms, 2s or 0.5, got %q", what, s)
		return 0, rest, false
	}
	scale := map[string]time.Duration{"": time.Second, "s": time.Second, "ms": time.Millisecond, "m": time.Minute}
	u, ok := scale[unit]
	if !ok {
		p.errorf(pos, "%s: unknown time unit in %q (use ms, s or m)", what, s)
		return 0, rest, false
	}
	d := v * float64(u)
	if d > float64(maxTapeDuration) {
		p.errorf(pos, "%s: %q is longer than %s", what, s, maxTapeDuration)
		return 0, rest, false
	}
	return time.Duration(d), rest, true
}

// numberRE is a VHS time: a number (digits, at most one dot) and a unit.
var numberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+\.?[0-9]*|\.[0-9]+)([A-Za-z]*)$`) })

// decimalRE is a VHS number: digits with at most one dot.
var decimalRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+\.?[0-9]*|\.[0-9]+)$`) })

// maxTapeDuration bounds every time in a tape.
const maxTapeDuration = 24 * time.Hour

// path parses a file argument.
// pathCommand parses a command of kind that takes one file path (path),
// checked by check: the path it keeps, or what is wrong with it.
func (p *tapeParser) pathCommand(c TapeCommand, kind CommandKind, pos Pos, name string, rest []token, check func(path string) (keep, wrong string)) (TapeCommand, bool) {
	c.Kind = kind
	path, ok := p.path(pos, name, rest)
	if !ok {
		return c, false
	}
	keep, wrong := check(path)
	if wrong != "" {
		p.errorf(pos, "%s", wrong)
		return c, false
	}
	c.Text = keep
	return c, true
}

func (p *tapeParser) path(pos Pos, name string, rest []token) (string, bool) {
	switch {
	case len(rest) == 1 && rest[0].isText() && rest[0].text != "":
		return rest[0].text, true
	case len(rest) >= 1 && rest[0].kind == tokRegex:
		p.errorf(pos, "%s: quote a path that starts with / (VHS reads /…/ as a regular expression)", name)
	default:
		p.errorf(pos, "%s expects one file path", name)
	}
	return "", false
}

// wait parses Wait[+Line|+Screen][@<timeout>] [/regex/].
func (p *tapeParser) wait(c TapeCommand, rest []token) (TapeCommand, bool) {
	c.Kind = CmdWait
	if len(rest) > 0 && rest[0].kind == tokPlus {
		if len(rest) < 2 || (rest[1].text != "Screen" && rest[1].text != "Line") || rest[1].kind != tokWord {
			p.errorf(c.Pos, "Wait+ expects Line or Screen")
			return c, false
		}
		c.Screen = rest[1].text == "Screen"
		c.Name = "Wait+" + rest[1].text
		rest = rest[2:]
	}
	if len(rest) > 0 && rest[0].kind == tokAt {
		var ok bool
		if c.Speed, rest, ok = p.speed(c.Pos, c.Name, rest); !ok {
			return c, false
		}
		if c.Speed <= 0 {
			p.errorf(c.Pos, "%s@ expects a positive timeout", c.Name)
			return c, false
		}
		c.HasSpeed = true
	}
	if len(rest) > 0 {
		if rest[0].kind != tokRegex {
			p.errorf(c.Pos, "%s expects a regular expression between slashes: %s /text/, got %s", c.Name, c.Name, rest[0])
			return c, false
		}
		re, err := regexp.Compile(rest[0].text)
		if err != nil {
			p.errorf(c.Pos, "%s: invalid regular expression /%s/: %v", c.Name, rest[0].text, err)
			return c, false
		}
		c.Regex = re
		rest = rest[1:]
	}
	if len(rest) > 0 {
		p.errorf(c.Pos, "unexpected %s after %s", rest[0], c.Name)
		return c, false
	}
	return c, true
}

// set parses Set <setting> <value>.
func (p *tapeParser) set(c TapeCommand, rest []token) (TapeCommand, bool) {
	c.Kind = CmdSet
	if len(rest) == 0 || rest[0].kind != tokWord {
		p.errorf(c.Pos, "Set expects a setting and a value")
		return c, false
	}
	c.Setting = rest[0].text
	c.Name = "Set " + c.Setting
	if !settings[c.Setting] {
		if strings.HasPrefix(c.Setting, "Subtitle") {
			p.errorf(c.Pos, "unknown setting %q: VHS v0.10.0 has no subtitle settings and refuses the tape (\"Unknown setting: %s\"); subtitles came to VHS after v0.10.0",
				c.Setting, c.Setting)
			return c, false
		}
		p.errorf(c.Pos, "unknown setting %q", c.Setting)
		return c, false
	}
	vals := rest[1:]
	if len(vals) == 0 {
		p.errorf(c.Pos, "Set %s expects a value", c.Setting)
		return c, false
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = v.String()
		if v.kind == tokString || v.kind == tokWord || v.kind == tokJSON {
			parts[i] = v.text
		}
	}
	c.Text = strings.Join(parts, " ")
	intValue := func(min int) (int, bool) {
		n, err := strconv.Atoi(c.Text)
		if len(vals) != 1 || err != nil || n < min {
			p.errorf(c.Pos, "Set %s expects a whole number of at least %d, got %q", c.Setting, min, c.Text)
			return 0, false
		}
		return n, true
	}
	floatValue := func() (float64, bool) {
		f, err := strconv.ParseFloat(c.Text, 64)
		if len(vals) != 1 || err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			p.errorf(c.Pos, "Set %s expects a number, got %q", c.Setting, c.Text)
			return 0, false
		}
		return f, true
	}
	ok := true
	switch c.Setting {
	case "Width", "Height", "Padding", "Margin", "WindowBarSize":
		min := 0
		if c.Setting == "Width" || c.Setting == "Height" {
			min = 1
		}
		var n int
		n, ok = intValue(min)
		c.num = float64(n)
	case "FontSize":
		// VHS v0.10.0's parser takes any number here (vhs validate
		// passes Set FontSize 14.5); its recorder, though, reads a whole
		// number and fails on a fraction. Headless takes the number.
		f, err := strconv.ParseFloat(c.Text, 64)
		if len(vals) != 1 || !decimalRE().MatchString(c.Text) || err != nil || f <= 0 {
			p.errorf(c.Pos, "Set FontSize expects a number more than 0 (14, 14.5), got %q", c.Text)
			return c, false
		}
		c.num = f
	case "LineHeight", "LetterSpacing":
		c.num, ok = floatValue()
		if ok && c.Setting == "LineHeight" && c.num == 0 {
			p.errorf(c.Pos, "Set LineHeight must be more than 0")
			return c, false
		}
	case "TypingSpeed", "WaitTimeout":
		var d time.Duration
		d, vals, ok = p.duration(c.Pos, "Set "+c.Setting, vals)
		if ok && len(vals) > 0 {
			p.errorf(c.Pos, "unexpected %s after Set %s", vals[0], c.Setting)
			ok = false
		}
		if ok && c.Setting == "WaitTimeout" && d <= 0 {
			p.errorf(c.Pos, "Set WaitTimeout expects a positive time")
			ok = false
		}
		c.Dur = d
	case "WaitPattern":
		if len(vals) != 1 || vals[0].kind == tokJSON {
			p.errorf(c.Pos, "Set WaitPattern expects one regular expression")
			return c, false
		}
		re, err := regexp.Compile(vals[0].text)
		if err != nil {
			p.errorf(c.Pos, "Set WaitPattern: invalid regular expression %q: %v", vals[0].text, err)
			return c, false
		}
		c.Regex = re
	case "CursorBlink":
		if c.Text != "true" && c.Text != "false" {
			p.errorf(c.Pos, "Set CursorBlink expects true or false, got %q", c.Text)
			return c, false
		}
	}
	return c, ok
}

// modified parses Ctrl+…, Alt+… and Shift+… into the key a terminal sends.
func (p *tapeParser) modified(c TapeCommand, rest []token) (TapeCommand, bool) {
	c.Kind, c.Repeat = CmdKey, 1
	var parts []string
	for len(rest) >= 2 && rest[0].kind == tokPlus {
		t := rest[1]
		switch {
		case t.kind == tokAt:
			parts = append(parts, "@")
		case t.kind == tokWord:
			parts = append(parts, t.text)
		default:
			p.errorf(c.Pos, "%s+ expects a key, got %s", c.Name, t)
			return c, false
		}
		rest = rest[2:]
	}
	if len(rest) > 0 {
		p.errorf(c.Pos, "%s expects +<key> (as in %s+C), got %s", c.Name, c.Name, rest[0])
		return c, false
	}
	if len(parts) == 0 {
		p.errorf(c.Pos, "%s expects +<key> (as in %s+C)", c.Name, c.Name)
		return c, false
	}
	c.Name += "+" + strings.Join(parts, "+")
	k, err := modifiedKey(append([]string{c.Name[:strings.IndexByte(c.Name, '+')]}, parts...))
	if err != "" {
		p.errorf(c.Pos, "%s", err)
		return c, false
	}
	c.Key = k
	return c, true
}

// ctrlKeys are the control keys a terminal can send for Ctrl+<key>.
var ctrlKeys = map[string]tea.KeyType{
	"@": tea.KeyCtrlAt, "Space": tea.KeyCtrlAt, "[": tea.KeyEsc, "\\": tea.KeyCtrlBackslash,
	"]": tea.KeyCtrlCloseBracket, "^": tea.KeyCtrlCaret, "_": tea.KeyCtrlUnderscore, "-": tea.KeyCtrlUnderscore,
	"Enter": tea.KeyEnter, "Backspace": tea.KeyCtrlH,
	"Left": tea.KeyCtrlLeft, "Right": tea.KeyCtrlRight, "Up": tea.KeyCtrlUp, "Down": tea.KeyCtrlDown,
}

var shiftArrows = map[string]tea.KeyType{
	"Left": tea.KeyShiftLeft, "Right": tea.KeyShiftRight, "Up": tea.KeyShiftUp, "Down": tea.KeyShiftDown,
}

var ctrlShiftArrows = map[string]tea.KeyType{
	"Left": tea.KeyCtrlShiftLeft, "Right": tea.KeyCtrlShiftRight, "Up": tea.KeyCtrlShiftUp, "Down": tea.KeyCtrlShiftDown,
}

// modifiedKey maps a modifier chain (first element Ctrl, Alt or Shift) to
// the key message a terminal delivers for it.
func modifiedKey(chain []string) (tea.KeyMsg, string) {
	name := strings.Join(chain, "+")
	mods := map[string]bool{chain[0]: true}
	keyName := chain[len(chain)-1]
	for _, m := range chain[1 : len(chain)-1] {
		if m != "Alt" && m != "Shift" {
			return tea.KeyMsg{}, fmt.Sprintf("%s: only Alt and Shift may come between %s and the key", name, chain[0])
		}
		mods[m] = true
	}
	if (keyName == "Alt" || keyName == "Shift" || keyName == "Ctrl") && len(chain) > 1 {
		return tea.KeyMsg{}, fmt.Sprintf("%s: a key must follow the modifiers", name)
	}
	single := utf8.RuneCountInString(keyName) == 1
	r, _ := utf8.DecodeRuneInString(keyName)
	alt := mods["Alt"]
	switch {
	case mods["Ctrl"]:
		if mods["Shift"] {
			if t, ok := ctrlShiftArrows[keyName]; ok {
				return tea.KeyMsg{Type: t, Alt: alt}, ""
			}
			if !(single && r >= 'A' && r <= 'Z' || single && r >= 'a' && r <= 'z') {
				return tea.KeyMsg{}, fmt.Sprintf("%s: a terminal sends no distinct key for it", name)
			}
		}
		if t, ok := ctrlKeys[keyName]; ok {
			return tea.KeyMsg{Type: t, Alt: alt}, ""
		}
		if single && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return tea.KeyMsg{Type: tea.KeyType(r & 0x1f), Alt: alt}, ""
		}
		return tea.KeyMsg{}, fmt.Sprintf("%s: unknown control key %q (a letter, @ [ \\ ] ^ _ -, Space, Enter, Backspace or an arrow)", name, keyName)
	case mods["Shift"]:
		if keyName == "Tab" {
			return tea.KeyMsg{Type: tea.KeyShiftTab, Alt: alt}, ""
		}
		if keyName == "Enter" {
			return tea.KeyMsg{Type: tea.KeyEnter, Alt: alt}, "" // a terminal sends Enter for it
		}
		if t, ok := shiftArrows[keyName]; ok {
			return tea.KeyMsg{Type: t, Alt: alt}, ""
		}
		if single && r != ' ' {
			return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(strings.ToUpper(keyName)), Alt: alt}, ""
		}
		return tea.KeyMsg{}, fmt.Sprintf("%s: unknown key %q (one character, Tab, Enter or an arrow)", name, keyName)
	default: // Alt
		switch keyName {
		case "Enter":
			return tea.KeyMsg{Type: tea.KeyEnter, Alt: true}, ""
		case "Tab":
			return tea.KeyMsg{Type: tea.KeyTab, Alt: true}, ""
		}
		if single {
			return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: true}, ""
		}
		return tea.KeyMsg{}, fmt.Sprintf("%s: unknown key %q (one character, Enter or Tab)", name, keyName)
	}
}

// resolve applies the tape-wide rules once every line parsed: the top
// settings, the VHS-only Hide blocks, and a Paste with nothing copied.
func (p *tapeParser) resolve(t *Tape) {
	cmds := t.Commands
	top := true
	for i := range cmds {
		c := &cmds[i]
		isTop := c.Kind == CmdSet || (c.Kind == CmdIgnored && (c.Name == "Output" || c.Name == "Require"))
		if !isTop {
			top = false
		}
		c.Top = top && isTop
		if !c.Top || c.Kind != CmdSet {
			continue
		}
		switch c.Setting {
		case "TypingSpeed":
			t.TypingSpeed = c.Dur
		case "WaitTimeout":
			t.WaitTimeout = c.Dur
		case "WaitPattern":
			t.WaitPattern = c.Regex
		}
	}
	// Cells use the font and frame settings of the whole top block,
	// whatever their order: VHS lays its terminal out after them, and
	// ignores them further down.
	g := defaultGeometry()
	for _, c := range cmds {
		if !c.Top || c.Kind != CmdSet {
			continue
		}
		g.set(c)
	}
	t.geo = g
	for i := range cmds {
		c := &cmds[i]
		switch {
		case c.Kind != CmdSet:
		case c.Setting == "Width":
			c.Cells = g.cols(int(c.num))
			if c.Top {
				t.Width, t.widthSet = c.Cells, c
			}
		case c.Setting == "Height":
			c.Cells = g.rows(int(c.num))
			if c.Top {
				t.Height, t.heightSet = c.Cells, c
			}
		}
	}
	// The leading set-up block: the first command after the top is Hide.
	first := 0
	for first < len(cmds) && cmds[first].Top {
		first++
	}
	if first < len(cmds) && cmds[first].Kind == CmdHide {
		end := -1
		for j := first + 1; j < len(cmds); j++ {
			if cmds[j].Kind == CmdShow {
				end = j
				break
			}
		}
		if end < 0 {
			p.errorf(cmds[first].Pos, "Hide at the start has no Show: headless skips the leading Hide…Show block (the VHS set-up that starts the console), so it must end with Show")
		} else {
			for j := first; j <= end; j++ {
				cmds[j].VHSOnly = true
			}
		}
	}
	// The trailing clean-up block: a Hide that no Show follows.
	last := -1
	for i := len(cmds) - 1; i >= 0; i-- {
		if cmds[i].Kind == CmdShow {
			break
		}
		if cmds[i].Kind == CmdHide && !cmds[i].VHSOnly {
			last = i
		}
	}
	if last >= 0 {
		for j := last; j < len(cmds); j++ {
			cmds[j].VHSOnly = true
		}
	}
	copied := false
	for _, c := range cmds {
		switch {
		case c.VHSOnly:
		case c.Kind == CmdCopy:
			copied = true
		case c.Kind == CmdPaste && !copied:
			p.errorf(c.Pos, "Paste with nothing copied: headless has no system clipboard, Copy \"text\" first")
		}
	}
	t.Commands = cmds
	// Errors in line order, file by file (the tape's own first).
	order := map[string]int{t.File: 0}
	for _, e := range p.errs {
		if _, ok := order[e.Pos.File]; !ok {
			order[e.Pos.File] = len(order)
		}
	}
	sort.SliceStable(p.errs, func(i, j int) bool {
		a, b := p.errs[i].Pos, p.errs[j].Pos
		if order[a.File] != order[b.File] {
			return order[a.File] < order[b.File]
		}
		return a.Line < b.Line
	})
}
