-- The columns of Hermes' tier-2 revision: only a copy of a tier-2 store adds
-- them.

ALTER TABLE gateway_approvals ADD COLUMN terminal_reason TEXT;

ALTER TABLE gateway_approvals ADD COLUMN approval_event_id TEXT;

ALTER TABLE gateway_approvals ADD COLUMN approval_event_ts_ms BIGINT;

ALTER TABLE gateway_approvals ADD COLUMN invalid_attempts INTEGER NOT NULL DEFAULT 0;
