package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/model"
)

// header is the header's first line: the tabs, the count of proposals,
// who this console is and its flags. What it shows is a headerKey, which
// the console works out from its state and hands it (update); it draws
// the line again only when that changed.
type header struct {
	st    Styles
	width int
	key   headerKey
	line  string // drawn for key ("": not yet)
}

func newHeader(st Styles) header { return header{st: st} }

// setSize takes the screen's width.
func (h *header) setSize(w, _ int) { h.width = w }

// update takes what the header is to show (a headerKey).
func (h *header) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(headerKey); ok && (h.line == "" || k != h.key) {
		h.key, h.line = k, h.draw(k)
	}
	return nil
}

// view is the line.
func (h *header) view() string { return h.line }

// draw draws the header's first line: the tabs, then the count, who this
// console is and its flags, right-aligned. The name is the console's
// own (an SSH session's person; the ? page names the key whole); when the
// line is too narrow it gives way, never the count or the flags.
func (h *header) draw(key headerKey) string {
	st, width := h.st, h.width
	left := st.Title.Render("approve-tui")
	tabs := " " + h.tab("pending", key.mode == viewPending) + " " + h.tab("history", key.mode == viewHistory)
	who := model.Sanitize(key.who, model.Line)
	var flags string
	if key.readOnly {
		flags += " " + st.Warning.Render("[read-only]")
	}
	if key.damaged {
		flags += " " + st.Error.Render("[DAMAGED FILE]")
	}
	count := key.count + " · "
	switch {
	case key.policyUnreadable && key.policy != "":
		// Never taken for no policy: the store approves nothing meanwhile.
		flags += " " + st.Error.Render("["+key.policy+" UNREADABLE]")
	case key.policyUnreadable:
		flags += " " + st.Error.Render("[POLICY UNREADABLE]")
	case key.policyBad:
		// The policy or the votes could not be read this time: what the
		// console shows of them may be out of date.
		flags += " " + st.Error.Render("[POLICY NOT READ]")
	case key.policy != "":
		count += key.policy + " · "
	}
	// One space at least between the tabs and the right part.
	if room := width - lipgloss.Width(left+tabs) - 1 - lipgloss.Width(count+flags); lipgloss.Width(who) > room {
		who = fitWidth(who, max(room, 1))
	}
	right := st.Subtle.Render(count) + who + flags
	gap := width - lipgloss.Width(left+tabs) - lipgloss.Width(right)
	if gap < 1 {
		return fitWidth(left+tabs+" "+right, width)
	}
	return left + tabs + strings.Repeat(" ", gap) + right
}

func (h *header) tab(name string, on bool) string {
	if on {
		return h.st.Selected.Render(" " + name + " ")
	}
	return h.st.Subtle.Render(" " + name + " ")
}
