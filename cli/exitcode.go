package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Exit codes (SPEC §4). wait documents its own in its help.
const (
	ExitOK          = 0
	ExitError       = 1 // any other error, including a corrupt proposal that cannot be approved
	ExitUsage       = 2 // bad flags or arguments
	ExitNotFound    = 3 // no proposal with that id
	ExitNotPending  = 4 // already decided, expired, or lost the race
	ExitMismatch    = 5 // the typed confirmation is not the id
	ExitUnavailable = 6 // store missing, locked, corrupt file, unwritable or read-only
	ExitTampered    = 7 // audit --verify found the log or a payload altered
	// ExitVoted: approve recorded a vote, and the proposal needs more
	// approvals (a rule of the approval policy applies); the code is
	// approve's, as ExitTampered is audit's.
	ExitVoted = 7

	ExitWaitDenied  = 10 // wait: the proposal was denied
	ExitWaitExpired = 11 // wait: the proposal expired
	ExitWaitTimeout = 12 // wait: --timeout passed, still pending
	ExitInterrupted = 130
)

// exitRow is one exit code and what it means.
type exitRow struct {
	code int
	// label is what the code column shows where it is not the number
	// itself ("N": run's command's own code).
	label   string
	meaning string
}

func (r exitRow) column() string {
	if r.label != "" {
		return r.label
	}
	return fmt.Sprint(r.code)
}

// exitTable is every one of approve-tui's own exit codes and what it
// means: the one table that the commands' help (exitCodes) and
// docs/reference/exit-codes.md are made from. A command whose code says
// something of its own (wait's 10, run's 13) has its rows in
// commandExits, made of the same codes.
var exitTable = []exitRow{
	{code: ExitOK, meaning: "success"},
	{code: ExitError, meaning: "error"},
	{code: ExitUsage, meaning: "usage: bad flags or arguments"},
	{code: ExitNotFound, meaning: "not found: no proposal with that id"},
	{code: ExitNotPending, meaning: "not pending: already decided, expired, or lost the race"},
	{code: ExitMismatch, meaning: "the typed confirmation did not match"},
	{code: ExitUnavailable, meaning: "store unavailable: database missing, locked, not a database, unwritable, or opened --read-only"},
	{code: ExitTampered, meaning: "audit --verify: the log or a payload was altered"},
	{code: ExitInterrupted, meaning: "interrupted (SIGINT or SIGTERM)"},
}

// exitMeaning is exitTable by code, for the help of the commands that can
// exit with each.
var exitMeaning = func() map[int]string {
	m := map[int]string{}
	for _, r := range exitTable {
		m[r.code] = r.meaning
	}
	return m
}()

// commandExits are the exit codes of the commands that give them words of
// their own, in the order their help lists them.
var commandExits = []struct {
	command string
	rows    []exitRow
}{
	{"approve", []exitRow{{code: ExitVoted, meaning: "a vote was recorded and the proposal needs more approvals (a rule of the policy applies)"}}},
	{"wait", []exitRow{
		{code: ExitOK, meaning: "approved (consumed)"},
		{code: ExitWaitDenied, meaning: "denied"},
		{code: ExitWaitExpired, meaning: "expired"},
		{code: ExitWaitTimeout, meaning: "--timeout passed and it is still pending"},
		{code: agent.ExitBlocked, meaning: "approved, but its signatures do not hold where trust is required (recorded blocked_after_consume, signature_invalid): do not run it"},
		{code: ExitError, meaning: "error; 2 usage; 3 not found; 6 store unavailable"},
		{code: ExitInterrupted, meaning: "interrupted (SIGINT or SIGTERM)"},
	}},
	{"run", []exitRow{
		{code: -1, label: "N", meaning: "the command ran: its own exit code (128+N when signal N killed it)"},
		{code: ExitError, meaning: "error; 2 usage; 6 store unavailable (nothing submitted, nothing run)"},
		{code: ExitWaitDenied, meaning: "denied (the reason is shown): not run"},
		{code: ExitWaitExpired, meaning: "expired with no decision: not run"},
		{code: ExitWaitTimeout, meaning: "--timeout passed: withdrawn, not run"},
		{code: agent.ExitHardline, meaning: "a hardline rule matched: refused without a proposal, not run"},
		{code: agent.ExitBlocked, meaning: "approved, but refused at run time (its risk rose, the pinned bytes differ, or what it would touch grew): not run, recorded blocked_after_consume"},
		{code: agent.ExitCannotRun, meaning: "approved, but it could not be started: recorded dispatch_failed"},
		{code: agent.ExitNotFound, meaning: "approved, but the command was not found: recorded dispatch_failed"},
		{code: ExitInterrupted, meaning: "interrupted while waiting: withdrawn, not run"},
	}},
	{"headless", []exitRow{
		{code: ExitOK, meaning: "the script ran to its end"},
		{code: ExitError, meaning: "a command failed (a Screenshot could not be written, the console quit before the end, a Set Width or Set Height further down made the screen smaller than 80x24)"},
		{code: ExitUsage, meaning: "usage, or the script is invalid or its screen is smaller than 80x24 (nothing ran)"},
		{code: ExitUnavailable, meaning: "store unavailable"},
		{code: ExitWaitTimedOut, meaning: "a Wait timed out (the last screen is printed)"},
		{code: ExitInterrupted, meaning: "interrupted"},
	}},
	{"hook claude-code", []exitRow{{code: ExitOK, meaning: "always, with a JSON answer, bad flags included"}}},
	{"hook codex, hook gemini", []exitRow{
		{code: ExitOK, meaning: "a JSON answer (deny for every failure the hook sees)"},
		{code: ExitUsage, meaning: "bad flags: the reason on stderr, which the agent reads as a block"},
	}},
}

// exitRowsOf is commandExits' rows for command.
func exitRowsOf(command string) []exitRow {
	for _, c := range commandExits {
		if c.command == command {
			return c.rows
		}
	}
	panic("no exit codes of " + command)
}

// exitCodes is the help's list of the exit codes a command can end with
// (exitMeaning's words, unless meanings gives its own for a code).
func exitCodes(codes ...int) string { return exitCodesWhere(nil, codes...) }

func exitCodesWhere(meanings map[int]string, codes ...int) string {
	rows := make([]exitRow, len(codes))
	for i, c := range codes {
		m, ok := meanings[c]
		if !ok {
			m = exitMeaning[c]
		}
		rows[i] = exitRow{code: c, meaning: m}
	}
	return "\n" + exitRowsText(rows)
}

// exitRowsText is "Exit codes:" and rows, one a line, the meaning
// wrapped at 79 columns under its first word (by hand: ansi.Wordwrap
// breaks at hyphens, and --read-only must stay whole).
func exitRowsText(rows []exitRow) string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	for _, r := range rows {
		col := fmt.Sprintf("  %-4s", r.column())
		b.WriteString(col)
		n := len(col)
		for _, w := range strings.Fields(r.meaning) {
			if n+1+len(w) > 79 {
				b.WriteString("\n" + strings.Repeat(" ", len(col)))
				n = len(col)
			}
			b.WriteString(" " + w)
			n += 1 + len(w)
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// dashIDHelp is said by the commands that take an approval id.
const dashIDHelp = `

Approval ids may start with '-': put such an id after --, as in
"approve-tui show -- -AbC123".`

// exitError carries an explicit exit code and the message to print (empty
// message: print nothing more).
type exitError struct {
	code int
	msg  string
	// passthrough: the code is another program's (run's command), not one of
	// approve-tui's own; no usage hint follows a 2.
	passthrough bool
}

func (e *exitError) Error() string { return e.msg }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// usageError is a bad flag or argument found after parsing.
func usageErrorf(format string, args ...any) error {
	return exitf(ExitUsage, format, args...)
}

// storeOpenError wraps any failure of storage.Open: the store is unavailable.
type storeOpenError struct{ err error }

func (e *storeOpenError) Error() string { return e.err.Error() }
func (e *storeOpenError) Unwrap() error { return e.err }

// exitCode maps an error to its exit code and the message to print.
func exitCode(err error, now time.Time) (int, string) {
	var (
		ee *exitError
		np *storage.NotPendingError
		co *storage.CorruptError
		ro *storage.ReadOnlyError
		un *storage.UnavailableError
		so *storeOpenError
		du *storage.DuplicateError
	)
	switch {
	case err == nil:
		return ExitOK, ""
	case errors.As(err, &ee):
		return ee.code, ee.msg
	case errors.Is(err, context.Canceled):
		return ExitInterrupted, "interrupted"
	case errors.Is(err, storage.ErrNotFound):
		return ExitNotFound, err.Error()
	case errors.As(err, &np):
		return ExitNotPending, notPendingMessage(np, now)
	case errors.Is(err, storage.ErrConfirmMismatch):
		return ExitMismatch, "the typed confirmation does not match the approval id; nothing was approved"
	case errors.As(err, &co):
		return ExitError, fmt.Sprintf("proposal %s is corrupt, cannot be approved; deny it (%s)", co.ID, co.Reason)
	case errors.As(err, &un), errors.As(err, &so):
		// Before the read-only case: a store that could not even be opened
		// says so, whatever it wraps.
		return ExitUnavailable, err.Error()
	case errors.As(err, &ro):
		return ExitUnavailable, readOnlyMessage(ro)
	case errors.As(err, &du):
		return ExitError, err.Error()
	}
	return ExitError, err.Error()
}

// readOnlyMessage says in one sentence why nothing was written: the actor
// is a watcher, or the store itself cannot be written.
func readOnlyMessage(ro *storage.ReadOnlyError) string {
	if ro.Watcher {
		return "refused, nothing changed: " + ro.Reason
	}
	return "refused, nothing changed: the store is read-only (" + ro.Reason + ")"
}

// notPendingMessage says who decided and when, or when it expired.
func notPendingMessage(e *storage.NotPendingError, now time.Time) string {
	if e.Status == model.StatusExpired {
		if e.At != nil && model.FromEpoch(*e.At).After(now) {
			// Closed before its time (abandoned, or its agent ran it).
			return fmt.Sprintf("proposal %s is closed (expired early; it was due to expire %s)", e.ID, when(*e.At, now))
		}
		if e.At != nil {
			return fmt.Sprintf("proposal %s expired %s", e.ID, when(*e.At, now))
		}
		return fmt.Sprintf("proposal %s has expired", e.ID)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "proposal %s is not pending: already %s", e.ID, e.Status)
	if e.By != "" {
		b.WriteString(" by " + e.By)
	}
	if e.At != nil {
		b.WriteString(" " + when(*e.At, now))
	}
	return b.String()
}
