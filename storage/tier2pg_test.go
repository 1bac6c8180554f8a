package storage

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// tier2OnPostgres does on PostgreSQL what testdata/hermes_tier2.py does on
// SQLite: the tier-2 revision's schema and transitions, as plain SQL from a
// connection of its own. Hermes itself has no PostgreSQL store; this is the
// shape of its table and its statements, for checking that approve-tui
// reads and decides such a table on either backend.
func tier2OnPostgres(t *testing.T, db string, args ...string) string {
	t.Helper()
	raw := rawDB(t, db)
	now := float64(time.Now().UnixNano()) / 1e9
	rows := func(q string, a ...any) int64 {
		t.Helper()
		res, err := raw.Exec(q, a...)
		if err != nil {
			t.Fatalf("tier-2 %v: %s: %v", args, q, err)
		}
		n, _ := res.RowsAffected()
		return n
	}
	ok := func(n int64) string {
		if n == 1 {
			return "ok"
		}
		return "no"
	}
	rest := args[1:]
	switch args[0] {
	case "upgrade":
		cols, err := postgresDialect.tableColumns(ctx, raw, "gateway_approvals")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range [][2]string{{"terminal_reason", "TEXT"}, {"approval_event_id", "TEXT"},
			{"approval_event_ts_ms", "BIGINT"}, {"invalid_attempts", "INTEGER NOT NULL DEFAULT 0"}} {
			if !cols[c[0]] {
				rows(`ALTER TABLE gateway_approvals ADD COLUMN ` + c[0] + ` ` + c[1])
			}
		}
		rows(pgSchema.lockoutsTable)
		rows(`CREATE INDEX IF NOT EXISTS idx_gateway_approvals_terminal_reason
			ON gateway_approvals(terminal_reason) WHERE terminal_reason IS NOT NULL`)
		return ""
	case "submit":
		verb, target, nonce := rest[0], rest[1], rest[2]
		ttl := 600.0
		if len(rest) > 3 {
			ttl, _ = strconv.ParseFloat(rest[3], 64)
		}
		b := make([]byte, 8)
		rand.Read(b)
		id := base64.RawURLEncoding.EncodeToString(b)
		payload, _ := json.Marshal(map[string]any{
			"approval_id": id, "created_at": now, "expires_at": now + ttl, "status": "pending",
			"consumed_at": nil, "consumed_by": nil, "terminal_reason": nil,
			"session_key": "agent:main:matrix:room", "requester": "@ops:example.org",
			"command": "systemctl restart " + target, "cwd": nil, "backend": "bash",
			"env_overrides": map[string]any{}, "risk_level": "tier2_critical",
			"risk_reason": "restart of a tier-2 service", "policy_decision": "needs_approval",
			"policy_version": nil, "requires_explicit_approval": true, "default_decision": "deny",
			"diff_text": nil, "diff_summary": nil,
			"display_text":          fmt.Sprintf("TIER 2: %s %s (type: %s %s %s)", verb, target, upper(verb), upper(target), nonce),
			"requires_text_confirm": true, "nonce": nonce, "verb": verb, "target": target,
			"approval_event_id": nil, "approval_event_ts_ms": nil, "invalid_attempts": 0,
			"execution_status": "not_started", "execution_reason": nil, "execution_recorded_at": nil,
		})
		rows(`INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status,
			consumed_at, consumed_by, execution_status, execution_reason, execution_recorded_at,
			terminal_reason, approval_event_id, approval_event_ts_ms, invalid_attempts, payload_json)
			VALUES (?, ?, ?, 'pending', NULL, NULL, 'not_started', NULL, NULL, NULL, NULL, NULL, 0, ?)`,
			id, now, now+ttl, string(payload))
		return id
	case "arm":
		ts, _ := strconv.ParseInt(rest[2], 10, 64)
		return ok(rows(`UPDATE gateway_approvals SET status = 'pending_confirm', approval_event_id = ?,
			approval_event_ts_ms = ? WHERE approval_id = ? AND status = 'pending'
			AND (expires_at IS NULL OR expires_at > ?)`, rest[1], ts, rest[0], now))
	case "invalid":
		var n int
		err := raw.QueryRow(`UPDATE gateway_approvals SET invalid_attempts = invalid_attempts + 1
			WHERE approval_id = ? AND status = 'pending_confirm' RETURNING invalid_attempts`, rest[0]).Scan(&n)
		if err != nil {
			return "0 False"
		}
		limit, _ := strconv.Atoi(rest[1])
		if n >= limit {
			return fmt.Sprintf("%d True", n)
		}
		return fmt.Sprintf("%d False", n)
	case "block":
		return ok(rows(`UPDATE gateway_approvals SET status = 'blocked', terminal_reason = ?, consumed_at = ?
			WHERE approval_id = ? AND status IN ('pending', 'pending_confirm')`, rest[1], now, rest[0]))
	case "deny":
		return ok(rows(`UPDATE gateway_approvals SET status = 'denied', consumed_at = ?, consumed_by = ?,
			terminal_reason = ? WHERE approval_id = ? AND status IN ('pending', 'pending_confirm')
			AND (expires_at IS NULL OR expires_at > ?)`, now, rest[1], rest[2], rest[0], now))
	case "check":
		var exp float64
		var reason string
		err := raw.QueryRow(`SELECT expires_at, reason FROM gateway_approval_lockouts
			WHERE verb = ? AND target = ? AND expires_at > ?`, rest[0], rest[1], now).Scan(&exp, &reason)
		if err != nil {
			return "none"
		}
		return fmt.Sprintf("%v %s", exp, reason)
	case "get":
		r, err := raw.Query(`SELECT * FROM gateway_approvals WHERE approval_id = ?`, rest[0])
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if !r.Next() {
			return "null"
		}
		names, _ := r.Columns()
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := r.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for i, n := range names {
			m[n] = vals[i]
		}
		out, _ := json.Marshal(m)
		return string(out)
	}
	t.Fatalf("tier-2 on PostgreSQL: no command %q", args[0])
	return ""
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
