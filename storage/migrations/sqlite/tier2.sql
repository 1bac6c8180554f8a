-- The columns of Hermes' tier-2 revision, and its lockouts table: only a copy of
-- a tier-2 store adds them (on a Hermes file they are Hermes' to add).

ALTER TABLE gateway_approvals ADD COLUMN terminal_reason TEXT;

ALTER TABLE gateway_approvals ADD COLUMN approval_event_id TEXT;

ALTER TABLE gateway_approvals ADD COLUMN approval_event_ts_ms INTEGER;

ALTER TABLE gateway_approvals ADD COLUMN invalid_attempts INTEGER NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS gateway_approval_lockouts (
    verb TEXT NOT NULL, target TEXT NOT NULL, expires_at REAL NOT NULL,
    reason TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (verb, target));
