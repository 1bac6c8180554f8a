-- approve-tui migration 1: audit log (append-only, hash-chained), meta (audit
-- head and other keys), waiter heartbeats, and the pending-rank index.

CREATE TABLE IF NOT EXISTS approve_tui_audit (
		seq BIGINT PRIMARY KEY,
		at DOUBLE PRECISION NOT NULL,
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

-- The chain's head exists from the start: appends lock it.
INSERT INTO approve_tui_meta (key, value) VALUES ('audit_head', '0:' || repeat('0', 64)) ON CONFLICT (key) DO NOTHING;

CREATE TABLE IF NOT EXISTS approve_tui_waiters (
		approval_id TEXT NOT NULL,
		host TEXT NOT NULL,
		pid BIGINT NOT NULL,
		started_at DOUBLE PRECISION NOT NULL,
		heartbeat_at DOUBLE PRECISION NOT NULL,
		surface TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (approval_id, host, pid));

CREATE TABLE IF NOT EXISTS approve_tui_rank (
		approval_id TEXT PRIMARY KEY,
		rank INTEGER NOT NULL,
		expires_at DOUBLE PRECISION);

CREATE INDEX IF NOT EXISTS approve_tui_rank_order ON approve_tui_rank(rank, expires_at);

-- The most urgent page in one index scan (listPendingOneQuery).
CREATE INDEX IF NOT EXISTS approve_tui_rank_urgent ON approve_tui_rank(rank DESC, expires_at, approval_id);

CREATE TABLE IF NOT EXISTS gateway_approval_lockouts (
    verb TEXT NOT NULL, target TEXT NOT NULL, expires_at DOUBLE PRECISION NOT NULL,
    reason TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (verb, target));

CREATE OR REPLACE TRIGGER approve_tui_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON approve_tui_audit FOR EACH STATEMENT EXECUTE FUNCTION approve_tui_notify();

CREATE OR REPLACE TRIGGER approve_tui_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON approve_tui_waiters FOR EACH STATEMENT EXECUTE FUNCTION approve_tui_notify();
