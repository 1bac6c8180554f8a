package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Post-run reports: an agent says, after the fact, that it ran a call
// (Claude Code's PostToolUse and PostToolUseFailure, Codex's PostToolUse,
// Gemini CLI's AfterTool). The hook ties the report to the proposal of
// that call and records what happened: executed for an approved one,
// ran_without_approval for one that was not (pending, parked, denied or
// expired; or approved, with the approval taken by no call). It never
// guesses: a report that could be more than one proposal's records no
// execution, only a report event on each (ambiguousRun).

// matchCandidates bounds the proposals read for a report tied by its
// call's match: more than one usable is "could be more than one" already.
const matchCandidates = 8

// postTie says how a report was tied to its proposal, in the reason.
const (
	tieByID    = "tied to the proposal by its call id"
	tieByMatch = "tied to the proposal by its requester, session, command and directory"
)

// namesCalls: agent's post-run reports name the call (tool_use_id), so a
// report without one is not tied at all.
func namesCalls(agent Agent) bool { return agent == AgentClaudeCode || agent == AgentCodex }

// callMatch is the call c as the store matches it (model.Match).
func (h *hook) callMatch(c *hookCall) model.Match {
	return model.Match{Requester: h.p.requester, SessionKey: h.session(c), Command: *c.command, Cwd: c.cwd}
}

// reportedCall finds the proposal of the call c reports as run: by its id
// when the agent names the call (Claude Code, Codex); else, or when no
// proposal has that id (a retry that resumed a parked proposal made under
// another call's id), by the call's match. rec is nil when the report is
// not tied to exactly one proposal of this hook; how says how it was tied.
func (h *hook) reportedCall(ctx context.Context, s *storage.Store, c *hookCall) (rec *storage.Record, how string) {
	if id := h.id(c); id != "" {
		r, err := s.Get(ctx, id)
		switch {
		case err == nil && r.SessionKey != h.session(c):
			return nil, "" // another session's id: not this hook's call
		case err == nil:
			return r, tieByID
		case !errors.Is(err, storage.ErrNotFound):
			h.logf("warning: cannot read proposal %s to record the report of its call: %v", id, err)
			return nil, ""
		}
	}
	recs, err := s.ProposalsOfMatch(ctx, h.callMatch(c), matchCandidates)
	if err != nil {
		h.logf("warning: cannot look up the proposal of a call %s reported as run: %v", agentNames[h.p.agent], err)
		return nil, ""
	}
	var found []*storage.Record
	for _, r := range recs {
		if c.key != "" && (r.Park == nil || r.Park.StoppedAt == 0) {
			// The agent names its calls: another call's proposal is this
			// one's only if this call resumed it, after its own waiter
			// stopped (parked).
			continue
		}
		if reportable(r) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return nil, "" // not a call the hook asked about (low risk), or recorded already
	case 1:
		return found[0], tieByMatch
	}
	h.ambiguousRun(ctx, s, c, found)
	return nil, ""
}

// ambiguousRun: the report of call c could be any of found (the same call
// asked more than once, and the agent names no call: Gemini CLI). No
// execution is recorded, since which one ran is not known, and none is
// closed, since the others may not have run (a hook that answered its
// parked deny); each gets a report event saying that a run of this exact
// call was reported which may be its own, so that an operator who reads
// it before approving knows that the command may have run already. An
// approval of one of them still lets one call through, once: the call
// asked again, which the operator approves knowing this.
func (h *hook) ambiguousRun(ctx context.Context, s *storage.Store, c *hookCall, found []*storage.Record) {
	who := agentNames[h.p.agent]
	ids := make([]string, 0, len(found))
	for _, r := range found {
		ids = append(ids, model.Sanitize(r.ApprovalID, model.Line))
	}
	list := strings.Join(ids, ", ")
	h.logf("warning: %s reported a call as run (%s) that could be any of %d proposals (%s): no execution is recorded, since its report names no call id; each gets a report that it may have run",
		who, c.outcomeReason, len(found), list)
	what := fmt.Sprintf("reported a run of this exact call (%s) that could be this proposal's or another's of the same call (%d in all): it may have run already", c.outcome, len(found))
	for _, r := range found {
		if err := s.RecordReport(ctx, r.ApprovalID, h.p.requester, what, map[string]any{"candidates": ids, "outcome": string(c.outcome)}, h.o.Actor); err != nil {
			h.logf("warning: could not record on %s that its call may have run: %v", model.Sanitize(r.ApprovalID, model.Line), err)
		}
	}
}

// reportable: a proposal found by its call's match that a report of the
// call may be about. Nothing run is recorded on it yet, and it is either
// open (its agent ran it without waiting for a decision) or approved: let
// through (its approval taken), or not (parked or reserved, its approval
// taken by no call: the call ran without it, approvedParked). A denied or
// expired one is left alone: its hook answered deny (the agent did not run
// it), or it was closed already, and the report may be another call's.
func reportable(r *storage.Record) bool {
	if r.ExecutionStatus != model.ExecNotStarted {
		return false
	}
	return r.EffectiveStatus.Open() || r.Status == model.StatusConsumed
}

// approvedParked: rec is approved, nothing run recorded, and it has a
// parks row. Every allow of such a proposal takes the approval first
// (takeParked), its own waiter's included, so a call of it reported as run
// either took it or ran without it (its waiter had stopped, or was killed,
// before the approval came, and the agent ran it under its own rules):
// which one, RecordRanWithoutApproval decides from the verified audit log,
// not from the row (whose taken_by the agent can write).
func approvedParked(rec *storage.Record) bool {
	return rec.Status == model.StatusConsumed && rec.ExecutionStatus == model.ExecNotStarted && rec.Park != nil
}

// ranUnapprovedReason is the execution reason of a call c reports as run
// whose proposal rec was not approved: what the agent reported, in the
// hook's words (nothing of the agent's own output is kept: it is hostile
// and may hold secrets), what the proposal was, and how it was tied.
func (h *hook) ranUnapprovedReason(rec *storage.Record, c *hookCall, how string, otherCommand bool) string {
	who := agentNames[h.p.agent]
	was := string(rec.EffectiveStatus)
	if rec.Park != nil && rec.Park.StoppedAt > 0 && rec.EffectiveStatus.Open() {
		was = "parked (its waiter stopped at " + time.Unix(int64(rec.Park.StoppedAt), 0).UTC().Format("15:04") + " UTC)"
	} else if rec.EffectiveStatus.Open() {
		was = "pending"
	}
	what := fmt.Sprintf("%s reported the call as run (%s: %s) while its proposal was %s, not approved", who, c.outcome, c.outcomeReason, was)
	if approvedParked(rec) {
		// Used only where the store recorded it as run without approval.
		stopped := "its waiter had not answered with it"
		if rec.Park.StoppedAt > 0 {
			stopped = "its waiter had stopped at " + time.Unix(int64(rec.Park.StoppedAt), 0).UTC().Format("15:04") + " UTC"
		}
		what = fmt.Sprintf("%s reported the call as run (%s: %s) while its proposal's approval had reached no call (%s, and no call asked again had taken it): not approved for this run, which went ahead without it; the approval is closed",
			who, c.outcome, c.outcomeReason, stopped)
	}
	if otherCommand {
		what += ", and with another command than the one proposed (its input was changed)"
	}
	return what + "; " + how + " (so says the agent's report after the call, which any process of this user can also send)"
}

// recordRanUnapproved records, in the store's one transaction, that the
// call of proposal rec ran without approval (an open proposal is closed
// expired with it, so nobody approves a call that ran); a second report,
// or a proposal approved meanwhile, is left as the store has it.
func (h *hook) recordRanUnapproved(ctx context.Context, s *storage.Store, rec *storage.Record, reason string) {
	_, err := s.RecordRanWithoutApproval(ctx, rec.ApprovalID, reason, h.o.Actor)
	var it *storage.InvalidTransitionError
	switch {
	case err == nil:
		h.logf("warning: %s: %s", model.Sanitize(rec.ApprovalID, model.Line), reason)
	case errors.As(err, &it):
		h.logf("%s: the report of its call as run is not recorded: %v", model.Sanitize(rec.ApprovalID, model.Line), err)
	default:
		h.logf("warning: could not record that %s ran without approval: %v", model.Sanitize(rec.ApprovalID, model.Line), err)
	}
}
