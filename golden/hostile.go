package golden

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hostile is one case of the hostile corpus (corpus/hostile.txt): a string
// an agent, or any writer of the database file, may put in any field.
type Hostile struct {
	Name string
	Text string
}

var repeat = regexp.MustCompile(`^REPEAT:(.*):(\d+)$`)

// HostileCorpus reads the corpus. A case written REPEAT:TEXT:N stands for
// TEXT N times.
func HostileCorpus() ([]Hostile, error) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "corpus", "hostile.txt")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Hostile
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, lit, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want NAME<TAB>\"string\"", path, n)
		}
		text, err := strconv.Unquote(lit)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if m := repeat.FindStringSubmatch(text); m != nil {
			k, _ := strconv.Atoi(m[2])
			text = strings.Repeat(m[1], k)
		}
		out = append(out, Hostile{Name: name, Text: text})
	}
	return out, sc.Err()
}

// RawFindings lists what in out (bytes a program wrote to a terminal) a
// terminal would act on or hide: escape sequences other than the ones a
// console's renderer writes itself (cursor motion, erase, modes, SGR without
// conceal), C0 and C1 controls other than newline, tab and carriage return,
// bidi, zero-width and other invisible characters. Empty: nothing raw.
func RawFindings(out []byte) []string {
	var found []string
	s := string(out)
	marks := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			marks = 0
		}
		switch {
		case c == 0x1b:
			n, why := rendererSequence(s[i:])
			if why != "" {
				found = append(found, fmt.Sprintf("at %d: %s: %q", i, why, clip(s[i:], 24)))
				i++
				continue
			}
			i += n
			continue
		case c < 0x20 && c != '\n' && c != '\t' && c != '\r', c == 0x7f:
			found = append(found, fmt.Sprintf("at %d: control byte %#x", i, c))
		case c >= 0x80:
			r, size := decodeRune(s[i:])
			if r < 0 {
				found = append(found, fmt.Sprintf("at %d: invalid UTF-8 %#x", i, c))
				i++
				continue
			}
			if hidden(r) {
				found = append(found, fmt.Sprintf("at %d: U+%04X", i, r))
			}
			if unicode.Is(unicode.Mn, r) {
				if marks++; marks == 3 {
					found = append(found, fmt.Sprintf("at %d: a run of combining marks", i))
				}
			} else {
				marks = 0
			}
			i += size
			continue
		}
		i++
	}
	return found
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// decodeRune decodes one UTF-8 rune; -1 for invalid bytes.
func decodeRune(s string) (rune, int) {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size <= 1 {
		return -1, 1
	}
	return r, size
}

// hidden: runes a terminal draws invisibly, at a width it may not agree
// on, or acts on: C1 controls, format characters (bidi, zero-width, soft
// hyphen, tags), line and paragraph separators, spaces other than U+0020,
// variation selectors, emoji modifiers, regional indicators and enclosing
// marks.
func hidden(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f,
		unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Me),
		unicode.Is(unicode.Zs, r) && r != ' ',
		r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef,
		r >= 0x1f3fb && r <= 0x1f3ff, r >= 0x1f1e6 && r <= 0x1f1ff:
		return true
	}
	return false
}

// rendererSequence measures the escape sequence at the start of s and says
// why a console's renderer would never write it ("" when it would).
func rendererSequence(s string) (int, string) {
	if len(s) < 2 {
		return 1, "lone ESC"
	}
	switch s[1] {
	case '[':
		j := 2
		for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
			j++
		}
		params := s[2:j]
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j >= len(s) || s[j] < 0x40 || s[j] > 0x7e {
			return 1, "unterminated CSI"
		}
		final := s[j]
		switch final {
		case 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'J', 'K', 'L', 'M', 'P', 'X', '@', 'd', 'f', 'h', 'l', 'r', 'S', 'T', 'q':
			return j + 1, ""
		case 'm':
			if concealed(params) {
				return 1, "SGR conceal"
			}
			return j + 1, ""
		case 'n':
			if params == "6" {
				return j + 1, "" // cursor position report: the renderer's own probe
			}
		}
		return 1, "CSI " + string(final)
	case ']':
		// Only the colour queries a style library sends (OSC 10/11 ;?).
		for _, q := range []string{"]10;?", "]11;?"} {
			if strings.HasPrefix(s[1:], q) {
				rest := s[1+len(q):]
				switch {
				case strings.HasPrefix(rest, "\x07"):
					return 1 + len(q) + 1, ""
				case strings.HasPrefix(rest, "\x1b\\"):
					return 1 + len(q) + 2, ""
				}
			}
		}
		return 1, "OSC"
	case '=', '>':
		return 2, "" // keypad modes
	}
	return 1, fmt.Sprintf("ESC %q", s[1])
}

// concealed reports whether SGR parameters turn conceal (8) on; 8 inside an
// extended colour (38;5;8, 48;2;…) is a colour value.
func concealed(params string) bool {
	ps := strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' })
	for i := 0; i < len(ps); i++ {
		switch ps[i] {
		case "38", "48", "58":
			if i+1 < len(ps) && ps[i+1] == "5" {
				i += 2
			} else if i+1 < len(ps) && ps[i+1] == "2" {
				i += 4
			}
		case "8":
			return true
		}
	}
	return false
}
