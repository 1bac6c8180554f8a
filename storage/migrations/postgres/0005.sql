-- approve-tui migration 5: the answers given to requesters, one per request id
-- (answer.go).

CREATE TABLE IF NOT EXISTS approve_tui_answers (source TEXT NOT NULL,
		request_id TEXT NOT NULL,
		approval_id TEXT NOT NULL,
		decision TEXT NOT NULL,
		answered_at DOUBLE PRECISION NOT NULL,
		actor TEXT NOT NULL,
		PRIMARY KEY (source, request_id),
		UNIQUE (approval_id));
