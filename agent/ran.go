package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Post-run reports: an agent says, after the fact, that it ran a call
// (Claude Code's PostToolUse and PostToolUseFailure, Codex's PostToolUse,
// Gemini CLI's AfterTool). The hook ties the report to the proposal of
// that call and records what happened: executed for an approved one,
// ran_without_approval for one that was not (pending, parked, denied or
// expired). It never guesses: a report that could be more than one
// proposal's records nothing.

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
	ids := ""
	for i, r := range found {
		if i > 0 {
			ids += ", "
		}
		ids += model.Sanitize(r.ApprovalID, model.Line)
	}
	h.logf("warning: %s reported a call as run (%s) that could be any of %d proposals (%s): nothing is recorded, since its report names no call id",
		agentNames[h.p.agent], c.outcomeReason, len(found), ids)
	return nil, ""
}

// reportable: a proposal found by its call's match that a report of the
// call may be about. Nothing run is recorded on it yet, and it is either
// open (its agent ran it without waiting for a decision) or approved and
// let through: an approved proposal still parked for its retry (its waiter
// stopped, nobody took the approval) let nothing through yet. A denied or
// expired one is left alone: its hook answered deny (the agent did not run
// it), or it was closed already, and the report may be another call's.
func reportable(r *storage.Record) bool {
	if r.ExecutionStatus != model.ExecNotStarted {
		return false
	}
	switch {
	case r.EffectiveStatus.Open():
		return true
	case r.Status == model.StatusConsumed:
		return r.Park == nil || r.Park.TakenBy != "" || r.Park.StoppedAt == 0
	}
	return false
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
