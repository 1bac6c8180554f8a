-- The Hermes table (SPEC §2) and its indexes, created if absent.

CREATE TABLE IF NOT EXISTS gateway_approvals (
    approval_id TEXT PRIMARY KEY, created_at REAL NOT NULL, expires_at REAL,
    status TEXT NOT NULL DEFAULT 'pending', consumed_at REAL, consumed_by TEXT,
    execution_status TEXT NOT NULL DEFAULT 'not_started', execution_reason TEXT,
    execution_recorded_at REAL, payload_json TEXT NOT NULL);

CREATE INDEX IF NOT EXISTS idx_gateway_approvals_status ON gateway_approvals(status);

CREATE INDEX IF NOT EXISTS idx_gateway_approvals_pending_expires
    ON gateway_approvals(expires_at) WHERE status = 'pending';

CREATE INDEX IF NOT EXISTS idx_gateway_approvals_blocked_after_consume
    ON gateway_approvals(execution_status) WHERE execution_status = 'blocked_after_consume';
