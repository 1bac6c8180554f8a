// Package quiet settles the default Lip Gloss renderer's background before
// Bubble Tea's package init would ask the terminal for it.
//
// Bubble Tea v1's init calls lipgloss.HasDarkBackground, which asks the
// terminal (OSC 11 and a cursor position report) and waits up to five
// seconds for an answer that a terminal held by a script, a CI runner or an
// editor never sends. Packages initialise in the order of their import
// paths, each once its own imports are done: this one imports nothing but
// Lip Gloss, which Bubble Tea imports too, and its path sorts before
// github.com/charmbracelet/bubbletea, so its init always runs first and
// Bubble Tea's finds the answer set. Keep it that way: no other import.
package quiet

import "github.com/charmbracelet/lipgloss"

// DarkDefault is the background assumed when nobody asked the terminal:
// dark, as most terminals are.
const DarkDefault = true

func init() {
	lipgloss.SetHasDarkBackground(DarkDefault)
}
