package approvals

import (
	"fmt"
	"strings"

	"github.com/approve-tui/approve-tui/impact"
	"github.com/approve-tui/approve-tui/model"
)

// ImpactKind is what a line of the impact preview says, for a surface to
// style it.
type ImpactKind int

// Kinds of impact lines, in the order they come.
const (
	// ImpactTarget is one target: Op, Path and what it is (Text).
	ImpactTarget ImpactKind = iota
	// ImpactLive is something live the target above reaches.
	ImpactLive
	// ImpactDetail is an item the target above names (a commit, a
	// partition, a resource).
	ImpactDetail
	// ImpactMore says how many targets are not listed (Lead only).
	ImpactMore
	// ImpactIncomplete says why the preview is incomplete: its counts are
	// then at least.
	ImpactIncomplete
	// ImpactUnknown is what could not be previewed.
	ImpactUnknown
	// ImpactRaise is the risk the preview asks for, and why.
	ImpactRaise
)

// ImpactLine is one line of the impact preview under its summary: Lead is
// the program's words that begin it ("! live: ", "incomplete: ", ...; ""
// for a target); Op, Path and Text are the strings from the agent's host
// that follow, as they are: a surface sanitises each (the console sets
// apart what it escaped).
type ImpactLine struct {
	Kind           ImpactKind
	Lead           string
	Op, Path, Text string
}

// MaxImpactTargets bounds the targets the console lists one by one (the
// summary counts them all).
const MaxImpactTargets = 6

// ImpactLines are the impact preview m under its summary, in form f:
// each target with what it reaches that is live and the items it names,
// why the preview is incomplete, what could not be previewed and the risk
// it asks for ("marked I, " first when that raised the proposal's risk:
// marked). Text: every target, described in full (the newest change, the
// note). Console: only the targets the command touches, the first
// MaxImpactTargets of them, described short.
func ImpactLines(m *model.Impact, marked bool, f Form) []ImpactLine {
	var out []ImpactLine
	shown := 0
	for _, t := range m.Targets {
		if f == Console {
			if !t.Touches() {
				continue
			}
			if shown++; shown > MaxImpactTargets {
				continue
			}
		}
		desc := impact.Describe(t, f == Text)
		out = append(out, ImpactLine{Kind: ImpactTarget, Op: t.Op, Path: t.Path, Text: desc.What})
		for _, l := range desc.Live {
			out = append(out, ImpactLine{Kind: ImpactLive, Lead: "! live: ", Text: l})
		}
		for _, x := range desc.Details {
			out = append(out, ImpactLine{Kind: ImpactDetail, Lead: "  · ", Text: x})
		}
	}
	if shown > MaxImpactTargets {
		out = append(out, ImpactLine{Kind: ImpactMore, Lead: fmt.Sprintf("and %d more targets", shown-MaxImpactTargets)})
	}
	for _, why := range impact.IncompleteWhy(m) {
		out = append(out, ImpactLine{Kind: ImpactIncomplete, Lead: "incomplete: ", Text: why})
	}
	for _, u := range m.Unknown {
		out = append(out, ImpactLine{Kind: ImpactUnknown, Lead: "could not preview: ", Text: u})
	}
	if level, why := impact.Raise(m); level != "" {
		lead := "at least "
		if marked {
			lead = "marked I, at least " // the impact raised the risk
		}
		out = append(out, ImpactLine{Kind: ImpactRaise, Lead: lead + strings.ToUpper(string(level)) + ": ", Text: strings.TrimPrefix(why, "impact: ")})
	}
	return out
}
