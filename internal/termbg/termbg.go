// Package termbg decides whether the terminal's background is dark, asking
// the terminal at most once and never for long.
//
// Lip Gloss and termenv ask a terminal for its background colour (OSC 11,
// then a cursor position report) and wait up to five seconds for the
// answer; Bubble Tea v1 makes Lip Gloss ask at program start, in its
// package init, whatever the program then prints. A terminal that does not
// answer (a pty some script, CI runner or editor holds) made every command
// wait those five seconds. Importing this package settles the default
// renderer's background before Bubble Tea's init runs (package quiet), so
// nothing is asked at start; the console asks with Dark, once, and only
// where colour shows.
package termbg

import (
	"strconv"
	"strings"
	"time"

	colorful "github.com/lucasb-eyer/go-colorful"

	"github.com/approve-tui/approve-tui/internal/termbg/quiet"
)

// Default is the background assumed when the terminal does not say: dark,
// as most terminals are.
const Default = quiet.DarkDefault

// Timeout is how long Query waits for the terminal's answer: a local
// terminal answers in a millisecond or two.
const Timeout = 100 * time.Millisecond

// Query is the query Query writes: the background colour (OSC 11), then
// the cursor position (DSR 6), which every terminal answers, so that one
// that ignores OSC 11 answers something.
const Query = "\x1b]11;?\x1b\\\x1b[6n"

// FromEnv is what COLORFGBG ("15;0": foreground;background, as rxvt and
// others set it) says of the background, and whether it says anything.
func FromEnv(getenv func(string) string) (dark, ok bool) {
	v := getenv("COLORFGBG")
	i := strings.LastIndexByte(v, ';')
	if i < 0 {
		return false, false
	}
	n, err := strconv.Atoi(v[i+1:])
	if err != nil || n < 0 || n > 15 {
		return false, false
	}
	// The 16 ANSI colours: 7 (light grey) and 9-15 are light.
	return !(n == 7 || n >= 9), true
}

// ParseReply reads the terminal's answer to OSC 11 in b: whether its
// background is dark, and whether b holds such an answer.
// The answer is ESC ] 11 ; rgb:R/G/B, each component one to four hex
// digits, ended by BEL or ESC \.
func ParseReply(b []byte) (dark, ok bool) {
	s := string(b)
	i := strings.Index(s, "\x1b]11;rgb:")
	if i < 0 {
		return false, false
	}
	s = s[i+len("\x1b]11;rgb:"):]
	end := strings.IndexAny(s, "\a\x1b")
	if end < 0 {
		return false, false
	}
	parts := strings.Split(s[:end], "/")
	if len(parts) != 3 {
		return false, false
	}
	var c [3]float64
	for i, p := range parts {
		if len(p) < 1 || len(p) > 4 {
			return false, false
		}
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return false, false
		}
		c[i] = float64(v) / float64(uint64(1)<<(4*len(p))-1)
	}
	_, _, l := colorful.Color{R: c[0], G: c[1], B: c[2]}.Hsl()
	return l < 0.5, true
}

// replied reports whether b holds the whole answer: the cursor position
// report (ESC [ row ; col R) that follows the colour, if any.
func replied(b []byte) bool {
	s := string(b)
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return false
		}
		s = s[i+2:]
		j := 0
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
			j++
		}
		if j > 0 && j < len(s) && s[j] == 'R' {
			return true
		}
	}
}
