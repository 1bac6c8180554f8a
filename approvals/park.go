package approvals

import (
	"context"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// A parked proposal outlived its waiter: the agent stopped waiting (its
// hook timed out, it was killed, run --timeout ended) and the proposal
// stays open for a park window, so that an approval that comes late lets
// the same call through when the agent asks again, once (storage.Park,
// storage.Take). A reservation (a parks row whose StoppedAt is 0) is a
// proposal whose waiter may park it: nothing is said of it while that
// waiter lives; once it is gone without a word (killed), it is as good as
// parked. These are the words every surface says it in.

// ParkState is where a proposal stands with its park, as show --json and
// list --json give it (park.state).
type ParkState string

// ParkState values.
const (
	// ParkNone: never parked, or reserved while its waiter lives (or is
	// not read yet): nothing to say.
	ParkNone ParkState = ""
	// ParkParked: its waiter stopped and the window is open; approving it
	// (or its approval, when it is approved) lets the same call through
	// when it is asked again.
	ParkParked ParkState = "parked"
	// ParkReserved: reserved, and its waiter is gone without parking it
	// (killed): as good as parked.
	ParkReserved ParkState = "reserved"
	// ParkWindowOver: the window ended with nothing taken: an approval is
	// refused by the store, and an approval given in time was never taken.
	ParkWindowOver ParkState = "window_over"
	// ParkTaken: the call asked again took its approval.
	ParkTaken ParkState = "taken"
	// ParkClosed: it was parked and has been denied or expired since (or
	// ran without approval): nothing can take it.
	ParkClosed ParkState = "closed"
)

// ParkStateOf says where rec stands with its park (rec.Park) at now; ws is
// its waiter's state (nil: not read), which only a reservation needs.
func ParkStateOf(rec *storage.Record, ws *storage.WaiterStatus, now time.Time) ParkState {
	p := rec.Park
	if p == nil {
		return ParkNone
	}
	if p.TakenBy != "" {
		return ParkTaken
	}
	st := rec.EffectiveStatus
	approvedIdle := st == model.StatusConsumed && rec.ExecutionStatus == model.ExecNotStarted
	if !st.Open() && !approvedIdle {
		if p.StoppedAt == 0 {
			return ParkNone // its waiter saw the end: it never stopped
		}
		return ParkClosed
	}
	if p.StoppedAt == 0 && (ws == nil || ws.State == storage.WaiterLive) {
		return ParkNone // reserved, its waiter lives (or is not read)
	}
	if !p.Open(now) {
		return ParkWindowOver
	}
	if p.StoppedAt == 0 {
		return ParkReserved
	}
	return ParkParked
}

// Clock is a time of day as the park words say it ("04:12 UTC"), in UTC
// as every surface says times; with the date when it is not now's day.
func Clock(sec float64, now time.Time) string { return clock(sec, now) }

func clock(sec float64, now time.Time) string {
	t := model.FromEpoch(sec).UTC()
	if t.Format(time.DateOnly) == now.UTC().Format(time.DateOnly) {
		return t.Format("15:04") + " UTC"
	}
	return t.Format("2006-01-02 15:04") + " UTC"
}

// ParkWords is what is said of rec's park (ParkStateOf) at now, on one
// line; "" when there is nothing to say. Parked: "the agent stopped
// waiting at 03:12 UTC (hook timeout); approving lets this exact call
// through when it is asked again, until 04:12 UTC". Reserved and its
// waiter gone: "its hook stopped without a word at 03:12 UTC (killed?);
// ...". Window over: "... park window ended at 04:12 UTC: an approval is
// refused". Taken: "taken by hook@host at 04:01 UTC". Every string from
// the store is sanitised.
func ParkWords(rec *storage.Record, ws *storage.WaiterStatus, now time.Time) string {
	state := ParkStateOf(rec, ws, now)
	if state == ParkNone {
		return ""
	}
	p := rec.Park
	until := clock(p.Until, now)
	stopped := stoppedWords(rec, ws, now)
	approved := rec.EffectiveStatus == model.StatusConsumed
	switch state {
	case ParkTaken:
		s := "taken by " + orDash(line(p.TakenBy))
		if p.TakenAt != nil {
			s += " at " + clock(*p.TakenAt, now)
		}
		return s + ": its approval let the call asked again through, once"
	case ParkClosed:
		return stopped + "; parked until " + until + ", then " + line(string(rec.EffectiveStatus))
	case ParkWindowOver:
		if approved {
			return stopped + "; approved, but the park window ended at " + until + " before the call was asked again: nothing ran"
		}
		return stopped + "; park window ended at " + until + ": an approval is refused"
	}
	if approved {
		return stopped + "; approved: this exact call goes through when it is asked again, until " + until
	}
	return stopped + "; approving lets this exact call through when it is asked again, until " + until
}

// stoppedWords says when and why rec's waiter stopped: "the agent stopped
// waiting at 03:12 UTC (hook timeout)", or, for a reservation whose waiter
// is gone, "its hook stopped without a word at 03:12 UTC (killed?)" (at
// its last heartbeat; no time when none was seen).
func stoppedWords(rec *storage.Record, ws *storage.WaiterStatus, now time.Time) string {
	p := rec.Park
	if p.StoppedAt == 0 {
		s := "its hook stopped without a word"
		if ws != nil && ws.Waiter != nil {
			s += " at " + clock(ws.Waiter.HeartbeatAt, now)
		}
		return s + " (killed?)"
	}
	s := "the agent stopped waiting at " + clock(p.StoppedAt, now)
	if why := line(p.Why); why != "" {
		s += " (" + why + ")"
	}
	return s
}

// ParkMark is the one-character mark of a park in a list's flag column:
// "P" for a proposal parked (or reserved, its waiter gone) or whose park
// window ended with nothing taken; "" otherwise.
func ParkMark(state ParkState) string {
	switch state {
	case ParkParked, ParkReserved, ParkWindowOver:
		return "P"
	}
	return ""
}

// ParkJSON is rec's park as show --json and list --json give it: {state,
// stopped_at, until, why, taken_by, taken_at, words}; nil when there is
// nothing to say (ParkStateOf is ParkNone). stopped_at is null for a
// reservation (its waiter never said it stopped); gone_at is then its
// waiter's last heartbeat, where one was seen.
func ParkJSON(rec *storage.Record, ws *storage.WaiterStatus, now time.Time) *model.JSONObject {
	state := ParkStateOf(rec, ws, now)
	if state == ParkNone {
		return nil
	}
	p := rec.Park
	o := model.NewJSONObject().Str("state", string(state))
	if p.StoppedAt == 0 {
		o.Raw("stopped_at", "null")
		if ws != nil && ws.Waiter != nil {
			o.Num("gone_at", ws.Waiter.HeartbeatAt)
		}
	} else {
		o.Num("stopped_at", p.StoppedAt)
	}
	return o.Num("until", p.Until).Str("why", p.Why).OptStr("taken_by", p.TakenBy).OptNum("taken_at", p.TakenAt).
		Str("words", ParkWords(rec, ws, now))
}

// ReadParks sets the park of each of recs (one bulk read,
// storage.Store.FillParks) and reads the waiter state of each reservation
// among them, the only ones whose words need it: by approval id. A list
// reads its records without their parks; this is what Get does for one.
func ReadParks(ctx context.Context, s *storage.Store, recs []*storage.Record) (map[string]*storage.WaiterStatus, error) {
	if err := s.FillParks(ctx, recs); err != nil {
		return nil, err
	}
	out := map[string]*storage.WaiterStatus{}
	for _, r := range recs {
		if r.Park == nil || r.Park.StoppedAt != 0 || r.Park.TakenBy != "" {
			continue
		}
		ws, err := s.WaiterState(ctx, r.ApprovalID)
		if err != nil {
			return nil, err
		}
		out[r.ApprovalID] = &ws
	}
	return out, nil
}

// ExecWords is an execution status as a surface says it: "ran without
// approval" for approve-tui's own ran_without_approval (the agent reported
// the call as run while the proposal was not approved), the status itself
// otherwise; sanitised.
func ExecWords(s model.ExecutionStatus) string {
	if s == model.ExecRanWithoutApproval {
		return "ran without approval"
	}
	return line(string(s))
}

// RanWithoutApprovalWords is what is said of a proposal whose call ran
// without approval: "ran without approval (reason)"; "" for any other.
func RanWithoutApprovalWords(rec *storage.Record) string {
	if rec.ExecutionStatus != model.ExecRanWithoutApproval {
		return ""
	}
	s := ExecWords(rec.ExecutionStatus)
	if r := line(rec.ExecutionReason); r != "" {
		s += " (" + r + ")"
	}
	return s
}

// WithParkJSON adds rec's park (ParkJSON) to o as "park", when there is
// anything to say of it; o unchanged otherwise.
func WithParkJSON(o *model.JSONObject, rec *storage.Record, ws *storage.WaiterStatus, now time.Time) *model.JSONObject {
	if pk := ParkJSON(rec, ws, now); pk != nil {
		o.Obj("park", pk)
	}
	return o
}

// ApprovedParkedWords is what is said to the operator who just approved
// rec when it is parked (or reserved, its waiter gone; ws: its waiter's
// state before the approval): that nothing runs now and the same call
// asked again runs it, once, until the window ends; "" otherwise.
func ApprovedParkedWords(rec *storage.Record, ws *storage.WaiterStatus, now time.Time) string {
	switch ParkStateOf(rec, ws, now) {
	case ParkParked, ParkReserved:
		return "its agent stopped waiting (parked): nothing runs now; the same call, asked again, runs it once, until " + clock(rec.Park.Until, now)
	}
	return ""
}
