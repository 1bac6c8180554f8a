-- approve-tui migration 2: presence: which console (local or SSH) is open, who
-- it is, which proposal it shows and whether its approve prompt is open.

CREATE TABLE IF NOT EXISTS approve_tui_presence (
		console TEXT PRIMARY KEY,
		actor TEXT NOT NULL,
		name TEXT NOT NULL,
		surface TEXT NOT NULL DEFAULT '',
		viewing TEXT NOT NULL DEFAULT '',
		prompt TEXT NOT NULL DEFAULT '',
		scroll INTEGER NOT NULL DEFAULT 0,
		started_at DOUBLE PRECISION NOT NULL,
		heartbeat_at DOUBLE PRECISION NOT NULL);

CREATE OR REPLACE TRIGGER approve_tui_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON approve_tui_presence FOR EACH STATEMENT EXECUTE FUNCTION approve_tui_notify();
