/*
 * approve-tui's consume transaction in C against the system SQLite: the same
 * statements the store runs (the row read, the compare-and-set UPDATE ...
 * RETURNING, the audit head read, the audit insert, the head update, the
 * rank entry named stale beside the head, and every 65th decision the named
 * entries deleted), prepared once on one connection, none of the store's logic
 * (no decoding, classification or hashing). The floor a Go store over the
 * same SQL could reach.
 *
 * Build: cc -O2 -o consume consume.c -lsqlite3
 * Usage: consume DB IDS_FILE SYNC     Prints: "<wall s> <cpu s> <count>"
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(clockid_t c) {
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(sqlite3 *db, const char *what) {
	fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

static sqlite3_stmt *prep(sqlite3 *db, const char *q) {
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) die(db, q);
	return st;
}

static void exec(sqlite3 *db, const char *q) {
	if (sqlite3_exec(db, q, NULL, NULL, NULL) != SQLITE_OK) die(db, q);
}

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: consume DB IDS_FILE SYNC\n");
		return 2;
	}
	sqlite3 *db;
	if (sqlite3_open(argv[1], &db) != SQLITE_OK) die(db, "open");
	sqlite3_busy_timeout(db, 60000);
	char pragma[64];
	snprintf(pragma, sizeof pragma, "PRAGMA synchronous=%s", argv[3]);
	exec(db, pragma);
	FILE *f = fopen(argv[2], "r");
	if (!f) { perror(argv[2]); return 1; }
	char **ids = NULL;
	size_t n = 0, cap = 0;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (!*line) continue;
		if (n == cap) { cap = cap ? cap * 2 : 1024; ids = realloc(ids, cap * sizeof *ids); }
		ids[n++] = strdup(line);
	}
	fclose(f);
	sqlite3_stmt *sel = prep(db, "SELECT payload_json FROM gateway_approvals WHERE approval_id = ?");
	sqlite3_stmt *upd = prep(db, "UPDATE gateway_approvals SET status = 'consumed', consumed_at = ?, consumed_by = ? "
		"WHERE approval_id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?) RETURNING consumed_at");
	sqlite3_stmt *head = prep(db, "SELECT value FROM approve_tui_meta WHERE key = 'audit_head'");
	sqlite3_stmt *ins = prep(db, "INSERT INTO approve_tui_audit (seq, at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash) "
		"VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM approve_tui_audit), ?, ?, 'approve', 'ok', '', 'alice@host', 'cli', '{}', ?, ?)");
	sqlite3_stmt *meta = prep(db, "UPDATE approve_tui_meta SET value = ? WHERE key = 'audit_head'");
	sqlite3_stmt *indexed = prep(db, "SELECT EXISTS (SELECT 1 FROM approve_tui_rank WHERE approval_id = ?)");
	sqlite3_stmt *name = prep(db, "INSERT INTO approve_tui_meta (key, value) VALUES ('rank_stale', ?) "
		"ON CONFLICT (key) DO UPDATE SET value = CASE WHEN approve_tui_meta.value = '' THEN excluded.value "
		"ELSE approve_tui_meta.value || '\n' || excluded.value END RETURNING value");
	sqlite3_stmt *clear = prep(db, "UPDATE approve_tui_meta SET value = '' WHERE key = 'rank_stale'");
	sqlite3_stmt *rankdel = prep(db, "DELETE FROM approve_tui_rank WHERE approval_id = ? AND NOT EXISTS "
		"(SELECT 1 FROM gateway_approvals g WHERE g.approval_id = approve_tui_rank.approval_id "
		"AND g.status IN ('pending', 'pending_confirm'))");
	size_t named = 0; /* ids[i+1-named .. i] are named stale (the bench ids need no quoting) */
	char list[600];
	double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	for (size_t i = 0; i < n; i++) {
		double t = now_s(CLOCK_REALTIME);
		exec(db, "BEGIN IMMEDIATE");
		sqlite3_bind_text(sel, 1, ids[i], -1, SQLITE_STATIC);
		if (sqlite3_step(sel) != SQLITE_ROW) die(db, "select");
		sqlite3_reset(sel);
		sqlite3_bind_double(upd, 1, t);
		sqlite3_bind_text(upd, 2, "alice@host via cli", -1, SQLITE_STATIC);
		sqlite3_bind_text(upd, 3, ids[i], -1, SQLITE_STATIC);
		sqlite3_bind_double(upd, 4, t);
		if (sqlite3_step(upd) != SQLITE_ROW) die(db, "update");
		sqlite3_step(upd);
		sqlite3_reset(upd);
		char h[128] = "";
		if (sqlite3_step(head) == SQLITE_ROW) snprintf(h, sizeof h, "%s", (const char *)sqlite3_column_text(head, 0));
		sqlite3_reset(head);
		sqlite3_bind_double(ins, 1, t);
		sqlite3_bind_text(ins, 2, ids[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, h, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 4, h, -1, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE) die(db, "insert");
		sqlite3_reset(ins);
		sqlite3_bind_text(meta, 1, h, -1, SQLITE_STATIC);
		if (sqlite3_step(meta) != SQLITE_DONE) die(db, "meta");
		sqlite3_reset(meta);
		sqlite3_bind_text(indexed, 1, ids[i], -1, SQLITE_STATIC);
		if (sqlite3_step(indexed) != SQLITE_ROW) die(db, "indexed");
		int has = sqlite3_column_int(indexed, 0);
		sqlite3_reset(indexed);
		if (has) {
			snprintf(list, sizeof list, "\"%s\"", ids[i]);
			sqlite3_bind_text(name, 1, list, -1, SQLITE_STATIC);
			if (sqlite3_step(name) != SQLITE_ROW) die(db, "name");
			size_t len = (size_t)sqlite3_column_bytes(name, 0);
			sqlite3_step(name);
			sqlite3_reset(name);
			if (++named > 64 || len > 2048) {
				for (size_t k = i + 1 - named; k <= i; k++) {
					sqlite3_bind_text(rankdel, 1, ids[k], -1, SQLITE_STATIC);
					if (sqlite3_step(rankdel) != SQLITE_DONE) die(db, "rank delete");
					sqlite3_reset(rankdel);
				}
				if (sqlite3_step(clear) != SQLITE_DONE) die(db, "clear");
				sqlite3_reset(clear);
				named = 0;
			}
		}
		exec(db, "COMMIT");
	}
	printf("%f %f %zu\n", now_s(CLOCK_MONOTONIC) - w0, now_s(CLOCK_PROCESS_CPUTIME_ID) - c0, n);
	sqlite3_close(db);
	return 0;
}
