package storage

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// An old Hermes file (no execution_* columns) with a pending row opens,
// migrates, keeps the row, and works.
func TestUpgradeOldHermesTable(t *testing.T) {
	path := tempDB(t)
	db := rawDB(t, path)
	mustExec(t, db, `CREATE TABLE gateway_approvals (
		approval_id TEXT PRIMARY KEY, created_at REAL NOT NULL, expires_at REAL,
		status TEXT NOT NULL DEFAULT 'pending', consumed_at REAL, consumed_by TEXT, payload_json TEXT NOT NULL)`)
	mustExec(t, db, `CREATE INDEX idx_gateway_approvals_status ON gateway_approvals(status)`)
	c := newClock()
	old := proposal("oldrow00001", "git push --force origin main", model.RiskMedium, c.Now(), time.Hour)
	mustExec(t, db, `INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES (?, ?, ?, 'pending', ?)`,
		old.ApprovalID, old.CreatedAt, *old.ExpiresAt, string(model.EncodePayload(old)))

	// Read-only first: viewable without migrating (a SQLite file). On
	// PostgreSQL the first open with write access migrates; before it, a
	// read-only open says so.
	ro, err := Open(ctx, path, Options{ReadOnly: true, Now: c.Now})
	if testBackend == "postgres" {
		if err == nil || !strings.Contains(err.Error(), "open it once with write access") {
			t.Fatalf("read-only open of an unmigrated PostgreSQL table: %v", err)
		}
	} else {
		if err != nil {
			t.Fatal(err)
		}
		if l, err := ro.List(ctx, ListOptions{}); err != nil || len(l) != 1 {
			t.Fatalf("read-only list of an old file: %v %v", ids(l), err)
		}
		ro.Close()
	}

	s := openAt(t, path, c)
	cols, err := db.e.tableColumns(ctx, db, "gateway_approvals")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"execution_status", "execution_reason", "execution_recorded_at"} {
		if !cols[c] {
			t.Fatalf("column %s not added", c)
		}
	}
	var idx int
	q := `SELECT count(*) FROM sqlite_master WHERE type='index' AND name = ?`
	if testBackend == "postgres" {
		q = `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?`
	}
	db.QueryRow(q, "idx_gateway_approvals_blocked_after_consume").Scan(&idx)
	if idx != 1 {
		t.Fatal("execution index not created")
	}
	r, err := s.Get(ctx, "oldrow00001")
	if err != nil || r.Corrupt != "" || r.ExecutionStatus != model.ExecNotStarted {
		t.Fatalf("old row after migration: %+v %v", r, err)
	}
	if _, err := s.Consume(ctx, "oldrow00001", "oldrow00001", alice); err != nil {
		t.Fatal(err)
	}
	// Opening again is a no-op.
	s2 := openAt(t, path, c)
	if _, err := s2.Get(ctx, "oldrow00001"); err != nil {
		t.Fatal(err)
	}
}

func TestJournalModes(t *testing.T) {
	sqliteOnly(t, "journal modes")
	s, _ := newStore(t)
	if s.JournalMode() != "wal" {
		t.Fatalf("new file journal mode %q, want wal", s.JournalMode())
	}
	// An existing DELETE-mode file stays DELETE.
	path := tempDB(t)
	db := rawDB(t, path)
	mustExec(t, db, `PRAGMA journal_mode=DELETE`)
	mustExec(t, db, sqliteSchema.hermesTable)
	s2 := openAt(t, path, nil)
	if s2.JournalMode() != "delete" {
		t.Fatalf("existing file switched to %q", s2.JournalMode())
	}
}

func TestMissingFileAndNotADatabase(t *testing.T) {
	sqliteOnly(t, "missing files and files that are not databases (TestPostgresUnreachableAndRefused covers the server)")
	_, err := Open(ctx, tempDB(t), Options{})
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("missing file: %v", err)
	}
	path := tempDB(t)
	os.WriteFile(path, []byte("this is not sqlite, just text that is long enough to be a header......"), 0o600)
	_, err = Open(ctx, path, Options{})
	var un *UnavailableError
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "not a usable SQLite database") {
		t.Fatalf("garbage file: %v", err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "this is not sqlite") {
		t.Fatal("the garbage file was modified")
	}
}

// makeUnwritable makes path (a file or a directory) unwritable even for root (which ignores mode
// bits): the immutable attribute. It returns an undo function.
func makeUnwritable(t *testing.T, path string) func() {
	t.Helper()
	if os.Geteuid() != 0 {
		mode, undo := os.FileMode(0o444), os.FileMode(0o644)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			mode, undo = 0o555, 0o755 // still searchable
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return func() { os.Chmod(path, undo) }
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i (needed to make a file read-only for root): %v %s", err, out)
	}
	return func() { exec.Command("chattr", "-i", path).Run() }
}

func TestReadOnlyFileOpensForViewingAndRefusesWrites(t *testing.T) {
	sqliteOnly(t, "file permissions (TestPostgresReadOnlyServer covers the server)")
	path := tempDB(t)
	c := newClock()
	s := openAt(t, path, c)
	mustSubmit(t, s, proposal("rofile", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
	// Checkpoint and leave WAL so the file alone holds everything.
	s.Close()
	db := rawDB(t, path)
	mustExec(t, db, `PRAGMA journal_mode=DELETE`)
	db.Close()
	undo := makeUnwritable(t, path)
	defer undo()

	ro, err := Open(ctx, path, Options{Now: c.Now})
	if err != nil {
		t.Fatalf("a read-only file must open for viewing: %v", err)
	}
	defer ro.Close()
	if ro.ReadOnlyReason() == "" {
		t.Fatal("no read-only reason")
	}
	l, err := ro.List(ctx, ListOptions{})
	if err != nil || len(l) != 1 {
		t.Fatalf("list: %v %v", ids(l), err)
	}
	var roe *ReadOnlyError
	if _, err := ro.Consume(ctx, "rofile", "rofile", alice); !errors.As(err, &roe) {
		t.Fatalf("consume: %v", err)
	}
	if _, err := ro.Deny(ctx, "rofile", alice, ""); !errors.As(err, &roe) {
		t.Fatalf("deny: %v", err)
	}
	if !strings.Contains(roe.Error(), "not writable") {
		t.Fatalf("the message should say why: %v", roe)
	}
	undo()
	s2 := openAt(t, path, c)
	if r, _ := s2.Get(ctx, "rofile"); r.Status != model.StatusPending {
		t.Fatal("row changed")
	}
}

func TestLockedDatabaseIsUnavailableAndChangesNothing(t *testing.T) {
	path := tempDB(t)
	c := newClock()
	s, err := Open(ctx, path, Options{Create: true, BusyTimeout: 300 * time.Millisecond, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustSubmit(t, s, proposal("locked01", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))

	holder := helperProcess(t, "hold-lock", path)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); holder.Wait() }()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("holder: %q", line)
	}
	start := time.Now()
	_, err = s.Consume(ctx, "locked01", "locked01", alice)
	var un *UnavailableError
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("consume under another process's lock: %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("waited %v, timeout was 300ms", el)
	}
	if _, err := s.Deny(ctx, "locked01", alice, ""); !errors.As(err, &un) {
		t.Fatalf("deny under lock: %v", err)
	}
	stdin.Close()
	holder.Wait()
	r, err := s.Get(ctx, "locked01")
	if err != nil || r.Status != model.StatusPending {
		t.Fatalf("row after the lock: %+v %v", r, err)
	}
	if _, err := s.Consume(ctx, "locked01", "locked01", alice); err != nil {
		t.Fatalf("consume after the lock is released: %v", err)
	}
}

func TestSchemaNewerThanUnderstoodRefusesWrites(t *testing.T) {
	path := tempDB(t)
	c := newClock()
	s := openAt(t, path, c)
	mustSubmit(t, s, proposal("future1", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
	s.Close()
	db := rawDB(t, path)
	mustExec(t, db, `INSERT INTO approve_tui_migrations(version, applied_at) VALUES (99, 0)`)
	s2 := openAt(t, path, c)
	if !strings.Contains(s2.ReadOnlyReason(), "newer approve-tui") {
		t.Fatalf("reason: %q", s2.ReadOnlyReason())
	}
	if _, err := s2.Consume(ctx, "future1", "future1", alice); err == nil {
		t.Fatal("consumed on a schema we do not understand")
	}
	if l, err := s2.List(ctx, ListOptions{}); err != nil || len(l) != 1 {
		t.Fatalf("viewing still works: %v %v", ids(l), err)
	}
}

// A full disk (here: SQLite's page limit reached) refuses the write with a
// clear message and loses nothing already stored.
func TestDiskFullIsUnavailableAndLosesNothing(t *testing.T) {
	sqliteOnly(t, "a full filesystem under the file")
	s, c := newStore(t)
	mustSubmit(t, s, proposal("full0", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
	var pages int
	if err := s.bind().w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.bind().w.ExecContext(ctx, `PRAGMA max_page_count = `+strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
	big := proposal("full1", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour)
	big.DiffText = strings.Repeat("+ a line of a very large diff\n", 20000)
	err := s.Submit(ctx, big, agent)
	var un *UnavailableError
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("submit on a full disk: %v", err)
	}
	if _, err := s.Get(ctx, "full1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("half-written proposal: %v", err)
	}
	if r, err := s.Get(ctx, "full0"); err != nil || r.Status != model.StatusPending {
		t.Fatalf("existing row: %v %v", r, err)
	}
	if res, err := s.VerifyAudit(ctx); err != nil || !res.OK {
		t.Fatalf("audit after the failure: %+v %v", res, err)
	}
}
