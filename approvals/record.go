package approvals

import (
	"context"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// Proposal is what a surface shows of one proposal: its record, who waits
// on it, where it stands against the policy and who signed its decisions.
type Proposal struct {
	*storage.Record
	Waiter storage.WaiterStatus
	// Quorum and Signers are nil until read (Read reads them, Get does
	// not).
	Quorum  *Quorum
	Signers []Signer
}

// Get reads proposal id and who waits on it. An expired proposal that was
// abandoned (its agent stopped waiting, storage.Abandon) and whose row
// says no terminal reason gets its audited reason ("abandoned: ...").
func Get(ctx context.Context, s *storage.Store, id string) (*Proposal, error) {
	rec, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	ws, err := s.WaiterState(ctx, id)
	if err != nil {
		return nil, err
	}
	abandoned(ctx, s, rec)
	return &Proposal{Record: rec, Waiter: ws}, nil
}

// Read is Get, then where the proposal stands against the policy (every
// vote cast on it) and the signatures kept for its decisions, checked.
func Read(ctx context.Context, s *storage.Store, id string) (*Proposal, error) {
	p, err := Get(ctx, s, id)
	if err != nil {
		return nil, err
	}
	if p.Quorum, err = ReadQuorum(ctx, s, p.Record); err != nil {
		return nil, err
	}
	if p.Signers, err = Signers(ctx, s, p.Record); err != nil {
		return nil, err
	}
	return p, nil
}

// abandoned gives an expired proposal that was abandoned its reason as the
// terminal reason shown, from its audited expire event, when the row has
// none of its own.
func abandoned(ctx context.Context, s *storage.Store, rec *storage.Record) {
	if rec.EffectiveStatus != model.StatusExpired || rec.TerminalReason != "" {
		return
	}
	if rec.ExecutionStatus == model.ExecRanWithoutApproval {
		rec.TerminalReason = "closed: its agent reported running the command without approval"
		return
	}
	if r, err := s.AbandonReason(ctx, rec.ApprovalID); err == nil && r != "" {
		rec.TerminalReason = "abandoned: " + r
	}
}

// RecordJSON is a proposal as --json prints it: every payload key of the
// data contract in Hermes' order, with status and risk_level the effective
// values, then what the reader concluded. waiter is nil where it was not
// read (list).
func RecordJSON(rec *storage.Record, waiter *storage.WaiterStatus) *model.JSONObject {
	p := &rec.Proposal
	eff := *p
	eff.Status, eff.RiskLevel = rec.EffectiveStatus, rec.EffectiveRisk
	o := model.PayloadObject(&eff).
		Str("stored_status", string(p.Status)).
		Str("pinned_risk_level", string(p.RiskLevel)).
		Str("classifier_risk_level", string(rec.ClassifierRisk))
	matches := risk.Classify(p.Command).Matches
	ms := make([]string, len(matches))
	for i, m := range matches {
		ms[i] = model.NewJSONObject().Str("kind", m.Kind).Str("level", string(m.Level)).Str("description", m.Description).String()
	}
	o.Str("terminal_reason", p.TerminalReason).Str("approval_event_id", p.ApprovalEventID).
		Int("invalid_attempts", int64(p.InvalidAttempts))
	if p.ApprovalEventTsMs != nil {
		o.Int("approval_event_ts_ms", *p.ApprovalEventTsMs)
	} else {
		o.Raw("approval_event_ts_ms", "null")
	}
	if p.RequiresTextConfirm {
		o.Str("phrase", p.Phrase())
	}
	o.Raw("classifier_matches", "["+strings.Join(ms, ", ")+"]").
		Bool("hardline", rec.Hardline).
		Str("payload_sha256", rec.PayloadSHA256).
		Bool("suspicious", rec.Suspicious()).
		Strs("findings", rec.Findings).
		Str("corrupt", rec.Corrupt)
	if rec.Tampered != "" {
		o.Str("tampered", rec.Tampered)
	}
	if p.Impact != nil {
		o.Obj("impact", model.ImpactJSON(p.Impact))
	}
	if waiter != nil {
		o.Obj("waiter", WaiterJSON(*waiter))
		if run := storage.JudgeRun(rec, *waiter); run != storage.RunNone {
			o.Str("run", string(run))
		}
	}
	return o
}

// RiskBanner is what is said above a proposal whose effective risk is
// high or above, in form f; "" below that. Text: high, tier-2 and unknown
// (which ranks above both). Console: high and unknown; a tier-2 proposal
// has its own lines there (the phrase to type, the attempts left).
func RiskBanner(rec *storage.Record, f Form) string {
	r := rec.EffectiveRisk
	if r.Rank() < model.RiskHigh.Rank() || f == Console && r == model.RiskTier2 {
		return ""
	}
	return "HIGH RISK — default: deny"
}
