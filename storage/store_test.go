package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
)

var ctx = context.Background()

func TestSubmitGetRoundTripKeepsExactBytes(t *testing.T) {
	s, c := newStore(t)
	cmd := "rm -rf /srv/app/\xff\xfe build \x1b[31m\u202e"
	p := proposal("id-roundtrip", cmd, model.RiskHigh, c.Now(), time.Hour)
	p.EnvOverrides = map[string]string{"PATH": "/usr/bin", "X": "\x00y"}
	p.DiffText = "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n"
	mustSubmit(t, s, p)
	got, err := s.Get(ctx, p.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Command != cmd {
		t.Fatalf("command bytes changed: %q != %q", got.Command, cmd)
	}
	if got.EnvOverrides["X"] != "\x00y" || got.DiffText != p.DiffText {
		t.Fatalf("fields changed: %+v", got.Proposal)
	}
	if got.Corrupt != "" {
		t.Fatalf("valid row reported corrupt: %s", got.Corrupt)
	}
	if !got.Suspicious() {
		t.Fatal("a command with ESC and U+202E must be suspicious")
	}
	if got.EffectiveStatus != model.StatusPending || got.EffectiveRisk != model.RiskHigh {
		t.Fatalf("status %s risk %s", got.EffectiveStatus, got.EffectiveRisk)
	}
}

func TestSubmitValidatesAndRefusesDuplicates(t *testing.T) {
	s, c := newStore(t)
	bad := proposal("", "", "extreme", c.Now(), 0)
	bad.RiskReason = ""
	bad.SessionKey = ""
	err := s.Submit(ctx, bad, agent)
	var ve *model.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) < 5 {
		t.Fatalf("want every problem at once, got %v", err)
	}
	p := proposal("dup", "ls", model.RiskLow, c.Now(), 0)
	mustSubmit(t, s, p)
	var de *DuplicateError
	if err := s.Submit(ctx, proposal("dup", "rm -rf /x", model.RiskHigh, c.Now(), 0), agent); !errors.As(err, &de) {
		t.Fatalf("duplicate: got %v", err)
	}
	got, _ := s.Get(ctx, "dup")
	if got.Command != "ls" {
		t.Fatal("a duplicate submit overwrote the original")
	}
}

func TestConsumeRequiresExactRetypedID(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("Abc-123_xyz", "git push --force", model.RiskMedium, c.Now(), time.Hour))
	for _, typed := range []string{"", "abc-123_xyz", "Abc-123_xyz ", " Abc-123_xyz", "Abc-123_xy", "Abc-123_xyzz"} {
		if _, err := s.Consume(ctx, "Abc-123_xyz", typed, alice); !errors.Is(err, ErrConfirmMismatch) {
			t.Fatalf("typed %q: want mismatch, got %v", typed, err)
		}
	}
	if r, _ := s.Get(ctx, "Abc-123_xyz"); r.Status != model.StatusPending {
		t.Fatal("a mismatched confirmation changed the row")
	}
	rec, err := s.Consume(ctx, "Abc-123_xyz", "Abc-123_xyz", alice)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != model.StatusConsumed || rec.ConsumedBy != alice.String() {
		t.Fatalf("consumed row: %+v", rec.Proposal)
	}
	_, err = s.Consume(ctx, "Abc-123_xyz", "Abc-123_xyz", bob)
	var np *NotPendingError
	if !errors.As(err, &np) || np.By != alice.String() || np.Status != model.StatusConsumed {
		t.Fatalf("second consume: want not pending by alice, got %v", err)
	}
	if _, err := s.Consume(ctx, "nope", "nope", alice); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestExpiredIsFinal(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("soon", "git reset --hard", model.RiskMedium, c.Now(), time.Minute))
	mustSubmit(t, s, proposal("later", "git reset --hard", model.RiskMedium, c.Now(), time.Hour))
	c.Advance(time.Minute) // expires_at <= now: expired
	var np *NotPendingError
	if _, err := s.Consume(ctx, "soon", "soon", alice); !errors.As(err, &np) || np.Status != model.StatusExpired {
		t.Fatalf("consume of an expired row: %v", err)
	}
	if _, err := s.Deny(ctx, "soon", alice, ""); !errors.As(err, &np) {
		t.Fatalf("deny of an expired row: %v", err)
	}
	if r, _ := s.Get(ctx, "soon"); r.EffectiveStatus != model.StatusExpired || r.Status != model.StatusPending {
		t.Fatalf("effective status: %s (column %s)", r.EffectiveStatus, r.Status)
	}
	pending, _ := s.List(ctx, ListOptions{})
	if len(pending) != 1 || pending[0].ApprovalID != "later" {
		t.Fatalf("pending list must hide expired rows: %v", ids(pending))
	}
	expired, err := s.ExpireDue(ctx, model.Actor{Surface: model.SurfaceSystem, Name: "expiry"})
	if err != nil || len(expired) != 1 || expired[0] != "soon" {
		t.Fatalf("ExpireDue: %v %v", expired, err)
	}
	if r, _ := s.Get(ctx, "soon"); r.Status != model.StatusExpired {
		t.Fatal("status column not rewritten")
	}
	if _, err := s.Consume(ctx, "soon", "soon", alice); !errors.As(err, &np) {
		t.Fatalf("consume after ExpireDue: %v", err)
	}
}

func TestReadOnlyActorIsRefusedByTheDecisionPath(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("ro1", "rm -rf /srv", model.RiskHigh, c.Now(), time.Hour))
	var ro *ReadOnlyError
	if _, err := s.Consume(ctx, "ro1", "ro1", watcher); !errors.As(err, &ro) {
		t.Fatalf("watcher consume: %v", err)
	}
	if _, err := s.Deny(ctx, "ro1", watcher, "no"); !errors.As(err, &ro) {
		t.Fatalf("watcher deny: %v", err)
	}
	if r, _ := s.Get(ctx, "ro1"); r.Status != model.StatusPending {
		t.Fatal("a watcher changed a row")
	}
	db := rawDB(t, s.Path())
	if n := countAudit(t, db, `approval_id = 'ro1' AND outcome = 'refused' AND reason = 'read_only'`); n != 2 {
		t.Fatalf("refusals audited: %d, want 2", n)
	}
}

func TestDenyWithReasonIsAudited(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("d1", "DROP TABLE users", model.RiskHigh, c.Now(), time.Hour))
	rec, err := s.Deny(ctx, "d1", bob, "not in prod")
	if err != nil || rec.Status != model.StatusDenied || rec.ConsumedBy != bob.String() {
		t.Fatalf("deny: %v %+v", err, rec)
	}
	evs, err := s.Audit(ctx, AuditQuery{ApprovalID: "d1"})
	if err != nil || len(evs) != 2 {
		t.Fatalf("audit: %v %v", evs, err)
	}
	if evs[0].Event != EventDeny || evs[0].Detail["reason"] != "not in prod" || evs[0].Actor != "bob@host" || evs[0].Surface != "tui" {
		t.Fatalf("deny event: %+v", evs[0])
	}
	var np *NotPendingError
	if _, err := s.Consume(ctx, "d1", "d1", alice); !errors.As(err, &np) || np.Status != model.StatusDenied {
		t.Fatalf("consume after deny: %v", err)
	}
}

func TestCorruptRowsAreListedDeniableNeverConsumable(t *testing.T) {
	s, c := newStore(t)
	db := rawDB(t, s.Path())
	now := model.Epoch(c.Now())
	good := string(model.EncodePayload(proposal("mismatch-other", "ls", model.RiskLow, c.Now(), 0)))
	rows := map[string]string{
		"badjson":  `{"approval_id": "badjson", "command": "rm -rf /"`,
		"notobj":   `[1, 2, 3]`,
		"badrisk":  strings.Replace(string(model.EncodePayload(proposal("badrisk", "ls", model.RiskLow, c.Now(), 0))), `"risk_level": "low"`, `"risk_level": "extreme"`, 1),
		"badtype":  strings.Replace(string(model.EncodePayload(proposal("badtype", "ls", model.RiskLow, c.Now(), 0))), `"command": "ls"`, `"command": 42`, 1),
		"mismatch": good,
		"highallow": strings.Replace(string(model.EncodePayload(proposal("highallow", "ls", model.RiskHigh, c.Now(), 0))),
			`"default_decision": "deny"`, `"default_decision": "allow"`, 1),
	}
	for id, payload := range rows {
		mustExec(t, db, `INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES (?, ?, ?, 'pending', ?)`,
			id, now, now+3600, payload)
	}
	want := len(rows)
	if testBackend == "sqlite" {
		// A column of the wrong type: SQLite stores anything anywhere
		// (PostgreSQL's typed columns refuse it).
		mustExec(t, db, `INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES ('badexp', ?, 'soon', 'pending', ?)`,
			now, string(model.EncodePayload(proposal("badexp", "ls", model.RiskLow, c.Now(), 0))))
		want++
	}

	list, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != want {
		t.Fatalf("listed %d rows, want %d: %v", len(list), want, ids(list))
	}
	for _, r := range list {
		if r.Corrupt == "" {
			t.Errorf("%s: not flagged corrupt", r.ApprovalID)
		}
		if r.EffectiveRisk != model.RiskUnknown {
			t.Errorf("%s: effective risk %s, want unknown", r.ApprovalID, r.EffectiveRisk)
		}
		var ce *CorruptError
		if _, err := s.Consume(ctx, r.ApprovalID, r.ApprovalID, alice); !errors.As(err, &ce) {
			t.Errorf("%s: consume of a corrupt row: %v", r.ApprovalID, err)
		}
		if _, err := s.Deny(ctx, r.ApprovalID, alice, "corrupt"); err != nil {
			t.Errorf("%s: deny of a corrupt row: %v", r.ApprovalID, err)
		}
	}
	if got, _ := s.Get(ctx, "badrisk"); !strings.Contains(got.Corrupt, "extreme") {
		t.Errorf("reason should name the bad value: %q", got.Corrupt)
	}
	if got, _ := s.Get(ctx, "mismatch"); !strings.Contains(got.Corrupt, "does not match") {
		t.Errorf("payload id mismatch reason: %q", got.Corrupt)
	}
}

func TestRecordExecutionOutcomes(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("exec0001", "git clean -fd", model.RiskMedium, c.Now(), time.Hour))
	var it *InvalidTransitionError
	if err := s.RecordExecution(ctx, "exec0001", model.ExecExecuted, "exit 0", agent); !errors.As(err, &it) {
		t.Fatalf("execution before consume: %v", err)
	}
	if _, err := s.Consume(ctx, "exec0001", "exec0001", alice); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordExecution(ctx, "exec0001", model.ExecStarted, "pid 42", agent); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordExecution(ctx, "exec0001", model.ExecExecuted, "exit code 0", agent); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordExecution(ctx, "exec0001", model.ExecExecuted, "exit code 0", agent); !errors.As(err, &it) {
		t.Fatalf("second outcome: %v", err)
	}
	r, _ := s.Get(ctx, "exec0001")
	if r.ExecutionStatus != model.ExecExecuted || r.ExecutionReason != "exit code 0" || r.ExecutionRecordedAt == nil {
		t.Fatalf("row: %+v", r.Proposal)
	}
}

func TestListOrdersByEffectiveRiskThenExpiryAndPages(t *testing.T) {
	s, c := newStore(t)
	now := c.Now()
	mustSubmit(t, s, proposal("low-soon", "ls -la", model.RiskLow, now, time.Minute))
	mustSubmit(t, s, proposal("med-late", "git reset --hard", model.RiskMedium, now, time.Hour))
	mustSubmit(t, s, proposal("med-soon", "git reset --hard", model.RiskMedium, now, 2*time.Minute))
	mustSubmit(t, s, proposal("high-never", "rm -rf /srv/data", model.RiskHigh, now, 0))
	mustSubmit(t, s, proposal("high-soon", "rm -rf /srv/data", model.RiskHigh, now, 5*time.Minute))
	// Pinned low, but the classifier says high now: shown and ranked high.
	mustSubmit(t, s, proposal("raised", "DROP TABLE accounts", model.RiskLow, now, 10*time.Minute))
	want := []string{"high-soon", "raised", "high-never", "med-soon", "med-late", "low-soon"}
	got, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids(got), ",") != strings.Join(want, ",") {
		t.Fatalf("order %v, want %v", ids(got), want)
	}
	if got[1].EffectiveRisk != model.RiskHigh || got[1].RiskLevel != model.RiskLow {
		t.Fatalf("raised row: effective %s pinned %s", got[1].EffectiveRisk, got[1].RiskLevel)
	}
	var paged []string
	for off := 0; off < 6; off += 4 {
		page, err := s.List(ctx, ListOptions{Limit: 4, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, ids(page)...)
	}
	if strings.Join(paged, ",") != strings.Join(want, ",") {
		t.Fatalf("paged %v", paged)
	}
	// The in-memory ranking used when the index cannot be written agrees.
	scan, err := s.bind().listPendingScan(ctx, c.Now(), ListOptions{Limit: 100})
	if err != nil || strings.Join(ids(scan), ",") != strings.Join(want, ",") {
		t.Fatalf("scan order %v (%v)", ids(scan), err)
	}
}

func TestListSeesRowsWrittenAndDecidedByOtherProcesses(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("ours", "git push --force", model.RiskMedium, c.Now(), time.Hour))
	if l, _ := s.List(ctx, ListOptions{}); len(l) != 1 {
		t.Fatal("setup")
	}
	db := rawDB(t, s.Path())
	now := model.Epoch(c.Now())
	hermes := proposal("hermesrow01", "rm -rf /var/lib/app", model.RiskHigh, c.Now(), time.Hour)
	mustExec(t, db, `INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES (?, ?, ?, 'pending', ?)`,
		hermes.ApprovalID, now, now+3600, string(model.EncodePayload(hermes)))
	l, err := s.List(ctx, ListOptions{})
	if err != nil || strings.Join(ids(l), ",") != "hermesrow01,ours" {
		t.Fatalf("after foreign insert: %v %v", ids(l), err)
	}
	mustExec(t, db, `UPDATE gateway_approvals SET status='consumed', consumed_at=?, consumed_by='hermes:alice' WHERE approval_id='ours' AND status='pending'`, now)
	l, _ = s.List(ctx, ListOptions{})
	if strings.Join(ids(l), ",") != "hermesrow01" {
		t.Fatalf("after foreign consume: %v", ids(l))
	}
	var np *NotPendingError
	if _, err := s.Consume(ctx, "ours", "ours", alice); !errors.As(err, &np) || np.By != "hermes:alice" {
		t.Fatalf("consume after foreign consume: %v", err)
	}
	// Foreign deletes and a rebuilt rank index keep the list right.
	mustExec(t, db, `DELETE FROM gateway_approvals`)
	if l, _ := s.List(ctx, ListOptions{}); len(l) != 0 {
		t.Fatalf("after delete: %v", ids(l))
	}
}

func ids(rs []*Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ApprovalID
	}
	return out
}

func TestCountPending(t *testing.T) {
	s, c := newStore(t)
	mustSubmit(t, s, proposal("c1", "ls", model.RiskLow, c.Now(), time.Minute))
	mustSubmit(t, s, proposal("c2", "ls", model.RiskLow, c.Now(), 0))
	mustSubmit(t, s, proposal("c3", "ls", model.RiskLow, c.Now(), time.Hour))
	if _, err := s.Deny(ctx, "c3", alice, ""); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Minute)
	if n, err := s.CountPending(ctx); err != nil || n != 1 {
		t.Fatalf("CountPending = %d, %v; want 1 (c2: never expires)", n, err)
	}
	// A file without Hermes' partial index is counted too.
	mustExec(t, rawDB(t, s.Path()), `DROP INDEX idx_gateway_approvals_pending_expires`)
	if n, err := s.CountPending(ctx); err != nil || n != 1 {
		t.Fatalf("without the index: %d, %v", n, err)
	}
}

// The pending signature changes when a row enters or leaves pending, by any
// writer, and not when only heartbeats or the audit log are written.
func TestPendingSignature(t *testing.T) {
	s, c := newStore(t)
	sig := func() PendingSignature {
		t.Helper()
		v, err := s.PendingSignature(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	empty := sig()
	if empty != (PendingSignature{}) {
		t.Fatalf("empty file: %+v", empty)
	}
	mustSubmit(t, s, proposal("sg1", "rm -rf /a", model.RiskHigh, c.Now(), time.Hour))
	mustSubmit(t, s, proposal("sg2", "rm -rf /b", model.RiskHigh, c.Now(), time.Hour))
	two := sig()
	if two.Count != 2 || two == empty {
		t.Fatalf("two pending: %+v", two)
	}
	host, _ := os.Hostname()
	if err := s.Heartbeat(ctx, Waiter{ApprovalID: "sg1", Host: host, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordPolicy(ctx, &PolicyRecord{Decision: PolicyAllow, Reason: "no match", Command: "ls", Risk: model.RiskLow}, alice); err != nil {
		t.Fatal(err)
	}
	if got := sig(); got != two {
		t.Fatalf("a heartbeat and an audit-only write changed it: %+v -> %+v", two, got)
	}
	if _, err := s.Deny(ctx, "sg1", alice, ""); err != nil {
		t.Fatal(err)
	}
	one := sig()
	if one.Count != 1 || one == two {
		t.Fatalf("after a deny: %+v", one)
	}
	// A decision and a new row together keep the count, not the signature.
	db := rawDB(t, s.Path())
	mustExec(t, db, `UPDATE gateway_approvals SET status = 'consumed' WHERE approval_id = 'sg2'`)
	p := proposal("sg3", "rm -rf /c", model.RiskHigh, c.Now(), time.Hour)
	insertRaw(t, db, p)
	if got := sig(); got.Count != 1 || got == one {
		t.Fatalf("one left and one came: %+v -> %+v", one, got)
	}
	// The newest row deleted and a new one in its place (SQLite hands out
	// max(rowid)+1 again, the same rowid): the id tells.
	before := sig()
	mustExec(t, db, `DELETE FROM gateway_approvals WHERE approval_id = 'sg3'`)
	insertRaw(t, db, proposal("sg4", "rm -rf /d", model.RiskHigh, c.Now(), time.Hour))
	if got := sig(); got.Count != before.Count || got == before {
		t.Fatalf("the newest row replaced in its rowid: %+v -> %+v", before, got)
	}
	// The live count leaves out what expired and was not swept yet.
	c.Advance(2 * time.Hour)
	mustSubmit(t, s, proposal("sg5", "rm -rf /e", model.RiskHigh, c.Now(), time.Hour))
	if got, live, err := s.PendingSummary(ctx); err != nil || got.Count != 2 || live != 1 {
		t.Fatalf("one live, one expired: %+v live %d, %v", got, live, err)
	}
}

// The decode cache keeps every view used within its last decodeCacheMax
// lookups: a console re-reading its 5,000 most urgent rows after each commit
// decodes none of them again.
func TestDecodeCacheKeepsTheWorkingSet(t *testing.T) {
	var c decodeCache
	n := decodeCacheMax*3/4 + 100 // more than half: one generation alone cannot hold two passes
	payload := func(i int) string {
		p := proposal(fmt.Sprintf("dc%05d", i), "ls", model.RiskLow, time.Unix(1_780_000_000, 0), time.Hour)
		return string(model.EncodePayload(p))
	}
	payloads := make([]string, n)
	first := make([]*payloadView, n)
	for i := range payloads {
		payloads[i] = payload(i)
		first[i] = c.view(fmt.Sprintf("dc%05d", i), payloads[i], true, nil)
	}
	for pass := 0; pass < 3; pass++ {
		for i := range payloads {
			if v := c.view(fmt.Sprintf("dc%05d", i), payloads[i], true, nil); v != first[i] {
				t.Fatalf("pass %d: row %d decoded again", pass, i)
			}
		}
	}
	// A changed payload is never served from the cache.
	other := payload(n + 1)
	if v := c.view("dc00000", other, true, nil); v == first[0] || v.payload != other {
		t.Fatal("a changed payload was served from the cache")
	}
}

// The store refuses, and audits, approving a hardline command, a proposal
// whose id is too short to be a real gate, and a proposal whose payload is
// not the one the approver read. Deny works on all three.
func TestConsumeRefusesHardlineShortIDAndChangedContent(t *testing.T) {
	s, c := newStore(t)
	refused := func(id, code string, err error) {
		t.Helper()
		var rf *RefusedError
		if !errors.As(err, &rf) || rf.Code != code {
			t.Fatalf("%s: want refusal %s, got %v", id, code, err)
		}
		if r, _ := s.Get(ctx, id); r.Status != model.StatusPending {
			t.Fatalf("%s: status %s after a refusal", id, r.Status)
		}
		evs, err := s.Audit(ctx, AuditQuery{ApprovalID: id, Limit: 1})
		if err != nil || len(evs) != 1 || evs[0].Outcome != OutcomeRefused || evs[0].Reason != code {
			t.Fatalf("%s: audit %+v %v", id, evs, err)
		}
	}
	mustSubmit(t, s, proposal("hardline01", "dd if=/dev/zero of=/dev/sdb bs=4M && mkfs.ext4 /dev/sdb", model.RiskHigh, c.Now(), time.Hour))
	r, _ := s.Get(ctx, "hardline01")
	if !r.Hardline {
		t.Fatal("the record does not say hardline")
	}
	_, err := s.Consume(ctx, "hardline01", "hardline01", alice)
	refused("hardline01", RefusedHardline, err)

	mustSubmit(t, s, proposal("short7x", "ls", model.RiskLow, c.Now(), time.Hour))
	_, err = s.Consume(ctx, "short7x", "short7x", alice)
	refused("short7x", RefusedShortID, err)

	// A row Hermes wrote (no submit record).
	db := rawDB(t, s.Path())
	insertRaw(t, db, proposal("rewrite01", "ls /srv", model.RiskLow, c.Now(), time.Hour))
	read, _ := s.Get(ctx, "rewrite01")
	if len(read.PayloadSHA256) != 64 {
		t.Fatalf("payload sha256 %q", read.PayloadSHA256)
	}
	// Another writer rewrites the payload after it was read.
	p2 := proposal("rewrite01", "rm -rf /srv", model.RiskLow, c.Now(), time.Hour)
	mustExec(t, db, `UPDATE gateway_approvals SET payload_json = ? WHERE approval_id = 'rewrite01'`, string(model.EncodePayload(p2)))
	_, err = s.ConsumeRead(ctx, "rewrite01", "rewrite01", read.PayloadSHA256, alice)
	refused("rewrite01", RefusedContentChanged, err)
	now, _ := s.Get(ctx, "rewrite01")
	if _, err := s.ConsumeRead(ctx, "rewrite01", "rewrite01", strings.ToUpper(now.PayloadSHA256), alice); err != nil {
		t.Fatalf("approving what is there now (hash in upper case): %v", err)
	}
	for _, id := range []string{"hardline01", "short7x"} {
		if _, err := s.Deny(ctx, id, alice, ""); err != nil {
			t.Fatalf("deny %s: %v", id, err)
		}
	}
}

// Why a preview is incomplete names the host's paths: scanned like every
// string the agent's host supplied.
func TestIncompleteImpactIsScanned(t *testing.T) {
	p := &model.Proposal{Command: "rm -rf data", Impact: &model.Impact{Incomplete: []string{"could not read 1 directory (/srv/\x1b[2Jx)"}}}
	if got := strings.Join(agentFindings(p), ", "); !strings.Contains(got, "in impact") {
		t.Fatalf("findings %q", got)
	}
}
