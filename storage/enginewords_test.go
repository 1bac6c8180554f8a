package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// engineWords are the names an error may use for the backend under test,
// and for the other one, which it must never use.
func engineWords() (own, other string) {
	if testBackend == "postgres" {
		return "PostgreSQL", "SQLite"
	}
	return "SQLite", "PostgreSQL"
}

// Errors any engine can give (a deadline that passed, a store closed under
// the caller) are said in the words of the engine in use: on a SQLite file
// they once spoke of "the connection to the PostgreSQL server".
func TestErrorsNameTheEngineInUse(t *testing.T) {
	own, other := engineWords()
	s, c := newStore(t)
	if err := s.Submit(context.Background(), proposal("ew-1", "rm -rf /tmp/x", model.RiskHigh, c.Now(), time.Hour), agent); err != nil {
		t.Fatal(err)
	}
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if msg := err.Error(); !strings.Contains(msg, own) || strings.Contains(msg, other) {
			t.Errorf("%s: %q should name %s, not %s", what, msg, own, other)
		}
	}
	_, err := s.Get(past, "ew-1")
	check("read past the deadline", err)
	_, err = s.Deny(past, "ew-1", alice, "no")
	check("write past the deadline", err)
	_, err = s.List(past, ListOptions{})
	check("list past the deadline", err)

	// The direct cause, as database/sql gives it on either engine.
	for _, cause := range []error{context.DeadlineExceeded, errConnDone(), errBadConn()} {
		check("classified "+cause.Error(), s.bind().classify("get", cause))
	}
}

func errConnDone() error { return sql.ErrConnDone }
func errBadConn() error  { return driver.ErrBadConn }
