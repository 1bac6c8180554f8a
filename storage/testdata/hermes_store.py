#!/usr/bin/env python3
"""A stand-in for Hermes' SQLite approval store (PR #41427), as SPEC §2 describes it.

Written for approve-tui's interop tests (storage/interop_test.go); stdlib only.
It is not Hermes' code: it does what SPEC §2 says Hermes does, so that Go and
Python can share one state.db in tests.

Usage:  hermes_store.py DB COMMAND ...
  submit [--count N] [--ttl SEC] [--risk LEVEL] [--reason R] [CMD...]
         one proposal per CMD (N copies each, default 1); with no CMD, reads a
         JSON array of field objects on stdin. Prints one id per line.
  get ID            JSON: the proposal as Hermes reads it, whether it validated,
                    and the exact bytes (surrogateescape) of every string field
  consume ID ACTOR  JSON: {"ok": bool, ...}; exit 0 if it won, 4 if not
  deny ID ACTOR     same
  race ACTOR [--pace SEC] [ID...]
                    ids from argv and stdin lines; prints "ready", waits for a
                    "go" line, tries consume on each (shuffled, sleeping up to
                    SEC before each), prints
                    "won ID" / "lost ID by WINNER" / "lost ID status STATUS"
"""
import dataclasses
import json
import random
import secrets
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

CREATE_TABLE_SQL = """
CREATE TABLE IF NOT EXISTS gateway_approvals (
    approval_id TEXT PRIMARY KEY, created_at REAL NOT NULL, expires_at REAL,
    status TEXT NOT NULL DEFAULT 'pending', consumed_at REAL, consumed_by TEXT,
    execution_status TEXT NOT NULL DEFAULT 'not_started', execution_reason TEXT,
    execution_recorded_at REAL, payload_json TEXT NOT NULL);
"""
INDEX_SQL = """
CREATE INDEX IF NOT EXISTS idx_gateway_approvals_status ON gateway_approvals(status);
CREATE INDEX IF NOT EXISTS idx_gateway_approvals_pending_expires
    ON gateway_approvals(expires_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS idx_gateway_approvals_blocked_after_consume
    ON gateway_approvals(execution_status) WHERE execution_status = 'blocked_after_consume';
"""
EXECUTION_COLUMNS = [
    ("execution_status", "TEXT NOT NULL DEFAULT 'not_started'"),
    ("execution_reason", "TEXT"),
    ("execution_recorded_at", "REAL"),
]
LIFECYCLE_COLUMNS = ("status", "consumed_at", "consumed_by",
                     "execution_status", "execution_reason", "execution_recorded_at")


def validation_errors(p) -> List[str]:
    """Every problem with a proposal, not just the first."""
    errors = []
    if not p.approval_id:
        errors.append("approval_id is required")
    if not (isinstance(p.created_at, (int, float)) and p.created_at > 0):
        errors.append("created_at must be > 0")
    if not p.session_key:
        errors.append("session_key is required")
    if not p.command:
        errors.append("command is required")
    if p.risk_level not in ("low", "medium", "high"):
        errors.append("risk_level must be low, medium or high, got %r" % (p.risk_level,))
    if not p.risk_reason:
        errors.append("risk_reason is required")
    if p.policy_decision not in ("allow", "needs_approval", "deny"):
        errors.append("policy_decision is invalid: %r" % (p.policy_decision,))
    if p.default_decision not in ("allow", "deny"):
        errors.append("default_decision is invalid: %r" % (p.default_decision,))
    if p.risk_level == "high" and p.default_decision != "deny":
        errors.append("high risk requires default_decision='deny'")
    return errors


@dataclass(frozen=True)
class ApprovalProposal:
    approval_id: str
    created_at: float
    expires_at: Optional[float] = None
    status: str = "pending"
    consumed_at: Optional[float] = None
    consumed_by: Optional[str] = None
    session_key: str = ""
    requester: Optional[str] = None
    command: str = ""
    cwd: Optional[str] = None
    backend: Optional[str] = None
    env_overrides: Dict[str, str] = field(default_factory=dict)
    risk_level: str = "low"
    risk_reason: str = ""
    policy_decision: str = "needs_approval"
    policy_version: Optional[str] = None
    requires_explicit_approval: bool = True
    default_decision: str = "deny"
    diff_text: Optional[str] = None
    diff_summary: Optional[str] = None
    display_text: Optional[str] = None
    execution_status: str = "not_started"
    execution_reason: Optional[str] = None
    execution_recorded_at: Optional[float] = None

    def __post_init__(self):
        errors = validation_errors(self)
        if errors:
            raise ValueError("invalid ApprovalProposal: " + "; ".join(errors))


FIELDS = [f.name for f in dataclasses.fields(ApprovalProposal)]


class SqliteApprovalStore:
    def __init__(self, path: str):
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")  # Hermes' apply_wal_with_fallback
        self.conn.executescript(CREATE_TABLE_SQL)
        have = {r[1] for r in self.conn.execute("PRAGMA table_info(gateway_approvals)")}
        for name, ddl in EXECUTION_COLUMNS:  # before the indexes that name them
            if name not in have:
                self.conn.execute("ALTER TABLE gateway_approvals ADD COLUMN %s %s" % (name, ddl))
        self.conn.executescript(INDEX_SQL)

    def submit(self, p: ApprovalProposal) -> None:
        try:
            self.conn.execute(
                "INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status,"
                " payload_json) VALUES (?, ?, ?, 'pending', ?)",
                (p.approval_id, p.created_at, p.expires_at, json.dumps(dataclasses.asdict(p))))
        except sqlite3.IntegrityError as e:
            raise ValueError("duplicate approval_id %s" % p.approval_id) from e

    def read(self, approval_id: str):
        """The payload dict with the lifecycle columns overlaid, or None if absent."""
        row = self.conn.execute(
            "SELECT payload_json, " + ", ".join(LIFECYCLE_COLUMNS) +
            " FROM gateway_approvals WHERE approval_id = ?", (approval_id,)).fetchone()
        if row is None:
            return None
        payload = json.loads(row[0])  # corrupt JSON raises: fail closed
        data = {k: v for k, v in payload.items() if k in FIELDS}  # forks add keys
        data.update(zip(LIFECYCLE_COLUMNS, row[1:]))
        return data

    def get(self, approval_id: str) -> Optional[ApprovalProposal]:
        data = self.read(approval_id)
        return None if data is None else ApprovalProposal(**data)

    def _transition(self, approval_id: str, status: str, actor: str):
        now = time.time()
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            rows = self.conn.execute(
                "UPDATE gateway_approvals SET status=?, consumed_at=?, consumed_by=?"
                " WHERE approval_id=? AND status='pending'"
                " AND (expires_at IS NULL OR expires_at > ?)"
                " RETURNING approval_id, status, consumed_at, consumed_by",
                (status, now, actor, approval_id, now)).fetchall()
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return rows[0] if rows else None

    def consume(self, approval_id: str, actor: str):
        return self._transition(approval_id, "consumed", actor)

    def deny(self, approval_id: str, actor: str):
        return self._transition(approval_id, "denied", actor)


def exact_bytes(v):
    """The bytes a str stands for, as os.fsencode would give them (hex)."""
    if isinstance(v, str):
        return v.encode("utf-8", "surrogateescape").hex()
    if isinstance(v, dict):
        return {exact_bytes(k): exact_bytes(x) for k, x in v.items()}
    return v


def cmd_submit(store, args):
    opt = {"--count": "1", "--ttl": "3600", "--risk": "high", "--reason": "pattern match"}
    commands = []
    while args:
        a = args.pop(0)
        if a in opt:
            opt[a] = args.pop(0)
        else:
            commands.append(a)
    specs = [{"command": c} for c in commands for _ in range(int(opt["--count"]))] \
        if commands else json.load(sys.stdin)
    for spec in specs:
        now, ttl = time.time(), float(opt["--ttl"])
        fields = {"approval_id": secrets.token_urlsafe(8), "created_at": now,
                  "expires_at": now + ttl if ttl > 0 else None,
                  "session_key": "agent:main:telegram:dm", "requester": "hermes-gateway",
                  "risk_level": opt["--risk"], "risk_reason": opt["--reason"],
                  "policy_decision": "needs_approval", "policy_version": "hermes/41427",
                  "default_decision": "deny"}
        fields.update(spec)
        try:
            p = ApprovalProposal(**fields)
        except ValueError as e:  # every problem at once
            print(e, file=sys.stderr)
            return 2
        store.submit(p)
        print(p.approval_id, flush=True)
    return 0


def cmd_get(store, approval_id):
    try:
        data = store.read(approval_id)
    except ValueError as e:  # json.JSONDecodeError: Hermes fails closed
        print(json.dumps({"found": True, "json_ok": False, "valid": False, "errors": [str(e)]}))
        return 0
    if data is None:
        print(json.dumps({"found": False}))
        return 3
    raw = store.conn.execute("SELECT payload_json FROM gateway_approvals WHERE approval_id=?",
                             (approval_id,)).fetchone()[0]
    out = {"found": True, "json_ok": True, "payload_keys": list(json.loads(raw)),
           "proposal": data, "bytes": {k: exact_bytes(v) for k, v in data.items()}}
    try:
        ApprovalProposal(**data)
        out.update(valid=True, errors=[])
    except (TypeError, ValueError) as e:
        out.update(valid=False, errors=[str(e)])
    print(json.dumps(out))  # ensure_ascii: lone surrogates print as \udcXX
    return 0


def cmd_decide(store, verb, approval_id, actor):
    row = store.consume(approval_id, actor) if verb == "consume" else store.deny(approval_id, actor)
    if row is not None:
        print(json.dumps({"ok": True, "approval_id": row[0], "status": row[1],
                          "consumed_at": row[2], "consumed_by": row[3]}))
        return 0
    cur = store.conn.execute("SELECT status, consumed_by FROM gateway_approvals WHERE approval_id=?",
                             (approval_id,)).fetchone()
    print(json.dumps({"ok": False, "approval_id": approval_id, "status": cur and cur[0],
                      "consumed_by": cur and cur[1]}))
    return 4


def cmd_race(store, actor, ids):
    pace = 0.0
    if ids[:1] == ["--pace"]:
        pace, ids = float(ids[1]), ids[2:]
    print("ready", flush=True)
    for line in sys.stdin:
        line = line.strip()
        if line == "go":
            break
        if line:
            ids.append(line)
    random.shuffle(ids)
    out = []
    for approval_id in ids:
        if pace:  # work between decisions, as a real gateway does
            time.sleep(random.uniform(0, pace))
        try:
            if store.consume(approval_id, actor) is not None:
                out.append("won %s" % approval_id)
                continue
            status, by = store.conn.execute(
                "SELECT status, consumed_by FROM gateway_approvals WHERE approval_id=?",
                (approval_id,)).fetchone()
            out.append("lost %s by %s" % (approval_id, by) if by else
                       "lost %s status %s" % (approval_id, status))
        except sqlite3.Error as e:
            out.append("error %s %s" % (approval_id, str(e).replace("\n", " ")))
    print("\n".join(out), flush=True)
    return 0


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    if sqlite3.sqlite_version_info < (3, 35, 0):
        print("SQLite %s lacks UPDATE ... RETURNING (needs 3.35)" % sqlite3.sqlite_version,
              file=sys.stderr)
        return 1
    store = SqliteApprovalStore(argv[1])
    verb, rest = argv[2], argv[3:]
    if verb == "submit":
        return cmd_submit(store, rest)
    if verb == "get" and len(rest) == 1:
        return cmd_get(store, rest[0])
    if verb in ("consume", "deny") and len(rest) == 2:
        return cmd_decide(store, verb, rest[0], rest[1])
    if verb == "race" and rest:
        return cmd_race(store, rest[0], rest[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
