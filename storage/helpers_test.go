package storage

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1_780_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var (
	alice   = model.Actor{Surface: model.SurfaceCLI, Name: "alice@host"}
	bob     = model.Actor{Surface: model.SurfaceTUI, Name: "bob@host"}
	watcher = model.Actor{Surface: model.SurfaceSSH, Name: "carol", ReadOnly: true}
	agent   = model.Actor{Surface: model.SurfaceRunner, Name: "agent@host"}
)

// tempDB is a new, empty database of the backend under test: a file in a
// temporary directory, or a schema of its own in the PostgreSQL test
// database (dropped when the test ends).
func tempDB(t testing.TB) string {
	t.Helper()
	if testBackend == "postgres" {
		return pgtestSchema(t)
	}
	return filepath.Join(t.TempDir(), "state.db")
}

func openAt(t testing.TB, path string, c *clock) *Store {
	t.Helper()
	opt := Options{Create: true, BusyTimeout: 2 * time.Second}
	if c != nil {
		opt.Now = c.Now
	}
	s, err := Open(context.Background(), path, opt)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newStore(t testing.TB) (*Store, *clock) {
	c := newClock()
	return openAt(t, tempDB(t), c), c
}

// proposal builds a valid proposal created at now, expiring in ttl (0: never).
func proposal(id, command string, risk model.RiskLevel, now time.Time, ttl time.Duration) *model.Proposal {
	p := &model.Proposal{
		ApprovalID: id, CreatedAt: model.Epoch(now), SessionKey: "agent:main:test",
		Requester: "tester", Command: command, Cwd: "/srv/app", Backend: "local",
		RiskLevel: risk, RiskReason: "test reason", PolicyDecision: model.PolicyNeedsApproval,
		PolicyVersion: "test/1", RequiresExplicitApproval: true, DefaultDecision: model.DefaultDeny,
	}
	if ttl > 0 {
		p.ExpiresAt = model.F64(model.Epoch(now.Add(ttl)))
	}
	return p
}

func mustSubmit(t testing.TB, s *Store, p *model.Proposal) {
	t.Helper()
	if err := s.Submit(context.Background(), p, agent); err != nil {
		t.Fatalf("submit %s: %v", p.ApprovalID, err)
	}
}

// insertRaw writes p as another program (Hermes) does, through db: the row
// alone, pending by the column's default, nothing of approve-tui's.
func insertRaw(t testing.TB, db *pool, p *model.Proposal) {
	t.Helper()
	mustExec(t, db, `INSERT INTO gateway_approvals (approval_id, created_at, expires_at, payload_json) VALUES (?, ?, ?, ?)`,
		p.ApprovalID, p.CreatedAt, *p.ExpiresAt, string(model.EncodePayload(p)))
}

// rawDB opens the database the way another program (Hermes) would: a plain
// connection with no approve-tui logic. Statements are written with ?
// placeholders on either backend.
func rawDB(t testing.TB, path string) *pool {
	t.Helper()
	if IsPostgresURL(path) {
		db, err := sql.Open("pgx", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return &pool{DB: db, e: postgresDialect}
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &pool{DB: db, e: sqliteDialect}
}

// The plain database/sql calls, in the pool's dialect.
func (p *pool) Exec(q string, args ...any) (sql.Result, error) {
	return p.ExecContext(context.Background(), q, args...)
}

func (p *pool) Query(q string, args ...any) (*sql.Rows, error) {
	return p.QueryContext(context.Background(), q, args...)
}

func (p *pool) QueryRow(q string, args ...any) *sql.Row {
	return p.QueryRowContext(context.Background(), q, args...)
}

// sqliteOnly skips a test of something only a SQLite file has (its
// journal, its path, its locks, another program opening the same file).
func sqliteOnly(t testing.TB, what string) {
	t.Helper()
	if testBackend != "sqlite" {
		t.Skip("SQLite only: " + what)
	}
}

func mustExec(t testing.TB, db *pool, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func countAudit(t testing.TB, db *pool, where string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM approve_tui_audit WHERE `+where, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
