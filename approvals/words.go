package approvals

import (
	"time"

	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
)

// Form is how a surface says a fact: the command line's words, or the
// console's.
type Form int

// Forms.
const (
	// Text is show's and list's: times to the second ("2m10s ago").
	Text Form = iota
	// Console is the console's detail: coarser times ("2m ago"), a mark
	// the console styles before the words.
	Console
)

// line sanitises a string from an agent or a row for one line of output.
func line(s string) string { return model.Sanitize(s, model.Line) }

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// rel says epoch seconds against now in form f's words.
func rel(sec float64, now time.Time, f Form) string {
	if f == Console {
		return human.Ago(model.FromEpoch(sec), now)
	}
	return human.Relative(model.FromEpoch(sec), now)
}

// when is the relative time followed by the absolute one, in UTC.
func when(sec float64, now time.Time) string {
	return rel(sec, now, Text) + " (" + model.FromEpoch(sec).UTC().Format("2006-01-02T15:04:05Z") + ")"
}
