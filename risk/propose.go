package risk

import (
	"fmt"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// PolicyVersion is what approve-tui pins as policy_version.
const PolicyVersion = "approve-tui/1"

// NoMatchReason is the risk reason of a command no rule matches.
const NoMatchReason = "no dangerous pattern matched"

// Draft is what a surface knows about a command it wants approved. Every
// surface that submits (the CLI, the runner, the Claude Code hook, the demo
// agent) builds its proposal from one with Propose, so that risk is pinned
// the same way everywhere.
type Draft struct {
	Command     string
	SessionKey  string
	Requester   string
	Cwd         string
	Backend     string
	Env         map[string]string
	DiffText    string
	DiffSummary string
	DisplayText string
	// Raise may only raise the classifier's level ("" keeps it).
	Raise model.RiskLevel
	// RaiseWhy says who or what raised it ("": the submitter).
	RaiseWhy string
	// Notes are the submitting surface's own remarks on the verdict (a
	// shell the rules do not cover, a background call): added to the
	// reason, which they are part of.
	Notes string
	// Context is the requester's own words about the command (a hook's
	// tool description, --reason): kept apart from the classifier's
	// reason (Proposal.RequesterContext), so that they never read as part
	// of the verdict.
	Context string
	// Hermes is what Hermes' approval transport said of the request
	// (Proposal.Hermes), for a proposal of `hook hermes`.
	Hermes *model.HermesRequest
	// Origin is the submitting process's user and host (Proposal.Origin).
	Origin string
	// Impact is the command's impact preview (Proposal.Impact).
	Impact *model.Impact
	// TTL until expiry (0: never expires).
	TTL time.Duration
	// ID is the approval id ("" draws a new one).
	ID string
	// Judging is what the judgement knows besides the command: the
	// operator's sensitive paths and programs and the surface's own files
	// (config.RiskContext). Its Cwd is ignored: Cwd above is the
	// workspace.
	Judging Context
}

// JudgeContext is d's context for Judge: d.Judging in d.Cwd.
func (d Draft) JudgeContext() Context {
	c := d.Judging
	c.Cwd = d.Cwd
	return c
}

// LowerRiskError: a draft asked to lower the pattern table's risk.
type LowerRiskError struct{ Asked, Classified model.RiskLevel }

func (e *LowerRiskError) Error() string {
	return fmt.Sprintf("risk %s would lower the classifier's %s: risk may only be raised", e.Asked, e.Classified)
}

// Propose judges d.Command in d's context (Judge) and pins the judgement
// into a new, valid, pending proposal created at now. Risk and reason come
// from the judgement; Raise may only raise them: a Raise below the pattern
// table's level is refused (*LowerRiskError), one at or below the
// judgement's level changes nothing. High risk always defaults to deny.
func Propose(d Draft, now time.Time) (*model.Proposal, Judgement, error) {
	v := Judge(d.Command, d.JudgeContext())
	level := v.Level
	var reason []string
	if r := v.Reason(); r != "" {
		reason = append(reason, r)
	} else {
		reason = append(reason, NoMatchReason)
	}
	if d.Notes != "" {
		reason = append(reason, d.Notes)
	}
	if d.Raise != "" {
		if !d.Raise.Valid() {
			return nil, v, fmt.Errorf("risk %q is not one of low, medium, high", d.Raise)
		}
		if d.Raise.Rank() < v.Table.Level.Rank() {
			return nil, v, &LowerRiskError{Asked: d.Raise, Classified: v.Table.Level}
		}
		if d.Raise.Rank() > level.Rank() {
			why := "by the submitter"
			if d.RaiseWhy != "" {
				why = d.RaiseWhy
			}
			reason = append(reason, fmt.Sprintf("raised from %s to %s %s", level, d.Raise, why))
			level = d.Raise
		}
	}
	id := d.ID
	if id == "" {
		id = model.NewID()
	}
	p := &model.Proposal{
		ApprovalID:               id,
		CreatedAt:                model.Epoch(now),
		Status:                   model.StatusPending,
		SessionKey:               d.SessionKey,
		Requester:                d.Requester,
		Command:                  d.Command,
		Cwd:                      d.Cwd,
		Backend:                  d.Backend,
		EnvOverrides:             d.Env,
		RiskLevel:                level,
		RiskReason:               strings.Join(reason, "; "),
		PolicyDecision:           model.PolicyNeedsApproval,
		PolicyVersion:            PolicyVersion,
		RequiresExplicitApproval: true,
		DefaultDecision:          model.DefaultDeny,
		DiffText:                 d.DiffText,
		DiffSummary:              d.DiffSummary,
		DisplayText:              d.DisplayText,
		ExecutionStatus:          model.ExecNotStarted,
		RequesterContext:         d.Context,
		Hermes:                   d.Hermes,
		Origin:                   d.Origin,
		Impact:                   d.Impact,
	}
	if d.TTL > 0 {
		p.ExpiresAt = model.F64(model.Epoch(now.Add(d.TTL)))
	}
	return p, v, p.Validate()
}
