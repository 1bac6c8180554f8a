package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/approve-tui/approve-tui/model"
)

// The audit log is append-only and hash-chained: every event stores the hash
// of the one before it and its own hash over all its fields, and the meta
// row audit_head holds the last seq and hash (so a deleted tail is noticed
// too). VerifyAudit recomputes the chain and names the first broken event.

// genesisHash is the prev_hash of the first event.
var genesisHash = strings.Repeat("0", 64)

// AuditEvent is one row of the audit log.
type AuditEvent struct {
	Seq        int64          `json:"seq"`
	At         float64        `json:"at"`
	ApprovalID string         `json:"approval_id"`
	Event      string         `json:"event"`
	Outcome    string         `json:"outcome"`
	Reason     string         `json:"reason,omitempty"`
	Actor      string         `json:"actor"`
	Surface    string         `json:"surface"`
	Detail     map[string]any `json:"detail,omitempty"`
	DetailRaw  string         `json:"-"`
	PrevHash   string         `json:"prev_hash"`
	Hash       string         `json:"hash"`
	// Outside: not an event of the chain but a decision the table records
	// that approve-tui did not make (OutsideDecisions).
	Outside bool `json:"outside_chain,omitempty"`
}

// DetailItem is one key of an event's detail, and its value.
type DetailItem struct {
	Key   string
	Value any
}

// Text is the value as text: a string as it is, anything else as its JSON.
// It is the file's: hostile until sanitised.
func (d DetailItem) Text() string {
	if s, ok := d.Value.(string); ok {
		return s
	}
	b, _ := json.Marshal(d.Value)
	return string(b)
}

// DetailItems is the event's detail, its keys in order (nil when the
// detail is not a JSON object: DetailRaw holds it as stored).
func (e *AuditEvent) DetailItems() []DetailItem {
	keys := make([]string, 0, len(e.Detail))
	for k := range e.Detail {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	items := make([]DetailItem, len(keys))
	for i, k := range keys {
		items[i] = DetailItem{Key: k, Value: e.Detail[k]}
	}
	return items
}

// eventHash is the chain's hash of one event: SHA-256 over every field,
// each length-prefixed (8 bytes, big-endian) so no two events share an
// encoding. The fields are laid out in one buffer and hashed at once.
func eventHash(e *AuditEvent) string {
	var buf [640]byte
	var num [32]byte
	b := buf[:0]
	b = appendHashField(b, strconv.AppendInt(num[:0], e.Seq, 10))
	b = appendHashField(b, strconv.AppendFloat(num[:0], e.At, 'g', -1, 64))
	b = appendHashField(b, e.ApprovalID)
	b = appendHashField(b, e.Event)
	b = appendHashField(b, e.Outcome)
	b = appendHashField(b, e.Reason)
	b = appendHashField(b, e.Actor)
	b = appendHashField(b, e.Surface)
	b = appendHashField(b, e.DetailRaw)
	b = appendHashField(b, e.PrevHash)
	sum := sha256.Sum256(b)
	var out [64]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

func appendHashField[T string | []byte](b []byte, s T) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendAudit adds one event inside the current write transaction.
func (s bound) appendAudit(ctx context.Context, e auditEntry, actor model.Actor) error {
	return s.appendAudits(ctx, []auditEntry{e}, actor)
}

// auditBatch is how many events one INSERT carries.
const auditBatch = 100

// appendAudits adds events, in order, inside the current write transaction:
// the chain's head is read (and locked, on PostgreSQL) once, each event's
// hash links it to the one before, the rows go in a batch per statement,
// and the head is written once, naming the last. An expiry of a hundred
// thousand rows is one head update, not a hundred thousand.
func (s bound) appendAudits(ctx context.Context, entries []auditEntry, actor model.Actor) error {
	if len(entries) == 0 {
		return nil
	}
	seq, prev := int64(0), genesisHash
	var head string
	headFound := false
	switch err := s.ws.auditHead.QueryRowContext(ctx).Scan(&head); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		headFound = true
		var perr error
		seq, prev, perr = parseHead(head)
		if perr != nil {
			return perr
		}
	}
	at := model.Epoch(s.now())
	name, surface := columnText(actor.Name), columnText(string(actor.Surface))
	rows := make([]any, 0, min(len(entries), auditBatch)*11)
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		var err error
		switch len(rows) {
		case 11:
			_, err = s.ws.auditInsert.ExecContext(ctx, rows...)
		case auditBatch * 11:
			_, err = s.ws.auditInsertBatch.ExecContext(ctx, rows...)
		default:
			_, err = s.w.ExecContext(ctx, `INSERT INTO approve_tui_audit (seq, at, approval_id, event, outcome, reason, actor,
				surface, detail, prev_hash, hash) VALUES `+strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", len(rows)/11), ", "),
				rows...)
		}
		rows = rows[:0]
		return err
	}
	for _, e := range entries {
		if actor.Detail != "" {
			if e.detail == nil {
				e.detail = map[string]any{}
			}
			e.detail["actor_detail"] = actor.Detail
		}
		detail, err := encodeDetail(e.detail)
		if err != nil {
			return err
		}
		seq++
		ev := AuditEvent{
			Seq: seq, At: at, ApprovalID: e.id, Event: e.event, Outcome: e.outcome,
			Reason: e.reason, Actor: name, Surface: surface, DetailRaw: detail, PrevHash: prev,
		}
		ev.Hash = eventHash(&ev)
		prev = ev.Hash
		rows = append(rows, ev.Seq, ev.At, ev.ApprovalID, ev.Event, ev.Outcome, ev.Reason,
			ev.Actor, ev.Surface, ev.DetailRaw, ev.PrevHash, ev.Hash)
		if len(rows) == auditBatch*11 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	head = strconv.FormatInt(seq, 10) + ":" + prev
	if !headFound {
		_, err := s.ws.metaPut.ExecContext(ctx, "audit_head", head)
		return err
	}
	res, err := s.ws.headPut.ExecContext(ctx, head)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("the audit head changed underneath (%d rows updated)", n)
	}
	return nil
}

func parseHead(v string) (int64, string, error) {
	seqStr, hash, ok := strings.Cut(v, ":")
	seq, err := strconv.ParseInt(seqStr, 10, 64)
	if !ok || err != nil || len(hash) != 64 {
		return 0, "", fmt.Errorf("audit head %q is malformed: the audit log was tampered with; run `approve-tui audit --verify`", v)
	}
	return seq, hash, nil
}

// AuditQuery selects audit events.
type AuditQuery struct {
	// ApprovalID limits to one proposal ("" for all).
	ApprovalID string
	// Limit is the number of most recent events (0: 100).
	Limit int
	// BeforeSeq pages back: only events with seq below it (0: from the end).
	BeforeSeq int64
}

const auditColumns = `seq, at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash`

// Audit lists events, newest first.
func (st *Store) Audit(ctx context.Context, q AuditQuery) ([]AuditEvent, error) {
	s := st.bind()
	if q.Limit <= 0 {
		q.Limit = 100
	}
	where, args := []string{"1=1"}, []any{}
	if q.ApprovalID != "" {
		where = append(where, "approval_id = ?")
		args = append(args, q.ApprovalID)
	}
	if q.BeforeSeq > 0 {
		where = append(where, "seq < ?")
		args = append(args, q.BeforeSeq)
	}
	args = append(args, q.Limit)
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+auditColumns+` FROM approve_tui_audit WHERE `+
		strings.Join(where, " AND ")+` ORDER BY seq DESC LIMIT ?`, args...)
	if err != nil {
		if isNoTable(err) {
			return nil, nil
		}
		return nil, s.classify("audit", err)
	}
	defer rows.Close()
	var out []AuditEvent
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, s.classify("audit", err)
		}
		out = append(out, e)
	}
	return out, s.classify("audit", rows.Err())
}

func scanAudit(sc rowScanner) (AuditEvent, error) {
	var e AuditEvent
	if err := sc.Scan(&e.Seq, &e.At, &e.ApprovalID, &e.Event, &e.Outcome, &e.Reason, &e.Actor, &e.Surface,
		&e.DetailRaw, &e.PrevHash, &e.Hash); err != nil {
		return e, err
	}
	if e.DetailRaw != "" {
		_ = json.Unmarshal([]byte(e.DetailRaw), &e.Detail)
	}
	return e, nil
}

// VerifyResult is the outcome of VerifyAudit.
type VerifyResult struct {
	// Events is how many events were checked.
	Events int64 `json:"events"`
	// OK is true when the chain is intact.
	OK bool `json:"ok"`
	// BrokenSeq is the first event that fails (0 when OK, or when the
	// problem is a missing tail, reported against the head).
	BrokenSeq int64 `json:"broken_seq,omitempty"`
	// Problem says what is wrong.
	Problem string `json:"problem,omitempty"`
	// PayloadProblems lists proposals whose payload_json no longer matches
	// the hash recorded when approve-tui submitted them.
	PayloadProblems []string `json:"payload_problems,omitempty"`
	// Gaps lists what the log records but the table does not hold: a
	// proposal submitted through approve-tui missing from the table, or a
	// decision or execution outcome the table does not show (a lost WAL, a
	// torn copy, a restored backup).
	Gaps []string `json:"gaps,omitempty"`
}

// maxReportedGaps bounds VerifyResult.Gaps.
const maxReportedGaps = 50

// chainState is what the log says of one proposal.
type chainState struct {
	seq       int64  // the event that says it
	status    string // consumed, denied or expired ("" when only submitted)
	submitted bool
	executed  string // the last execution outcome recorded ("" for none)
	found     bool   // the table has the row
}

// VerifyAudit recomputes the whole chain: each event's hash, each link to
// the previous event, contiguous sequence numbers, the recorded head, and
// the payloads of proposals submitted through approve-tui.
func (st *Store) VerifyAudit(ctx context.Context) (*VerifyResult, error) {
	s := st.bind()
	conn, err := s.rdb.Conn(ctx)
	if err != nil {
		return nil, s.classify("verify", err)
	}
	defer conn.Close()
	// One read transaction: a consistent snapshot of log, head and payloads.
	if _, err := conn.ExecContext(ctx, s.eng.beginSnapshot()); err != nil {
		return nil, s.classify("verify", err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)

	res := &VerifyResult{OK: true}
	fail := func(seq int64, format string, args ...any) {
		if res.OK {
			res.OK = false
			res.BrokenSeq = seq
			res.Problem = fmt.Sprintf(format, args...)
		}
	}
	rows, err := conn.QueryContext(ctx, `SELECT `+auditColumns+` FROM approve_tui_audit ORDER BY seq`)
	if err != nil {
		if isNoTable(err) {
			return res, nil
		}
		return nil, s.classify("verify", err)
	}
	submitted := map[string]string{}
	states := map[string]*chainState{}
	prevHash, prevSeq := genesisHash, int64(0)
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			rows.Close()
			fail(prevSeq+1, "event after seq %d is unreadable: %v", prevSeq, err)
			return res, nil
		}
		res.Events++
		switch {
		case e.Seq != prevSeq+1:
			fail(prevSeq+1, "event %d is missing (the next event is %d): events were deleted", prevSeq+1, e.Seq)
		case e.PrevHash != prevHash:
			fail(e.Seq, "event %d does not link to event %d: the log was edited or events were removed", e.Seq, prevSeq)
		case eventHash(&e) != e.Hash:
			fail(e.Seq, "event %d (%s %s) was modified after it was written", e.Seq, e.Event, e.ApprovalID)
		}
		if e.Event == EventSubmit && e.Outcome == OutcomeOK {
			if h, ok := e.Detail["payload_sha256"].(string); ok {
				submitted[e.ApprovalID] = h
			}
		}
		if e.Outcome == OutcomeOK {
			st := states[e.ApprovalID]
			if st == nil && (e.Event == EventSubmit || e.Event == EventApprove || e.Event == EventDeny ||
				e.Event == EventExpire || e.Event == EventExecution) {
				st = &chainState{}
				states[e.ApprovalID] = st
			}
			switch e.Event {
			case EventSubmit:
				st.submitted, st.seq = true, e.Seq
			case EventApprove:
				st.status, st.seq = "consumed", e.Seq
			case EventDeny:
				st.status, st.seq = "denied", e.Seq
			case EventExpire:
				st.status, st.seq = "expired", e.Seq
			case EventExecution:
				st.executed = e.Reason
			}
		}
		prevHash, prevSeq = e.Hash, e.Seq
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify("verify", err)
	}
	rows.Close()

	var head string
	switch err := conn.QueryRowContext(ctx, `SELECT value FROM approve_tui_meta WHERE key = 'audit_head'`).Scan(&head); {
	case errors.Is(err, sql.ErrNoRows):
		if prevSeq != 0 {
			fail(prevSeq, "the audit head record is missing")
		}
	case err != nil:
		return nil, s.classify("verify", err)
	default:
		seq, hash, perr := parseHead(head)
		switch {
		case perr != nil:
			fail(prevSeq, "%v", perr)
		case seq > prevSeq:
			fail(prevSeq+1, "events %d to %d are missing from the end of the log", prevSeq+1, seq)
		case seq < prevSeq || hash != prevHash:
			fail(seq, "the audit head (event %d) does not match the log's last event %d", seq, prevSeq)
		}
	}

	// Payloads are written once: one that changed since its submit event was
	// rewritten behind the store's back.
	for id, want := range submitted {
		var payload any
		err := conn.QueryRowContext(ctx, `SELECT payload_json FROM gateway_approvals WHERE approval_id = ?`, id).Scan(&payload)
		if errors.Is(err, sql.ErrNoRows) {
			continue // pruned rows are not an audit failure
		}
		if err != nil {
			return nil, s.classify("verify", err)
		}
		txt, _ := asText(payload)
		if sha256Hex([]byte(txt)) != want {
			res.PayloadProblems = append(res.PayloadProblems, id)
		}
	}
	gaps, err := s.chainGaps(ctx, conn, states)
	if err != nil {
		return nil, s.classify("verify", err)
	}
	res.Gaps = gaps
	if len(gaps) > 0 && res.OK {
		res.OK = false
		res.Problem = fmt.Sprintf("the table lacks what the audit log records (%s): commits were lost, or the file was replaced by an older copy", gaps[0])
	}
	if len(res.PayloadProblems) > 0 {
		sortStrings(res.PayloadProblems)
		if res.OK {
			res.OK = false
			res.Problem = fmt.Sprintf("payload_json of %d proposal(s) changed after submit: %s",
				len(res.PayloadProblems), strings.Join(res.PayloadProblems, ", "))
		}
	}
	return res, nil
}

// chainGaps compares what the log says of each proposal with the table, in
// one pass over the table.
func (s bound) chainGaps(ctx context.Context, cn *conn, states map[string]*chainState) ([]string, error) {
	if len(states) == 0 {
		return nil, nil
	}
	execCol := "g.execution_status"
	if s.legacy.Load() {
		execCol = "'not_started'"
	}
	rows, err := cn.QueryContext(ctx, `SELECT g.approval_id, g.status, `+execCol+` FROM gateway_approvals g`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var gaps []string
	add := func(format string, args ...any) {
		if len(gaps) < maxReportedGaps {
			gaps = append(gaps, fmt.Sprintf(format, args...))
		}
	}
	seen := 0
	for rows.Next() {
		var id, status, exec any
		if err := rows.Scan(&id, &status, &exec); err != nil {
			return nil, err
		}
		idS, _ := asText(id)
		st := states[idS]
		if st == nil {
			continue
		}
		seen++
		st.found = true
		statusS, _ := asText(status)
		execS, _ := asText(exec)
		if st.status != "" && statusS != st.status {
			add("%s was %s (event %d) but the table says %s", model.Sanitize(idS, model.Line), st.status, st.seq,
				model.Sanitize(statusS, model.Line))
		}
		if st.executed != "" && (execS == "" || execS == string(model.ExecNotStarted)) {
			add("%s: execution %s was recorded but the table says %s", model.Sanitize(idS, model.Line), st.executed,
				model.Sanitize(execS, model.Line))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if seen < len(states) {
		var missing []string
		for id, st := range states {
			if !st.found {
				missing = append(missing, id)
			}
		}
		sortStrings(missing)
		for _, id := range missing {
			add("%s (event %d) is missing from the table", model.Sanitize(id, model.Line), states[id].seq)
		}
	}
	return gaps, nil
}

// OutsideDecisions are the decisions the table records that approve-tui's
// audit chain does not: Hermes' own /approve, /deny, expiry and blocks (and
// anything else that wrote the table directly), newest first, at most
// limit. Each is shaped as an audit event (Seq 0, no hashes) with Outside
// set, read from the row's columns: status, consumed_at/consumed_by (or the
// expiry), terminal_reason.
func (st *Store) OutsideDecisions(ctx context.Context, limit int) ([]AuditEvent, error) {
	s := st.bind()
	if limit <= 0 {
		limit = 100
	}
	term := "NULL"
	if s.tier2.Load() {
		term = "g.terminal_reason"
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT g.approval_id, g.status, g.consumed_at, g.consumed_by, g.expires_at, `+term+`
		FROM gateway_approvals g
		WHERE g.status IN ('consumed', 'denied', 'expired', 'blocked')
		AND NOT EXISTS (SELECT 1 FROM approve_tui_audit a WHERE a.approval_id = g.approval_id
			AND a.event IN ('approve', 'deny', 'expire') AND a.outcome = 'ok')
		ORDER BY coalesce(g.consumed_at, g.expires_at) DESC LIMIT ?`, limit)
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify("audit", err)
	}
	defer rows.Close()
	var out []AuditEvent
	for rows.Next() {
		var id, status string
		var consAt, expAt sql.NullFloat64
		var consBy, reason sql.NullString
		if err := rows.Scan(&id, &status, &consAt, &consBy, &expAt, &reason); err != nil {
			return nil, s.classify("audit", err)
		}
		e := AuditEvent{ApprovalID: id, Outcome: OutcomeOK, Actor: consBy.String, Outside: true,
			Detail: map[string]any{}}
		switch model.Status(status) {
		case model.StatusConsumed:
			e.Event = EventApprove
		case model.StatusDenied:
			e.Event = EventDeny
		case model.StatusExpired:
			e.Event = EventExpire
		default:
			e.Event = status
		}
		e.At = consAt.Float64
		if !consAt.Valid {
			e.At = expAt.Float64
		}
		if reason.Valid && reason.String != "" {
			e.Detail["reason"] = reason.String
		}
		out = append(out, e)
	}
	return out, s.classify("audit", rows.Err())
}

// EventSession records a console session starting or ending (who was
// connected, when), reason "start" or "end".
const EventSession = "session"

// RecordSession appends a session event for actor. It is recorded for a
// watcher too: being connected is not a decision.
func (st *Store) RecordSession(ctx context.Context, actor model.Actor, what string, detail map[string]any) error {
	s := st.bind()
	actor.ReadOnly = false
	return s.run(ctx, transition{event: EventSession, id: "", actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		return []auditEntry{{event: EventSession, outcome: OutcomeOK, reason: what, detail: detail}}, nil
	}})
}
