package storage

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// How PostgreSQL's errors are told apart and explained.

// pgCode is the SQLSTATE the server sent with err ("" if none).
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func (*pgEngine) noTable(err error) bool { return pgCode(err) == "42P01" }

// noColumn: undefined_column.
func (*pgEngine) noColumn(err error) bool { return pgCode(err) == "42703" }

// lockTimeout: lock_timeout ran out (55P03), the PostgreSQL form of SQLite's
// busy timeout.
func (*pgEngine) lockTimeout(err error) bool { return pgCode(err) == "55P03" }

func (*pgEngine) retryable(err error) bool {
	c := pgCode(err)
	return c == "40P01" || c == "40001"
}

// connLost reports an error that means the connection to the server is gone.
func connLost(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &ne) || errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		strings.Contains(err.Error(), "conn closed") || strings.HasPrefix(pgCode(err), "08") ||
		pgCode(err) == "57P01" || pgCode(err) == "57P02" || pgCode(err) == "57P03"
}

func (*pgEngine) classify(op string, err error) error {
	if c := pgTyped(op, err); c != nil {
		return c
	}
	if connLost(err) {
		return &UnavailableError{Op: op, Err: err, Reason: "the connection to the PostgreSQL server was lost (" + err.Error() + "); nothing was written"}
	}
	return nil
}

// pgTyped explains the errors only PostgreSQL gives: a failed connect and
// an error the server sent with its code (nil for anything else).
func pgTyped(op string, err error) error {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		switch pgCode(err) {
		case "28P01", "28000":
			return &UnavailableError{Op: op, Err: err, Reason: "the PostgreSQL server refused the login: " + pgMessage(err) +
				" (check the user and password in the URL, PGPASSWORD or ~/.pgpass, and the server's pg_hba.conf)"}
		case "3D000":
			return &UnavailableError{Op: op, Err: err, Reason: "the PostgreSQL database does not exist: " + pgMessage(err) + " (create it with createdb)"}
		}
		return &UnavailableError{Op: op, Err: err, Reason: "cannot reach the PostgreSQL server: " + connectDetails(ce)}
	}
	switch c := pgCode(err); {
	case c == "55P03":
		return &UnavailableError{Op: op, Err: err, Reason: "the proposal is locked by another session past the timeout (lock_timeout); try again, or find the session holding it (pg_stat_activity)"}
	case c == "57014":
		return &UnavailableError{Op: op, Err: err, Reason: "the statement ran past its timeout (statement_timeout) and was cancelled; nothing was written"}
	case c == "25006":
		return &ReadOnlyError{Reason: pgServerReadOnly}
	case c == "42501":
		return &ReadOnlyError{Reason: "the PostgreSQL user may not write these tables: " + pgMessage(err)}
	case c == "53100":
		return &UnavailableError{Op: op, Err: err, Reason: "the PostgreSQL server's disk is full: " + pgMessage(err)}
	case c == "53300":
		return &UnavailableError{Op: op, Err: err, Reason: "the PostgreSQL server has no free connection slot: " + pgMessage(err)}
	case c == "40P01", c == "40001":
		return &UnavailableError{Op: op, Err: err, Reason: "the transaction kept losing to concurrent writers (" + pgMessage(err) + "); nothing was written; try again"}
	case c != "":
		return &UnavailableError{Op: op, Err: err, Reason: "PostgreSQL: " + pgMessage(err)}
	}
	return nil
}

// connectDetails is a failed connection's reasons, one per address tried,
// each said once, on one line.
func connectDetails(ce *pgconn.ConnectError) string {
	inner := errors.Unwrap(ce)
	if inner == nil {
		return ce.Error()
	}
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(inner.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	who := ""
	if ce.Config != nil {
		who = " (user " + ce.Config.User + ", database " + ce.Config.Database + ")"
	}
	return strings.Join(out, "; ") + who
}

func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		m := pe.Message
		if pe.Detail != "" {
			m += " (" + pe.Detail + ")"
		}
		return m + " [" + pe.Code + "]"
	}
	return err.Error()
}

// pgServerReadOnly is why nothing can be written to a server that accepts
// no writes.
const pgServerReadOnly = "the PostgreSQL server accepts no writes (a standby, or default_transaction_read_only)"

// commitLost is the error of a COMMIT whose answer never came: the server
// may have committed or rolled back, and only reading again tells.
func commitLost(op string, err error) error {
	return &UnavailableError{Op: op, Err: err, Reason: "the connection to the PostgreSQL server was lost during COMMIT (" + err.Error() +
		"): the server either recorded all of it or none of it; look at the proposal again (`approve-tui show ID`) before retrying"}
}
