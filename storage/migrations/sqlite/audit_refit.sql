-- Rebuilds an audit log made with AUTOINCREMENT (by approve-tui before 2026-12)
-- without it, keeping every row as it is.

CREATE TABLE approve_tui_audit_refit (
		seq INTEGER PRIMARY KEY,
		at REAL NOT NULL,
		approval_id TEXT NOT NULL,
		event TEXT NOT NULL,
		outcome TEXT NOT NULL,
		reason TEXT NOT NULL DEFAULT '',
		actor TEXT NOT NULL,
		surface TEXT NOT NULL,
		detail TEXT NOT NULL DEFAULT '',
		prev_hash TEXT NOT NULL,
		hash TEXT NOT NULL);

INSERT INTO approve_tui_audit_refit (seq, at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash) SELECT seq, at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash FROM approve_tui_audit ORDER BY seq;

DROP TABLE approve_tui_audit;

ALTER TABLE approve_tui_audit_refit RENAME TO approve_tui_audit;

CREATE INDEX IF NOT EXISTS approve_tui_audit_by_id ON approve_tui_audit(approval_id, seq);
