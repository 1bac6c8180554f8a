-- approve-tui migration 6: the signatures over decisions (signature.go).

CREATE TABLE IF NOT EXISTS approve_tui_signatures (
		seq BIGSERIAL PRIMARY KEY,
		approval_id TEXT NOT NULL,
		event TEXT NOT NULL,
		principal TEXT NOT NULL,
		key_fp TEXT NOT NULL,
		statement TEXT NOT NULL,
		signature TEXT NOT NULL,
		at DOUBLE PRECISION NOT NULL);

CREATE INDEX IF NOT EXISTS approve_tui_signatures_by_id ON approve_tui_signatures(approval_id, seq);

CREATE OR REPLACE TRIGGER approve_tui_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON approve_tui_signatures FOR EACH STATEMENT EXECUTE FUNCTION approve_tui_notify();
