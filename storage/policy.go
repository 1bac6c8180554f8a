package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
)

// EventPolicy is the audit event of a command that an agent-side surface
// (the runner, the Claude Code hook) decided by policy alone, without a
// proposal: allowed because no rule matched it, or refused because a
// hardline rule matched it (Hermes never runs those, so they are never
// submitted), and then what became of an allowed command. Such events change
// no gateway_approvals row; their approval_id is a synthetic reference,
// PolicyRefPrefix and a fresh id, shared by the events of one command.
const EventPolicy = "policy"

// PolicyRefPrefix starts the synthetic reference of policy events, so that
// it reads as no proposal's id.
const PolicyRefPrefix = "policy-"

// Decisions and outcomes that RecordPolicy records (the event's reason).
const (
	// PolicyAllow: allowed without approval (no rule matched); recorded
	// before the command is started.
	PolicyAllow = "allow"
	// PolicyDeny: refused without a proposal (a hardline rule matched).
	PolicyDeny = "deny"
	// PolicyExecuted: an allowed command ran; the reason carries its exit
	// code. Recorded after it ended.
	PolicyExecuted = "executed"
	// PolicyDispatchFailed: an allowed command could not be started.
	PolicyDispatchFailed = "dispatch_failed"
)

// maxPolicyCommand bounds the command text kept in a policy event (its
// SHA-256 is always kept, over the exact bytes).
const maxPolicyCommand = 4096

// PolicyRecord is one policy event.
type PolicyRecord struct {
	// Ref groups the events of one command; RecordPolicy draws one
	// (PolicyRefPrefix + a fresh id) when it is empty, and sets it.
	Ref string
	// Decision is one of PolicyAllow, PolicyDeny, PolicyExecuted,
	// PolicyDispatchFailed.
	Decision string
	// Reason says why (the rule that matched, the exit code, the error).
	Reason string
	// Command is the command, exactly; what it ran in and for whom.
	Command    string
	Cwd        string
	SessionKey string
	Requester  string
	// Risk is the classifier's level for the command.
	Risk model.RiskLevel
}

// RecordPolicy appends one policy event to the audit log, through the one
// transition path (so a read-only actor or store is refused, and the event
// joins the hash chain). It changes nothing else. An allow is refused with
// *PolicyAsksError, and nothing recorded, when a rule of the policy in
// force (read in the same transaction) matches the command: it must be
// asked.
func (st *Store) RecordPolicy(ctx context.Context, r *PolicyRecord, actor model.Actor) error {
	s := st.bind()
	switch r.Decision {
	case PolicyAllow, PolicyDeny, PolicyExecuted, PolicyDispatchFailed:
	default:
		return fmt.Errorf("record policy: %q is not a policy decision or outcome", r.Decision)
	}
	if r.Command == "" {
		return fmt.Errorf("record policy: the command is empty")
	}
	if r.Ref == "" {
		r.Ref = PolicyRefPrefix + model.NewID()
	} else if !strings.HasPrefix(r.Ref, PolicyRefPrefix) {
		return fmt.Errorf("record policy: reference %q does not start with %q", r.Ref, PolicyRefPrefix)
	}
	detail := map[string]any{"command_sha256": sha256Hex([]byte(r.Command))}
	if r.Decision == PolicyAllow || r.Decision == PolicyDeny {
		// The first event of a command says what it was; later ones link to
		// it by reference and hash.
		cmd := r.Command
		if len(cmd) > maxPolicyCommand {
			cmd = cmd[:maxPolicyCommand]
			detail["command_truncated"] = true
		}
		detail["command"] = cmd
		detail["risk"] = string(r.Risk)
		for k, v := range map[string]string{"cwd": r.Cwd, "session": r.SessionKey, "requester": r.Requester} {
			if v != "" {
				detail[k] = v
			}
		}
	}
	if r.Reason != "" {
		detail["reason"] = r.Reason
	}
	ref := r.Ref
	return s.run(ctx, transition{event: EventPolicy, id: ref, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		if r.Decision == PolicyAllow {
			// A rule of the policy in force binds the command whatever its
			// risk: it is not allowed unasked (nothing is recorded).
			if err := s.policyAsks(ctx, s.w, r); err != nil {
				return nil, err
			}
		}
		return []auditEntry{{id: ref, event: EventPolicy, outcome: OutcomeOK, reason: r.Decision, detail: detail}}, nil
	}})
}

// PolicyAsksError: the policy in force has rules that match a command a
// surface would let go without a proposal (the classifier finds nothing
// in it). A rule binds whatever the risk: the command must be asked.
type PolicyAsksError struct {
	// Version is the policy version in force.
	Version int64
	// Rules say which rules match and why: `rule 2 (line 5): the command
	// matches "terraform apply*"`.
	Rules []string
	// Needs is what the rules ask, in words ("2 approvers").
	Needs string
}

func (e *PolicyAsksError) Error() string {
	return fmt.Sprintf("policy v%d asks for approval (%s): %s", e.Version, e.Needs, strings.Join(e.Rules, "; "))
}

// policySubject is what the policy's rules see of a command decided
// without a proposal.
func policySubject(j *judging, r *PolicyRecord) policy.Subject {
	v := classifyCommand(j, r.Cwd, r.Command)
	return policy.Subject{Risk: model.MaxRisk(r.Risk.Normalized(), v.level), Session: r.SessionKey, Requester: r.Requester,
		Command: r.Command, Patterns: v.patterns, Effects: v.effects}
}

// policyAsks reads the policy in force through q and says whether its
// rules ask for r's command to be approved (*PolicyAsksError); a policy
// that cannot be read refuses (RefusedPolicyUnreadable).
func (s bound) policyAsks(ctx context.Context, q policyQuerier, r *PolicyRecord) error {
	pv, err := s.readPolicyInForce(ctx, q)
	if err != nil || pv == nil {
		return err
	}
	return policyVerdict(pv, s.judge, r)
}

// policyVerdict says whether the rules of pv ask for r's command to be
// approved (*PolicyAsksError), nil when none matches.
func policyVerdict(pv *PolicyVersion, j *judging, r *PolicyRecord) error {
	subj := policySubject(j, r)
	verdicts, req := pv.Policy.Explain(subj)
	if !req.Ruled() {
		return nil
	}
	e := &PolicyAsksError{Version: pv.Version, Needs: req.Describe()}
	for _, v := range verdicts {
		if !v.Matches {
			continue
		}
		rule := pv.Policy.Rules[v.Rule]
		name := fmt.Sprintf("rule %d", v.Rule+1)
		if rule.Line > 0 {
			name += fmt.Sprintf(" (line %d)", rule.Line)
		}
		e.Rules = append(e.Rules, name+": "+strings.Join(v.Why, ", "))
	}
	return e
}

// PolicyAsks says whether the policy in force asks for r's command to be
// approved: a *PolicyAsksError naming the rules when it does, nil when no
// rule matches (or no policy was ever set). A surface about to let a
// command go without a proposal asks first; RecordPolicy asks again, in the
// transaction that records an allow.
func (st *Store) PolicyAsks(ctx context.Context, r *PolicyRecord) error {
	s := st.bind()
	pv, err := s.readPolicyOnce(ctx)
	if err == nil && pv != nil {
		err = policyVerdict(pv, s.judge, r)
	}
	var asks *PolicyAsksError
	var rf *RefusedError
	switch {
	case err == nil, errors.As(err, &asks), errors.As(err, &rf):
		return err
	case s.eng.noTable(err):
		return nil // a file not migrated yet (opened read-only): no policy
	}
	return s.classify("policy", err)
}

// readPolicyOnce reads the policy in force for a single check. On SQLite
// (readsOnIdleWriter), a
// process that has no reader connection open yet (a hook: it opens the
// store, reads the policy once and exits) reads it on the writer
// connection it has open already, under the writer mutex and outside any
// transaction: the same committed state a reader would see, without a
// second connection that would open the file and parse its schema again.
// A process that reads through the pool already (the console, serve)
// keeps reading there, and the writer stays free for its writes.
func (s bound) readPolicyOnce(ctx context.Context) (*PolicyVersion, error) {
	if !s.eng.readsOnIdleWriter() || s.w == nil || s.rdb.Stats().OpenConnections > 0 {
		return s.readPolicyInForce(ctx, s.rdb)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.readPolicyInForce(ctx, s.w)
}
