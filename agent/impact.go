package agent

import (
	"context"
	"fmt"
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

// withImpact computes the impact of d's command where it will run (in
// shell, with this process's environment, which the command inherits)
// and
// pins it into d: the preview (payload key approve_tui_impact, covered by
// the hash an approval names), its summary as diff_summary when the agent
// gave none and the preview names something (a target, a part it could
// not preview, or that it is incomplete), and the risk it asks for when
// that is higher.
func withImpact(ctx context.Context, d *risk.Draft, shell runsIn, limit time.Duration) {
	pinImpact(d, preview(ctx, d.Command, d.Cwd, shell, limit))
}

// preview is command's impact in cwd, run by shell, bounded by limit.
// The environment is this process's: the one the command runs in (the
// runner's child inherits it; a hook's is the agent's), whose HOME and
// CDPATH decide where cd goes. The execution-time check (impactGrew)
// computes it again from the same inputs.
func preview(ctx context.Context, command, cwd string, shell runsIn, limit time.Duration) *model.Impact {
	return impact.Compute(ctx, command, previewOptions(cwd, shell, limit))
}

func previewOptions(cwd string, shell runsIn, limit time.Duration) impact.Options {
	return impact.Options{Cwd: cwd, Env: os.Environ(), Shell: shell.path, PWDUnsure: shell.pwdUnsure, MaxTime: limit}
}

// runsIn is what the preview knows of the shell a command runs in.
type runsIn struct {
	path      string // the shell ("": bash)
	pwdUnsure bool   // its $PWD may be the working directory's physical path
}

var (
	// hookShell: an agent runs the command in its bash, not seen here.
	hookShell = runsIn{pwdUnsure: true}
	// runnerShell: run starts ShellPath in the working directory, with
	// PWD set to it (os/exec does when Dir is set).
	runnerShell = runsIn{path: ShellPath}
)

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

// The --unasked modes of run and every hook: what goes without a
// proposal.
const (
	// UnaskedNothing: every command is a proposal.
	UnaskedNothing = "nothing"
	// UnaskedReadOnly: only what the judgement proves read-only goes
	// unasked.
	UnaskedReadOnly = "read-only"
	// UnaskedLow: everything judged low goes unasked (the default).
	UnaskedLow = "low"
)

// checkUnasked says what is wrong with mode ("" is UnaskedLow).
func checkUnasked(mode string) (string, error) {
	switch mode {
	case "":
		return UnaskedLow, nil
	case UnaskedNothing, UnaskedReadOnly, UnaskedLow:
		return mode, nil
	}
	return "", fmt.Errorf("bad --unasked %q (want nothing, read-only or low)", mode)
}

// unasked is the one rule for letting a command go without a proposal
// (run runs it; a hook passes it, or allows it under --low allow), under
// mode (--unasked): never under nothing; otherwise its level (pinned: the
// judgement's, or higher) is low, no rule of the pattern table matches it,
// under read-only the judgement proves it read-only, and its impact was
// previewed (m not nil) and asks for nothing (impact.Raise: not large,
// nothing live, nothing the preview could not see). A command whose preview
// could not be made, was cut short or left parts unknown is always asked,
// and so is one that would decide approvals (selfDecides: raised to high
// before this rule is asked). An unknown mode asks.
func unasked(mode string, level model.RiskLevel, j risk.Judgement, m *model.Impact) bool {
	switch mode {
	case "", UnaskedLow:
	case UnaskedReadOnly:
		if !j.ReadOnly {
			return false
		}
	default:
		return false
	}
	if level != model.RiskLow || j.Level != model.RiskLow || j.Hardline || len(j.Table.Matches) > 0 || m == nil {
		return false
	}
	raised, _ := impact.Raise(m)
	return raised == ""
}

// impactGrew computes rec's impact again, now, where and as it runs (in
// shell, with this process's environment, as preview did), within limit,
// and says how it exceeds the one its approval named (nothing when it did
// not grow, or when the proposal carries no preview). A directory that
// goes elsewhere now names targets the approval did not: they grew.
func impactGrew(ctx context.Context, rec *storage.Record, shell runsIn, limit time.Duration) []string {
	if rec.Impact == nil {
		return nil
	}
	now := preview(ctx, rec.Command, rec.Cwd, shell, limit)
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
