-- approve-tui migration 7: parked proposals (park.go). A proposal whose
-- waiter stopped (hook timeout, agent killed it, run --timeout) may stay
-- open for a park window; the same call asked again finds it by its match
-- key (model.Match.Key) and takes an approval once (taken_by). A row with
-- stopped_at NULL is a reservation, written with the submit: its waiter
-- has not stopped yet, and may park the proposal until park_until.

CREATE TABLE IF NOT EXISTS approve_tui_parks (
		approval_id TEXT PRIMARY KEY,
		match_sha256 TEXT NOT NULL,
		stopped_at DOUBLE PRECISION,
		park_until DOUBLE PRECISION NOT NULL,
		why TEXT NOT NULL,
		taken_by TEXT,
		taken_at DOUBLE PRECISION);

CREATE INDEX IF NOT EXISTS approve_tui_parks_by_match ON approve_tui_parks(match_sha256, stopped_at);

CREATE OR REPLACE TRIGGER approve_tui_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON approve_tui_parks FOR EACH STATEMENT EXECUTE FUNCTION approve_tui_notify();
