package tui

import (
	"context"
	"errors"
	"sort"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// All I/O happens in these commands. Each closure copies what it needs from
// the model when it is made and never touches the model afterwards; results
// carry the generation they were asked for, and Update drops stale ones.

// MaxLoaded is how many of the most urgent pending proposals the console
// holds; the header says when more are pending. The first load asks for
// firstPage only, so the first frame comes quickly on a large file; the
// rest follows at once. A load after a commit reads the rows on screen
// and reloadMargin more first (Model.pageToLoad): the rows below keep
// their place until the rest comes, a few tens of milliseconds later.
const (
	MaxLoaded    = 5000
	firstPage    = 100
	reloadMargin = 20
)

type (
	// pendingMsg carries a fresh load of the pending list.
	pendingMsg struct {
		gen, limit int
		rows       []*storage.Record
		total      int
		at         time.Time
		err        error
		// same: the set of pending rows kept the signature of the last
		// load; nothing was read. sig: the signature of rows.
		same bool
		sig  *listSignature
		took time.Duration // how long the load ran
		// presences: every console's presence row, read with the list;
		// notifiers: the notifiers running, with their trouble.
		presences []storage.Presence
		notifiers []storage.Notifier
		// waiter: the shown proposal's waiter state, read with the list (a
		// waiter's heartbeat is a commit: it shows without waiting for
		// the clock).
		waiter *waiterMsg
		// ranking: the list is provisional while the store ranks a
		// large file's pending rows (storage.Store.ListUrgent), or
		// after the ranking failed (ranking.Err).
		ranking storage.RankProgress
		// The policy in force and where each row a rule applies to stands
		// (storage.Store.Quorums, one call with the list), by approval id,
		// or why they could not be read (qerr); qread: they were read.
		quorums map[string]*storage.Quorum
		policy  *storage.PolicyVersion
		qerr    error
		qread   bool
		// parkWaiters: the waiter state of each reserved row (its waiter
		// may park it), by approval id: whether it is gone without a word.
		parkWaiters map[string]*storage.WaiterStatus
	}
	// historyMsg carries the audit log's recent events.
	historyMsg struct {
		gen    int
		events []storage.AuditEvent
		runs   map[string]runInfo
		err    error
	}
	// runsMsg carries the run state of the history's started commands.
	runsMsg struct {
		gen  int
		runs map[string]runInfo
	}
	// waiterMsg carries the waiter state of one proposal, and its
	// deliveries (who was paged, when).
	waiterMsg struct {
		id         string
		ws         storage.WaiterStatus
		deliveries []storage.Delivery
		err        error
		// sigs: its signatures (sigsRead: they were read, or sigErr says
		// why they could not be).
		sigs     []approvals.Signer
		sigErr   error
		sigsRead bool
	}
	// watchReadyMsg hands over the store watcher.
	watchReadyMsg struct {
		w   *storage.Watcher
		err error
	}
	// changedMsg: another connection committed; who: who may have.
	changedMsg struct {
		err error
		who storage.Committers
	}
	// decidedMsg is the outcome of an approve or deny.
	decidedMsg struct {
		id, action string
		rec        *storage.Record
		noWaiter   bool
		err        error
		// parked: the proposal approved is parked (its agent stopped
		// waiting): the approval lets the call through when it is asked
		// again, not now.
		parked *storage.Park
		// pasted: what the approve prompt held was refused as a paste
		// (outcomeText says so, not that it was mistyped).
		pasted bool
		// sig: the signature the decision carried; unsigned: why a deny
		// where signatures are required went without one.
		sig      *model.Signature
		unsigned string
	}
	// restDueMsg: restDelay has passed since a load that left the rest
	// of a long list owed; time to read it (Model.loadDone).
	restDueMsg struct{}
	// goneMsg explains a proposal that left the pending list elsewhere.
	goneMsg struct {
		id  string
		rec *storage.Record
		err error
	}
)

// loadPending reads the limit most urgent pending proposals. When prev is
// not nil and the set of pending rows still has that signature (the commit
// touched only heartbeats or the audit log, say), it reads nothing more and
// says so (same).
//
// The signature does not see a payload rewritten in place: watch names the
// proposal on screen (its id and the payload's SHA-256 as shown), which is
// read again, so that a rewrite of what the operator reads shows at once.
// Its waiter state is read too.
//
// ranking: the list on screen is provisional (the store was ranking a large
// file): while the store still ranks, the signature stands for the rows as
// before, and the message brings the ranking's progress; once it is done,
// the list is read in full, in its ranked order.
//
// The policy and the votes are read with the list, by one Store.Quorums
// call on the rows read (the signature moves when a vote is cast or a
// policy set: a load that finds it unchanged keeps what the last one read).
func loadPending(ctx context.Context, s *storage.Store, gen, limit int, prev *listSignature, watch shownPayload, ranking bool) tea.Cmd {
	return func() tea.Msg {
		start := time.Now()
		others, _ := s.Presences(ctx)
		notifiers, _ := s.Notifiers(ctx)
		var waiter *waiterMsg
		if watch.id != "" {
			w := readShown(ctx, s, watch)
			waiter = &w
		}
		psig, live, serr := s.PendingSummary(ctx)
		sig := listSignature{PendingSignature: psig}
		if serr == nil {
			sig.parks, serr = s.ParkSignature(ctx)
		}
		fill := s.RankProgress()
		if serr == nil && prev != nil && sig == *prev && (!ranking || fill.Filling) {
			same := true
			if watch.id != "" {
				if r, err := s.Get(ctx, watch.id); err == nil && r.PayloadSHA256 != watch.sha256 {
					same = false
				}
			}
			if same {
				return pendingMsg{gen: gen, limit: limit, same: true, took: time.Since(start), presences: others, notifiers: notifiers, waiter: waiter, ranking: fill}
			}
		}
		rows, fill, err := s.ListUrgent(ctx, storage.ListOptions{Limit: limit})
		if err != nil {
			return pendingMsg{gen: gen, limit: limit, err: err, took: time.Since(start), presences: others, waiter: waiter}
		}
		// Which are parked (one bulk read), and the waiter of each
		// reservation among them (approvals.ReadParks).
		parkWaiters, err := approvals.ReadParks(ctx, s, rows)
		if err != nil {
			return pendingMsg{gen: gen, limit: limit, err: err, took: time.Since(start), presences: others, waiter: waiter}
		}
		// A full page: the header says how many are pending in all.
		total := len(rows)
		if total == limit && serr == nil {
			total = max(live, total)
		}
		qs, pv, qerr := s.Quorums(ctx, rows)
		msg := pendingMsg{gen: gen, limit: limit, rows: rows, total: total, at: s.Now(), took: time.Since(start), presences: others, notifiers: notifiers, waiter: waiter, ranking: fill,
			quorums: qs, policy: pv, qerr: qerr, qread: true, parkWaiters: parkWaiters}
		if serr == nil {
			msg.sig = &sig
		}
		return msg
	}
}

// listSignature is what a load finds unchanged to read nothing more: the
// set of pending rows (storage.PendingSignature) and their parks.
type listSignature struct {
	storage.PendingSignature
	parks storage.ParkSignature
}

// shownPayload is the proposal on screen and the SHA-256 of its payload as
// shown.
type shownPayload struct {
	id, sha256 string
	risk       model.RiskLevel // its pinned risk, as shown
	created    float64         // when it was made (epoch)
}

// shownOf is what the console shows of rec.
func shownOf(rec *storage.Record) shownPayload {
	return shownPayload{rec.ApprovalID, rec.PayloadSHA256, rec.RiskLevel, rec.CreatedAt}
}

// reloadDueMsg: the pause between two loads of the pending list is over.
type reloadDueMsg struct{}

func reloadAfter(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return reloadDueMsg{} })
}

func loadHistory(ctx context.Context, s *storage.Store, gen int) tea.Cmd {
	return func() tea.Msg {
		evs, err := s.Audit(ctx, storage.AuditQuery{Limit: 500})
		if err == nil {
			// Decisions made outside approve-tui (Hermes' own), from the
			// table: merged in time order, marked as outside the chain.
			if out, oerr := s.OutsideDecisions(ctx, 200); oerr == nil && len(out) > 0 {
				evs = append(evs, out...)
				sort.SliceStable(evs, func(i, j int) bool { return evs[i].At > evs[j].At })
			}
		}
		msg := historyMsg{gen: gen, events: evs, err: err}
		if err == nil {
			msg.runs = readRuns(ctx, s, startedIDs(evs))
		}
		return msg
	}
}

// runInfo is what is known of a command whose execution is recorded as
// started and not ended: running, or its runner died (storage.JudgeRun).
type runInfo struct {
	state  storage.RunState
	waiter *storage.Waiter
}

// maxTrackedRuns bounds how many started commands the history follows.
const maxTrackedRuns = 50

// startedIDs lists the proposals of the newest execution events that
// recorded a start, newest first.
func startedIDs(evs []storage.AuditEvent) []string {
	var ids []string
	seen := map[string]bool{}
	for _, e := range evs {
		if e.Event != storage.EventExecution || e.Reason != string(model.ExecStarted) || seen[e.ApprovalID] {
			continue
		}
		seen[e.ApprovalID] = true
		if ids = append(ids, e.ApprovalID); len(ids) == maxTrackedRuns {
			break
		}
	}
	return ids
}

// readRuns judges the run of each of ids whose execution is still started;
// the others (ended since, unreadable) are left out.
func readRuns(ctx context.Context, s *storage.Store, ids []string) map[string]runInfo {
	runs := map[string]runInfo{}
	for _, id := range ids {
		rec, err := s.Get(ctx, id)
		if err != nil {
			continue
		}
		ws, err := s.WaiterState(ctx, id)
		if err != nil {
			continue
		}
		if st := storage.JudgeRun(rec, ws); st != storage.RunNone {
			runs[id] = runInfo{state: st, waiter: ws.Waiter}
		}
	}
	return runs
}

func loadRuns(ctx context.Context, s *storage.Store, gen int, ids []string) tea.Cmd {
	return func() tea.Msg { return runsMsg{gen: gen, runs: readRuns(ctx, s, ids)} }
}

func loadWaiter(ctx context.Context, s *storage.Store, shown shownPayload) tea.Cmd {
	return func() tea.Msg { return readShown(ctx, s, shown) }
}

// readShown reads the waiter state of the proposal shown, and its
// signatures, each checked against the trust file for what is shown.
func readShown(ctx context.Context, s *storage.Store, shown shownPayload) waiterMsg {
	w := readWaiter(ctx, s, shown.id)
	if s.Trust() != nil {
		// Where no trust is configured nothing is signed: no read.
		w.sigs, w.sigErr = readSignatures(ctx, s, shown)
		w.sigsRead = true
	}
	return w
}

// readWaiter reads proposal id's waiter state and its deliveries.
func readWaiter(ctx context.Context, s *storage.Store, id string) waiterMsg {
	ws, err := s.WaiterState(ctx, id)
	ds, _ := s.DeliveriesOf(ctx, id)
	return waiterMsg{id: id, ws: ws, deliveries: ds, err: err}
}

// pause waits for d (not at all when d is 0 or less), and says false
// when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// healthMsg is the result of an integrity check of the file.
type healthMsg struct {
	damaged string
	err     error
}

// checkHealth runs the file's integrity check after a delay (0: now).
func checkHealth(ctx context.Context, s *storage.Store, after time.Duration) tea.Cmd {
	return func() tea.Msg {
		if !pause(ctx, after) {
			return nil
		}
		d, err := s.CheckIntegrity(ctx)
		if ctx.Err() != nil {
			return nil
		}
		return healthMsg{damaged: d, err: err}
	}
}

func startWatch(ctx context.Context, s *storage.Store) tea.Cmd {
	return func() tea.Msg {
		w, err := s.Watch(ctx)
		return watchReadyMsg{w: w, err: err}
	}
}

func waitChange(ctx context.Context, w *storage.Watcher) tea.Cmd {
	return func() tea.Msg {
		err := w.Wait(ctx)
		if errors.Is(err, context.Canceled) {
			return nil
		}
		if err != nil {
			return changedMsg{err: err, who: storage.Committers{Others: true}}
		}
		return changedMsg{who: w.Committers(ctx)}
	}
}

// approve and deny call the store's single decision path.
// approve names the payload the operator read (readSHA256): the store
// refuses if the row holds another one now.
func approve(ctx context.Context, s *storage.Store, id, typed, readSHA256 string, actor model.Actor) tea.Cmd {
	return func() tea.Msg {
		ws, _ := s.WaiterState(ctx, id)
		rec, err := s.ConsumeRead(ctx, id, typed, readSHA256, actor)
		return decidedMsg{id: id, action: "approve", rec: rec, err: err, noWaiter: ws.State != storage.WaiterLive, parked: parkedFor(ctx, s, rec, err, ws)}
	}
}

// approvePhrase approves a tier-2 proposal by its typed phrase (the store
// arms it, counts a wrong phrase, blocks at the limit).
func approvePhrase(ctx context.Context, s *storage.Store, id, typed, readSHA256 string, actor model.Actor) tea.Cmd {
	return func() tea.Msg {
		ws, _ := s.WaiterState(ctx, id)
		rec, err := s.ConsumePhrase(ctx, id, typed, readSHA256, storage.PhraseOptions{}, actor)
		return decidedMsg{id: id, action: "approve", rec: rec, err: err, noWaiter: ws.State != storage.WaiterLive, parked: parkedFor(ctx, s, rec, err, ws)}
	}
}

// parkedFor is the park of a proposal just approved (rec, err: what the
// approval returned) when it is parked, so that the outcome says the call
// goes through when it is asked again; nil otherwise, or when it cannot be
// read (the outcome then says no live waiter runs it).
func parkedFor(ctx context.Context, s *storage.Store, rec *storage.Record, err error, ws storage.WaiterStatus) *storage.Park {
	if err != nil || rec == nil || rec.Status != model.StatusConsumed {
		return nil
	}
	p, perr := s.ParkOf(ctx, rec.ApprovalID)
	if perr != nil || p == nil {
		return nil
	}
	r := *rec
	r.Park = p
	if st := approvals.ParkStateOf(&r, &ws, s.Now()); st != approvals.ParkParked && st != approvals.ParkReserved {
		return nil
	}
	return p
}

func deny(ctx context.Context, s *storage.Store, id, reason string, actor model.Actor) tea.Cmd {
	return func() tea.Msg {
		rec, err := s.Deny(ctx, id, actor, reason)
		return decidedMsg{id: id, action: "deny", rec: rec, err: err}
	}
}

func explainGone(ctx context.Context, s *storage.Store, id string) tea.Cmd {
	return func() tea.Msg {
		rec, err := s.Get(ctx, id)
		return goneMsg{id: id, rec: rec, err: err}
	}
}
