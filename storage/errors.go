package storage

import (
	"errors"
	"fmt"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// ErrNotFound: no proposal has that id.
var ErrNotFound = errors.New("no proposal with that id")

// ErrConfirmMismatch: the typed confirmation is not exactly the id.
var ErrConfirmMismatch = errors.New("typed confirmation does not match the approval id")

// NotPendingError: the proposal has left pending (decided elsewhere, lost a
// race, or expired). It says how, by whom and when.
type NotPendingError struct {
	ID     string
	Status model.Status // effective status: consumed, denied or expired
	By     string       // consumed_by, when known
	At     *float64     // consumed_at, or expires_at for an expiry
}

func (e *NotPendingError) Error() string {
	switch e.Status {
	case model.StatusExpired:
		if e.At != nil {
			return fmt.Sprintf("proposal %s expired at %s", model.Sanitize(e.ID, model.Line), model.FromEpoch(*e.At).UTC().Format(time.RFC3339))
		}
		return fmt.Sprintf("proposal %s has expired", model.Sanitize(e.ID, model.Line))
	default:
		msg := fmt.Sprintf("proposal %s is not pending: already %s", model.Sanitize(e.ID, model.Line), e.Status)
		if e.By != "" {
			msg += " by " + model.Sanitize(e.By, model.Line)
		}
		if e.At != nil {
			msg += " at " + model.FromEpoch(*e.At).UTC().Format(time.RFC3339)
		}
		return msg
	}
}

// DuplicateError: Submit found the id already taken.
type DuplicateError struct{ ID string }

func (e *DuplicateError) Error() string {
	return "a proposal with id " + model.Sanitize(e.ID, model.Line) + " already exists"
}

// ReadOnlyError: the store or the actor may not change anything.
type ReadOnlyError struct {
	Reason string
	// Watcher: the actor is a watcher (the store itself could be written).
	Watcher bool
}

func (e *ReadOnlyError) Error() string { return "read-only: " + e.Reason }

// CorruptError: the row cannot be trusted (bad JSON, invalid proposal, or
// columns that contradict the payload). Such a row can be denied, never
// consumed.
type CorruptError struct {
	ID     string
	Reason string
}

func (e *CorruptError) Error() string {
	return "proposal " + model.Sanitize(e.ID, model.Line) + " is corrupt and cannot be approved: " + e.Reason
}

// UnavailableError: the store could not do the work (locked past the
// timeout, disk full, I/O error, not a database, schema too new). Nothing
// was changed.
type UnavailableError struct {
	Op     string
	Reason string
	Err    error
}

func (e *UnavailableError) Error() string {
	msg := "store unavailable"
	if e.Op != "" {
		msg += " (" + e.Op + ")"
	}
	msg += ": " + e.Reason
	return msg
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// InvalidTransitionError: RecordExecution asked for an outcome that does not
// follow the current one (e.g. recording twice, or on an unconsumed row).
type InvalidTransitionError struct {
	ID     string
	Reason string
}

func (e *InvalidTransitionError) Error() string {
	return "cannot record execution for " + model.Sanitize(e.ID, model.Line) + ": " + e.Reason
}

// classify turns a driver error into one the surfaces can explain, where
// the engine in use is not known (opening): errors that are already ours
// pass through, and an engine explains only the errors that can only be its
// own (a SQLite result code, a PostgreSQL error code or failed connect).
// Where the store is known, its own classify (classifyOn) explains the
// errors any engine can give (a deadline, a closed connection) in the
// engine's words.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	if ours(err) {
		return err
	}
	if c := sqliteTyped(op, err); c != nil {
		return c
	}
	if c := pgTyped(op, err); c != nil {
		return c
	}
	return &UnavailableError{Op: op, Reason: err.Error(), Err: err}
}

// classifyOn is classify on a store whose engine is e: an error no engine
// recognises as its own is still said in e's words.
func classifyOn(e engine, op string, err error) error {
	if err == nil {
		return nil
	}
	if ours(err) {
		return err
	}
	if c := e.classify(op, err); c != nil {
		return c
	}
	return classify(op, err)
}

// classify is classifyOn for the store's engine.
func (f *dbfile) classify(op string, err error) error { return classifyOn(f.eng, op, err) }

// ours reports an error this package made and explained already.
func ours(err error) bool {
	var (
		ro *ReadOnlyError
		un *UnavailableError
	)
	return errors.As(err, &ro) || errors.As(err, &un)
}

// refusalCode is the short reason recorded in the audit log for a refused
// attempt.
// RefusedError: the store refused to approve for a reason of its own
// (refusal codes "hardline", "content_changed", "short_id"). It is audited.
type RefusedError struct {
	ID     string
	Code   string
	Reason string
	// Verb is what was refused ("denied", "set"); "" is "approved".
	Verb string
}

func (e *RefusedError) Error() string {
	verb := e.Verb
	if verb == "" {
		verb = "approved"
	}
	if e.ID == PolicyRef && verb == "set" {
		return "the policy cannot be set: " + e.Reason
	}
	return "proposal " + model.Sanitize(e.ID, model.Line) + " cannot be " + verb + ": " + e.Reason
}

// Refusal codes of RefusedError.
const (
	RefusedHardline       = "hardline"
	RefusedContentChanged = "content_changed"
	RefusedShortID        = "short_id"
	RefusedUntypableID    = "untypable_id"
	// RefusedTextConfirm: a tier-2 proposal approved by its id; only its
	// typed phrase approves it.
	RefusedTextConfirm = "text_confirm_required"
	// RefusedTampered: the payload differs from the one its submit audit
	// event recorded (Record.Tampered).
	RefusedTampered = "tampered"
	// RefusedPolicyAsks: a command was to be allowed unasked, and a rule
	// of the policy in force names it (PolicyAsksError).
	RefusedPolicyAsks = "policy_asks"
)

func refusalCode(err error) string {
	var (
		rf *RefusedError
		np *NotPendingError
		ro *ReadOnlyError
		co *CorruptError
		du *DuplicateError
		un *UnavailableError
		va *model.ValidationError
		it *InvalidTransitionError
		dm *DamagedError
		aa *AlreadyAnsweredError
		pa *PolicyAsksError
	)
	var tk *TakenError
	switch {
	case errors.As(err, &tk):
		return RefusedTaken
	case errors.As(err, &rf):
		return rf.Code
	case errors.As(err, &pa):
		return RefusedPolicyAsks
	case errors.As(err, &aa):
		return RefusedAlreadyAnswered
	case errors.As(err, &dm):
		return "damaged"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrConfirmMismatch):
		return "confirmation_mismatch"
	case errors.As(err, &np):
		if np.Status == model.StatusExpired {
			return "expired"
		}
		return "not_pending"
	case errors.As(err, &ro):
		return "read_only"
	case errors.As(err, &co):
		return "corrupt"
	case errors.As(err, &du):
		return "duplicate"
	case errors.As(err, &va):
		return "invalid"
	case errors.As(err, &it):
		return "invalid_transition"
	case errors.As(err, &un):
		return "store_error"
	}
	return "error"
}
