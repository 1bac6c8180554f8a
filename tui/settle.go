package tui

import tea "github.com/charmbracelet/bubbletea"

// Settle runs cmd and every command that follows from it synchronously,
// feeding each message back into m, until nothing is left to do. With
// Options.NoWatch nothing the console issues blocks (no watcher, no clock),
// so tests and benchmarks drive the very model the terminal runs, step by
// step. It returns whether the model asked to quit.
func Settle(m tea.Model, cmd tea.Cmd) (quit bool) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case tea.QuitMsg:
			quit = true
		default:
			_, next := m.Update(msg)
			queue = append(queue, next)
		}
	}
	return quit
}
