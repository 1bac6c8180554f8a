package storage

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// writerStmts are the writer connection's statements, each prepared once,
// the first time it is used (wstmt).
type writerStmts struct {
	get, exists, insert, decide, expireDue, execution *wstmt
	getOpen                                           *wstmt // get, and what the deciding read needs beside it (openRow)
	deny, expireArmed                                 *wstmt // open statuses of the file's revision
	rankPut, rankDelDue, rankIndexed, rankName        *wstmt
	rankDelClosed, rankNamed                          *wstmt
	auditHead, auditInsert, metaPut, headPut          *wstmt
	auditInsertBatch                                  *wstmt // auditBatch events
	heartbeat, waiterDel                              *wstmt
	parkGet                                           *wstmt // a parked proposal's row (park.go)
	begin, commit                                     *wstmt // a write transaction's ends (txOnce)
	all                                               []*wstmt
}

// wstmt is one statement of the writer connection, prepared there the
// first time it runs and kept until the file is closed. A process that only
// reads (a hook letting a low command pass reads the policy, and nothing
// else) prepares none: preparing them all when the file was opened was a
// millisecond of every such process. A statement that cannot be prepared
// fails where it runs, with the driver's error, and is prepared again at its
// next use.
type wstmt struct {
	c  *conn
	q  string
	mu sync.Mutex
	st *sql.Stmt
}

func (w *wstmt) stmt(ctx context.Context) (*sql.Stmt, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.st == nil {
		st, err := w.c.PrepareContext(ctx, w.q)
		if err != nil {
			return nil, err
		}
		w.st = st
	}
	return w.st, nil
}

func (w *wstmt) QueryRowContext(ctx context.Context, args ...any) rowScanner {
	st, err := w.stmt(ctx)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

func (w *wstmt) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	st, err := w.stmt(ctx)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (w *wstmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	st, err := w.stmt(ctx)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// Close closes the prepared statement, if it was prepared.
func (w *wstmt) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.st == nil {
		return nil
	}
	err := w.st.Close()
	w.st = nil
	return err
}

// preparer makes the writer connection's statements, keeping every one
// made (to close them).
type preparer struct {
	e  engine
	c  *conn
	ws *writerStmts
}

func (p *preparer) prep(q string) *wstmt {
	st := &wstmt{c: p.c, q: q}
	p.ws.all = append(p.ws.all, st)
	return st
}

// prepareWriter makes the writer's statements (each prepared at its first
// use) for a file whose row SELECT list is cols; tier2: the file has
// Hermes' tier-2 columns.
func prepareWriter(ctx context.Context, e engine, c *conn, cols string, tier2 bool) (*writerStmts, error) {
	ws := &writerStmts{}
	p := &preparer{e: e, c: c, ws: ws}
	prep := p.prep
	ws.begin = prep(e.beginWrite())
	ws.commit = prep(`COMMIT`)
	p.revision(cols, tier2)
	ws.exists = prep(`SELECT 1 FROM gateway_approvals WHERE approval_id = ?`)
	ws.insert = prep(`INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, consumed_at,
		consumed_by, execution_status, execution_reason, execution_recorded_at, payload_json)
		VALUES (?, ?, ?, 'pending', NULL, NULL, 'not_started', NULL, NULL, ?)
		ON CONFLICT (approval_id) DO NOTHING`)
	ws.decide = prep(`UPDATE gateway_approvals SET status = ?, consumed_at = ?, consumed_by = ?
		WHERE approval_id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?)
		RETURNING consumed_at`)
	ws.expireDue = prep(`UPDATE gateway_approvals SET status = 'expired'
		WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ?
		RETURNING approval_id, expires_at`)
	ws.execution = prep(`UPDATE gateway_approvals SET execution_status = ?, execution_reason = ?,
		execution_recorded_at = ? WHERE approval_id = ? AND status = 'consumed' AND execution_status = ?`)
	ws.rankPut = prep(`INSERT INTO approve_tui_rank (approval_id, rank, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (approval_id) DO UPDATE SET rank = excluded.rank, expires_at = excluded.expires_at`)
	// A decided row's entry (leaveRankEntry): is it there, and its name
	// appended to the list in one statement, so that two writers on
	// PostgreSQL (read committed) cannot both append to the value they
	// read: the second's conflict update sees the first's committed list.
	// The list read alone, locked (flushStale).
	ws.rankIndexed = prep(`SELECT EXISTS (SELECT 1 FROM approve_tui_rank WHERE approval_id = ?)`)
	ws.rankName = prep(`INSERT INTO approve_tui_meta (key, value) VALUES ('` + staleKey + `', ?)
		ON CONFLICT (key) DO UPDATE SET value = CASE WHEN approve_tui_meta.value = '' THEN excluded.value
		ELSE approve_tui_meta.value || '` + "\n" + `' || excluded.value END
		RETURNING value`)
	ws.rankNamed = prep(`SELECT value FROM approve_tui_meta WHERE key = '` + staleKey + `'` + e.lockRow())
	// Either revision's open statuses: on a first-revision file no row is
	// pending_confirm.
	ws.rankDelClosed = prep(`DELETE FROM approve_tui_rank WHERE approval_id = ? AND NOT EXISTS
		(SELECT 1 FROM gateway_approvals g WHERE g.approval_id = approve_tui_rank.approval_id
		AND g.status IN ('pending', 'pending_confirm'))`)
	ws.rankDelDue = prep(`DELETE FROM approve_tui_rank WHERE expires_at IS NOT NULL AND expires_at <= ?`)
	ws.auditHead = prep(`SELECT value FROM approve_tui_meta WHERE key = 'audit_head'` + e.lockHead())
	ws.auditInsertBatch = prep(`INSERT INTO approve_tui_audit (seq, at, approval_id, event, outcome, reason, actor,
		surface, detail, prev_hash, hash) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", auditBatch), ", "))
	ws.auditInsert = prep(`INSERT INTO approve_tui_audit (seq, at, approval_id, event, outcome, reason, actor,
		surface, detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	ws.metaPut = prep(`INSERT INTO approve_tui_meta (key, value) VALUES (?, ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`)
	// The chain's head once it exists (read, and locked, in the same
	// transaction): an UPDATE, without the upsert's conflict probe.
	ws.headPut = prep(`UPDATE approve_tui_meta SET value = ? WHERE key = 'audit_head'`)
	ws.heartbeat = prep(`INSERT INTO approve_tui_waiters (approval_id, host, pid, started_at, heartbeat_at, surface)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT(approval_id, host, pid) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`)
	ws.waiterDel = prep(`DELETE FROM approve_tui_waiters WHERE approval_id = ? AND host = ? AND pid = ?`)
	ws.parkGet = prep(selectPark)
	return ws, nil
}

// revision prepares the statements that differ with the revision of
// Hermes' table: the row read (cols), and on a tier-2 file deny and expiry
// of armed (pending_confirm) rows, which say why in terminal_reason, as
// Hermes does.
func (p *preparer) revision(cols string, tier2 bool) {
	p.ws.get = p.prep(`SELECT ` + cols + ` FROM gateway_approvals g WHERE g.approval_id = ?` + p.e.lockRow())
	// The row a decision reads, with, in the same statement, its latest ok
	// submit event (what its payload is checked against), whether any
	// policy version exists, and whether any vote on it still counts: one
	// statement where there were four; and the end of its park window, if
	// it was parked (parkClosed).
	p.ws.getOpen = p.prep(`SELECT ` + cols + `,
		(SELECT a.detail FROM approve_tui_audit a WHERE a.approval_id = g.approval_id AND a.event = '` + EventSubmit + `'
			AND a.outcome = 'ok' ORDER BY a.seq DESC LIMIT 1),
		EXISTS (SELECT version, sha256, source, rules, set_at, set_by FROM approve_tui_policy)
			OR EXISTS (SELECT v.actor, v.surface, v.person, v.key_fp, v.payload_sha256, v.at, v.ended_at
				FROM approve_tui_votes v WHERE v.approval_id = g.approval_id AND v.ended = ''),
		(SELECT k.park_until FROM approve_tui_parks k WHERE k.approval_id = g.approval_id)
		FROM gateway_approvals g WHERE g.approval_id = ?` + p.e.lockRow())
	if tier2 {
		p.ws.deny = p.prep(`UPDATE gateway_approvals SET status = 'denied', consumed_at = ?, consumed_by = ?,
			terminal_reason = 'denied_explicit'
			WHERE approval_id = ? AND status IN ('pending', 'pending_confirm') AND (expires_at IS NULL OR expires_at > ?)
			RETURNING consumed_at`)
		p.ws.expireArmed = p.prep(`UPDATE gateway_approvals SET status = 'expired', terminal_reason = 'expired_no_confirm'
			WHERE status = 'pending_confirm' AND expires_at IS NOT NULL AND expires_at <= ?
			RETURNING approval_id, expires_at`)
	}
}

func (ws *writerStmts) close() {
	for _, st := range ws.all {
		st.Close()
	}
}
