package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// Defaults of AgentOptions.
const (
	DefaultEvery      = 6 * time.Second
	DefaultMaxPending = 8
)

// errorPause is how long the agent backs off after the store failed to
// tell it about changes.
const errorPause = 500 * time.Millisecond

// AgentOptions configure RunAgent.
type AgentOptions struct {
	// Seed makes a run reproducible: the order in which the catalogue is
	// submitted, the ids and the gaps between submissions. The agent also
	// waits on the proposals that Seed wrote with the same seed, as if it had
	// submitted them (except the Hermes row, whose waiter lives inside Hermes,
	// and the one whose waiter is dead).
	Seed int64
	// Every is the mean time between two submissions (DefaultEvery when not
	// positive); each gap is drawn from [Every/2, 3*Every/2).
	Every time.Duration
	// MaxPending caps how many of the agent's own submissions are pending at
	// once (DefaultMaxPending when not positive), so the demo stays readable.
	MaxPending int
	// OnError receives what went wrong (a locked store, a refused write);
	// nothing stops the agent but its context. It may be called from several
	// goroutines at once.
	OnError func(error)
}

// agentEntry is one command the simulated agent proposes.
type agentEntry struct {
	draft risk.Draft
	exit  int // the exit code it reports after a (pretend) run
}

// agentCatalogue is what the simulated agent proposes, in an order drawn
// from the seed.
func agentCatalogue() []agentEntry {
	d := func(command, session, requester, cwd, backend, why string, ttl time.Duration) risk.Draft {
		return risk.Draft{Command: command, SessionKey: session, Requester: requester, Cwd: cwd,
			Backend: backend, Context: why, TTL: ttl}
	}
	withDiff := func(dr risk.Draft, diff, summary string) risk.Draft {
		dr.DiffText, dr.DiffSummary = diff, summary
		return dr
	}
	withEnv := func(dr risk.Draft, env map[string]string) risk.Draft {
		dr.Env = env
		return dr
	}
	raise := func(dr risk.Draft, level model.RiskLevel) risk.Draft {
		dr.Raise = level
		return dr
	}
	return []agentEntry{
		{draft: withEnv(d("pg_dump -Fc -h db-prod-1 app -f /backups/app-$(date +%F).dump", sessBackup, "backup-cron",
			"/backups", "ssh", "nightly logical backup", 6*time.Minute), map[string]string{"PGCONNECT_TIMEOUT": "10"})},
		{draft: d("docker compose down && docker compose up -d --build", sessClaude, "claude-code",
			"/home/dev/src/storefront", "local", "pick up the new Dockerfile", 5*time.Minute)},
		{draft: d("git reset --hard origin/main", sessClaude2, "claude-code",
			"/home/dev/src/ops-scripts", "local", "discard the failed experiment", 4*time.Minute)},
		{draft: d("rm -rf node_modules dist .cache", sessClaude, "claude-code",
			"/home/dev/src/storefront", "local", "clean build", 5*time.Minute)},
		{draft: withDiff(d("sudo sed -i -f /tmp/agent/harden.sed /etc/ssh/sshd_config && sudo systemctl restart sshd", sessSlack, "ops-agent",
			"/home/ops", "ssh", "CIS benchmark 5.2.x", 8*time.Minute), sshdDiff, "sshd_config: no root login, no passwords, 3 auth tries")},
		{draft: d("psql -h db-staging -U app -c 'TRUNCATE TABLE events_raw;'", sessTelegram, "ops-agent",
			"/home/ops", "ssh", "staging disk at 94%", 6*time.Minute), exit: 1},
		{draft: d("curl -fsSL https://deb.nodesource.com/setup_20.x | bash -", sessWhatsApp, "hermes-agent",
			"/root", "docker", "node 20 for the build image", 3*time.Minute)},
		{draft: d("kubectl delete pod -l app=worker -n payments", sessSlack, "ops-agent",
			"/home/ops", "ssh", "workers wedged on a poisoned message", 4*time.Minute)},
		{draft: raise(d("redis-cli -h cache-1 FLUSHALL", sessTelegram, "ops-agent",
			"/home/ops", "ssh", "flushes every key of the production cache", 5*time.Minute), model.RiskHigh)},
		{draft: d("chmod 777 /srv/shared/uploads", sessWhatsApp, "hermes-agent",
			"/srv/shared", "local", "upload form returns 403", 90*time.Second)},
		{draft: d("find /tmp -name 'core.*' -mtime +3 -delete", sessBackup, "backup-cron",
			"/tmp", "local", "", 7*time.Minute), exit: 1},
		{draft: d("echo 'vm.swappiness=10' | sudo tee -a /etc/sysctl.conf", sessDiscord, "ops-agent",
			"/root", "ssh", "build-7 swapping under load", 5*time.Minute)},
		{draft: d("npm publish --access public", sessClaude, "claude-code",
			"/home/dev/src/ui-kit", "local", "release 3.2.0", 6*time.Minute), exit: 1},
		{draft: d("git push --force origin main", sessClaude2, "claude-code",
			"/home/dev/src/ops-scripts", "local", "squashed history", 4*time.Minute)},
		{draft: d("mysql -e 'DELETE FROM sessions;' app", sessTelegram, "ops-agent",
			"/home/ops", "ssh", "log everyone out after the key rotation", 5*time.Minute)},
		{draft: d("killall -9 node", sessClaude, "claude-code",
			"/home/dev/src/storefront", "local", "dev server hung", 2*time.Minute)},
		{draft: d("systemctl restart nginx", sessSlack, "ops-agent",
			"/etc/nginx", "ssh", "reload certificates", 5*time.Minute)},
		{draft: d("python3 -c 'import shutil; shutil.rmtree(\"/srv/cache/thumbnails\")'", sessWhatsApp, "hermes-agent",
			"/srv/cache", "local", "thumbnails regenerated tonight", 6*time.Minute)},
		{draft: raise(d("terraform destroy -target=aws_instance.bastion_old -auto-approve", sessDrift, "terraform-bot",
			"/home/ci/infra/envs/prod", "docker", "destroys a production instance; bastion replaced by SSM", 8*time.Minute), model.RiskMedium)},
		{draft: d("rsync -a --delete /srv/www/ backup@nas-2:/volume1/www/", sessBackup, "backup-cron",
			"/srv/www", "local", "mirror the web root", 6*time.Minute)},
		// Everyday workspace and read-only commands, judged low.
		{draft: d("npm run build", sessClaude, "claude-code",
			"/home/dev/src/storefront", "local", "check the bundle after the refactor", 3*time.Minute)},
		{draft: d("go test -race ./...", sessClaude2, "claude-code",
			"/home/dev/src/ops-scripts", "local", "run the tests before committing", 4*time.Minute), exit: 1},
		{draft: d("git push origin feature/checkout-retry", sessClaude, "claude-code",
			"/home/dev/src/storefront", "local", "open a pull request for the retry fix", 4*time.Minute)},
		{draft: d("kubectl logs deployment/worker -n payments --since=30m", sessSlack, "ops-agent",
			"/home/ops", "ssh", "why the workers wedged", 3*time.Minute)},
	}
}

// waiting is one proposal the agent waits on.
type waiting struct {
	own  bool   // submitted by this run (counts against MaxPending)
	exit int    // exit code to report if approved
	stop func() // ends its heartbeats and removes its waiter row
	exp  *float64
}

// sim is the state of one RunAgent.
type sim struct {
	s       *storage.Store
	opt     AgentOptions
	r       *rand.Rand
	order   []int // a permutation of the catalogue, drawn afresh each round
	next    int
	catalog []agentEntry
	waits   map[string]*waiting
}

// RunAgent runs the simulated agent until ctx ends: every few seconds it
// proposes a command from its catalogue (through risk.Propose), heartbeats
// as the live waiter of each of its pending proposals, and when one is
// approved records a plausible outcome with RecordExecution — "exit code 0"
// mostly, "exit code 1" for some, and blocked_after_consume when risk.Guard
// refuses the pinned command (it does not run anything). Denied and expired
// proposals get no outcome. It notices decisions by watching the store, and
// leaves expiry to the console. When ctx ends it removes its waiter rows and
// returns nil; it returns an error only when it cannot watch the store.
func RunAgent(ctx context.Context, s *storage.Store, opt AgentOptions) error {
	if opt.Every <= 0 {
		opt.Every = DefaultEvery
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = DefaultMaxPending
	}
	a := &sim{s: s, opt: opt, r: newRand(opt.Seed, streamAgent), catalog: agentCatalogue(), waits: map[string]*waiting{}}
	w, err := s.WatchLazy(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("demo agent: %w", err)
	}
	defer w.Close()
	defer a.stopAll()

	a.adopt(ctx)
	due := time.Now().Add(a.gap())
	for ctx.Err() == nil {
		a.reconcile(ctx)
		if !time.Now().Before(due) {
			if a.ownPending() < opt.MaxPending {
				a.submit(ctx)
			}
			due = time.Now().Add(a.gap())
		}
		wctx, cancel := context.WithDeadline(ctx, a.wakeAt(due))
		err := w.Wait(wctx)
		cancel()
		if err != nil && ctx.Err() == nil && wctx.Err() == nil {
			a.report(err)
			select {
			case <-ctx.Done():
			case <-time.After(errorPause):
			}
		}
	}
	return nil
}

func (a *sim) report(err error) {
	if a.opt.OnError != nil && err != nil {
		a.opt.OnError(fmt.Errorf("demo agent: %w", err))
	}
}

// gap is the time until the next submission.
func (a *sim) gap() time.Duration {
	return time.Duration(float64(a.opt.Every) * (0.5 + a.r.Float64()))
}

// wakeAt is the earlier of due and the first expiry among the waited
// proposals: expiry is a matter of time, not of a write.
func (a *sim) wakeAt(due time.Time) time.Time {
	now := a.s.Now()
	for _, wt := range a.waits {
		if wt.exp == nil {
			continue
		}
		at := time.Now().Add(model.FromEpoch(*wt.exp).Sub(now) + 10*time.Millisecond)
		if at.Before(due) {
			due = at
		}
	}
	return due
}

// adopt waits on the pending, sound proposals that Seed wrote with this
// seed and that the agent stands behind.
func (a *sim) adopt(ctx context.Context) {
	for _, e := range seedEntries(a.opt.Seed) {
		if e.waiter != agentWaiter {
			continue
		}
		rec, err := a.s.Get(ctx, e.id)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			a.report(err)
			continue
		}
		if rec.EffectiveStatus.Open() && rec.Corrupt == "" {
			a.wait(ctx, rec.ApprovalID, rec.ExpiresAt, false, e.exit)
		}
	}
}

func (a *sim) wait(ctx context.Context, id string, exp *float64, own bool, exit int) {
	stop := agent.KeepAlive(ctx, a.s, agent.LocalWaiter(id, model.SurfaceDemo), 0, a.report)
	a.waits[id] = &waiting{own: own, exit: exit, stop: stop, exp: exp}
}

func (a *sim) ownPending() int {
	n := 0
	for _, wt := range a.waits {
		if wt.own {
			n++
		}
	}
	return n
}

// submit proposes the next command of the catalogue.
func (a *sim) submit(ctx context.Context) {
	if a.next == len(a.order) {
		a.order, a.next = a.r.Perm(len(a.catalog)), 0
	}
	e := a.catalog[a.order[a.next]]
	a.next++
	for range 3 { // a reused demo file may already hold the id
		d := e.draft
		d.ID = drawID(a.r, 9)
		p, _, err := risk.Propose(d, a.s.Now())
		if err != nil {
			a.report(err)
			return
		}
		err = a.s.Submit(ctx, p, Actor())
		var dup *storage.DuplicateError
		if errors.As(err, &dup) {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				a.report(err)
			}
			return
		}
		a.wait(ctx, p.ApprovalID, p.ExpiresAt, true, e.exit)
		return
	}
}

// reconcile stops waiting on every proposal that left pending, and records
// the outcome of those that were approved.
func (a *sim) reconcile(ctx context.Context) {
	for id, wt := range a.waits {
		rec, err := a.s.Get(ctx, id)
		if ctx.Err() != nil {
			return
		}
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			a.report(err)
			continue
		}
		if err == nil && rec.EffectiveStatus.Open() {
			continue
		}
		wt.stop()
		delete(a.waits, id)
		if err == nil && rec.EffectiveStatus == model.StatusConsumed {
			a.execute(ctx, rec, wt.exit)
		}
	}
}

// execute pretends to run an approved proposal: the runtime guard first
// (risk is never downgraded), then a made-up exit code.
func (a *sim) execute(ctx context.Context, rec *storage.Record, exit int) {
	if rec.ExecutionStatus != model.ExecNotStarted {
		return // someone else already recorded it
	}
	outcome, reason := model.ExecExecuted, fmt.Sprintf("exit code %d", exit)
	if err := risk.Guard(rec.RiskLevel, rec.Command, risk.Context{Cwd: rec.Cwd}); err != nil {
		outcome, reason = model.ExecBlockedAfterConsume, err.Error()
	}
	if err := a.s.RecordExecution(ctx, rec.ApprovalID, outcome, reason, Actor()); err != nil && ctx.Err() == nil {
		a.report(err)
	}
}

// stopAll ends every heartbeat and removes the waiter rows.
func (a *sim) stopAll() {
	for id, wt := range a.waits {
		wt.stop()
		delete(a.waits, id)
	}
}
