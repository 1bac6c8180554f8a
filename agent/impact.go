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
// gave none and the preview names something (a target, or a part it could
// not preview), and the risk it asks for when that is higher.
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
	if d.DiffSummary == "" && m.Summary != "" && (len(m.Targets) > 0 || len(m.Unknown) > 0) {
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

// impactGrew computes rec's impact again, now, and says how it exceeds
// the one its approval named (nothing when it did not grow, or when the
// proposal carries no preview).
func impactGrew(ctx context.Context, rec *storage.Record) []string {
	if rec.Impact == nil {
		return nil
	}
	home, _ := os.UserHomeDir()
	now := impact.Compute(ctx, rec.Command, impact.Options{Cwd: rec.Cwd, Home: home, MaxTime: previewTime})
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
