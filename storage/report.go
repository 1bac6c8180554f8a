package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/approve-tui/approve-tui/model"
)

// EventReport records what a requester reported of a proposal after it
// answered (Hermes' post_approval_response: the choice Hermes accepted, or
// its transport failure). Its reason is "SOURCE: WHAT"; it changes no
// state.
const EventReport = "report"

// maxReport bounds the reported words kept.
const maxReport = 200

// RecordReport appends a report event on proposal id, through the one
// transition path (joining the hash chain; refused for a read-only actor
// or store, and for a proposal that does not exist). source names who
// reported (e.g. "hermes"), what is the report, detail any more of it.
func (st *Store) RecordReport(ctx context.Context, id, source, what string, detail map[string]any, actor model.Actor) error {
	s := st.bind()
	if source == "" || what == "" {
		return fmt.Errorf("record report: source and report must not be empty")
	}
	if len(what) > maxReport {
		what = what[:maxReport]
	}
	return s.run(ctx, transition{event: EventReport, id: id, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		if _, err := s.scanRecord(s.ws.get.QueryRowContext(ctx, id), s.now()); errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		} else if err != nil {
			return nil, err
		}
		d := map[string]any{"source": source}
		for k, v := range detail {
			d[k] = v
		}
		return []auditEntry{{id: id, event: EventReport, outcome: OutcomeOK, reason: strings.ToLower(source) + ": " + what, detail: d}}, nil
	}})
}
