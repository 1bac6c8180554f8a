package notify

import (
	"context"
	"errors"
	"fmt"
	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/policy"
	"strings"
	"sync"
	"time"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// Notifier pages per the configuration's routes. Every notifier on a
// store (one per host, for availability) plans the same deliveries and
// races to claim each one in the store, so each is sent by exactly one of
// them; a delivery whose notifier died mid-send is claimed again once its
// lease runs out (at most that one is sent twice, under the same delivery
// id).
type Notifier struct {
	Store  *storage.Store
	Config *config.File
	// Senders by channel name.
	Senders map[string]Sender
	// Actor audits deliveries (surface notify).
	Actor model.Actor
	// ID names this notifier in the store (host, pid and a random part).
	ID string
	// Lease is how long a claim holds (DefaultLease when zero): longer than
	// one delivery takes.
	Lease time.Duration
	// Parallel bounds the deliveries each channel sends at once, for the
	// channels that set no parallel of their own (DefaultParallel when
	// zero). Channels never share slots: a receiver that hangs holds only
	// its own channel's.
	Parallel int
	// Secrets are the configuration's secrets (NewSecrets(Config, nil)
	// when nil): every log line, stored error and trouble, and every
	// page's text, is redacted with them.
	Secrets *Secrets
	// Logf receives what the notifier did and what failed (nil: nothing).
	Logf func(format string, args ...any)
	// OnDelivery, when set, is told how each claimed delivery ended here:
	// its channel and kind (page, escalation, reminder, resolved), and
	// outcome DeliveryDelivered, DeliveryRetry (failed, tried again later),
	// DeliveryFailed (given up) or DeliveryCancelled (not sent: the
	// proposal closed first). Called on the sending goroutine: it must not
	// block (a metrics counter).
	OnDelivery func(channel, kind, outcome string)

	mu      sync.Mutex
	added   map[storage.DeliveryKey]bool // keys this process has added
	trouble map[string]trouble           // by channel
	started time.Time
	// beat is the row the last heartbeat wrote and beatAt when: a tick
	// writes the row again only when it changed or HeartbeatEvery passed,
	// since its commit wakes the notifier's own watcher.
	beat   storage.Notifier
	beatAt time.Time
	// The last plan: made (planned) at plannedAt, when the pending rows
	// had signature planSig; planAt is when its routes next have something
	// to add with no new proposal (a step falls due, a reminder's window
	// opens; zero: nothing). Run's passes plan again only when the
	// signature moved, at planAt, or replanEvery after the last plan, so
	// that pending proposals no route takes are not read at every pass.
	planned   bool
	plannedAt time.Time
	planSig   storage.PendingSignature
	planAt    time.Time
	// inflight: the deliveries started and not yet ended (a later pass
	// leaves them be); sems: each channel's slots; wg counts the
	// dispatchers and deliveries running; sendErr is the first store
	// error among them.
	inflight map[storage.DeliveryKey]bool
	sems     map[string]chan struct{}
	wg       sync.WaitGroup
	sendErr  error
}

type trouble struct {
	since time.Time
	err   string
}

// Defaults of a Notifier.
const (
	DefaultLease    = 60 * time.Second
	DefaultParallel = 4
	// BackoffMin and BackoffMax bound the wait before a failed delivery is
	// tried again (doubling each time, or the service's Retry-After).
	BackoffMin = 2 * time.Second
	BackoffMax = 5 * time.Minute
	// HeartbeatEvery is how often an unchanged notifier row is written
	// again (well inside storage.NotifierStaleAfter).
	HeartbeatEvery = 10 * time.Second
	// ResolvedAttempts is how often a resolution is tried before it is
	// given up (a page is tried as long as its proposal stays open).
	ResolvedAttempts = 20
	// commandBound is how much of the command a page carries.
	commandBound = 300
	// listPage and listCap bound the open proposals planned per pass.
	listPage = 1000
	listCap  = 50000
	// replanEvery bounds how long Run's passes go without reading the
	// open proposals (the pending signature misses a decided row made
	// open again).
	replanEvery = time.Minute
)

// Outcomes of a delivery, as OnDelivery is told them.
const (
	DeliveryDelivered = storage.DeliveryDelivered
	DeliveryRetry     = "retry"
	DeliveryFailed    = storage.DeliveryFailed
	DeliveryCancelled = storage.DeliveryCancelled
)

func (n *Notifier) told(d storage.Delivery, outcome string) {
	if n.OnDelivery != nil {
		n.OnDelivery(d.Channel, d.Kind, outcome)
	}
}

// logf logs a line redacted with every configured secret.
func (n *Notifier) logf(format string, args ...any) {
	if n.Logf != nil {
		n.Logf("%s", n.secrets().Redact(fmt.Sprintf(format, args...)))
	}
}

// secrets are n.Secrets, else the configuration's.
func (n *Notifier) secrets() *Secrets {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.Secrets == nil {
		n.Secrets = NewSecrets(n.Config, nil)
	}
	return n.Secrets
}

func (n *Notifier) lease() time.Duration {
	if n.Lease > 0 {
		return n.Lease
	}
	return DefaultLease
}

// Route is the first route of cfg that matches rec (nil: none).
func Route(cfg *config.File, rec *storage.Record) (int, *config.Route) {
	for i, r := range cfg.Routes {
		if matches(r.Match, rec) {
			return i, r
		}
	}
	return -1, nil
}

// RouteFor is the first route of cfg that matches rec and sends kind (a
// route's events; every kind when it names none), nil when there is none.
func RouteFor(cfg *config.File, rec *storage.Record, kind string) *config.Route {
	for _, r := range cfg.Routes {
		if r.Sends(kind) && matches(r.Match, rec) {
			return r
		}
	}
	return nil
}

func matches(m config.Match, rec *storage.Record) bool {
	ok, _ := m.Check(policy.Subject{Risk: rec.EffectiveRisk, Session: rec.SessionKey, Requester: rec.Requester})
	return ok
}

// stepKind is the kind of route step i's deliveries.
func stepKind(i int) string {
	if i == 0 {
		return KindPage
	}
	return KindEscalation
}

// Tick is one pass: add the deliveries that fell due, send the ones that
// are due, and heartbeat. Run makes a pass after every commit and every
// second, reading the open proposals only when the pending rows changed
// or a step or reminder falls due; tests call Tick, which always reads
// them, with the store's clock where they want it.
func (n *Notifier) Tick(ctx context.Context) error { return n.pass(ctx, true) }

// pass is Tick; without full, it plans only when the pending rows'
// signature moved since the last plan, or that plan said something falls
// due by now, or it is replanEvery old (or failed).
func (n *Notifier) pass(ctx context.Context, full bool) error {
	now := n.Store.Now()
	n.mu.Lock()
	if n.added == nil {
		n.added = map[storage.DeliveryKey]bool{}
		n.trouble = map[string]trouble{}
		n.started = now
	}
	due := !n.planned || !n.planAt.IsZero() && !now.Before(n.planAt) || now.Sub(n.plannedAt) >= replanEvery || now.Before(n.plannedAt)
	last := n.planSig
	n.mu.Unlock()
	// Read before the list: a proposal added after it moves it again.
	sig, serr := n.Store.PendingSignature(ctx)
	var open map[string]bool // nil when not planned: resolve asks the store
	if full || due || serr != nil || sig != last {
		var err error
		if open, err = n.plan(ctx); err != nil {
			n.mu.Lock()
			n.planned = false
			n.mu.Unlock()
			return err
		}
		n.mu.Lock()
		n.planned, n.plannedAt, n.planSig = serr == nil, now, sig
		n.mu.Unlock()
	}
	if err := n.resolve(ctx, open); err != nil {
		return err
	}
	if err := n.refused(ctx); err != nil {
		return err
	}
	if err := n.send(ctx, full); err != nil {
		return err
	}
	return n.heartbeat(ctx)
}

// plan adds the due pages, escalations and reminders of every open
// proposal a route matches; it returns the open proposals' ids.
func (n *Notifier) plan(ctx context.Context) (map[string]bool, error) {
	now := n.Store.Now()
	open := map[string]bool{}
	var keys []storage.DeliveryKey
	var next time.Time // the soonest step or reminder not yet due
	soon := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for off := 0; off < listCap; off += listPage {
		recs, err := n.Store.List(ctx, storage.ListOptions{Limit: listPage, Offset: off})
		if err != nil {
			return nil, err
		}
		// Where each stands against the policy: a vote pages again. A
		// policy that cannot be read leaves the pages as they are.
		qs, _, qerr := n.Store.Quorums(ctx, recs)
		if qerr != nil {
			n.logf("the policy cannot be read, so votes page nobody: %s", model.Sanitize(qerr.Error(), model.Line))
		}
		for _, rec := range recs {
			if !rec.EffectiveStatus.Open() {
				continue
			}
			open[rec.ApprovalID] = true
			age := now.Sub(model.FromEpoch(rec.CreatedAt))
			var paged []string
			// The page is step 0 of the first route that sends pages, the
			// escalations the later steps of the first that sends them
			// (the same route, unless a route's events pick one).
			for _, kind := range []string{KindPage, KindEscalation} {
				r := RouteFor(n.Config, rec, kind)
				if r == nil {
					continue
				}
				for i, st := range r.Steps {
					if stepKind(i) != kind {
						continue
					}
					if age < st.After {
						soon(model.FromEpoch(rec.CreatedAt).Add(st.After))
						break
					}
					for _, ch := range st.Notify {
						keys = append(keys, storage.DeliveryKey{ApprovalID: rec.ApprovalID, Kind: kind, Step: i, Channel: ch})
						paged = append(paged, ch)
					}
				}
			}
			// A vote that leaves it short pages who was paged so far (the
			// first step's channels if none yet), once per vote.
			if r := RouteFor(n.Config, rec, KindVote); r != nil {
				if q := qs[rec.ApprovalID]; q != nil && len(q.Votes) > 0 && !q.Met() {
					to := unique(paged)
					if len(to) == 0 && len(r.Steps) > 0 {
						to = r.Steps[0].Notify
					}
					for _, ch := range to {
						keys = append(keys, storage.DeliveryKey{ApprovalID: rec.ApprovalID, Kind: KindVote, Step: len(q.Votes), Channel: ch})
					}
				}
			}
			// A reminder once the window before expiry starts, unless the
			// proposal opened inside it (its page says as much).
			r := RouteFor(n.Config, rec, KindReminder)
			if r == nil {
				continue
			}
			if left, ok := rec.TimeLeft(now); ok && r.RemindBeforeExpiry > 0 && left > 0 && left <= r.RemindBeforeExpiry &&
				*rec.ExpiresAt-r.RemindBeforeExpiry.Seconds() > rec.CreatedAt {
				for _, ch := range unique(paged) {
					keys = append(keys, storage.DeliveryKey{ApprovalID: rec.ApprovalID, Kind: KindReminder, Channel: ch})
				}
			} else if ok && r.RemindBeforeExpiry > 0 && left > r.RemindBeforeExpiry {
				soon(model.FromEpoch(*rec.ExpiresAt).Add(-r.RemindBeforeExpiry))
			}
		}
		if len(recs) < listPage {
			break
		}
	}
	if err := n.add(ctx, keys); err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.planAt = next
	n.mu.Unlock()
	return open, nil
}

// add adds the keys this process has not added before.
func (n *Notifier) add(ctx context.Context, keys []storage.DeliveryKey) error {
	n.mu.Lock()
	var fresh []storage.DeliveryKey
	for _, k := range keys {
		if !n.added[k] {
			fresh = append(fresh, k)
		}
	}
	n.mu.Unlock()
	if len(fresh) == 0 {
		return nil
	}
	if _, err := n.Store.AddDeliveries(ctx, fresh); err != nil {
		return err
	}
	n.mu.Lock()
	for _, k := range fresh {
		n.added[k] = true
	}
	n.mu.Unlock()
	return nil
}

// resolve adds a resolution, to every channel a page reached, for each
// paged proposal that is no longer open.
func (n *Notifier) resolve(ctx context.Context, open map[string]bool) error {
	ids, err := n.Store.UnresolvedPaged(ctx, 1000)
	if err != nil {
		return err
	}
	var keys []storage.DeliveryKey
	for _, id := range ids {
		if open[id] {
			continue
		}
		rec, err := n.Store.Get(ctx, id)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if rec != nil && rec.EffectiveStatus.Open() {
			continue // opened since the list was read
		}
		if rec != nil && RouteFor(n.Config, rec, KindResolved) == nil && anyRoute(n.Config, rec) {
			continue // its routes send no resolutions
		}
		ds, err := n.Store.DeliveriesOf(ctx, id)
		if err != nil {
			return err
		}
		var chs []string
		for _, d := range ds {
			if d.Kind != KindResolved && d.State == storage.DeliveryDelivered {
				chs = append(chs, d.Channel)
			}
		}
		for _, ch := range unique(chs) {
			keys = append(keys, storage.DeliveryKey{ApprovalID: id, Kind: KindResolved, Channel: ch})
		}
	}
	return n.add(ctx, keys)
}

// refused adds a KindRefused delivery for each proposal refused at
// execution because its signatures do not hold, and a
// KindRanWithoutApproval delivery for each call its agent ran without
// approval (within refusedWindow).
func (n *Notifier) refused(ctx context.Context) error {
	since := model.Epoch(n.Store.Now().Add(-refusedWindow))
	ids, err := n.Store.BlockedSince(ctx, RefusedReason, since, 200)
	if err != nil {
		return err
	}
	if err := n.once(ctx, KindRefused, ids); err != nil {
		return err
	}
	ran, err := n.Store.RanWithoutApprovalSince(ctx, since, 200)
	if err != nil {
		return err
	}
	return n.once(ctx, KindRanWithoutApproval, ran)
}

// once adds a delivery of kind, sent once, for each proposal of ids: to
// every channel a delivery of it reached, and the first step of the first
// route that matches it and sends kind. A proposal whose routes match but
// none sends kind gets none.
func (n *Notifier) once(ctx context.Context, kind string, ids []string) error {
	var keys []storage.DeliveryKey
	for _, id := range ids {
		k := storage.DeliveryKey{ApprovalID: id, Kind: kind}
		n.mu.Lock()
		seen := false
		for a := range n.added {
			if a.ApprovalID == id && a.Kind == kind {
				seen = true
				break
			}
		}
		n.mu.Unlock()
		if seen {
			continue
		}
		rec, err := n.Store.Get(ctx, id)
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			return err
		}
		var chs []string
		r := RouteFor(n.Config, rec, kind)
		if r == nil && anyRoute(n.Config, rec) {
			continue // its routes do not send this kind
		}
		if r != nil && len(r.Steps) > 0 {
			chs = append(chs, r.Steps[0].Notify...)
		}
		ds, err := n.Store.DeliveriesOf(ctx, id)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.State == storage.DeliveryDelivered && d.Kind != KindRefused && d.Kind != KindRanWithoutApproval {
				chs = append(chs, d.Channel)
			}
		}
		for _, ch := range unique(chs) {
			k.Channel = ch
			keys = append(keys, k)
		}
	}
	return n.add(ctx, keys)
}

// anyRoute reports whether a route of cfg matches rec, whatever it sends.
func anyRoute(cfg *config.File, rec *storage.Record) bool {
	_, r := Route(cfg, rec)
	return r != nil
}

// sentOnce: a kind sent whatever the proposal's status (it reports what
// happened to it, and asks nothing).
func sentOnce(kind string) bool {
	return kind == KindResolved || kind == KindRefused || kind == KindRanWithoutApproval
}

// send starts the deliveries that are due, each channel on its own:
// a channel sends at most its parallel limit at once (the channel's
// parallel, else Notifier.Parallel, else DefaultParallel), and a delivery
// is claimed only when one of its channel's slots is free, so a hung
// receiver holds its own channel's slots and nothing else (its timeout
// bounds each attempt). With wait (Tick), send returns once every
// delivery started so far has ended; Run's passes wait at most passWait,
// so the next pass serves the other channels while one hangs.
func (n *Notifier) send(ctx context.Context, wait bool) error {
	due, err := n.Store.DueDeliveries(ctx, dueBatch)
	if err != nil {
		return err
	}
	byChannel := map[string][]storage.Delivery{}
	var order []string
	n.mu.Lock()
	if n.inflight == nil {
		n.inflight = map[storage.DeliveryKey]bool{}
	}
	for _, d := range due {
		if n.inflight[d.DeliveryKey] {
			continue // started by an earlier pass, still going
		}
		n.inflight[d.DeliveryKey] = true
		if _, ok := byChannel[d.Channel]; !ok {
			order = append(order, d.Channel)
		}
		byChannel[d.Channel] = append(byChannel[d.Channel], d)
	}
	n.mu.Unlock()
	var pass sync.WaitGroup // this pass's dispatchers and deliveries
	for _, name := range order {
		n.wg.Add(1)
		pass.Add(1)
		go n.dispatch(ctx, n.slots(name), byChannel[name], &pass)
	}
	if !wait {
		// Run waits for this pass's deliveries, as long as a pass's poll
		// at most: passes keep their pace (each may read every open
		// proposal), and one receiver that hangs holds up the next pass
		// by that second only, never its channel's slots' worth.
		ended := make(chan struct{})
		go func() { pass.Wait(); close(ended) }()
		t := time.NewTimer(passWait)
		defer t.Stop()
		select {
		case <-ended:
		case <-t.C:
		case <-ctx.Done():
		}
		n.mu.Lock()
		n.sendErr = nil // logged as it happened
		n.mu.Unlock()
		return nil
	}
	n.wg.Wait()
	n.mu.Lock()
	defer n.mu.Unlock()
	err, n.sendErr = n.sendErr, nil
	return err
}

// dueBatch bounds the due deliveries read per pass.
const dueBatch = 1000

// passWait bounds how long one of Run's passes waits for the deliveries
// it started.
const passWait = time.Second

// slots is channel name's semaphore: its parallel limit.
func (n *Notifier) slots(name string) chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sems == nil {
		n.sems = map[string]chan struct{}{}
	}
	sem := n.sems[name]
	if sem == nil {
		par := n.Parallel
		if ch := n.Config.Channels[name]; ch != nil && ch.Parallel > 0 {
			par = ch.Parallel
		}
		if par <= 0 {
			par = DefaultParallel
		}
		sem = make(chan struct{}, par)
		n.sems[name] = sem
	}
	return sem
}

// dispatch sends one channel's due deliveries, at most cap(sem) at once:
// each is claimed when a slot is free (so its lease starts when it is
// sent), and sent on a goroutine of its own.
func (n *Notifier) dispatch(ctx context.Context, sem chan struct{}, ds []storage.Delivery, pass *sync.WaitGroup) {
	defer n.wg.Done()
	defer pass.Done()
	done := func(d storage.Delivery) {
		n.mu.Lock()
		delete(n.inflight, d.DeliveryKey)
		n.mu.Unlock()
	}
	for i, d := range ds {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for _, rest := range ds[i:] {
				done(rest)
			}
			return
		}
		claimed, err := n.Store.ClaimDelivery(ctx, d.DeliveryKey, n.ID, n.lease())
		if err != nil || claimed == nil {
			<-sem
			done(d)
			if err != nil {
				n.sendFailed(err)
			}
			continue // another notifier has it
		}
		n.wg.Add(1)
		pass.Add(1)
		go func(d storage.Delivery) {
			defer func() { <-sem; done(d); n.wg.Done(); pass.Done() }()
			if err := n.deliver(ctx, d); err != nil {
				n.sendFailed(err)
			}
		}(*claimed)
	}
}

// sendFailed keeps the first store error of the deliveries in flight for
// Tick to return, and logs it (Run does not wait for them).
func (n *Notifier) sendFailed(err error) {
	n.logf("warning: %v", err)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sendErr == nil {
		n.sendErr = err
	}
}

// deliver sends one claimed delivery and records how it ended.
func (n *Notifier) deliver(ctx context.Context, d storage.Delivery) error {
	sec := n.secrets()
	finish := func(r storage.DeliveryResult) error {
		// What is stored (last_error, shown by stats) never holds a
		// configured secret, whichever channel's error it is.
		r.Err = sec.Redact(r.Err)
		err := n.Store.FinishDelivery(context.WithoutCancel(ctx), d.DeliveryKey, n.ID, r, n.Actor)
		if errors.Is(err, storage.ErrNotClaimed) {
			n.logf("%s: the claim ran out before it was finished; another notifier has it", d.ID())
			return nil
		}
		return err
	}
	rec, err := n.Store.Get(ctx, d.ApprovalID)
	if errors.Is(err, storage.ErrNotFound) {
		n.told(d, DeliveryCancelled)
		return finish(storage.DeliveryResult{State: storage.DeliveryCancelled, Err: "the proposal no longer exists"})
	}
	if err != nil {
		return finish(storage.DeliveryResult{State: storage.DeliveryPending, RetryAt: n.Store.Now().Add(BackoffMin), Err: err.Error()})
	}
	if !sentOnce(d.Kind) && !rec.EffectiveStatus.Open() {
		n.told(d, DeliveryCancelled)
		return finish(storage.DeliveryResult{State: storage.DeliveryCancelled, Err: "the proposal was " + rec.EffectiveStatus.Decision() + " first"})
	}
	ch := n.Config.Channels[d.Channel]
	sender := n.Senders[d.Channel]
	if ch == nil || sender == nil {
		n.told(d, DeliveryFailed)
		return finish(storage.DeliveryResult{State: storage.DeliveryFailed, Err: "channel " + d.Channel + " is not configured"})
	}
	// A configured secret in the proposal (a token in the command) is
	// redacted before the page is made: before the command is cut, so no
	// part of it is left at the cut.
	red := *rec
	red.Command, red.SessionKey, red.Requester, red.ConsumedBy = sec.Redact(rec.Command), sec.Redact(rec.SessionKey), sec.Redact(rec.Requester), sec.Redact(rec.ConsumedBy)
	red.ExecutionReason = sec.Redact(rec.ExecutionReason)
	ev := MakeEvent(n.Config, ch, &red, d.Kind, d.Step, n.Store.Now())
	if !sentOnce(d.Kind) {
		// Where it stands against the policy: a report, best effort.
		if q, qerr := n.Store.Quorum(ctx, rec); qerr == nil && q != nil {
			WithQuorum(&ev, q)
		}
		// Parked: what an approval does now (its waiter's state only for
		// a reservation: whether it is gone).
		var ws *storage.WaiterStatus
		if rec.Park != nil && rec.Park.StoppedAt == 0 {
			if w, werr := n.Store.WaiterState(ctx, rec.ApprovalID); werr == nil {
				ws = &w
			}
		}
		WithPark(&ev, rec, ws, n.Store.Now())
		ev.Park = sec.Redact(ev.Park)
	} else if sg, serr := approvals.Signers(ctx, n.Store, rec); serr == nil && d.Kind == KindResolved {
		WithSigners(&ev, rec.EffectiveStatus, sg, n.Store.Trust().Required())
	}
	err = sender.Send(ctx, ev, Delivery{ID: d.ID(), Attempt: d.Attempts})
	if err == nil {
		n.clearTrouble(d.Channel)
		n.told(d, DeliveryDelivered)
		n.logf("%s: %s sent via %s", model.Sanitize(d.ApprovalID, model.Line), d.Kind, d.Channel)
		return finish(storage.DeliveryResult{State: storage.DeliveryDelivered})
	}
	msg := err.Error()
	var se *SendError
	retry := !errors.As(err, &se) || se.Retryable
	if se != nil && se.Err != nil {
		msg = se.Err.Error() // the channel is named beside it
	}
	msg = sec.Redact(msg)
	n.setTrouble(d.Channel, msg)
	if retry && (d.Kind != KindResolved || d.Attempts < ResolvedAttempts) {
		wait := backoff(d.Attempts)
		if se != nil && se.RetryAfter > wait {
			wait = min(se.RetryAfter, BackoffMax)
		}
		n.told(d, DeliveryRetry)
		n.logf("%s: %s via %s failed (attempt %d), again in %s: %s", model.Sanitize(d.ApprovalID, model.Line), d.Kind, d.Channel, d.Attempts, wait, msg)
		return finish(storage.DeliveryResult{State: storage.DeliveryPending, RetryAt: n.Store.Now().Add(wait), Err: msg})
	}
	n.told(d, DeliveryFailed)
	n.logf("%s: %s via %s failed for good: %s", model.Sanitize(d.ApprovalID, model.Line), d.Kind, d.Channel, msg)
	return finish(storage.DeliveryResult{State: storage.DeliveryFailed, Err: msg})
}

// backoff is the wait after attempt number attempts failed.
func backoff(attempts int) time.Duration {
	d := BackoffMin
	for i := 1; i < attempts && d < BackoffMax; i++ {
		d *= 2
	}
	return min(d, BackoffMax)
}

func (n *Notifier) setTrouble(ch, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t, ok := n.trouble[ch]
	if !ok {
		t.since = n.Store.Now()
	}
	t.err = msg
	n.trouble[ch] = t
}

func (n *Notifier) clearTrouble(ch string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.trouble, ch)
}

// heartbeat writes this notifier's row: running, and its oldest trouble;
// only when the row changed or HeartbeatEvery passed since it was written
// (a write every tick would wake Run's watcher for another tick at once,
// and the notifier would never rest).
func (n *Notifier) heartbeat(ctx context.Context) error {
	now := n.Store.Now()
	n.mu.Lock()
	row := storage.Notifier{Notifier: n.ID, Host: model.HostName(), PID: pid(), StartedAt: model.Epoch(n.started)}
	var oldest time.Time
	for ch, t := range n.trouble {
		if oldest.IsZero() || t.since.Before(oldest) {
			oldest = t.since
			typ := ""
			if c := n.Config.Channels[ch]; c != nil {
				typ = " (" + c.Type + ")"
			}
			row.Trouble, row.TroubleSince = ch+typ+": "+t.err, model.Epoch(t.since)
		}
	}
	fresh := !n.beatAt.IsZero() && row == n.beat && now.Sub(n.beatAt) < HeartbeatEvery && now.Sub(n.beatAt) >= 0
	n.mu.Unlock()
	if fresh {
		return nil
	}
	if err := n.Store.SetNotifier(ctx, row); err != nil {
		return err
	}
	n.mu.Lock()
	n.beat, n.beatAt = row, now
	n.mu.Unlock()
	return nil
}

// Run passes after every commit to the store and at least every second,
// until ctx ends; a pass's failure is logged and tried again.
func (n *Notifier) Run(ctx context.Context) error {
	w, err := n.Store.Watch(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	defer n.Store.RemoveNotifier(context.WithoutCancel(ctx), n.ID)
	// The deliveries in flight end (ctx ends them) before the row goes.
	defer n.wg.Wait()
	n.mu.Lock()
	if n.added == nil {
		n.added, n.trouble, n.started = map[storage.DeliveryKey]bool{}, map[string]trouble{}, n.Store.Now()
	}
	n.mu.Unlock()
	if err := n.heartbeat(ctx); err != nil && ctx.Err() == nil {
		n.logf("warning: %v", err) // running, said before the first pass
	}
	for {
		if err := n.pass(ctx, false); err != nil && ctx.Err() == nil {
			n.logf("warning: %v", err)
		}
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		_ = w.Wait(wctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// MakeEvent is what a delivery of kind (step) of rec says on channel ch at
// now: every string sanitised, the command cut or left out, the open hint
// filled in.
func MakeEvent(cfg *config.File, ch *config.Channel, rec *storage.Record, kind string, step int, now time.Time) Event {
	id := model.Sanitize(rec.ApprovalID, model.Line)
	ev := Event{Kind: kind, Step: step, ApprovalID: id, Risk: string(rec.EffectiveRisk),
		SessionKey: model.Sanitize(rec.SessionKey, model.Line), Requester: model.Sanitize(rec.Requester, model.Line),
		CreatedAt: model.FromEpoch(rec.CreatedAt), At: now}
	if rec.ExpiresAt != nil {
		ev.ExpiresAt = model.FromEpoch(*rec.ExpiresAt)
	}
	if ch.IncludeCommand {
		ev.Command = model.CutRunes(model.Sanitize(rec.Command, model.Line), commandBound)
	} else {
		ev.CommandOmitted = true
	}
	if cfg.OpenHint != "" {
		ev.OpenHint = strings.ReplaceAll(cfg.OpenHint, "{id}", id)
	}
	if kind == KindRefused {
		ev.Outcome = "refused at execution: " + model.Sanitize(rec.ExecutionReason, model.Line)
		ev.Actor = model.Sanitize(rec.ConsumedBy, model.Line)
	}
	if kind == KindRanWithoutApproval {
		// What the store says the proposal was when the agent ran it; the
		// agent's report itself (the execution reason) stays in the store.
		ev.Outcome = "ran without approval (the proposal is " + string(rec.EffectiveStatus) + ")"
		if rec.EffectiveStatus == model.StatusDenied {
			ev.Actor = model.Sanitize(rec.ConsumedBy, model.Line)
		}
	}
	if kind == KindResolved {
		st := rec.EffectiveStatus
		ev.Outcome = st.Decision()
		if st != model.StatusExpired {
			ev.Actor = model.Sanitize(rec.ConsumedBy, model.Line)
		}
	}
	return ev
}

// WithSigners names, in the resolution of a proposal that is now st, the
// principals whose signatures over its decision verified
// (approvals.DecidedBy; required: signatures are required, and a decision
// none verifies is said to be unsigned). A resolution no decision made
// (expired) names none.
func WithSigners(ev *Event, st model.Status, signers []approvals.Signer, required bool) {
	who, decided := approvals.DecidedBy(st, signers)
	if !decided {
		return
	}
	ev.Signers = who
	ev.Unsigned = required && len(ev.Signers) == 0
}

// WithPark adds what is said of rec's park to ev (approvals.ParkWords;
// ws: its waiter's state, nil when not read): nothing unless its agent
// stopped waiting and it is still open, or its window ended with nothing
// taken. A taken or closed park is the resolution's to say.
func WithPark(ev *Event, rec *storage.Record, ws *storage.WaiterStatus, now time.Time) {
	ev.ParkState, ev.Park = "", ""
	switch st := approvals.ParkStateOf(rec, ws, now); st {
	case approvals.ParkParked, approvals.ParkReserved, approvals.ParkWindowOver:
		ev.ParkState, ev.Park = string(st), model.Sanitize(approvals.ParkWords(rec, ws, now), model.Line)
	}
}

// WithQuorum adds where a proposal stands against the policy to ev.
func WithQuorum(ev *Event, q *storage.Quorum) {
	ev.Approvals, ev.Needed = q.Progress(), q.Needed()
	ev.Voters = nil
	for _, v := range q.Votes {
		ev.Voters = append(ev.Voters, model.Sanitize(v.Actor, model.Line))
	}
}

func unique(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// NewID is a notifier id: host, pid and a random part.
func NewID() string {
	return fmt.Sprintf("%s:%d:%s", model.HostName(), pid(), model.NewID()[:6])
}
