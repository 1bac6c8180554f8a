#!/usr/bin/env python3
"""Hermes' consume, as its SqliteApprovalStore does it: a connection per
operation, BEGIN IMMEDIATE, the compare-and-set UPDATE ... RETURNING, COMMIT.
Written for approve-tui's peer benchmark from the data contract; not Hermes'
code.

Usage: hermes_consume.py DB IDS_FILE SYNC   (SYNC: NORMAL or FULL)
Prints: "<wall seconds> <cpu seconds> <count>"
"""
import sqlite3
import sys
import time

path, ids_file, sync = sys.argv[1], sys.argv[2], sys.argv[3]
ids = [l.strip() for l in open(ids_file) if l.strip()]
wall0, cpu0 = time.perf_counter(), time.process_time()
for aid in ids:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA synchronous=" + sync)
    now = time.time()
    conn.execute("BEGIN IMMEDIATE")
    row = conn.execute(
        "UPDATE gateway_approvals SET status = 'consumed', consumed_at = ?, consumed_by = ?"
        " WHERE approval_id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?)"
        " RETURNING approval_id", (now, "bench", aid, now)).fetchone()
    conn.execute("COMMIT")
    conn.close()
    if row is None:
        sys.exit("not consumed: " + aid)
print(time.perf_counter() - wall0, time.process_time() - cpu0, len(ids))
