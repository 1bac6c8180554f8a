package storage

import (
	"context"

	"github.com/approve-tui/approve-tui/model"
)

// An agent that stops waiting for its hook (it signals the hook at its own
// hook timeout, or runs the command without waiting for it) leaves a
// proposal nobody decided, whose command the agent may have run under its
// own rules. Abandon ends such a proposal as expired, not denied: nobody
// denied it, and approving it now would run nothing. Its reason says what
// is known.

// DetailAbandoned is the expire event's detail key that holds why its
// proposal was abandoned (its requester stopped waiting).
const DetailAbandoned = "abandoned"

// Abandon ends pending proposal id as expired because its requester
// stopped waiting for a decision; reason (required) says what is known of
// the command's fate. It is audited as an expire event with the reason
// under DetailAbandoned, in the same transaction. A proposal that is no
// longer pending is refused with a *NotPendingError.
func (st *Store) Abandon(ctx context.Context, id, reason string, actor model.Actor) (*Record, error) {
	s := st.bind()
	if reason == "" {
		reason = "its requester stopped waiting"
	}
	var out *Record
	err := s.run(ctx, transition{event: EventExpire, id: id, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		rec, err := s.pendingRow(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := s.decide(ctx, rec, model.StatusExpired, actor); err != nil {
			return nil, err
		}
		if _, err := s.endVotes(ctx, id, VoteExpired); err != nil {
			return nil, err
		}
		out = rec
		d := map[string]any{DetailAbandoned: reason}
		if rec.ExpiresAt != nil {
			d["expires_at"] = *rec.ExpiresAt
		}
		return []auditEntry{{id: id, event: EventExpire, outcome: OutcomeOK, reason: "abandoned", detail: d}}, nil
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AbandonReason is why proposal id was abandoned (Abandon), "" when it was
// not.
func (st *Store) AbandonReason(ctx context.Context, id string) (string, error) {
	evs, err := st.Audit(ctx, AuditQuery{ApprovalID: id, Limit: 20})
	if err != nil {
		return "", err
	}
	for _, e := range evs {
		if e.Event == EventExpire && e.Outcome == OutcomeOK {
			r, _ := e.Detail[DetailAbandoned].(string)
			return r, nil
		}
	}
	return "", nil
}
