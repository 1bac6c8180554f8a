package cli

import "strings"

// column is how one column of a table is laid out on a terminal.
type column struct {
	name string
	// whole: never cut (ids, risk, times): the other columns make room.
	whole bool
	// min is the fewest cells a cut cell keeps (at least the header's
	// width); weight is the column's share of the room the whole columns
	// leave, against the other cut ones (0 counts as 1).
	min, weight int
}

// table is sanitised single-line cells under a header.
type table struct {
	cols []column
	rows [][]string
	// paint colours a cell after padding (so widths are the text's), when
	// output is in colour; nil paints nothing.
	paint func(col int, cell, padded string) string
}

// add appends a row of sanitised cells, one per column.
func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// tableGap is the space between two columns.
const tableGap = 2

// writeTable prints t. On a terminal (or with --color always) the columns
// are aligned and every line fits the width: whole columns keep their
// width, the others share what is left by weight and are cut with an
// ellipsis. Not on a terminal each row is one line of tab-separated
// fields, every field whole, for other tools: cells are sanitised single
// lines, so none holds a tab or a newline.
func (a *app) writeTable(t *table) {
	header := make([]string, len(t.cols))
	for i, c := range t.cols {
		header[i] = c.name
	}
	rows := append([][]string{header}, t.rows...)
	if a.termW() == 0 && a.color != "always" {
		for _, row := range rows {
			a.printf("%s\n", strings.Join(row, "\t"))
		}
		return
	}
	paint := t.paint
	if !a.colorful() {
		paint = nil
	}
	room := a.width()
	widths := fitColumns(t.cols, rows, room)
	total := tableGap * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	if total > room {
		// Only on a terminal narrower than the whole columns: each line
		// is cut at its end, uncoloured.
		paint = nil
	}
	gap := strings.Repeat(" ", tableGap)
	for i, row := range rows {
		var b strings.Builder
		for j, c := range row {
			text := cut(c, widths[j])
			cell := text
			if j < len(row)-1 {
				cell = pad(text, widths[j])
			}
			if paint != nil && i > 0 && c != "" {
				cell = paint(j, text, cell)
			}
			b.WriteString(cell)
			if j < len(row)-1 {
				b.WriteString(gap)
			}
		}
		out := strings.TrimRight(b.String(), " ")
		if total > room {
			out = cut(out, room)
		}
		a.printf("%s\n", out)
	}
}

// fitColumns gives each column its width for a line of room cells: its
// widest cell when everything fits; otherwise the whole columns keep
// theirs and the others share the rest by weight, a column that needs less
// than its share giving the difference to the others, none below its
// minimum unless the room is smaller than the minimums.
func fitColumns(cols []column, rows [][]string, room int) []int {
	natural := make([]int, len(cols))
	for _, row := range rows {
		for i, c := range row {
			natural[i] = max(natural[i], cells(c))
		}
	}
	widths := append([]int(nil), natural...)
	avail := room - tableGap*(len(cols)-1)
	var open []int // the columns that may be cut, still to be sized
	for i, c := range cols {
		if c.whole {
			avail -= natural[i]
		} else {
			open = append(open, i)
		}
	}
	need := 0
	for _, i := range open {
		need += natural[i]
	}
	if need <= avail {
		return widths
	}
	weight := func(i int) int { return max(cols[i].weight, 1) }
	share := func(i, avail, sum int) int { return avail * weight(i) / sum }
	for len(open) > 0 {
		sum := 0
		for _, i := range open {
			sum += weight(i)
		}
		// A column that needs no more than its share takes what it needs.
		k := -1
		for j, i := range open {
			if natural[i] <= share(i, avail, sum) {
				k = j
				break
			}
		}
		if k < 0 {
			// Every column left needs more than its share: each gets its
			// share, the last (the one most worth reading) the remainder.
			left := avail
			for j, i := range open {
				widths[i] = share(i, avail, sum)
				if j == len(open)-1 {
					widths[i] = left
				}
				left -= widths[i]
			}
			break
		}
		avail -= natural[open[k]]
		open = append(open[:k], open[k+1:]...)
	}
	// No cut column below its minimum (nor its header), where it has that
	// much to show.
	total := tableGap * (len(cols) - 1)
	for i, c := range cols {
		if !c.whole {
			widths[i] = max(widths[i], min(natural[i], max(c.min, cells(c.name))))
		}
		total += widths[i]
	}
	// Minimums that do not fit give way, the widest cut column first.
	for total > room {
		widest := -1
		for i, c := range cols {
			if !c.whole && widths[i] > 1 && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
		total--
	}
	return widths
}
