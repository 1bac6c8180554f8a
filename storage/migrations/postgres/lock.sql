-- Runs first in the migration transaction: two processes opening a new database
-- at once must not both create the tables; the second waits, then finds them made.

SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.approve_tui_migrate'));
