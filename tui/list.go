package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// list is the cursor of a list on screen: the rows that pass the filter
// (visible: indexes into the rows it lists), the one selected and the
// first on screen. The pending list and the history have one each; what
// their rows show is theirs to draw (view.go).
type list struct {
	keys    KeyMap
	visible []int
	cursor  int
	top     int
	// page is how many rows a page key moves (setSize); head, how many of
	// them the list's own heading takes from the rows on screen.
	page, head int
}

// rowList is a list on screen that draws its rows from what the console
// shows of them (S, handed to update before each frame): the pending list
// and the history each are one, with a view of their own.
type rowList[S any] struct {
	list
	st    Styles
	width int
	shown S
}

// setSize takes the list's width and how many rows it has on screen (its
// heading's included).
func (r *rowList[S]) setSize(w, h int) {
	r.width = w
	r.list.setSize(w, h)
}

// update moves the cursor with a navigation key, or takes what the list
// is to show (S).
func (r *rowList[S]) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return r.list.update(msg)
	case S:
		r.shown = msg
	}
	return nil
}

func newList(keys KeyMap, head int) list { return list{keys: keys, head: head} }

// setSize takes how many rows of the list fit (the width is the
// drawing's).
func (l *list) setSize(_, h int) { l.page = h }

// pageRows is how many rows a page key moves (at least one).
func (l *list) pageRows() int { return max(l.page, 1) }

// update moves the cursor with a navigation key, and the rows on screen
// with it when it moved.
func (l *list) update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	cur, n, page := l.cursor, len(l.visible), l.pageRows()
	switch {
	case key.Matches(k, l.keys.Up):
		cur--
	case key.Matches(k, l.keys.Down):
		cur++
	case key.Matches(k, l.keys.PageUp):
		cur -= page
	case key.Matches(k, l.keys.PageDown):
		cur += page
	case key.Matches(k, l.keys.Top):
		cur = 0
	case key.Matches(k, l.keys.Bottom):
		cur = n - 1
	}
	if cur = max(min(cur, n-1), 0); cur != l.cursor {
		l.cursor = cur
		l.scroll()
	}
	return nil
}

// scroll keeps the cursor's row on screen, and the screen within the
// list.
func (l *list) scroll() {
	n := l.pageRows() - l.head
	if l.cursor < l.top {
		l.top = l.cursor
	}
	if l.cursor >= l.top+n {
		l.top = l.cursor - n + 1
	}
	l.top = max(min(l.top, max(len(l.visible)-n, 0)), 0)
}

// at is the index (in the rows listed) of the row selected, -1 when none
// is.
func (l *list) at() int {
	if l.cursor < 0 || l.cursor >= len(l.visible) {
		return -1
	}
	return l.visible[l.cursor]
}
