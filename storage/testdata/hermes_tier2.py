#!/usr/bin/env python3
"""A stand-in for Hermes' tier-2 (text-confirm) approval store revision.

Written for approve-tui's interop tests from the facts of the revision
(../shared/reference/hermes-tier2/): the schema it adds, its statuses and the
SQL of each transition. It is not Hermes' code. Stdlib only; a connection per
operation, BEGIN IMMEDIATE around every write, as Hermes does.

Usage:  hermes_tier2.py DB COMMAND ...
  upgrade                        add the tier-2 columns, lockout table and indexes
  submit VERB TARGET NONCE [TTL] a tier2_critical proposal; prints its id
  arm ID EVENT_ID TS_MS          pending -> pending_confirm; prints ok/no
  consume ID ACTOR               pending_confirm -> consumed; prints ok/no
  invalid ID LIMIT               count a wrong phrase; prints COUNT EXCEEDED
  block ID REASON                pending|pending_confirm -> blocked; prints ok/no
  lockout VERB TARGET SECONDS REASON
  check VERB TARGET              prints EXPIRES REASON, or none
  deny ID ACTOR REASON           pending|pending_confirm -> denied; prints ok/no
  expire                         expire due rows; prints the count
  get ID                         JSON of the row's columns and payload
  race ACTOR ID                  waits for a "go" line, then consume; prints won/lost
"""
import json
import secrets
import sqlite3
import sys
import time

TIER2_COLUMNS = [
    ("terminal_reason", "TEXT"),
    ("approval_event_id", "TEXT"),
    ("approval_event_ts_ms", "INTEGER"),
    ("invalid_attempts", "INTEGER NOT NULL DEFAULT 0"),
]


def connect(path):
    return sqlite3.connect(path, isolation_level=None, timeout=30)


def write(path, sql, args=()):
    """One statement in its own BEGIN IMMEDIATE transaction; returns the cursor's rows and rowcount."""
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            cur = conn.execute(sql, args)
            rows = cur.fetchall()
            count = cur.rowcount
            conn.execute("COMMIT")
        except Exception:
            conn.execute("ROLLBACK")
            raise
        return rows, count
    finally:
        conn.close()


def upgrade(path):
    conn = connect(path)
    try:
        have = {r[1] for r in conn.execute("PRAGMA table_info(gateway_approvals)")}
        for name, ddl in TIER2_COLUMNS:
            if name not in have:
                conn.execute("ALTER TABLE gateway_approvals ADD COLUMN %s %s" % (name, ddl))
        conn.executescript("""
            CREATE TABLE IF NOT EXISTS gateway_approval_lockouts (
                verb TEXT NOT NULL, target TEXT NOT NULL, expires_at REAL NOT NULL,
                reason TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (verb, target));
            CREATE INDEX IF NOT EXISTS idx_gateway_approvals_terminal_reason
                ON gateway_approvals(terminal_reason) WHERE terminal_reason IS NOT NULL;
            CREATE INDEX IF NOT EXISTS idx_gateway_approval_lockouts_expires
                ON gateway_approval_lockouts(expires_at);
        """)
    finally:
        conn.close()


def submit(path, verb, target, nonce, ttl=600.0):
    now = time.time()
    aid = secrets.token_urlsafe(8)
    payload = {
        "approval_id": aid, "created_at": now, "expires_at": now + ttl, "status": "pending",
        "consumed_at": None, "consumed_by": None, "terminal_reason": None,
        "session_key": "agent:main:matrix:room", "requester": "@ops:example.org",
        "command": "systemctl restart %s" % target, "cwd": None, "backend": "bash",
        "env_overrides": {}, "risk_level": "tier2_critical",
        "risk_reason": "restart of a tier-2 service", "policy_decision": "needs_approval",
        "policy_version": None, "requires_explicit_approval": True, "default_decision": "deny",
        "diff_text": None, "diff_summary": None,
        "display_text": "TIER 2: %s %s (type: %s %s %s)" % (verb, target, verb.upper(), target.upper(), nonce),
        "requires_text_confirm": True, "nonce": nonce, "verb": verb, "target": target,
        "approval_event_id": None, "approval_event_ts_ms": None, "invalid_attempts": 0,
        "execution_status": "not_started", "execution_reason": None, "execution_recorded_at": None,
    }
    write(path, "INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status,"
          " consumed_at, consumed_by, execution_status, execution_reason, execution_recorded_at,"
          " terminal_reason, approval_event_id, approval_event_ts_ms, invalid_attempts, payload_json)"
          " VALUES (?, ?, ?, 'pending', NULL, NULL, 'not_started', NULL, NULL, NULL, NULL, NULL, 0, ?)",
          (aid, now, now + ttl, json.dumps(payload)))
    return aid


def main(argv):
    path, verb, rest = argv[1], argv[2], argv[3:]
    now = time.time()
    if verb == "upgrade":
        upgrade(path)
    elif verb == "submit":
        ttl = float(rest[3]) if len(rest) > 3 else 600.0
        print(submit(path, rest[0], rest[1], rest[2], ttl))
    elif verb == "arm":
        _, n = write(path, "UPDATE gateway_approvals SET status = 'pending_confirm', approval_event_id = ?,"
                     " approval_event_ts_ms = ? WHERE approval_id = ? AND status = 'pending'"
                     " AND (expires_at IS NULL OR expires_at > ?)", (rest[1], int(rest[2]), rest[0], now))
        print("ok" if n == 1 else "no")
    elif verb == "consume":
        rows, _ = write(path, "UPDATE gateway_approvals SET status = 'consumed', consumed_at = ?, consumed_by = ?"
                        " WHERE approval_id = ? AND status = 'pending_confirm'"
                        " AND (expires_at IS NULL OR expires_at > ?) RETURNING approval_id",
                        (now, rest[1], rest[0], now))
        print("ok" if rows else "no")
    elif verb == "invalid":
        rows, _ = write(path, "UPDATE gateway_approvals SET invalid_attempts = invalid_attempts + 1"
                        " WHERE approval_id = ? AND status = 'pending_confirm' RETURNING invalid_attempts",
                        (rest[0],))
        count = rows[0][0] if rows else 0
        print(count, count >= int(rest[1]) if rows else False)
    elif verb == "block":
        _, n = write(path, "UPDATE gateway_approvals SET status = 'blocked', terminal_reason = ?, consumed_at = ?"
                     " WHERE approval_id = ? AND status IN ('pending', 'pending_confirm')", (rest[1], now, rest[0]))
        print("ok" if n == 1 else "no")
    elif verb == "lockout":
        write(path, "INSERT INTO gateway_approval_lockouts (verb, target, expires_at, reason, created_at)"
              " VALUES (?, ?, ?, ?, ?) ON CONFLICT(verb, target) DO UPDATE SET"
              " expires_at = MAX(excluded.expires_at, expires_at), reason = excluded.reason",
              (rest[0], rest[1], now + float(rest[2]), rest[3], now))
    elif verb == "check":
        conn = connect(path)
        row = conn.execute("SELECT expires_at, reason FROM gateway_approval_lockouts"
                           " WHERE verb = ? AND target = ? AND expires_at > ?", (rest[0], rest[1], now)).fetchone()
        conn.close()
        print("none" if row is None else "%s %s" % row)
    elif verb == "deny":
        _, n = write(path, "UPDATE gateway_approvals SET status = 'denied', consumed_at = ?, consumed_by = ?,"
                     " terminal_reason = ? WHERE approval_id = ? AND status IN ('pending', 'pending_confirm')"
                     " AND (expires_at IS NULL OR expires_at > ?)", (now, rest[1], rest[2], rest[0], now))
        print("ok" if n == 1 else "no")
    elif verb == "expire":
        _, a = write(path, "UPDATE gateway_approvals SET status = 'expired', terminal_reason = 'expired_no_confirm'"
                     " WHERE status = 'pending_confirm' AND expires_at IS NOT NULL AND expires_at <= ?", (now,))
        _, b = write(path, "UPDATE gateway_approvals SET status = 'expired'"
                     " WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ?", (now,))
        print(a + b)
    elif verb == "get":
        conn = connect(path)
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM gateway_approvals WHERE approval_id = ?", (rest[0],)).fetchone()
        conn.close()
        print(json.dumps(dict(row) if row else None))
    elif verb == "race":
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        sys.stdin.readline()
        rows, _ = write(path, "UPDATE gateway_approvals SET status = 'consumed', consumed_at = ?, consumed_by = ?"
                        " WHERE approval_id = ? AND status = 'pending_confirm'"
                        " AND (expires_at IS NULL OR expires_at > ?) RETURNING approval_id",
                        (time.time(), rest[0], rest[1], time.time()))
        print("won" if rows else "lost")
    else:
        print("unknown command %r" % verb, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
