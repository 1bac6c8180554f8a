package tui

import (
	"errors"
	"fmt"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// words is what a note says: text, then, when it tells of something that
// happened at a time (at), how long ago, then tail. The age is written again
// as the clock moves on (Model.ageNote): "denied elsewhere by alice 2m
// ago", not "just now" for as long as the note stays.
type words struct {
	text string
	at   *float64 // the epoch time of what happened (nil: no age)
	tail string
}

// said is words without an age.
func said(text string) words { return words{text: text} }

// saidAgo is words that end with how long ago at was.
func saidAgo(text string, at *float64) words { return words{text: text, at: at} }

// String is the words at now.
func (w words) String(now time.Time) string {
	if w.at == nil {
		return w.text + w.tail
	}
	return w.text + " " + human.Ago(model.FromEpoch(*w.at), now) + w.tail
}

// outcomeText says what an approve or deny did, in the operator's words,
// and, where it carried a signature, whose key signed it.
func outcomeText(msg decidedMsg) words {
	w := decisionText(msg)
	var vr *storage.VoteRecorded
	if msg.err == nil || errors.As(msg.err, &vr) {
		switch {
		case msg.sig != nil:
			w.tail += "; signed by " + signedBy(msg.sig)
		case msg.unsigned != "":
			w.tail += "; UNSIGNED (" + msg.unsigned + ")"
		}
	}
	return w
}

func decisionText(msg decidedMsg) words {
	if msg.err == nil {
		if msg.action == "deny" {
			return said("denied " + msg.id)
		}
		s := "approved " + msg.id + " — this command, once"
		if p := msg.parked; p != nil {
			// Its agent stopped waiting: the approval waits for the call
			// to be asked again.
			return said(s + ". Parked: nothing runs now; it runs when its agent asks again with the same call, until " +
				approvals.Clock(p.Until, model.FromEpoch(p.StoppedAt)))
		}
		if msg.rec != nil && msg.rec.Hermes != nil && !msg.noWaiter {
			s += "; handed to Hermes, which runs it"
		}
		if msg.noWaiter {
			s += ". No live waiter: nothing runs until its agent checks the store"
		}
		return said(s)
	}
	var (
		np *storage.NotPendingError
		ro *storage.ReadOnlyError
		co *storage.CorruptError
		un *storage.UnavailableError
		dm *storage.DamagedError
		rf *storage.RefusedError
		vr *storage.VoteRecorded
	)
	switch {
	case errors.As(msg.err, &vr):
		// Committed and audited: a success of its own kind, which leaves
		// the proposal pending.
		return said(voteText(vr))
	case errors.As(msg.err, &rf) && rf.Code == storage.RefusedContentChanged:
		return said("NOT approved: " + msg.id + " changed since you read it (another process rewrote it). Read it again")
	case errors.As(msg.err, &rf) && rf.Code == storage.RefusedParkOver:
		// (The detail's parked line says when it stopped and ended.)
		return said("NOT approved: the park window of " + msg.id + " is over; an approval would let nothing through. Deny it or let it expire")
	case errors.As(msg.err, &rf) && quorumRefusal(rf.Code):
		return said("NOT approved, " + refusalWords(rf.Code) + ": " + rf.Reason)
	case errors.As(msg.err, &rf):
		return said("NOT approved: " + rf.Reason)
	case errors.Is(msg.err, storage.ErrMoved):
		verb := "approved"
		if msg.action == "deny" {
			verb = "denied"
		}
		return said("NOT " + verb + ": " + storeReason(msg.err))
	case errors.As(msg.err, &dm):
		return said("not approved: " + model.Sanitize(dm.Error(), model.Line))
	case errors.Is(msg.err, storage.ErrConfirmMismatch) && msg.pasted:
		return said("not approved: the id was pasted, and pasted text is refused: type " + msg.id + " yourself, character by character")
	case errors.Is(msg.err, storage.ErrConfirmMismatch):
		return said("not approved: the typed text does not match " + msg.id)
	case errors.Is(msg.err, storage.ErrNotFound):
		return said(msg.id + " no longer exists")
	case errors.As(msg.err, &np):
		if np.Status == model.StatusExpired {
			return saidAgo("too late: "+msg.id+" expired", np.At)
		}
		return saidAgo(fmt.Sprintf("lost: %s was already %s by %s", msg.id, np.Status.Decision(),
			orDash(model.Sanitize(np.By, model.Line))), np.At)
	case errors.As(msg.err, &ro):
		return said("refused: " + model.Sanitize(ro.Reason, model.Line))
	case errors.As(msg.err, &co):
		return said("refused: " + model.Sanitize(co.Error(), model.Line) + "; deny it instead")
	case errors.As(msg.err, &un):
		return said(storeAdvice(un))
	}
	return said(msg.action + " failed: " + model.Sanitize(msg.err.Error(), model.Line))
}

// voteText says what a vote that does not complete the quorum did.
func voteText(vr *storage.VoteRecorded) string {
	s := "vote recorded on " + vr.ID
	if q := vr.Quorum; q != nil {
		s += ": " + q.Progress() + "; still needed: " + needed(q.Standing) + " (it stays pending)"
	}
	return s
}

// quorumRefusal reports whether code is one of the policy's refusals.
func quorumRefusal(code string) bool {
	switch code {
	case storage.RefusedSelfApproval, storage.RefusedDuplicateApprover, storage.RefusedNotEligible, storage.RefusedPolicyUnreadable:
		return true
	}
	return false
}

func outcomeStyle(msg decidedMsg, st Styles) lipgloss.Style {
	var vr *storage.VoteRecorded
	switch {
	case errors.As(msg.err, &vr):
		return st.OK
	case msg.err == nil && msg.action == "approve" && msg.noWaiter:
		return st.Warning
	case msg.err == nil:
		return st.OK
	}
	return st.Error
}

// goneText explains a proposal that left the pending list by another hand.
func goneText(rec *storage.Record) words {
	if ran := approvals.RanWithoutApprovalWords(rec); ran != "" {
		return saidAgo(rec.ApprovalID+": its agent reported the call as run; "+ran+", recorded", rec.ExecutionRecordedAt)
	}
	switch rec.EffectiveStatus {
	case model.StatusExpired:
		return saidAgo(rec.ApprovalID+" expired", rec.ExpiresAt)
	case model.StatusConsumed, model.StatusDenied:
		return saidAgo(fmt.Sprintf("%s was %s elsewhere by %s", rec.ApprovalID, rec.EffectiveStatus.Decision(),
			orDash(model.Sanitize(rec.ConsumedBy, model.Line))), rec.ConsumedAt)
	}
	return said(rec.ApprovalID + " left the pending list")
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
