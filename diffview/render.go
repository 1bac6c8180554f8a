package diffview

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/approve-tui/approve-tui/model"
)

// MinWidth is the narrowest layout; smaller widths are treated as MinWidth
// (a wide character needs two cells, and nothing is ever cut).
const MinWidth = 4

// contMark opens a row that continues the line above.
const contMark = "↪"

// maxProblems is how many problems Render lists before summing up the rest.
const maxProblems = 8

// minContent is the least room for text a line keeps before the gutter of
// line numbers is given up.
const minContent = 20

// Render lays d out in rows of at most width cells: its problems first,
// then every line of it, hunk body lines behind a gutter of old and new line
// numbers and a "+"/"-"/" " marker, long lines wrapped with a continuation
// marker, and the changed words of paired removed and added lines
// highlighted. Every piece of agent text is sanitised.
func Render(d *Diff, width int, st Styles) []string {
	if d == nil {
		return nil
	}
	r := newRenderer(width, st)
	if len(d.Lines) == 0 {
		r.prose(st.Warning, "! ", "empty diff")
		return r.out
	}
	for i, p := range d.Problems {
		if i == maxProblems {
			r.prose(st.Warning, "! ", fmt.Sprintf("… and %d more problems", len(d.Problems)-i))
			break
		}
		r.prose(st.Warning, "! ", p)
	}

	texts := make([]cleanText, len(d.Lines))
	maxNum := 0
	for i, l := range d.Lines {
		texts[i] = clean(l.Text())
		maxNum = max(maxNum, l.Old, l.New)
	}
	changed := pairChanges(d.Lines, texts)

	gw := len(strconv.Itoa(maxNum))
	if r.width-(2*gw+2)-2 < minContent {
		gw = 0 // too narrow for numbers: keep the room for text
	}
	blank := strings.Repeat(" ", 2*gw+2*min(gw, 1))
	gutter := newPaint(st.Gutter)
	cont := gutter.render(contMark)

	// each kind's palette and marker
	var pals [NoNewline + 1]*palette
	var markers [NoNewline + 1]string
	for k, s := range [...]struct {
		base, word lipgloss.Style
		marker     string
	}{
		Plain: {st.Context, st.Context, ""}, FileHeader: {st.FileHeader, st.FileHeader, ""},
		HunkHeader: {st.HunkHeader, st.HunkHeader, ""}, Context: {st.Context, st.Context, " "},
		Added: {st.Added, st.AddedWord, "+"}, Removed: {st.Removed, st.RemovedWord, "-"},
		NoNewline: {st.Gutter, st.Gutter, " "},
	} {
		pals[k] = newPalette(s.base, s.word, st.Escaped)
		markers[k] = pals[k][0].render(s.marker)
	}

	for i, l := range d.Lines {
		p, m := pals[l.Kind], markers[l.Kind]
		switch l.Kind {
		case Context, Added, Removed, NoNewline:
			first := blank
			if gw > 0 && l.Kind != NoNewline {
				first = gutter.render(number(l.Old, gw) + " " + number(l.New, gw) + " ")
			}
			w := len(blank) + 2
			r.layout(first+m+" ", blank+m+cont, w, w, texts[i], changed[i], p, false)
		default:
			if l.Kind == FileHeader && i > 0 && d.Lines[i-1].Kind != FileHeader {
				r.out = append(r.out, "") // a blank line between files
			}
			r.layout("", cont, 0, 1, texts[i], nil, p, false)
		}
	}
	return r.out
}

// number is n right-aligned in w cells, or blanks for 0 (no line).
func number(n, w int) string {
	if n == 0 {
		return strings.Repeat(" ", w)
	}
	return fmt.Sprintf("%*d", w, n)
}

// RenderSummary shows a proposal's one-line diff summary, labelled as what
// it is: the agent's own words, not the change.
func RenderSummary(summary string, width int, st Styles) []string {
	r := newRenderer(width, st)
	r.prose(st.SummaryLabel, "", "diff summary only (no full diff): the agent's description, not the change itself")
	pal := newPalette(st.Summary, st.Summary, st.Escaped)
	for _, l := range strings.Split(summary, "\n") {
		r.layout("  ", "  ", 2, 2, clean(l), nil, pal, true)
	}
	return r.out
}

// RenderNote is a line of prose where a diff would be, in the summary's
// label style: the program's own words, not the agent's.
func RenderNote(text string, width int, st Styles) []string {
	r := newRenderer(width, st)
	r.prose(st.SummaryLabel, "", text)
	return r.out
}

// RenderMissing is the warning shown when a proposal carries no diff at all.
func RenderMissing(width int, st Styles) []string {
	r := newRenderer(width, st)
	r.prose(st.Warning, "! ", "No diff available: approving means you have reviewed the change some other way.")
	return r.out
}

type renderer struct {
	st    Styles
	width int
	out   []string
}

func newRenderer(width int, st Styles) *renderer {
	return &renderer{st: st, width: max(width, MinWidth)}
}

// cleanText is a sanitised line and the byte ranges of it that are visible
// escapes.
type cleanText struct {
	s   string
	esc []span
}

// clean sanitises one line of agent text (it holds no "\n").
func clean(raw string) cleanText {
	s := model.Sanitize(raw, model.Block)
	if s == raw {
		return cleanText{s: s} // nothing escaped (an escape always differs)
	}
	segs := model.SanitizeSegments(raw, model.Block)
	var t cleanText
	var b strings.Builder
	b.Grow(len(s))
	for _, seg := range segs {
		if seg.Escaped {
			t.esc = append(t.esc, span{b.Len(), b.Len() + len(seg.Text)})
		}
		b.WriteString(seg.Text)
	}
	t.s = b.String()
	return t
}

// pairChanges pairs the i-th removed line of each change block with its i-th
// added line and returns, by line index, the ranges whose words changed.
func pairChanges(lines []Line, texts []cleanText) [][]span {
	changed := make([][]span, len(lines))
	dmp := newWordDiffer()
	budget := wordBudget
	collect := func(i int, k Kind) (idx []int, next int) {
		for ; i < len(lines) && (lines[i].Kind == k || lines[i].Kind == NoNewline); i++ {
			if lines[i].Kind == k {
				idx = append(idx, i)
			}
		}
		return idx, i
	}
	for i := 0; i < len(lines); {
		if lines[i].Kind != Removed {
			i++
			continue
		}
		var removed, added []int
		removed, i = collect(i, Removed)
		added, i = collect(i, Added)
		for k := 0; k < min(len(removed), len(added)); k++ {
			a, b := removed[k], added[k]
			changed[a], changed[b] = wordChanges(dmp, texts[a].s, texts[b].s, &budget)
		}
	}
	return changed
}

// Attributes of a byte of text, indexing a palette.
const (
	attrChanged = 1 << iota
	attrEscaped
)

// palette holds the paint for each combination of attributes.
type palette [4]paint

func newPalette(base, word, esc lipgloss.Style) *palette {
	return &palette{newPaint(base), newPaint(word), newPaint(esc.Inherit(base)), newPaint(esc.Inherit(word))}
}

// paint is a style reduced to the sequences it puts around text, found once
// by rendering a probe: a lipgloss Render per run of text is costly. A style
// that does more than that (padding, borders, transforms) is rendered for
// each run.
type paint struct {
	pre, post string
	style     *lipgloss.Style
}

func newPaint(s lipgloss.Style) paint {
	const probe = "x"
	pre, post, ok := strings.Cut(s.Render(probe), probe)
	if !ok || ansi.Strip(pre+post) != "" {
		return paint{style: &s}
	}
	return paint{pre: pre, post: post}
}

func (p paint) render(s string) string {
	switch {
	case p.style != nil:
		return p.style.Render(s)
	case s == "" || p.pre == "":
		return s
	}
	return p.pre + s + p.post
}

// prose lays out a message of ours, word-wrapped, prefix on its first row.
func (r *renderer) prose(style lipgloss.Style, prefix, msg string) {
	p := newPalette(style, style, r.st.Escaped)
	pad := strings.Repeat(" ", len(prefix))
	r.layout(p[0].render(prefix), pad, len(prefix), len(pad), clean(msg), nil, p, true)
}

// layout appends t as rows: first (fw cells wide, styled) opens the first
// row and cont (cw cells) every other; t fills the rest of each row, cut at
// grapheme boundaries (after a row's last space when words is set), each run
// styled by its attributes.
func (r *renderer) layout(first, cont string, fw, cw int, t cleanText, changed []span, p *palette, words bool) {
	var attrs []uint8
	if len(t.esc) > 0 || len(changed) > 0 {
		attrs = make([]uint8, len(t.s))
		mark := func(spans []span, a uint8) {
			for _, sp := range spans {
				for j := sp.from; j < sp.to; j++ {
					attrs[j] |= a
				}
			}
		}
		mark(changed, attrChanged)
		mark(t.esc, attrEscaped)
	}
	var b strings.Builder
	for n, row := range wrap(t.s, attrs, r.width-fw, r.width-cw, words) {
		b.Reset()
		if n == 0 {
			b.WriteString(first)
		} else {
			b.WriteString(cont)
		}
		for j := row.from; j < row.to; {
			a, k := uint8(0), row.to
			if attrs != nil {
				a = attrs[j]
				for k = j + 1; k < row.to && attrs[k] == a; k++ {
				}
			}
			b.WriteString(p[a].render(t.s[j:k]))
			j = k
		}
		r.out = append(r.out, b.String())
	}
}

// wrap cuts s into rows of at most first cells (the first row) and rest
// cells (the others), at grapheme boundaries; with words, after the row's
// last space where there is one. It always returns at least one row.
//
// Widths are measured as ansi.StringWidth measures the styled row: a
// cluster is also cut where the attributes change, since the escape
// sequence there ends the cluster for the measure. (Unstyled, the joined
// cluster is never wider.)
func wrap(s string, attrs []uint8, first, rest int, words bool) []span {
	var rows []span
	start, w, limit := 0, 0, first
	brk, brkW := -1, 0 // just after the row's last space, and the width up to it
	runEnd := len(s)   // end of the run of equal attributes at i
	if attrs != nil {
		runEnd = 0
	}
	for i := 0; i < len(s); {
		if i == runEnd {
			for runEnd = i + 1; runEnd < len(s) && attrs[runEnd] == attrs[i]; runEnd++ {
			}
		}
		end, cw := nextCluster(s[:runEnd], i)
		if words && s[i] == ' ' && w+cw > limit && i > start {
			rows = append(rows, span{start, i}) // break at this space; it goes
			start, limit, brk, w, i = end, rest, -1, 0, end
			continue
		}
		for w+cw > limit && i > start {
			cut, stop := i, i
			if words && brk > start && brk < i {
				cut, stop = brk, brk-1 // the space the row breaks at goes
				w -= brkW
			} else {
				w = 0
			}
			rows = append(rows, span{start, stop})
			start, limit, brk = cut, rest, -1
		}
		w += cw
		if s[i] == ' ' {
			brk, brkW = end, w
		}
		i = end
	}
	return append(rows, span{start, len(s)})
}

// nextCluster returns the end of the grapheme cluster at s[i] and its width
// in cells, measured as ansi.StringWidth measures (the text is sanitised, so
// every ASCII byte is printable).
func nextCluster(s string, i int) (end, width int) {
	if s[i] < utf8.RuneSelf && (i+1 == len(s) || s[i+1] < utf8.RuneSelf) {
		return i + 1, 1
	}
	c, _ := ansi.FirstGraphemeCluster(s[i:], ansi.GraphemeWidth)
	if c == "" {
		return i + 1, 0
	}
	return i + len(c), ansi.StringWidth(c)
}
