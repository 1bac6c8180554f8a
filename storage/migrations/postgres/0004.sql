-- approve-tui migration 4: the approval policy, one row per version, and the
-- votes cast under it (quorum.go).

-- Each policy version's file (source) with its SHA-256, the rules as the store
-- reads them (JSON), and who set it when.
CREATE TABLE IF NOT EXISTS approve_tui_policy (
		version BIGINT PRIMARY KEY,
		sha256 TEXT NOT NULL,
		source TEXT NOT NULL,
		rules TEXT NOT NULL,
		set_at DOUBLE PRECISION NOT NULL,
		set_by TEXT NOT NULL);

-- One row per vote, kept after it stops counting (ended says why).
CREATE TABLE IF NOT EXISTS approve_tui_votes (
		approval_id TEXT NOT NULL,
		actor TEXT NOT NULL,
		surface TEXT NOT NULL DEFAULT '',
		person TEXT NOT NULL,
		key_fp TEXT NOT NULL DEFAULT '',
		payload_sha256 TEXT NOT NULL,
		at DOUBLE PRECISION NOT NULL,
		ended TEXT NOT NULL DEFAULT '',
		ended_at DOUBLE PRECISION);

-- Votes by proposal, and one counting vote per person and proposal (the store's
-- own check, made again by the database).
CREATE INDEX IF NOT EXISTS approve_tui_votes_by_id ON approve_tui_votes(approval_id, ended);

CREATE UNIQUE INDEX IF NOT EXISTS approve_tui_votes_once ON approve_tui_votes(approval_id, person) WHERE ended = '';

CREATE OR REPLACE TRIGGER approve_tui_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON approve_tui_policy FOR EACH STATEMENT EXECUTE FUNCTION approve_tui_notify();

CREATE OR REPLACE TRIGGER approve_tui_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON approve_tui_votes FOR EACH STATEMENT EXECUTE FUNCTION approve_tui_notify();
