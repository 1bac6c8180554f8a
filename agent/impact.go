package agent

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/impact"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// ReasonImpactGrew is the execution reason of an approved command not run
// because what it would touch grew since the preview its approval named.
const ReasonImpactGrew = "impact_grew"

// previewTime bounds the impact preview at submit (the walk says "at
// least" past it).
var previewTime = impact.DefaultMaxTime

// withImpact computes the impact of d's command where it will run and
// pins it into d: the preview (payload key approve_tui_impact, covered by
// the hash an approval names), its summary as diff_summary when the agent
// gave none and the preview names something (a target, a part it could
// not preview, or that it is incomplete), and the risk it asks for when
// that is higher.
func withImpact(ctx context.Context, d *risk.Draft, limit time.Duration) {
	pinImpact(d, preview(ctx, d.Command, d.Cwd, limit))
}

// preview is command's impact in cwd, bounded by limit.
func preview(ctx context.Context, command, cwd string, limit time.Duration) *model.Impact {
	home, _ := os.UserHomeDir()
	return impact.Compute(ctx, command, impact.Options{Cwd: cwd, Home: home, MaxTime: limit})
}

// pinImpact pins m into d (see withImpact).
func pinImpact(d *risk.Draft, m *model.Impact) {
	d.Impact = m
	if d.DiffSummary == "" && m.Summary != "" && (len(m.Targets) > 0 || len(m.Unknown) > 0 || !m.Complete) {
		d.DiffSummary = model.ImpactDiffSummary(m)
	}
	if level, why := impact.Raise(m); level != "" {
		pinned := risk.Classify(d.Command).Level
		if d.Raise.Valid() && d.Raise.Rank() > pinned.Rank() {
			pinned = d.Raise
		}
		if level.Rank() > pinned.Rank() {
			d.Raise, d.RaiseWhy = level, why
		}
	}
}

// unasked is the one rule for letting a command go without a proposal
// (run runs it; a hook passes it, or allows it under --low allow): its
// level is low, no rule matches it, and its impact was previewed (m not
// nil) and asks for nothing (impact.Raise: not large, nothing live,
// nothing the preview could not see). A command whose preview could not be
// made, was cut short or left parts unknown is always asked.
func unasked(level model.RiskLevel, v risk.Verdict, m *model.Impact) bool {
	if level != model.RiskLow || v.Hardline || len(v.Matches) > 0 || m == nil {
		return false
	}
	raised, _ := impact.Raise(m)
	return raised == ""
}

// impactGrew computes rec's impact again, now, and says how it exceeds
// the one its approval named (nothing when it did not grow, or when the
// proposal carries no preview), within limit.
func impactGrew(ctx context.Context, rec *storage.Record, limit time.Duration) []string {
	if rec.Impact == nil {
		return nil
	}
	now := preview(ctx, rec.Command, rec.Cwd, limit)
	grew := impact.Grew(rec.Impact, now)
	for i := range grew {
		grew[i] = model.Sanitize(grew[i], model.Line)
	}
	return grew
}

// recordGrowth keeps what grew beside the blocked outcome (best effort:
// the outcome is what counts), as a report event of source "impact".
func recordGrowth(ctx context.Context, s *storage.Store, id string, grew []string, actor model.Actor) error {
	return s.RecordReport(ctx, id, "impact", strings.Join(grew, "; "), map[string]any{"grew": grew}, actor)
}
