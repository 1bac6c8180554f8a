-- approve-tui migration 6: the signatures over decisions (signature.go).

CREATE TABLE IF NOT EXISTS approve_tui_signatures (
		seq INTEGER PRIMARY KEY,
		approval_id TEXT NOT NULL,
		event TEXT NOT NULL,
		principal TEXT NOT NULL,
		key_fp TEXT NOT NULL,
		statement TEXT NOT NULL,
		signature TEXT NOT NULL,
		at REAL NOT NULL);

CREATE INDEX IF NOT EXISTS approve_tui_signatures_by_id ON approve_tui_signatures(approval_id, seq);
