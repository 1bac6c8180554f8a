-- The lockouts table of Hermes' tier-2 revision.

CREATE TABLE IF NOT EXISTS gateway_approval_lockouts (
    verb TEXT NOT NULL, target TEXT NOT NULL, expires_at REAL NOT NULL,
    reason TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (verb, target));
