// Package diffview parses the unified diffs that agents attach to proposals
// and lays them out for the console's detail pane: a gutter of old and new
// line numbers, hunk and file headers, word-level highlights between paired
// removed and added lines, and long lines wrapped (never cut) with a
// continuation marker.
//
// Diffs are agent text: every byte shown goes through model.Sanitize or
// model.SanitizeSegments (invariant 7), and nothing of the input is dropped
// (invariant 8): what does not parse is shown as it is, and named.
//
// Rendering returns finished lines, to be computed in Update (when the
// proposal or the width changes) and only sliced in View.
package diffview

import "github.com/charmbracelet/lipgloss"

// Styles are the diff pane's styles for one renderer (over SSH each session
// has its own). Added and removed lines carry "+"/"-" markers in the text,
// so nothing depends on colour. Styles should set only colours and text
// attributes: anything that adds cells (padding, borders) breaks the width.
type Styles struct {
	FileHeader, HunkHeader         lipgloss.Style
	Added, Removed, Context        lipgloss.Style
	AddedWord, RemovedWord         lipgloss.Style // the changed words of a paired line
	Gutter                         lipgloss.Style // line numbers, continuation markers
	Escaped                        lipgloss.Style // visible escapes of hidden agent bytes
	Summary, SummaryLabel, Warning lipgloss.Style
}

// NewStyles builds the styles with r, adapting to light and dark
// backgrounds.
func NewStyles(r *lipgloss.Renderer) Styles {
	green := lipgloss.AdaptiveColor{Light: "#2E7D32", Dark: "#81C784"}
	red := lipgloss.AdaptiveColor{Light: "#C62828", Dark: "#E57373"}
	cyan := lipgloss.AdaptiveColor{Light: "#00838F", Dark: "#4DD0E1"}
	amber := lipgloss.AdaptiveColor{Light: "#B26A00", Dark: "#FFB74D"}
	faint := lipgloss.AdaptiveColor{Light: "#8A8A8A", Dark: "#707070"}
	subtle := lipgloss.AdaptiveColor{Light: "#5A5A5A", Dark: "#B0B0B0"}
	return Styles{
		FileHeader: r.NewStyle().Bold(true),
		HunkHeader: r.NewStyle().Foreground(cyan),
		Added:      r.NewStyle().Foreground(green),
		Removed:    r.NewStyle().Foreground(red),
		Context:    r.NewStyle(),
		AddedWord: r.NewStyle().Bold(true).
			Foreground(lipgloss.AdaptiveColor{Light: "#1B5E20", Dark: "#E8F5E9"}).
			Background(lipgloss.AdaptiveColor{Light: "#B9E4BB", Dark: "#2E6B32"}),
		RemovedWord: r.NewStyle().Bold(true).
			Foreground(lipgloss.AdaptiveColor{Light: "#8E0000", Dark: "#FFEBEE"}).
			Background(lipgloss.AdaptiveColor{Light: "#F7C4C8", Dark: "#8E2424"}),
		Gutter:       r.NewStyle().Foreground(faint),
		Escaped:      r.NewStyle().Reverse(true),
		Summary:      r.NewStyle().Italic(true).Foreground(subtle),
		SummaryLabel: r.NewStyle().Bold(true).Foreground(amber),
		Warning:      r.NewStyle().Bold(true).Foreground(amber),
	}
}
