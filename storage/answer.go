package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// An agent that asks under its own request id (Hermes' request_id) is
// answered "approved" at most once per request id, whatever process asks
// and whichever proposal the request names: the answer is recorded, request
// id to approval id, decision and time, in the transaction that decides to
// give it, before it is given (RecordAnswer). A request whose id has an
// answer already is refused, and so is a proposal that answered a request
// already (an approval is one run): the refusal is audited.

// EventAnswer records an approved proposal's answer given to a requester
// for one of its request ids (reason "SOURCE: DECISION"), or, refused, an
// answer not given because the request id had one already.
const EventAnswer = "answer"

// RefusedAlreadyAnswered is the refusal code of AlreadyAnsweredError.
const RefusedAlreadyAnswered = "already_answered"

// Answer is one answer a requester is about to give.
type Answer struct {
	// Source names the requester whose request ids these are ("hermes").
	Source string
	// RequestID is the requester's id of the request answered.
	RequestID string
	// ApprovalID is the proposal that answers it: approved, its execution
	// not recorded yet.
	ApprovalID string
	// Command is the command the requester will run: the proposal's pinned
	// command, byte for byte.
	Command string
	// Decision is the answer given (e.g. "once").
	Decision string
}

// AnswerRecord is a recorded answer.
type AnswerRecord struct {
	Source, RequestID, ApprovalID, Decision, Actor string
	At                                             time.Time
}

// AlreadyAnsweredError: the request id was answered already, or the
// proposal answered another request already: Prior says which, when and
// how. Nothing was given this time.
type AlreadyAnsweredError struct {
	Source, RequestID string
	// ApprovalID is the proposal that asked now.
	ApprovalID string
	// Prior is the answer recorded before.
	Prior AnswerRecord
}

func (e *AlreadyAnsweredError) Error() string {
	if e.Prior.RequestID != e.RequestID {
		return fmt.Sprintf("proposal %s already answered %s request %s (%s at %s); an approval answers one request once",
			model.Sanitize(e.ApprovalID, model.Line), model.Sanitize(e.Prior.Source, model.Line), model.Sanitize(e.Prior.RequestID, model.Line),
			model.Sanitize(e.Prior.Decision, model.Line), e.Prior.At.UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%s request %s was already answered %s by %s at %s; an approval answers a request once",
		model.Sanitize(e.Source, model.Line), model.Sanitize(e.RequestID, model.Line), model.Sanitize(e.Prior.Decision, model.Line),
		model.Sanitize(e.Prior.ApprovalID, model.Line), e.Prior.At.UTC().Format(time.RFC3339Nano))
}

// maxAnswerField bounds the request id and the words kept.
const maxAnswerField = 200

// RecordAnswer records, through the one transition path, that a.ApprovalID
// answers a.Source's request a.RequestID with a.Decision, now. In the same
// transaction it checks that the proposal is approved (consumed), sound,
// pins a.Command and has no execution recorded, and that the request id
// has no answer yet; otherwise nothing is recorded and the refusal
// (AlreadyAnsweredError for an answered request id; InvalidTransitionError,
// CorruptError or ErrNotFound for the proposal) is audited and returned.
// Only after it returned nil may the answer be given.
func (st *Store) RecordAnswer(ctx context.Context, a Answer, actor model.Actor) error {
	s := st.bind()
	if a.Source == "" || a.RequestID == "" || a.Decision == "" || len(a.Source) > maxAnswerField ||
		len(a.RequestID) > maxAnswerField || len(a.Decision) > maxAnswerField {
		return fmt.Errorf("record answer: source, request id and decision must be 1 to %d bytes", maxAnswerField)
	}
	return s.run(ctx, transition{event: EventAnswer, id: a.ApprovalID, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		rec, err := s.scanRecord(s.ws.get.QueryRowContext(ctx, a.ApprovalID), s.now())
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		switch {
		case rec.Corrupt != "":
			return nil, &CorruptError{ID: a.ApprovalID, Reason: rec.Corrupt}
		case rec.Status != model.StatusConsumed:
			return nil, &InvalidTransitionError{ID: a.ApprovalID, Reason: "the proposal is " + string(rec.EffectiveStatus) + ", not approved: no answer to give"}
		case rec.ExecutionStatus != model.ExecNotStarted:
			return nil, &InvalidTransitionError{ID: a.ApprovalID, Reason: "its execution is recorded already (" + string(rec.ExecutionStatus) + "): answered before"}
		case rec.Command != a.Command:
			return nil, &InvalidTransitionError{ID: a.ApprovalID, Reason: "the command to answer for is not the pinned one"}
		}
		now := model.Epoch(s.now())
		res, err := s.w.ExecContext(ctx, `INSERT INTO approve_tui_answers (source, request_id, approval_id, decision, answered_at, actor)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			columnText(a.Source), columnText(a.RequestID), a.ApprovalID, columnText(a.Decision), now, columnText(actor.String()))
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n != 1 {
			prior, err := s.answerOf(ctx, s.w, `source = ? AND request_id = ?`, columnText(a.Source), columnText(a.RequestID))
			if errors.Is(err, ErrNotFound) {
				prior, err = s.answerOf(ctx, s.w, `approval_id = ?`, a.ApprovalID)
			}
			if err != nil {
				return nil, err
			}
			return nil, &AlreadyAnsweredError{Source: a.Source, RequestID: a.RequestID, ApprovalID: a.ApprovalID, Prior: *prior}
		}
		return []auditEntry{{id: a.ApprovalID, event: EventAnswer, outcome: OutcomeOK, reason: a.Source + ": " + a.Decision,
			detail: map[string]any{"source": a.Source, "request_id": a.RequestID, "decision": a.Decision}}}, nil
	}})
}

// AnswerOf reads the answer recorded for source's request requestID
// (ErrNotFound when there is none).
func (st *Store) AnswerOf(ctx context.Context, source, requestID string) (*AnswerRecord, error) {
	s := st.bind()
	a, err := s.answerOf(ctx, s.rdb, `source = ? AND request_id = ?`, columnText(source), columnText(requestID))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, s.classify("answer", err)
	}
	return a, err
}

// answerOf reads the one answer where says (a condition on a unique key).
func (s bound) answerOf(ctx context.Context, q querier, where string, args ...any) (*AnswerRecord, error) {
	a := &AnswerRecord{}
	var at float64
	err := q.QueryRowContext(ctx, `SELECT source, request_id, approval_id, decision, answered_at, actor FROM approve_tui_answers WHERE `+where,
		args...).Scan(&a.Source, &a.RequestID, &a.ApprovalID, &a.Decision, &at, &a.Actor)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	a.At = model.FromEpoch(at)
	return a, nil
}
