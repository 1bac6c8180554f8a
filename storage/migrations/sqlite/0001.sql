-- approve-tui migration 1: audit log (append-only, hash-chained), meta (audit
-- head and other keys), waiter heartbeats, and the pending-rank index.

-- seq is the rowid, and every append names it (the chain's head plus one), so
-- the table needs no AUTOINCREMENT: that would write SQLite's sqlite_sequence
-- table, a page more in the WAL, at every decision, to keep a seq from being
-- used again, which the head already does (refitAudit).
CREATE TABLE IF NOT EXISTS approve_tui_audit (
		seq INTEGER PRIMARY KEY,
		at REAL NOT NULL,
		approval_id TEXT NOT NULL,
		event TEXT NOT NULL,
		outcome TEXT NOT NULL,
		reason TEXT NOT NULL DEFAULT '',
		actor TEXT NOT NULL,
		surface TEXT NOT NULL,
		detail TEXT NOT NULL DEFAULT '',
		prev_hash TEXT NOT NULL,
		hash TEXT NOT NULL);

CREATE INDEX IF NOT EXISTS approve_tui_audit_by_id ON approve_tui_audit(approval_id, seq);

CREATE TABLE IF NOT EXISTS approve_tui_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS approve_tui_waiters (
		approval_id TEXT NOT NULL,
		host TEXT NOT NULL,
		pid INTEGER NOT NULL,
		started_at REAL NOT NULL,
		heartbeat_at REAL NOT NULL,
		surface TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (approval_id, host, pid));

CREATE TABLE IF NOT EXISTS approve_tui_rank (
		approval_id TEXT PRIMARY KEY,
		rank INTEGER NOT NULL,
		expires_at REAL) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS approve_tui_rank_order ON approve_tui_rank(rank, expires_at);
