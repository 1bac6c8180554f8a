package storage

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Record is one row as read from the store: the decoded proposal (columns
// override the payload's lifecycle keys) and what the reader concluded.
type Record struct {
	model.Proposal
	// RowID is SQLite's rowid of the gateway_approvals row.
	RowID int64
	// Corrupt says why the row cannot be trusted ("" when it is fine). A
	// corrupt row can be denied, never consumed.
	Corrupt string
	// ClassifierRisk is what the classifier says of the command now.
	ClassifierRisk model.RiskLevel
	// EffectiveRisk is the higher of the pinned risk and ClassifierRisk
	// (unknown for a corrupt row): what is shown and enforced.
	EffectiveRisk model.RiskLevel
	// Park is what the store knows of the proposal's park (its waiter
	// stopped; see Park): filled by Get, nil when it was never parked.
	Park *Park
	// EffectiveStatus is the status at read time: pending past its expiry
	// reads as expired.
	EffectiveStatus model.Status
	// Findings names hidden content (escape sequences, bidi overrides, ...)
	// found in any agent-supplied string; non-empty marks it suspicious.
	Findings []string
	// Hardline: a hardline rule matches the command. Hermes never runs
	// such a command, so it can be denied, never approved.
	Hardline bool
	// Effects are the judgement's effects of the command in its cwd (what
	// a policy rule's effect matches).
	Effects []string
	// patterns are the pattern table's descriptions the command matches
	// (what a policy rule's pattern matches).
	patterns []string
	// PayloadSHA256 is the hex SHA-256 of the row's payload_json bytes: an
	// approval names the payload its approver read by it.
	PayloadSHA256 string
	// Tampered says why the payload is not the one submitted ("" when it
	// is, or when the row has no submit record to compare with): it
	// differs from the SHA-256 its submit audit event recorded. Corrupt
	// says so too: such a row can be denied, never approved (tamper.go).
	Tampered string
}

// MinApprovableID is the shortest id that can be approved: the typed id is
// the gate against approving by accident, and a shorter one is typed (or
// guessed) too easily. Shorter ids can be denied.
const MinApprovableID = 8

// Suspicious reports whether any agent string held hidden content.
func (r *Record) Suspicious() bool { return len(r.Findings) > 0 }

// rowColumns is the SELECT list decodeRow expects, for a file of Hermes'
// tier-2 revision (execution_* and the four tier-2 columns). selectColumns
// stands in for the columns a file lacks: an older file opened read-only
// (which cannot be migrated) has no execution_* columns, and a file of the
// first revision (PR #41427) has none of the tier-2 ones; approve-tui never
// adds those (they are Hermes' to add).
const rowColumns = `g.rowid, g.approval_id, g.created_at, g.expires_at, g.status, g.consumed_at, g.consumed_by,
		g.execution_status, g.execution_reason, g.execution_recorded_at,
		g.terminal_reason, g.approval_event_id, g.approval_event_ts_ms, g.invalid_attempts, g.payload_json`

func selectColumns(legacy, tier2 bool) string {
	c := rowColumns
	if legacy {
		c = strings.Replace(c, "g.execution_status, g.execution_reason, g.execution_recorded_at", "'not_started', NULL, NULL", 1)
	}
	if !tier2 {
		c = strings.Replace(c, "g.terminal_reason, g.approval_event_id, g.approval_event_ts_ms, g.invalid_attempts", "NULL, NULL, NULL, 0", 1)
	}
	return c
}

// rowScanner is a *sql.Row, *sql.Rows, or an error that came before either.
type rowScanner interface{ Scan(dest ...any) error }

// rawRow receives one row of rowColumns. Values are scanned as any: SQLite
// stores anything anywhere, and a column of the wrong type must make the
// record corrupt rather than fail the whole read.
type rawRow struct {
	rowid                                  int64
	id, created, expires, status, consAt   any
	consBy, execStatus, execReason, execAt any
	termReason, eventID, eventTs, attempts any
	payload                                any
}

// dest is what Scan fills for rowColumns, and then extra.
func (r *rawRow) dest(extra ...any) []any {
	return append(append(make([]any, 0, 15+len(extra)), &r.rowid, &r.id, &r.created, &r.expires, &r.status, &r.consAt, &r.consBy,
		&r.execStatus, &r.execReason, &r.execAt, &r.termReason, &r.eventID, &r.eventTs, &r.attempts, &r.payload), extra...)
}

// scanRecord reads and decodes one row of rowColumns.
func (s bound) scanRecord(sc rowScanner, now time.Time) (*Record, error) {
	var r rawRow
	if err := sc.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.decode(now, &s.decoded, s.judge), nil
}

// payloadView is everything a record derives from its id and payload_json
// alone: the decoded proposal, the problems found in the payload, hidden
// content, and the classifier's verdict. Payloads are written once, so it is
// cached by id and compared by payload text.
type payloadView struct {
	payload    string
	proposal   model.Proposal
	problems   []string
	findings   []string
	classified model.RiskLevel // the judgement's level
	hardline   bool            // a hardline rule matches the command
	effects    []string        // the judgement's effects
	patterns   []string        // the pattern table's descriptions it matches
	judgeKey   string          // the extras it was judged with (judging.key)
	sha256     string          // hex SHA-256 of the payload_json bytes
}

// decodeCache keeps recent payloadViews; listing a page of already-seen
// proposals then costs only the column reads. It holds two generations of
// at most decodeCacheMax entries: when the current one is full it becomes
// the old one, and a view found in the old one moves back to the current.
// So whatever was used within the last decodeCacheMax lookups stays, and a
// console that reloads its MaxLoaded most urgent rows after every commit
// decodes only the rows that changed.
type decodeCache struct {
	mu       sync.Mutex
	cur, old map[string]*payloadView
}

const decodeCacheMax = 8192

func (c *decodeCache) view(id, payload string, ok bool, j *judging) *payloadView {
	if j == nil {
		j = noExtras
	}
	if c != nil && ok {
		c.mu.Lock()
		v := c.cur[id]
		if v == nil {
			if v = c.old[id]; v != nil && v.payload == payload && v.judgeKey == j.key {
				c.putLocked(id, v)
			}
		}
		c.mu.Unlock()
		if v != nil && v.payload == payload && v.judgeKey == j.key {
			return v
		}
	}
	v := decodePayloadView(id, payload, ok, j)
	if c != nil && ok {
		c.mu.Lock()
		c.putLocked(id, v)
		c.mu.Unlock()
	}
	return v
}

func (c *decodeCache) putLocked(id string, v *payloadView) {
	if c.cur == nil || len(c.cur) >= decodeCacheMax {
		c.old, c.cur = c.cur, make(map[string]*payloadView, 256)
	}
	c.cur[id] = v
}

func decodePayloadView(idStr, raw string, ok bool, j *judging) *payloadView {
	v := &payloadView{payload: raw}
	bad := func(format string, args ...any) { v.problems = append(v.problems, fmt.Sprintf(format, args...)) }
	var p *model.Proposal
	var b []byte
	if !ok {
		bad("payload_json is not text")
	} else {
		var err error
		b = []byte(raw) // once, for the decoding and the hash
		p, err = model.DecodePayload(b)
		if err != nil {
			bad("%s", err.Error())
		}
	}
	if p == nil {
		p = &model.Proposal{}
	}
	if p.ApprovalID != idStr && p.ApprovalID != "" && idStr != "" {
		bad("payload approval_id %q does not match the row's %q", model.Sanitize(p.ApprovalID, model.Line), model.Sanitize(idStr, model.Line))
	}
	p.ApprovalID = idStr
	if verr := p.Validate(); verr != nil && len(v.problems) == 0 {
		bad("%s", verr.Error())
	}
	v.proposal = *p
	v.findings = agentFindings(p)
	verdict := classifyCommand(j, p.Cwd, p.Command)
	v.classified, v.hardline = verdict.level, verdict.hardline
	v.effects, v.patterns, v.judgeKey = verdict.effects, verdict.patterns, j.key
	if b == nil {
		b = []byte(raw)
	}
	v.sha256 = sha256Hex(b)
	return v
}

// decode builds the Record: the payload's view (cached) with the row's
// columns laid over its lifecycle keys.
func (r *rawRow) decode(now time.Time, cache *decodeCache, j *judging) *Record {
	idStr, idOK := asText(r.id)
	raw, ok := asText(r.payload)
	v := cache.view(idStr, raw, ok, j)
	problems := append([]string(nil), v.problems...)
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !idOK || idStr == "" {
		bad("approval_id column is empty or not text")
	}
	rec := &Record{RowID: r.rowid, Proposal: v.proposal, Findings: v.findings, ClassifierRisk: v.classified,
		Hardline: v.hardline, Effects: v.effects, patterns: v.patterns, PayloadSHA256: v.sha256}
	p := &rec.Proposal

	// The row's columns override the payload's lifecycle keys; expires_at is
	// the column the compare-and-set enforces, so it is the one shown.
	if f, ok := asFloat(r.created); ok && f > 0 {
		p.CreatedAt = f
	}
	p.ExpiresAt = nil
	if r.expires != nil {
		if f, ok := asFloat(r.expires); ok {
			p.ExpiresAt = model.F64(f)
		} else {
			bad("expires_at column is not a number")
		}
	}
	st, _ := asText(r.status)
	p.Status = model.Status(st)
	if !p.Status.Valid() {
		bad("status column %q is not one of pending, pending_confirm, consumed, denied, expired, blocked", model.Sanitize(st, model.Line))
	}
	p.ConsumedAt = nil
	if f, ok := asFloat(r.consAt); ok {
		p.ConsumedAt = model.F64(f)
	}
	p.ConsumedBy, _ = asText(r.consBy)
	es, _ := asText(r.execStatus)
	p.ExecutionStatus = model.ExecutionStatus(es)
	p.ExecutionReason, _ = asText(r.execReason)
	p.ExecutionRecordedAt = nil
	if f, ok := asFloat(r.execAt); ok {
		p.ExecutionRecordedAt = model.F64(f)
	}
	// The tier-2 columns (NULL placeholders on a first-revision file).
	p.TerminalReason, _ = asText(r.termReason)
	p.ApprovalEventID, _ = asText(r.eventID)
	p.ApprovalEventTsMs = nil
	if f, ok := asFloat(r.eventTs); ok {
		ms := int64(f)
		p.ApprovalEventTsMs = &ms
	}
	p.InvalidAttempts = 0
	if f, ok := asFloat(r.attempts); ok {
		p.InvalidAttempts = int(f)
	}

	rec.EffectiveStatus = p.EffectiveStatus(now)
	if len(problems) > 0 {
		rec.Corrupt = joinProblems(problems)
		rec.EffectiveRisk = model.RiskUnknown
	} else {
		rec.EffectiveRisk = model.MaxRisk(p.RiskLevel, rec.ClassifierRisk)
	}
	return rec
}

func joinProblems(ps []string) string {
	out := ""
	for i, p := range ps {
		if i > 0 {
			out += "; "
		}
		out += p
	}
	return out
}

// agentFindings collects hidden-content findings over every string an agent
// supplied.
func agentFindings(p *model.Proposal) []string {
	var out []string
	seen := map[string]bool{}
	check := func(field, s string) {
		for _, f := range model.Findings(s) {
			k := f + " in " + field
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	check("command", p.Command)
	check("cwd", p.Cwd)
	check("risk reason", p.RiskReason)
	check("requester's context", p.RequesterContext)
	check("session", p.SessionKey)
	check("requester", p.Requester)
	check("backend", p.Backend)
	check("diff", p.DiffText)
	check("diff summary", p.DiffSummary)
	check("display text", p.DisplayText)
	check("approval id", p.ApprovalID)
	if h := p.Hermes; h != nil {
		check("Hermes request id", h.RequestID)
		check("Hermes digest", h.Digest)
		check("Hermes surface", h.Surface)
		for _, k := range h.Patterns() {
			check("Hermes pattern", k)
		}
	}
	if m := p.Impact; m != nil {
		check("impact", m.Summary)
		for _, u := range append(append([]string(nil), m.Unknown...), m.Incomplete...) {
			check("impact", u)
		}
		for _, t := range m.Targets {
			check("impact path", t.Path+t.Op+t.Note+t.Device)
			for _, l := range append(append([]string(nil), t.LiveLinks...), t.Mounts...) {
				check("impact path", l)
			}
			for _, d := range t.Details {
				check("impact detail", d) // commit subjects, partitions, resources
			}
		}
	}
	for k, v := range p.EnvOverrides {
		check("env "+model.Sanitize(k, model.Line), k+v)
	}
	return out
}

func asText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case nil:
		return "", false
	}
	return "", false
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case int64:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// reset empties the cache.
func (c *decodeCache) reset() {
	c.mu.Lock()
	c.cur, c.old = nil, nil
	c.mu.Unlock()
}
