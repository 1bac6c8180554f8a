package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Paging's bookkeeping (approve-tui notify). Each delivery (one event of
// one proposal to one channel: its page, an escalation step, a reminder, or
// its resolution) is a row, added when it falls due (an insert that a
// second notifier's same insert leaves alone), claimed by exactly one
// notifier before it is sent (a compare-and-set with a lease), and finished
// as delivered, failed or cancelled (an audit event each) or put back with
// a time to try again. A notifier killed between claim and finish leaves a
// lease that runs out; the delivery is then claimed again, so at most that
// one delivery is sent twice, under the same delivery id.

// Delivery states.
const (
	DeliveryPending   = "pending"   // due (at next_at), not claimed
	DeliverySending   = "sending"   // claimed by a notifier until lease_until
	DeliveryDelivered = "delivered" // the service took it
	DeliveryFailed    = "failed"    // given up: the service refused it, or it stayed down too long
	DeliveryCancelled = "cancelled" // not sent: the proposal closed before it could go
)

// EventDelivery is the audit event of a delivery that ended: outcome ok
// (delivered), failed (given up), or cancelled (not sent: the proposal
// closed, or was gone, before it could go). Its detail says the kind,
// step, channel, attempts and delivery id, and state (delivered, failed,
// cancelled).
const EventDelivery = "delivery"

// OutcomeCancelled is a delivery event's outcome when it was not sent.
const OutcomeCancelled = DeliveryCancelled

// DeliveryKey names one delivery.
type DeliveryKey struct {
	ApprovalID string
	Kind       string // page, escalation, reminder, resolved
	Step       int
	Channel    string
}

// ID is the delivery's stable id (the same at every attempt and after a
// restart): what a receiver de-duplicates on.
func (k DeliveryKey) ID() string {
	return k.ApprovalID + "/" + k.Kind + "/" + strconv.Itoa(k.Step) + "/" + k.Channel
}

// Delivery is one delivery's row.
type Delivery struct {
	DeliveryKey
	State      string
	Attempts   int
	CreatedAt  float64
	NextAt     float64
	LeaseUntil float64
	ClaimedBy  string
	LastError  string
	DoneAt     *float64
}

const deliveryColumns = `approval_id, kind, step, channel, state, attempts, created_at, next_at, lease_until, claimed_by, last_error, done_at`

func scanDelivery(sc interface{ Scan(...any) error }) (*Delivery, error) {
	var d Delivery
	var done sql.NullFloat64
	if err := sc.Scan(&d.ApprovalID, &d.Kind, &d.Step, &d.Channel, &d.State, &d.Attempts, &d.CreatedAt, &d.NextAt,
		&d.LeaseUntil, &d.ClaimedBy, &d.LastError, &done); err != nil {
		return nil, err
	}
	if done.Valid {
		d.DoneAt = &done.Float64
	}
	return &d, nil
}

// AddDeliveries adds the deliveries that fell due, due at once; one that
// exists already (another notifier added it, or it was sent) is left as it
// is. It returns how many were added. Not audited: nothing was sent yet.
func (st *Store) AddDeliveries(ctx context.Context, keys []DeliveryKey) (int, error) {
	s := st.bind()
	if len(keys) == 0 {
		return 0, nil
	}
	if r := s.roReason(); r != "" {
		return 0, &ReadOnlyError{Reason: r}
	}
	now := model.Epoch(s.now())
	added := 0
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.inWriteTxLocked(ctx, "deliveries", func(ctx context.Context) error {
		added = 0
		for _, k := range keys {
			res, err := s.w.ExecContext(ctx, `INSERT INTO approve_tui_deliveries
				(approval_id, kind, step, channel, state, created_at, next_at) VALUES (?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (approval_id, kind, step, channel) DO NOTHING`,
				k.ApprovalID, k.Kind, k.Step, k.Channel, DeliveryPending, now, now)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				added++
			}
		}
		return nil
	})
	return added, s.classify("deliveries", err)
}

// ClaimDelivery claims k for notifier by until lease from now: only a
// pending delivery that is due, or one whose claim's lease ran out (its
// notifier died mid-send), is claimed, by exactly one caller. It returns
// the claimed row (attempts counted), or nil when k was not claimable.
func (st *Store) ClaimDelivery(ctx context.Context, k DeliveryKey, by string, lease time.Duration) (*Delivery, error) {
	s := st.bind()
	if r := s.roReason(); r != "" {
		return nil, &ReadOnlyError{Reason: r}
	}
	now := model.Epoch(s.now())
	var got *Delivery
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.inWriteTxLocked(ctx, "deliveries", func(ctx context.Context) error {
		got = nil
		d, err := scanDelivery(s.w.QueryRowContext(ctx, `UPDATE approve_tui_deliveries
			SET state = ?, claimed_by = ?, lease_until = ?, attempts = attempts + 1
			WHERE approval_id = ? AND kind = ? AND step = ? AND channel = ?
			AND ((state = ? AND next_at <= ?) OR (state = ? AND lease_until <= ?))
			RETURNING `+deliveryColumns,
			DeliverySending, by, now+lease.Seconds(), k.ApprovalID, k.Kind, k.Step, k.Channel,
			DeliveryPending, now, DeliverySending, now))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		got = d
		return err
	})
	return got, s.classify("deliveries", err)
}

// DeliveryResult is how one attempt ended.
type DeliveryResult struct {
	// State: DeliveryDelivered, DeliveryFailed (final), DeliveryCancelled,
	// or DeliveryPending to try again at RetryAt.
	State   string
	RetryAt time.Time
	// Err says what went wrong (no secrets: the channel's own words).
	Err string
	// Detail is added to the audit event (kind, channel and attempts are
	// always there).
	Detail map[string]any
}

// ErrNotClaimed: the delivery is no longer claimed by the caller (its lease
// ran out and another notifier took it, or it was finished).
var ErrNotClaimed = errors.New("the delivery is not claimed by this notifier")

// FinishDelivery ends the attempt on k that notifier by claimed. Delivered,
// failed and cancelled are audited (event delivery, on the proposal, in the
// same transaction); pending puts it back for RetryAt, unaudited (the
// attempt's error is the row's last_error). ErrNotClaimed when by no longer
// holds the claim.
func (st *Store) FinishDelivery(ctx context.Context, k DeliveryKey, by string, r DeliveryResult, actor model.Actor) error {
	s := st.bind()
	switch r.State {
	case DeliveryDelivered, DeliveryFailed, DeliveryCancelled, DeliveryPending:
	default:
		return fmt.Errorf("finish delivery: %q is not a delivery state", r.State)
	}
	finish := func(ctx context.Context) (int, error) {
		now := model.Epoch(s.now())
		next, done := now, any(now)
		if r.State == DeliveryPending {
			next, done = model.Epoch(r.RetryAt), nil
		}
		d, err := scanDelivery(s.w.QueryRowContext(ctx, `UPDATE approve_tui_deliveries
			SET state = ?, next_at = ?, lease_until = 0, last_error = ?, done_at = ?
			WHERE approval_id = ? AND kind = ? AND step = ? AND channel = ? AND state = ? AND claimed_by = ?
			RETURNING `+deliveryColumns,
			r.State, next, columnText(r.Err), done, k.ApprovalID, k.Kind, k.Step, k.Channel, DeliverySending, by))
		if errors.Is(err, sql.ErrNoRows) {
			return 0, ErrNotClaimed
		}
		if err != nil {
			return 0, err
		}
		return d.Attempts, nil
	}
	if r.State == DeliveryPending {
		s.wmu.Lock()
		defer s.wmu.Unlock()
		err := s.inWriteTxLocked(ctx, "deliveries", func(ctx context.Context) error {
			_, err := finish(ctx)
			return err
		})
		if errors.Is(err, ErrNotClaimed) {
			return err
		}
		return s.classify("deliveries", err)
	}
	var notClaimed bool
	err := s.run(ctx, transition{event: EventDelivery, id: k.ApprovalID, actor: actor, apply: func(ctx context.Context) ([]auditEntry, error) {
		attempts, err := finish(ctx)
		if errors.Is(err, ErrNotClaimed) {
			notClaimed = true
			return nil, nil // nothing to record: another notifier owns it
		}
		if err != nil {
			return nil, err
		}
		d := map[string]any{"kind": k.Kind, "step": k.Step, "channel": k.Channel, "attempts": attempts, "delivery_id": k.ID(),
			"state": r.State}
		for key, v := range r.Detail {
			d[key] = v
		}
		outcome := OutcomeOK
		switch r.State {
		case DeliveryFailed:
			outcome = OutcomeFailed
			d["error"] = r.Err
		case DeliveryCancelled:
			outcome = OutcomeCancelled
			d["why"] = r.Err
		}
		return []auditEntry{{id: k.ApprovalID, event: EventDelivery, outcome: outcome, reason: k.Kind + " via " + k.Channel, detail: d}}, nil
	}})
	if err == nil && notClaimed {
		return ErrNotClaimed
	}
	return err
}

// DueDeliveries lists the deliveries that can be claimed now (due pending
// ones, and claims whose lease ran out), oldest first, at most limit.
func (st *Store) DueDeliveries(ctx context.Context, limit int) ([]Delivery, error) {
	s := st.bind()
	now := model.Epoch(s.now())
	return st.queryDeliveries(ctx, `SELECT `+deliveryColumns+` FROM approve_tui_deliveries
		WHERE (state = ? AND next_at <= ?) OR (state = ? AND lease_until <= ?)
		ORDER BY next_at, approval_id, kind, step, channel LIMIT ?`, DeliveryPending, now, DeliverySending, now, limit)
}

// NextDeliveryAt is when the next pending or claimed delivery falls due
// (false when none waits).
func (st *Store) NextDeliveryAt(ctx context.Context) (time.Time, bool, error) {
	s := st.bind()
	var at sql.NullFloat64
	err := s.rdb.QueryRowContext(ctx, `SELECT min(CASE WHEN state = ? THEN next_at ELSE lease_until END)
		FROM approve_tui_deliveries WHERE state IN (?, ?)`, DeliveryPending, DeliveryPending, DeliverySending).Scan(&at)
	if isNoTable(err) {
		return time.Time{}, false, nil
	}
	if err != nil || !at.Valid {
		return time.Time{}, false, s.classify("deliveries", err)
	}
	return model.FromEpoch(at.Float64), true, nil
}

// DeliveriesOf lists proposal id's deliveries, in the order they were added.
func (st *Store) DeliveriesOf(ctx context.Context, id string) ([]Delivery, error) {
	return st.queryDeliveries(ctx, `SELECT `+deliveryColumns+` FROM approve_tui_deliveries WHERE approval_id = ?
		ORDER BY created_at, step, kind, channel`, id)
}

// UnresolvedPaged lists the proposals that have a delivered page,
// escalation or reminder, no resolution row yet, and are no longer open
// (decided, expired, or gone), at most limit. Open ones are left out, and
// so are those whose pages never went out, so that they cannot fill the
// limit and hold back the resolutions that are due.
func (st *Store) UnresolvedPaged(ctx context.Context, limit int) ([]string, error) {
	s := st.bind()
	rows, err := s.rdb.QueryContext(ctx, `SELECT DISTINCT d.approval_id FROM approve_tui_deliveries d
		LEFT JOIN gateway_approvals g ON g.approval_id = d.approval_id
		WHERE d.kind NOT IN ('resolved', 'refused') AND d.state = ? AND NOT EXISTS (SELECT 1 FROM approve_tui_deliveries r
			WHERE r.approval_id = d.approval_id AND r.kind = 'resolved')
		AND (g.approval_id IS NULL OR NOT (g.status IN ('pending', 'pending_confirm') AND (g.expires_at IS NULL OR g.expires_at > ?)))
		ORDER BY d.approval_id LIMIT ?`, DeliveryDelivered, model.Epoch(s.now()), limit)
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify("deliveries", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, s.classify("deliveries", err)
		}
		out = append(out, id)
	}
	return out, s.classify("deliveries", rows.Err())
}

func (st *Store) queryDeliveries(ctx context.Context, q string, args ...any) ([]Delivery, error) {
	s := st.bind()
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify("deliveries", err)
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, s.classify("deliveries", err)
		}
		out = append(out, *d)
	}
	return out, s.classify("deliveries", rows.Err())
}

// Notifier is one running notifier, as the console shows it.
type Notifier struct {
	Notifier     string
	Host         string
	PID          int
	StartedAt    float64
	HeartbeatAt  float64
	Trouble      string
	TroubleSince float64
}

// NotifierStaleAfter is when a notifier that stopped heartbeating no longer
// counts as running.
const NotifierStaleAfter = 30 * time.Second

// SetNotifier writes notifier n's row (its heartbeat; its trouble, ""
// when none). Not audited.
func (st *Store) SetNotifier(ctx context.Context, n Notifier) error {
	s := st.bind()
	if r := s.roReason(); r != "" {
		return &ReadOnlyError{Reason: r}
	}
	now := model.Epoch(s.now())
	if n.StartedAt == 0 {
		n.StartedAt = now
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.classify("notifier", s.inWriteTxLocked(ctx, "notifier", func(ctx context.Context) error {
		_, err := s.w.ExecContext(ctx, `INSERT INTO approve_tui_notifiers
			(notifier, host, pid, started_at, heartbeat_at, trouble, trouble_since) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (notifier) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, trouble = excluded.trouble,
			trouble_since = excluded.trouble_since`,
			n.Notifier, columnText(n.Host), n.PID, n.StartedAt, now, columnText(n.Trouble), n.TroubleSince)
		return err
	}))
}

// RemoveNotifier deletes a notifier's row when it stops.
func (st *Store) RemoveNotifier(ctx context.Context, id string) error {
	s := st.bind()
	if s.roReason() != "" {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.classify("notifier", s.inWriteTxLocked(ctx, "notifier", func(ctx context.Context) error {
		_, err := s.w.ExecContext(ctx, `DELETE FROM approve_tui_notifiers WHERE notifier = ?`, id)
		return err
	}))
}

// Notifiers lists the notifiers that heartbeat recently, oldest first.
func (st *Store) Notifiers(ctx context.Context) ([]Notifier, error) {
	s := st.bind()
	since := model.Epoch(s.now()) - NotifierStaleAfter.Seconds()
	rows, err := s.rdb.QueryContext(ctx, `SELECT notifier, host, pid, started_at, heartbeat_at, trouble, trouble_since
		FROM approve_tui_notifiers WHERE heartbeat_at > ? ORDER BY started_at, notifier`, since)
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify("notifier", err)
	}
	defer rows.Close()
	var out []Notifier
	for rows.Next() {
		var n Notifier
		if err := rows.Scan(&n.Notifier, &n.Host, &n.PID, &n.StartedAt, &n.HeartbeatAt, &n.Trouble, &n.TroubleSince); err != nil {
			return nil, s.classify("notifier", err)
		}
		out = append(out, n)
	}
	return out, s.classify("notifier", rows.Err())
}
