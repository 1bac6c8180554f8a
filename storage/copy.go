package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/approve-tui/approve-tui/model"
)

// Copying a store between backends (a SQLite file to PostgreSQL when the
// agents spread to more hosts, or back): the proposals exactly as stored
// (payload_json byte for byte, so that the payload hashes of the audit log
// still match), the audit log with its hashes and head, the waiters and the
// tier-2 lockouts, the policy, votes, answers and signatures. The rank index is not copied: the target builds its own.
// The whole copy is one transaction on the target, through the decision
// path, which appends one event recording it: the chain copied, plus one
// link. The source is only read, in one snapshot.

// EventCopy records a copy into this store.
const EventCopy = "copy"

// CopyOptions configure Copy.
type CopyOptions struct {
	// Replace empties a target that holds proposals or audit events first
	// (in the same transaction). Without it such a target is refused.
	Replace bool
}

// CopyResult says what Copy did.
type CopyResult struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Proposals int64  `json:"proposals"`
	Events    int64  `json:"audit_events"`
	Waiters   int64  `json:"waiters"`
	Lockouts  int64  `json:"lockouts"`
	Policies  int64  `json:"policy_versions"`
	Votes     int64  `json:"votes"`
	Answers   int64  `json:"answers"`
	// Signatures are the signed decisions kept (approve_tui_signatures).
	Signatures int64 `json:"signatures"`
	// Parks are the parked proposals' windows and takes (approve_tui_parks).
	Parks    int64         `json:"parks"`
	Replaced bool          `json:"replaced"`
	Verify   *VerifyResult `json:"verify"`
	// CreatedSchema is the PostgreSQL schema opening the target created
	// (Store.CreatedSchema), or "".
	CreatedSchema string `json:"created_schema,omitempty"`
}

// ErrTargetNotEmpty is wrapped by the refusal of a copy into a store that
// holds proposals or audit events.
var ErrTargetNotEmpty = errors.New("the target is not empty")

// contractColumns are gateway_approvals' columns, both Hermes revisions, in
// the order they are copied, with what stands in for one the source lacks.
var contractColumns = []struct{ name, absent string }{
	{"approval_id", ""}, {"created_at", ""}, {"expires_at", "NULL"}, {"status", ""},
	{"consumed_at", "NULL"}, {"consumed_by", "NULL"},
	{"execution_status", "'not_started'"}, {"execution_reason", "NULL"}, {"execution_recorded_at", "NULL"},
	{"payload_json", ""},
	{"terminal_reason", "NULL"}, {"approval_event_id", "NULL"}, {"approval_event_ts_ms", "NULL"}, {"invalid_attempts", "0"},
}

// copyTable is one table copied as it is.
type copyTable struct {
	name  string
	cols  []string
	order string
}

var (
	auditCopy   = copyTable{"approve_tui_audit", strings.Split(strings.ReplaceAll(auditColumns, " ", ""), ","), "seq"}
	waitersCopy = copyTable{"approve_tui_waiters", []string{"approval_id", "host", "pid", "started_at", "heartbeat_at", "surface"}, "approval_id, host, pid"}
	lockoutCopy = copyTable{"gateway_approval_lockouts", []string{"verb", "target", "expires_at", "reason", "created_at"}, "verb, target"}
	// The policy comes along (a copy without it would weaken the rule),
	// and so do the votes cast under it.
	policyCopy = copyTable{"approve_tui_policy", []string{"version", "sha256", "source", "rules", "set_at", "set_by"}, "version"}
	votesCopy  = copyTable{"approve_tui_votes", []string{"approval_id", "actor", "surface", "person", "key_fp", "payload_sha256", "at", "ended", "ended_at"}, "approval_id, at, person"}
	// The answers given come along: a request id answered in the source
	// stays answered in the copy.
	answersCopy = copyTable{"approve_tui_answers", []string{"source", "request_id", "approval_id", "decision", "answered_at", "actor"}, "source, request_id"}
	// The signatures of decisions and policies come along, in their order
	// (the target numbers them afresh): without them a copy's approvals
	// and policy would not verify where trust is required.
	signaturesCopy = copyTable{"approve_tui_signatures", []string{"approval_id", "event", "principal", "key_fp", "statement", "signature", "at"}, "seq"}
	// The parks come along: a parked proposal stays parked, and a taken
	// approval stays taken, in the copy.
	parksCopy = copyTable{"approve_tui_parks", []string{"approval_id", "match_sha256", "stopped_at", "park_until", "why", "taken_by", "taken_at"}, "approval_id"}
)

// copyBatch is how many rows one INSERT carries.
const copyBatch = 100

// Copy copies the store src into dst (see above), then verifies dst's audit
// chain. actor is who copies; it is recorded in dst's chain.
func Copy(ctx context.Context, src, dst *Store, opt CopyOptions, actor model.Actor) (*CopyResult, error) {
	res := &CopyResult{From: src.Path(), To: dst.Path(), Replaced: opt.Replace}
	sb, db := src.bind(), dst.bind()
	if sb.dbfile == db.dbfile {
		return nil, fmt.Errorf("copy: --from and --to are the same database (%s)", src.Path())
	}
	rc, err := sb.rdb.Conn(ctx)
	if err != nil {
		return nil, sb.classify("copy", err)
	}
	defer rc.Close()
	if _, err := rc.ExecContext(ctx, sb.eng.beginSnapshot()); err != nil {
		return nil, sb.classify("copy", err)
	}
	defer rc.ExecContext(context.Background(), `ROLLBACK`)
	srcCols, err := sb.eng.tableColumns(ctx, rc, "gateway_approvals")
	if err != nil {
		return nil, sb.classify("copy", err)
	}
	if len(srcCols) == 0 {
		return nil, &UnavailableError{Op: "copy", Reason: src.Path() + " has no gateway_approvals table: nothing to copy"}
	}
	srcTier2 := true
	for _, c := range tier2Columns {
		srcTier2 = srcTier2 && srcCols[c]
	}
	var head string
	switch err := rc.QueryRowContext(ctx, `SELECT value FROM approve_tui_meta WHERE key = 'audit_head'`).Scan(&head); {
	case err == nil:
	case errors.Is(err, sql.ErrNoRows), isNoTable(err):
		head = "0:" + genesisHash
	default:
		return nil, sb.classify("copy", err)
	}
	if _, _, err := parseHead(head); err != nil {
		return nil, fmt.Errorf("copy: the source's %w", err)
	}
	// A broken chain is not carried over: the copy would hide where it broke.
	if v, err := src.VerifyAudit(ctx); err != nil {
		return nil, fmt.Errorf("copy: verify the source: %w", err)
	} else if !v.OK || len(v.PayloadProblems) > 0 {
		return nil, fmt.Errorf("copy: the source's audit chain does not verify (%s %s): nothing was copied; see `approve-tui audit --verify`",
			v.Problem, strings.Join(v.PayloadProblems, "; "))
	}

	if err := actor.Validate(); err != nil {
		return nil, err
	}
	if actor.ReadOnly {
		return nil, &ReadOnlyError{Reason: actor.String() + " is a watcher (read-only) and cannot copy into a store", Watcher: true}
	}
	// Said before the transaction, so that nothing at all is written to a
	// store that holds another's proposals; checked again inside it.
	if err := db.checkEmpty(ctx, db.rdb, opt.Replace); err != nil {
		return nil, err
	}
	err = db.inWriteTx(ctx, "copy", func(ctx context.Context) error {
		*res = CopyResult{From: res.From, To: res.To, Replaced: res.Replaced}
		if err := db.checkEmpty(ctx, db.w, opt.Replace); err != nil {
			return err
		}
		if err := db.emptyForCopy(ctx); err != nil {
			return err
		}
		if srcTier2 && !db.tier2.Load() {
			// The copy keeps the source's revision of Hermes' table.
			for _, c := range db.eng.schema().tier2Columns {
				if _, err := db.w.ExecContext(ctx, c); err != nil {
					return fmt.Errorf("add the tier-2 columns: %w", err)
				}
			}
			db.noticeTier2Locked(ctx)
		}
		sel := make([]string, len(contractColumns))
		names := make([]string, 0, len(contractColumns))
		for i, c := range contractColumns {
			sel[i] = c.absent
			if srcCols[c.name] {
				sel[i] = c.name
			}
			if i < 10 || db.tier2.Load() {
				names = append(names, c.name)
			}
		}
		n, err := copyRows(ctx, rc, db, `SELECT `+strings.Join(sel[:len(names)], ", ")+` FROM gateway_approvals ORDER BY rowid`,
			"gateway_approvals", names)
		if err != nil {
			return err
		}
		res.Proposals = n
		for _, t := range []struct {
			tab copyTable
			n   *int64
		}{{auditCopy, &res.Events}, {waitersCopy, &res.Waiters}, {lockoutCopy, &res.Lockouts},
			{policyCopy, &res.Policies}, {votesCopy, &res.Votes}, {answersCopy, &res.Answers}, {signaturesCopy, &res.Signatures}, {parksCopy, &res.Parks}} {
			n, err := copyRows(ctx, rc, db, `SELECT `+strings.Join(t.tab.cols, ", ")+` FROM `+t.tab.name+` ORDER BY `+t.tab.order,
				t.tab.name, t.tab.cols)
			if err != nil {
				return err
			}
			*t.n = n
		}
		if _, err := db.ws.metaPut.ExecContext(ctx, "audit_head", head); err != nil {
			return err
		}
		return db.appendAudit(ctx, auditEntry{event: EventCopy, outcome: OutcomeOK, reason: "from " + src.Path(), detail: map[string]any{
			"from": src.Path(), "from_backend": sb.eng.kind(), "proposals": res.Proposals, "audit_events": res.Events,
			"source_head": head, "replaced": opt.Replace,
		}}, actor)
	})
	if err != nil {
		return nil, err
	}
	res.CreatedSchema = dst.CreatedSchema()
	v, err := dst.VerifyAudit(ctx)
	if err != nil {
		return res, fmt.Errorf("copy: verify the target: %w", err)
	}
	res.Verify = v
	if !v.OK || len(v.PayloadProblems) > 0 || v.Events != res.Events+1 {
		return res, fmt.Errorf("copy: the target's audit chain does not verify after the copy (%d events, %d copied): %s %s",
			v.Events, res.Events, v.Problem, strings.Join(v.PayloadProblems, "; "))
	}
	return res, nil
}

// checkEmpty refuses a target holding proposals or audit events, unless
// they are to be replaced.
func (s bound) checkEmpty(ctx context.Context, q querier, replace bool) error {
	if replace {
		return nil
	}
	var rows, events int64
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM gateway_approvals`).Scan(&rows); err != nil {
		return s.classify("copy", err)
	}
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM approve_tui_audit`).Scan(&events); err != nil && !isNoTable(err) {
		return s.classify("copy", err)
	}
	if rows+events == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s holds %d proposal(s) and %d audit event(s), and a copy does not mix two stores (pass --replace to empty it first, in the same transaction)",
		ErrTargetNotEmpty, s.Store.Path(), rows, events)
}

// emptyForCopy empties the target inside the copy's transaction.
func (s bound) emptyForCopy(ctx context.Context) error {
	for _, q := range []string{`DELETE FROM gateway_approvals`, `DELETE FROM approve_tui_audit`, `DELETE FROM approve_tui_waiters`,
		`DELETE FROM approve_tui_rank`, `DELETE FROM approve_tui_presence`, `DELETE FROM approve_tui_meta WHERE key <> 'audit_head'`,
		`DELETE FROM approve_tui_policy`, `DELETE FROM approve_tui_votes`, `DELETE FROM approve_tui_answers`, `DELETE FROM approve_tui_signatures`, `DELETE FROM approve_tui_parks`} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM gateway_approval_lockouts`); err != nil && !isNoTable(err) {
		return err
	}
	return nil
}

// copyRows reads q on the source and inserts its rows into table (cols) on
// the target, a batch per statement. A value the target cannot hold (text
// that is not UTF-8, or holds NUL, going to PostgreSQL) stops the copy and
// names the row.
func copyRows(ctx context.Context, rc *conn, dst bound, q, table string, cols []string) (int64, error) {
	rows, err := rc.QueryContext(ctx, q)
	if err != nil {
		if isNoTable(err) {
			return 0, nil // an older source without that table
		}
		return 0, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	var batch []any
	var n int64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		k := len(batch) / len(cols)
		stmt := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(one+", ", k), ", ")
		if _, err := dst.w.ExecContext(ctx, stmt, batch...); err != nil {
			return fmt.Errorf("write %s: %w", table, err)
		}
		batch = batch[:0]
		return nil
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return 0, fmt.Errorf("read %s: %w", table, err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
			if s, ok := vals[i].(string); ok && dst.eng.textIsStrict() && (!utf8.ValidString(s) || strings.ContainsRune(s, 0)) {
				// Not a refusal: the rows written so far must roll back.
				return 0, fmt.Errorf("%s row %s: its %s is not UTF-8 text without NUL bytes, which PostgreSQL cannot store; nothing was copied (deny or remove the row in the source first)",
					table, model.Sanitize(fmt.Sprint(vals[0]), model.Line), cols[i])
			}
		}
		batch = append(batch, vals...)
		n++
		if len(batch) >= copyBatch*len(cols) {
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", table, err)
	}
	return n, flush()
}
