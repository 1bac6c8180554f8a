package tui

import (
	"errors"
	"fmt"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// outcomeText says what an approve or deny did, in the operator's words.
func outcomeText(msg decidedMsg, now time.Time) string {
	if msg.err == nil {
		if msg.action == "deny" {
			return "denied " + msg.id
		}
		s := "approved " + msg.id + " — this command, once"
		if msg.noWaiter {
			s += ". No live waiter: nothing runs until its agent checks the store"
		}
		return s
	}
	var (
		np *storage.NotPendingError
		ro *storage.ReadOnlyError
		co *storage.CorruptError
		un *storage.UnavailableError
		dm *storage.DamagedError
		rf *storage.RefusedError
	)
	switch {
	case errors.As(msg.err, &rf) && rf.Code == storage.RefusedContentChanged:
		return "NOT approved: " + msg.id + " changed since you read it (another process rewrote it). Read it again"
	case errors.As(msg.err, &rf):
		return "NOT approved: " + rf.Reason
	case errors.Is(msg.err, storage.ErrMoved):
		verb := "approved"
		if msg.action == "deny" {
			verb = "denied"
		}
		return "NOT " + verb + ": " + storeReason(msg.err)
	case errors.As(msg.err, &dm):
		return "not approved: " + model.Sanitize(dm.Error(), model.Line)
	case errors.Is(msg.err, storage.ErrConfirmMismatch) && msg.pasted:
		return "not approved: the id was pasted, and pasted text is refused: type " + msg.id + " yourself, character by character"
	case errors.Is(msg.err, storage.ErrConfirmMismatch):
		return "not approved: the typed text does not match " + msg.id
	case errors.Is(msg.err, storage.ErrNotFound):
		return msg.id + " no longer exists"
	case errors.As(msg.err, &np):
		if np.Status == model.StatusExpired {
			return "too late: " + msg.id + " expired" + agoAt(np.At, now)
		}
		return fmt.Sprintf("lost: %s was already %s by %s%s", msg.id, np.Status.Decision(),
			orDash(model.Sanitize(np.By, model.Line)), agoAt(np.At, now))
	case errors.As(msg.err, &ro):
		return "refused: " + model.Sanitize(ro.Reason, model.Line)
	case errors.As(msg.err, &co):
		return "refused: " + model.Sanitize(co.Error(), model.Line) + "; deny it instead"
	case errors.As(msg.err, &un):
		return storeAdvice(un)
	}
	return msg.action + " failed: " + model.Sanitize(msg.err.Error(), model.Line)
}

func outcomeStyle(msg decidedMsg, st Styles) lipgloss.Style {
	switch {
	case msg.err == nil && msg.action == "approve" && msg.noWaiter:
		return st.Warning
	case msg.err == nil:
		return st.OK
	}
	return st.Error
}

// goneText explains a proposal that left the pending list by another hand.
func goneText(rec *storage.Record, now time.Time) string {
	switch rec.EffectiveStatus {
	case model.StatusExpired:
		return rec.ApprovalID + " expired" + agoAt(rec.ExpiresAt, now)
	case model.StatusConsumed, model.StatusDenied:
		return fmt.Sprintf("%s was %s elsewhere by %s%s", rec.ApprovalID, rec.EffectiveStatus.Decision(),
			orDash(model.Sanitize(rec.ConsumedBy, model.Line)), agoAt(rec.ConsumedAt, now))
	}
	return rec.ApprovalID + " left the pending list"
}

func agoAt(at *float64, now time.Time) string {
	if at == nil {
		return ""
	}
	return " " + ago(model.FromEpoch(*at), now)
}

// storeAdvice turns a store failure into what the operator can do.
func storeAdvice(err error) string {
	var un *storage.UnavailableError
	var ro *storage.ReadOnlyError
	switch {
	case errors.As(err, &un):
		return "store unavailable — " + storeReason(un) + ". Nothing was changed; retry (d still denies when the store can be written)"
	case errors.As(err, &ro):
		return ro.Error()
	}
	return "store error: " + model.Sanitize(err.Error(), model.Line)
}

// storeReason is the sanitised reason of a store error.
func storeReason(err error) string {
	var un *storage.UnavailableError
	if errors.As(err, &un) {
		return model.Sanitize(un.Reason, model.Line)
	}
	return model.Sanitize(err.Error(), model.Line)
}
