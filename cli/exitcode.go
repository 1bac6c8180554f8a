package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

// exitMeaning is what each of approve-tui's own exit codes means, for the
// help of the commands that can exit with it.
var exitMeaning = map[int]string{
	ExitOK:          "success",
	ExitError:       "error",
	ExitUsage:       "usage: bad flags or arguments",
	ExitNotFound:    "not found: no proposal with that id",
	ExitNotPending:  "not pending: already decided, expired, or lost the race",
	ExitMismatch:    "the typed confirmation did not match",
	ExitUnavailable: "store unavailable: database missing, locked, not a database, unwritable, or opened --read-only",
	ExitTampered:    "audit --verify: the log or a payload was altered",
	ExitInterrupted: "interrupted (SIGINT or SIGTERM)",
}

// exitCodes is the help's list of the exit codes a command can end with
// (exitMeaning's words, unless meanings gives its own for a code).
func exitCodes(codes ...int) string { return exitCodesWhere(nil, codes...) }

func exitCodesWhere(meanings map[int]string, codes ...int) string {
	var b strings.Builder
	b.WriteString("\nExit codes:\n")
	for _, c := range codes {
		m, ok := meanings[c]
		if !ok {
			m = exitMeaning[c]
		}
		// Wrapped at 79 columns, under the meaning's first word (by
		// hand: ansi.Wordwrap breaks at hyphens, and --read-only must
		// stay whole).
		col := fmt.Sprintf("  %-4d", c)
		b.WriteString(col)
		n := len(col)
		for _, w := range strings.Fields(m) {
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
