package storage

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"sort"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

// Summaries for metrics and approve-tui stats: bounded reads, a few
// statements each, that never write (beyond the rank index's catch-up,
// which List does as well).

// OpenStats is what is open now (pending, or awaiting a tier-2 phrase, and
// not past its expiry), by effective risk.
type OpenStats struct {
	// ByRisk counts every risk level (zero included): low, medium, high,
	// tier2_critical, unknown.
	ByRisk map[model.RiskLevel]int
	Total  int
	// Oldest is the creation time of the oldest open proposal (zero when
	// none is open).
	Oldest time.Time
	// Partial: more open rows than openScanCap were counted by a scan
	// (a read-only store, or a rank index still being filled); the counts
	// are of the first openScanCap.
	Partial bool
}

// RiskLevels are the effective risk levels, lowest first.
var RiskLevels = []model.RiskLevel{model.RiskLow, model.RiskMedium, model.RiskHigh, model.RiskTier2, model.RiskUnknown}

// openScanCap bounds the rows OpenByRisk decodes when it cannot use the
// rank index.
const openScanCap = 100_000

func newOpenStats() OpenStats {
	o := OpenStats{ByRisk: make(map[model.RiskLevel]int, len(RiskLevels))}
	for _, r := range RiskLevels {
		o.ByRisk[r] = 0
	}
	return o
}

// OpenByRisk counts the open proposals by effective risk, and finds the
// oldest one's age: one grouped statement over the rank index (which holds
// each open row's effective rank), kept current as List keeps it. Where
// the index cannot be used (a read-only store, one far behind), the open
// rows are read and classified instead, at most openScanCap of them.
func (st *Store) OpenByRisk(ctx context.Context) (OpenStats, error) {
	s := st.bind()
	now := s.now()
	nowE := model.Epoch(now)
	if ok, _ := s.syncRankOr(ctx, true); ok {
		o, err := s.openByRank(ctx, nowE)
		if err == nil || !isNoTable(err) {
			return o, s.classify("stats", err)
		}
	}
	o := newOpenStats()
	recs, err := s.queryRecords(ctx, now, `SELECT `+s.cols()+` FROM gateway_approvals g
		WHERE `+s.openWhere("g.status")+` AND (g.expires_at IS NULL OR g.expires_at > ?) LIMIT ?`, nowE, openScanCap+1)
	if err != nil {
		return o, err
	}
	if len(recs) > openScanCap {
		recs, o.Partial = recs[:openScanCap], true
	}
	var oldest float64
	for _, rec := range recs {
		if !rec.EffectiveStatus.Open() {
			continue
		}
		o.ByRisk[rec.EffectiveRisk.Normalized()]++
		o.Total++
		if rec.CreatedAt > 0 && (oldest == 0 || rec.CreatedAt < oldest) {
			oldest = rec.CreatedAt
		}
	}
	if oldest > 0 {
		o.Oldest = model.FromEpoch(oldest)
	}
	return o, nil
}

// openByRank is OpenByRisk through the rank index: entries of rows no
// longer open (named stale, rankstale.go) drop out by the join's status.
func (s bound) openByRank(ctx context.Context, nowE float64) (OpenStats, error) {
	o := newOpenStats()
	rows, err := s.rdb.QueryContext(ctx, `SELECT r.rank, count(*), min(g.created_at) FROM approve_tui_rank r
		JOIN gateway_approvals g ON g.approval_id = r.approval_id
		WHERE `+s.openWhere("g.status")+` AND (g.expires_at IS NULL OR g.expires_at > ?)
		GROUP BY r.rank`, nowE)
	if err != nil {
		return o, err
	}
	defer rows.Close()
	var oldest float64
	for rows.Next() {
		var rank, n int
		var first any
		if err := rows.Scan(&rank, &n, &first); err != nil {
			return o, err
		}
		o.ByRisk[model.RiskFromRank(rank)] += n
		o.Total += n
		if f, ok := asFloat(first); ok && f > 0 && (oldest == 0 || f < oldest) {
			oldest = f
		}
	}
	if oldest > 0 {
		o.Oldest = model.FromEpoch(oldest)
	}
	return o, rows.Err()
}

// OldestOpen is the oldest open proposal's id and creation time (ok false
// when none is open). The id is the row's: hostile until sanitised.
func (st *Store) OldestOpen(ctx context.Context) (id string, created time.Time, ok bool, err error) {
	s := st.bind()
	var rid, rcreated any
	err = s.rdb.QueryRowContext(ctx, `SELECT g.approval_id, g.created_at FROM gateway_approvals g
		WHERE `+s.openWhere("g.status")+` AND (g.expires_at IS NULL OR g.expires_at > ?)
		ORDER BY g.created_at, g.approval_id LIMIT 1`, model.Epoch(s.now())).Scan(&rid, &rcreated)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, s.classify("stats", err)
	}
	id, _ = asText(rid)
	f, fok := asFloat(rcreated)
	if !fok {
		return id, time.Time{}, true, nil
	}
	return id, model.FromEpoch(f), true, nil
}

// DecisionCount is how many audit events of one decision and outcome.
type DecisionCount struct {
	Event   string // EventApprove, EventDeny, EventExpire
	Outcome string // OutcomeOK, OutcomeRefused
	N       int
}

// DecisionStats is what the audit log says of the decisions made since a
// time.
type DecisionStats struct {
	Counts []DecisionCount // by event, then outcome
	// Latencies are the seconds from submit to decision of the proposals
	// approved or denied (outcome ok), shortest first, at most
	// maxLatencies.
	Latencies []float64
	// Partial: there were more decisions than maxLatencies.
	Partial bool
	// Unswept is how many of the expiries counted are of proposals still
	// pending in the table: past their expiry within the window, and not
	// marked expired yet (by `approve-tui expire`, or Hermes). They are
	// counted as expired all the same: nothing can approve them.
	Unswept int
}

// maxLatencies bounds DecisionStats.Latencies.
const maxLatencies = 100_000

// auditSince is the last seq written before since: events after it are the
// window's. The log is read newest first and the read stops at the first
// event older than since, so it costs the window's events, not the log's.
// Clocks that went back are tolerated: an event inside the window but
// before an older one is left out; an event past the boundary but older
// than since is filtered out by its time.
func (s bound) auditSince(ctx context.Context, sinceE float64) (int64, error) {
	var seq int64
	err := s.rdb.QueryRowContext(ctx, `SELECT seq FROM approve_tui_audit WHERE at < ? ORDER BY seq DESC LIMIT 1`, sinceE).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return seq, err
}

// DecisionsSince counts the approvals, denials and expiries the audit log
// records since since (refusals too), with the proposals past their expiry
// since then that no sweep has marked yet counted as expired (Unswept),
// and the time each approved or denied proposal waited from its submit
// (its row's created_at) to the decision.
func (st *Store) DecisionsSince(ctx context.Context, since time.Time) (DecisionStats, error) {
	s := st.bind()
	var out DecisionStats
	sinceE := model.Epoch(since)
	from, err := s.auditSince(ctx, sinceE)
	if isNoTable(err) {
		return out, nil
	}
	if err != nil {
		return out, s.classify("stats", err)
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT event, outcome, count(*) FROM approve_tui_audit
		WHERE seq > ? AND at >= ? AND event IN (?, ?, ?)
		GROUP BY event, outcome ORDER BY event, outcome`, from, sinceE, EventApprove, EventDeny, EventExpire)
	if err != nil {
		return out, s.classify("stats", err)
	}
	for rows.Next() {
		var c DecisionCount
		if err := rows.Scan(&c.Event, &c.Outcome, &c.N); err != nil {
			rows.Close()
			return out, s.classify("stats", err)
		}
		out.Counts = append(out.Counts, c)
	}
	if err := rows.Close(); err != nil {
		return out, s.classify("stats", err)
	}
	// Proposals whose expiry passed within the window and that no sweep
	// has marked yet are expired all the same: counted by their expiry.
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM gateway_approvals g
		WHERE `+s.openWhere("g.status")+` AND g.expires_at >= ? AND g.expires_at <= ?`, sinceE, model.Epoch(s.now())).Scan(&out.Unswept); err != nil {
		return out, s.classify("stats", err)
	}
	if out.Unswept > 0 {
		merged := false
		for i, c := range out.Counts {
			if c.Event == EventExpire && c.Outcome == OutcomeOK {
				out.Counts[i].N += out.Unswept
				merged = true
			}
		}
		if !merged {
			out.Counts = append(out.Counts, DecisionCount{Event: EventExpire, Outcome: OutcomeOK, N: out.Unswept})
			sort.Slice(out.Counts, func(i, j int) bool {
				a, b := out.Counts[i], out.Counts[j]
				return a.Event < b.Event || a.Event == b.Event && a.Outcome < b.Outcome
			})
		}
	}
	rows, err = s.rdb.QueryContext(ctx, `SELECT a.at, g.created_at FROM approve_tui_audit a
		JOIN gateway_approvals g ON g.approval_id = a.approval_id
		WHERE a.seq > ? AND a.at >= ? AND a.event IN (?, ?) AND a.outcome = ?
		ORDER BY a.seq DESC LIMIT ?`, from, sinceE, EventApprove, EventDeny, OutcomeOK, maxLatencies+1)
	if err != nil {
		return out, s.classify("stats", err)
	}
	defer rows.Close()
	for rows.Next() {
		var at float64
		var created any
		if err := rows.Scan(&at, &created); err != nil {
			return out, s.classify("stats", err)
		}
		if len(out.Latencies) == maxLatencies {
			out.Partial = true
			break
		}
		if c, ok := asFloat(created); ok && c > 0 && at >= c {
			out.Latencies = append(out.Latencies, at-c)
		}
	}
	if err := rows.Err(); err != nil {
		return out, s.classify("stats", err)
	}
	sort.Float64s(out.Latencies)
	return out, nil
}

// Quantile is the q-quantile (0 < q <= 1) of sorted values by nearest
// rank: the smallest value with at least q of them at or below it (0
// when there are none).
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted))-1e-9)) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ChannelDeliveries is one channel's deliveries since a time.
type ChannelDeliveries struct {
	Channel   string // as configured: the file's text, sanitise to print
	Delivered int
	Failed    int // given up
	Cancelled int // not sent: the proposal closed first
	// Retrying: open now, its last attempt failed.
	Retrying int
	// LastError is what went wrong last: a retrying delivery's error, else
	// the newest given-up one's ("" for none). The service's words.
	LastError string
}

// DeliveriesSince counts, per channel, the deliveries finished since since
// (delivered, failed, cancelled: a finished row's next_at is when it
// finished) and those waiting to be tried again now, through the
// deliveries' index by state; channels by name.
func (st *Store) DeliveriesSince(ctx context.Context, since time.Time) ([]ChannelDeliveries, error) {
	s := st.bind()
	rows, err := s.rdb.QueryContext(ctx, `SELECT channel, state, count(*), max(CASE WHEN last_error <> '' THEN next_at END)
		FROM approve_tui_deliveries
		WHERE (state IN (?, ?, ?) AND next_at >= ?) OR (state IN (?, ?) AND last_error <> '')
		GROUP BY channel, state`,
		DeliveryDelivered, DeliveryFailed, DeliveryCancelled, model.Epoch(since), DeliveryPending, DeliverySending)
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify("stats", err)
	}
	by := map[string]*ChannelDeliveries{}
	// The row whose error each channel shows: retrying before given up,
	// then the newest.
	type errRow struct {
		state    string
		at       float64
		retrying bool
	}
	last := map[string]errRow{}
	for rows.Next() {
		var ch, state string
		var n int
		var at sql.NullFloat64
		if err := rows.Scan(&ch, &state, &n, &at); err != nil {
			rows.Close()
			return nil, s.classify("stats", err)
		}
		c := by[ch]
		if c == nil {
			c = &ChannelDeliveries{Channel: ch}
			by[ch] = c
		}
		retrying := false
		switch state {
		case DeliveryDelivered:
			c.Delivered += n
		case DeliveryFailed:
			c.Failed += n
		case DeliveryCancelled:
			c.Cancelled += n
		default:
			c.Retrying += n
			retrying = true
		}
		if !at.Valid || (state != DeliveryFailed && !retrying) {
			continue
		}
		e, seen := last[ch]
		if !seen || (retrying && !e.retrying) || (retrying == e.retrying && at.Float64 > e.at) {
			last[ch] = errRow{state, at.Float64, retrying}
		}
	}
	if err := rows.Close(); err != nil {
		return nil, s.classify("stats", err)
	}
	// One keyed read (state, next_at) per channel that has an error.
	for ch, e := range last {
		var msg string
		err := s.rdb.QueryRowContext(ctx, `SELECT last_error FROM approve_tui_deliveries
			WHERE state = ? AND next_at = ? AND channel = ? AND last_error <> '' LIMIT 1`, e.state, e.at, ch).Scan(&msg)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, s.classify("stats", err)
		}
		by[ch].LastError = msg
	}
	out := make([]ChannelDeliveries, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Channel < out[j].Channel })
	return out, nil
}

// DecisionEvent is one decision the audit log records: an approval, a
// denial, an expiry or a vote, decided or refused.
type DecisionEvent struct {
	Seq     int64
	Event   string // EventApprove, EventDeny, EventExpire, EventVote
	Outcome string // OutcomeOK, OutcomeRefused
	At      time.Time
	// Created is the proposal's submit time (zero when its row is gone or
	// holds none).
	Created time.Time
}

// AuditSeq is the last event's seq (0 when the log is empty): where a
// reader that counts only what comes next starts (DecisionsAfter).
func (st *Store) AuditSeq(ctx context.Context) (int64, error) {
	s := st.bind()
	var seq sql.NullInt64
	err := s.rdb.QueryRowContext(ctx, `SELECT max(seq) FROM approve_tui_audit`).Scan(&seq)
	if isNoTable(err) {
		return 0, nil
	}
	if err != nil {
		return 0, s.classify("audit", err)
	}
	return seq.Int64, nil
}

// DecisionsAfter lists the decisions the audit log records after seq,
// oldest first, at most limit: whichever process made them (the log is
// the store's one record of every decision approve-tui made). The seq of
// the last one is where the next read starts.
func (st *Store) DecisionsAfter(ctx context.Context, after int64, limit int) ([]DecisionEvent, error) {
	s := st.bind()
	rows, err := s.rdb.QueryContext(ctx, `SELECT a.seq, a.event, a.outcome, a.at, g.created_at FROM approve_tui_audit a
		LEFT JOIN gateway_approvals g ON g.approval_id = a.approval_id
		WHERE a.seq > ? AND a.event IN (?, ?, ?, ?) ORDER BY a.seq LIMIT ?`,
		after, EventApprove, EventDeny, EventExpire, EventVote, limit)
	if isNoTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify("audit", err)
	}
	defer rows.Close()
	var out []DecisionEvent
	for rows.Next() {
		var e DecisionEvent
		var at float64
		var created any
		if err := rows.Scan(&e.Seq, &e.Event, &e.Outcome, &at, &created); err != nil {
			return nil, s.classify("audit", err)
		}
		e.At = model.FromEpoch(at)
		if c, ok := asFloat(created); ok && c > 0 {
			e.Created = model.FromEpoch(c)
		}
		out = append(out, e)
	}
	return out, s.classify("audit", rows.Err())
}
