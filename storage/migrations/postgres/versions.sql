-- approve-tui's own tables are versioned here, never by Hermes' SCHEMA_VERSION.

CREATE TABLE IF NOT EXISTS approve_tui_migrations (
	version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL);
