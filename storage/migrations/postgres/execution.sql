-- The execution_* columns, added to a Hermes table made before them (each only
-- when missing, before the indexes that name them).

ALTER TABLE gateway_approvals ADD COLUMN execution_status TEXT NOT NULL DEFAULT 'not_started';

ALTER TABLE gateway_approvals ADD COLUMN execution_reason TEXT;

ALTER TABLE gateway_approvals ADD COLUMN execution_recorded_at DOUBLE PRECISION;
