-- approve-tui migration 3: paging: one row per delivery (a proposal's page,
-- escalation step, reminder or resolution to one channel), claimed before it
-- is sent; and the notifiers running, with their last trouble.

CREATE TABLE IF NOT EXISTS approve_tui_deliveries (
		approval_id TEXT NOT NULL,
		kind TEXT NOT NULL,
		step INTEGER NOT NULL,
		channel TEXT NOT NULL,
		state TEXT NOT NULL,
		attempts INTEGER NOT NULL DEFAULT 0,
		created_at REAL NOT NULL,
		next_at REAL NOT NULL,
		lease_until REAL NOT NULL DEFAULT 0,
		claimed_by TEXT NOT NULL DEFAULT '',
		last_error TEXT NOT NULL DEFAULT '',
		done_at REAL,
		PRIMARY KEY (approval_id, kind, step, channel));

CREATE INDEX IF NOT EXISTS approve_tui_deliveries_due ON approve_tui_deliveries(state, next_at);

CREATE TABLE IF NOT EXISTS approve_tui_notifiers (
		notifier TEXT PRIMARY KEY,
		host TEXT NOT NULL,
		pid INTEGER NOT NULL,
		started_at REAL NOT NULL,
		heartbeat_at REAL NOT NULL,
		trouble TEXT NOT NULL DEFAULT '',
		trouble_since REAL NOT NULL DEFAULT 0);
