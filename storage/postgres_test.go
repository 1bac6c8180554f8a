package storage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

func postgresOnly(t *testing.T) {
	t.Helper()
	if testBackend != "postgres" {
		t.Skip("PostgreSQL only")
	}
}

// The server drops the writer's connection in the middle of a decision's
// transaction (its statements done, its COMMIT not sent): nothing of it is
// written, not the decision and not its audit event; the next decision
// makes a new connection and goes through, once.
func TestPostgresDroppedConnectionLosesNothing(t *testing.T) {
	postgresOnly(t)
	s, c := newStore(t)
	mustSubmit(t, s, proposal("dropped-1", "rm -rf /srv/a", model.RiskHigh, c.Now(), time.Hour))
	db := rawDB(t, s.DSN())

	b := s.bind()
	b.wmu.Lock()
	var pid int
	err := b.w.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid)
	b.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	testHookBeforeCommit = func(op string) {
		once.Do(func() {
			mustExec(t, db, `SELECT pg_terminate_backend(?)`, pid)
			for i := 0; i < 200; i++ {
				var n int
				db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE pid = ?`, pid).Scan(&n)
				if n == 0 {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Error("the writer's backend did not go away")
		})
	}
	t.Cleanup(func() { testHookBeforeCommit = nil })

	_, err = s.Consume(ctx, "dropped-1", "dropped-1", alice)
	t.Logf("consume on the dropped connection: %v", err)
	var un *UnavailableError
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "connection") {
		t.Fatalf("consume on a dropped connection: %v", err)
	}
	testHookBeforeCommit = nil
	if r, err := s.Get(ctx, "dropped-1"); err != nil || r.Status != model.StatusPending {
		t.Fatalf("row after the dropped transaction: %+v %v", r, err)
	}
	if n := countAudit(t, db, `approval_id = 'dropped-1' AND event = 'approve' AND outcome = 'ok'`); n != 0 {
		t.Fatalf("%d approve events for a transaction that never committed", n)
	}

	// A new connection, and the decision goes through exactly once.
	if _, err := s.Consume(ctx, "dropped-1", "dropped-1", alice); err != nil {
		t.Fatalf("consume after the connection came back: %v", err)
	}
	var np *NotPendingError
	if _, err := s.Consume(ctx, "dropped-1", "dropped-1", bob); !errors.As(err, &np) {
		t.Fatalf("second consume: %v", err)
	}
	if n := countAudit(t, db, `approval_id = 'dropped-1' AND event = 'approve' AND outcome = 'ok'`); n != 1 {
		t.Fatalf("%d approve events, want 1", n)
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("chain after the drop: %+v %v", res, err)
	}
}

// An unreachable server, a login the server refuses and a database that
// does not exist are each said in words, as the store being unavailable.
func TestPostgresUnreachableAndRefused(t *testing.T) {
	postgresOnly(t)
	base, err := url.Parse(os.Getenv(envPostgres))
	if err != nil {
		t.Fatal(err)
	}
	variant := func(f func(u *url.URL)) string {
		u := *base
		f(&u)
		return u.String()
	}
	cases := []struct {
		name, db, want string
	}{
		{"closed port", variant(func(u *url.URL) { u.Host = "127.0.0.1:1" }), "cannot reach the PostgreSQL server"},
		{"unknown role", variant(func(u *url.URL) { u.User = url.User("no_such_role_x") }), "refused the login"},
		{"missing database", variant(func(u *url.URL) { u.Path = "/no_such_database_x" }), "database does not exist"},
		// The test server has no TLS: a URL that requires it is refused, not
		// quietly downgraded.
		{"TLS required", variant(func(u *url.URL) {
			q := u.Query()
			q.Set("sslmode", "require")
			u.RawQuery = q.Encode()
		}), "server refused TLS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(ctx, tc.db, Options{Create: true})
			var un *UnavailableError
			if !errors.As(err, &un) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("open: %v (want an unavailable store saying %q)", err, tc.want)
			}
			if strings.Contains(err.Error(), "password=") {
				t.Fatalf("the error shows a password: %v", err)
			}
		})
	}
}

// A server that accepts no writes (a standby, or read-only by setting)
// opens for viewing, and every decision is refused as read-only.
func TestPostgresReadOnlyServer(t *testing.T) {
	postgresOnly(t)
	path := tempDB(t)
	c := newClock()
	s := openAt(t, path, c)
	mustSubmit(t, s, proposal("ro-server1", "rm -rf /srv/a", model.RiskHigh, c.Now(), time.Hour))

	u, _ := url.Parse(path)
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	ro, err := Open(ctx, u.String(), Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if r := ro.ReadOnlyReason(); !strings.Contains(r, "accepts no writes") {
		t.Fatalf("read-only reason %q", r)
	}
	if l, err := ro.List(ctx, ListOptions{}); err != nil || len(l) != 1 {
		t.Fatalf("list on a read-only server: %v %v", ids(l), err)
	}
	var roe *ReadOnlyError
	if _, err := ro.Consume(ctx, "ro-server1", "ro-server1", alice); !errors.As(err, &roe) {
		t.Fatalf("consume on a read-only server: %v", err)
	}
	if r, _ := s.Get(ctx, "ro-server1"); r.Status != model.StatusPending {
		t.Fatal("the row changed")
	}
}

// Two processes' stores submitting the same ids at once: one wins each, the
// other is told the id is taken (PostgreSQL does not serialise the whole
// database, so the unique key, not a lock, decides).
func TestPostgresConcurrentSubmitOfOneID(t *testing.T) {
	postgresOnly(t)
	path := tempDB(t)
	c := newClock()
	var stores []*Store
	for i := 0; i < 2; i++ {
		// Another application_name: a second set of connections, as a
		// second process would have.
		s := openAt(t, path+fmt.Sprintf("&application_name=submitter%d", i), c)
		stores = append(stores, s)
	}
	const n = 40
	errs := make([][]error, 2)
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < n; k++ {
				errs[i] = append(errs[i], s.Submit(ctx, proposal(fmt.Sprintf("dup-%03d", k), "rm -rf /x", model.RiskHigh, c.Now(), time.Hour), agent))
			}
		}()
	}
	wg.Wait()
	for k := 0; k < n; k++ {
		won := 0
		for i := range stores {
			var du *DuplicateError
			switch err := errs[i][k]; {
			case err == nil:
				won++
			case errors.As(err, &du):
			default:
				t.Fatalf("submit dup-%03d: %v", k, err)
			}
		}
		if won != 1 {
			t.Fatalf("dup-%03d: %d submits won", k, won)
		}
	}
	if res, err := stores[0].VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("chain: %+v %v", res, err)
	}
}

// The listening connection is dropped by the server: the watcher is woken
// (commits may have been missed while it was down), listens again, and
// sees the commits after it as before.
func TestPostgresWatcherListensAgainAfterADrop(t *testing.T) {
	postgresOnly(t)
	c := newClock()
	app := fmt.Sprintf("listen-drop-%d", time.Now().UnixNano())
	path := tempDB(t) + "&application_name=" + app
	s := openAt(t, path, c)
	w := mustWatch(t, s)
	db := rawDB(t, path)
	insert := func(id string) {
		p := proposal(id, "rm -rf /x", model.RiskHigh, c.Now(), time.Hour)
		insertRaw(t, db, p)
	}
	wait := func(what string) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := w.Wait(wctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	insert("before-drop")
	wait("a commit before the drop")

	var killed int
	if err := db.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = ? AND query LIKE 'LISTEN%'`, app).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listening connections: %v", killed, err)
	}
	wait("the drop") // the loop says it may have missed commits
	deadline := time.Now().Add(10 * time.Second)
	for !w.Notifying() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !w.Notifying() {
		t.Fatal("not listening again")
	}
	for changed, _ := w.Changed(ctx); changed; changed, _ = w.Changed(ctx) {
	}
	insert("after-drop")
	wait("a commit after the drop")
	var listening int
	db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND query LIKE 'LISTEN%'`, app).Scan(&listening)
	if listening != 1 {
		t.Fatalf("%d listening connections", listening)
	}
}

// A statement that runs past statement_timeout is cancelled by the server:
// the store says so, and nothing is written.
func TestPostgresStatementTimeout(t *testing.T) {
	postgresOnly(t)
	c := newClock()
	path := tempDB(t)
	s := openAt(t, path, c)
	mustSubmit(t, s, proposal("slow-0001", "rm -rf /srv/a", model.RiskHigh, c.Now(), time.Hour))
	// Its own connections: a lock wait far longer than the statement may run.
	short, err := Open(ctx, path+"&statement_timeout=300&application_name=short", Options{BusyTimeout: time.Minute, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close()
	db := rawDB(t, path)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`LOCK TABLE gateway_approvals IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	_, err = short.Consume(ctx, "slow-0001", "slow-0001", alice)
	var un *UnavailableError
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "statement_timeout") {
		t.Fatalf("consume past statement_timeout: %v", err)
	}
	tx.Rollback()
	if r, _ := s.Get(ctx, "slow-0001"); r.Status != model.StatusPending {
		t.Fatalf("row after the cancelled consume: %s", r.Status)
	}
	if _, err := short.Consume(ctx, "slow-0001", "slow-0001", alice); err != nil {
		t.Fatalf("consume once the lock is gone: %v", err)
	}
}
