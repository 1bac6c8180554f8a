package tui

import (
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/storage"
)

// viewMemo keeps parts of the last frame for the next one to reuse. An idle
// console redraws once a second for an age or a countdown, and most of its
// frame is what it was: the rows whose countdowns did not change, the
// bordered detail pane when only the list changed, every line the terminal
// guard already let through. Each part is kept with everything it was made
// from and reused only when all of that is the same, so the frame is
// exactly the one drawn from scratch (TestViewMemoDrawsWhatAFreshConsoleDraws).
type viewMemo struct {
	safe lineCache[string] // model.TerminalSafe of each line of the frame
	body lineCache[string] // the body's lines cut to the width (fitBlock)

	label struct { // the line under the header
		label, right string
		width        int
		s            string
	}

	left struct { // the list beside the detail, cut to its block
		list  string
		w, h  int
		lines []string
	}
	detail lineCache[string] // the detail's lines cut to the pane (fitBlock)
	pane   struct {          // the bordered detail pane
		w, h  int
		focus bool
		// top and bottom are its borders at w x h; lines, each line of
		// the detail inside the border.
		top, bottom string
		lines       lineCache[string]
	}
	join struct { // the list and the pane side by side
		lw, rw lineCache[int] // the lines' widths
		lines  lineCache2     // the lines joined
		wl, wr int            // at these block widths
	}
	help struct { // the key help line of a screen
		width  int
		screen helpScreen
		s      string
	}
}

// rowMemo is a row of the list as last drawn, and its countdown.
type rowMemo struct {
	key  rowKey
	line string
	left countdown
	// body is the row's session and command cut to their columns, bodyW
	// its width, for the row and widths in bodyFor.
	body    string
	bodyW   int
	bodyFor bodyKey
}

type bodyKey struct {
	rec         *storage.Record
	sessW, cmdW int
}

// bodyOf is r's session and command cut to sessW and cmdW cells, and its
// width.
func (at *rowMemo) bodyOf(r row, sessW, cmdW int) (string, int) {
	k := bodyKey{r.rec, sessW, cmdW}
	if at.body == "" || at.bodyFor != k {
		at.body = fitWidth(r.session, sessW) + " " + fitWidth(r.command, cmdW)
		at.bodyW, at.bodyFor = lipgloss.Width(at.body), k
	}
	return at.body, at.bodyW
}

// countdown is a row's time left as shown from from until until.
type countdown struct {
	text        string
	from, until time.Time
}

// headerKey is everything the header is drawn from.
type headerKey struct {
	width             int
	mode              viewMode
	count, who        string
	readOnly, damaged bool
	// policy: the version in force ("policy v3"); policyBad: it, or the
	// votes, could not be read; policyUnreadable: the policy itself cannot
	// be used.
	policy                      string
	policyBad, policyUnreadable bool
}

// rowKey is everything a list row is drawn from.
type rowKey struct {
	rec                 *storage.Record // loaded records are never changed
	selected            bool
	width, sessW, cmdW  int
	left                string
	urgency             float64
	flag, cursor, other string
	votes               string // the VOTE column ("" without one)
}

// lineCache applies a function of one line to the lines of a block, reusing
// its result for each line equal to the one at the same place last time.
type lineCache[T any] struct {
	in  []string
	out []T
	arg int // the function's argument; another one starts over
}

func (c *lineCache[T]) apply(lines []string, arg int, f func(string) T) []T {
	if arg != c.arg {
		c.in, c.out, c.arg = nil, nil, arg
	}
	out := make([]T, len(lines))
	for i, l := range lines {
		if i < len(c.in) && c.in[i] == l {
			out[i] = c.out[i]
		} else {
			out[i] = f(l)
		}
	}
	c.in, c.out = lines, out
	return out
}

// borderedPane is the lines of pane.Width(w+1).Height(h).PaddingLeft(1)
// .Render of a detail of h lines of at most w cells (fitBlock): lipgloss
// lays out each line of such a block on its own (nothing wraps, nothing is
// added but padding to the width and the border's sides), so the lines
// that did not change since the last frame are taken from it, and a changed
// one is laid out alone.
func (mm *viewMemo) borderedPane(pane lipgloss.Style, detail []string, w, h int, focus bool) []string {
	p := &mm.pane
	style := pane.Width(w + 1).PaddingLeft(1)
	if p.top == "" || w != p.w || h != p.h || focus != p.focus {
		// Another size or border colour: the whole pane once, for its
		// borders.
		full := strings.Split(style.Height(h).Render(strings.Join(detail, "\n")), "\n")
		p.top, p.bottom = full[0], full[len(full)-1]
		p.lines = lineCache[string]{in: detail, out: full[1 : len(full)-1]}
		p.w, p.h, p.focus = w, h, focus
	}
	sides := style.BorderTop(false).BorderBottom(false)
	inner := p.lines.apply(detail, 0, func(l string) string { return sides.Render(l) })
	out := make([]string, 0, len(inner)+2)
	out = append(out, p.top)
	out = append(out, inner...)
	return append(out, p.bottom)
}

// beside is the lines of lipgloss.JoinHorizontal(lipgloss.Top, left, " ",
// right) for blocks of lines, measuring and joining only the lines that
// changed since the last frame.
func (mm *viewMemo) beside(left, right []string) []string {
	j := &mm.join
	width := func(l string) int { return ansi.StringWidth(l) }
	lw, rw := j.lw.apply(left, 0, width), j.rw.apply(right, 0, width)
	wl, wr := 0, 0
	for _, w := range lw {
		wl = max(wl, w)
	}
	for _, w := range rw {
		wr = max(wr, w)
	}
	if wl != j.wl || wr != j.wr {
		j.lines, j.wl, j.wr = lineCache2{}, wl, wr
	}
	// The shorter block goes on with empty lines (lipgloss.Top).
	n := max(len(left), len(right))
	l, r := make([]string, n), make([]string, n)
	copy(l, left)
	copy(r, right)
	at := func(ws []int, i int) int { // a line's width, measured above (none: an empty line)
		if i < len(ws) {
			return ws[i]
		}
		return 0
	}
	return j.lines.apply(l, r, func(i int, a, b string) string {
		return a + strings.Repeat(" ", wl-at(lw, i)) + " " + b + strings.Repeat(" ", wr-at(rw, i))
	})
}

// lineCache2 is lineCache for a function of the two lines at the same
// place in two blocks.
type lineCache2 struct {
	a, b, out []string
}

func (c *lineCache2) apply(a, b []string, f func(i int, a, b string) string) []string {
	out := make([]string, len(a))
	for i := range a {
		if i < len(c.a) && c.a[i] == a[i] && c.b[i] == b[i] {
			out[i] = c.out[i]
		} else {
			out[i] = f(i, a[i], b[i])
		}
	}
	c.a, c.b, c.out = a, b, out
	return out
}

// fitLines is fitBlock of lines to w x h for a block drawn again and again
// at the same place: the lines that did not change since the last time are
// not measured again.
func fitLines(c *lineCache[string], lines []string, w, h int) []string {
	if len(lines) > h {
		lines = lines[:h]
	}
	out := c.apply(lines, w, func(l string) string {
		if lipgloss.Width(l) > w {
			return fitWidth(l, w)
		}
		return l
	})
	for len(out) < h {
		out = append(out, "")
	}
	return out
}
