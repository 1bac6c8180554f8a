package demo

import (
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
	"github.com/approve-tui/approve-tui/storage"
)

func openStore(t *testing.T) *storage.Store {
	t.Helper()
	s, err := storage.Open(context.Background(), filepath.Join(t.TempDir(), "demo.db"), storage.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func seedStore(t *testing.T, seed int64, now time.Time) (*storage.Store, []string) {
	t.Helper()
	s := openStore(t)
	ids, err := Seed(context.Background(), s, seed, now)
	if err != nil {
		t.Fatal(err)
	}
	return s, ids
}

// rawRows reads approval_id and payload_json of every row, by id.
func rawRows(t *testing.T, path string) [][2]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT approval_id, payload_json FROM gateway_approvals ORDER BY approval_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var r [2]string
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// byName maps the catalogue's names to the records the store reads.
func byName(t *testing.T, s *storage.Store, seed int64) map[string]*storage.Record {
	t.Helper()
	out := map[string]*storage.Record{}
	for _, c := range Catalogue(seed) {
		rec, err := s.Get(context.Background(), c.ID)
		if err != nil {
			t.Fatalf("%s (%s): %v", c.Name, c.ID, err)
		}
		out[c.Name] = rec
	}
	return out
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

func TestSeedDeterministic(t *testing.T) {
	now := time.Now()
	a, idsA := seedStore(t, 1, now)
	b, idsB := seedStore(t, 1, now)
	if !slices.Equal(idsA, idsB) {
		t.Fatalf("same seed, different ids:\n%v\n%v", idsA, idsB)
	}
	rowsA, rowsB := rawRows(t, a.Path()), rawRows(t, b.Path())
	if len(rowsA) != len(idsA) || !slices.Equal(rowsA, rowsB) {
		t.Fatalf("same seed and time, different rows")
	}
	var cat []string
	for _, c := range Catalogue(1) {
		cat = append(cat, c.ID)
	}
	if !slices.Equal(cat, idsA) {
		t.Fatalf("Catalogue(1) ids %v differ from Seed's %v", cat, idsA)
	}

	_, idsC := seedStore(t, 2, now)
	for _, id := range idsC {
		if slices.Contains(idsA, id) {
			t.Fatalf("seeds 1 and 2 share id %s", id)
		}
	}
	seen := map[string]bool{}
	for _, id := range append(idsA, idsC...) {
		if seen[id] || !idRE.MatchString(id) || (len(id) != 12 && len(id) != 11) {
			t.Errorf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
}

func TestSeedContent(t *testing.T) {
	now := time.Now()
	s, ids := seedStore(t, 1, now)
	ctx := context.Background()

	all, err := s.List(ctx, storage.ListOptions{Status: storage.ListAll})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(ids) {
		t.Fatalf("store lists %d rows, seeded %d", len(all), len(ids))
	}
	for _, rec := range all {
		if !slices.Contains(ids, rec.ApprovalID) {
			t.Errorf("unexpected row %s", rec.ApprovalID)
		}
	}

	recs := byName(t, s, 1)
	var corrupt, suspicious []string
	pinned := map[model.RiskLevel]bool{}
	for name, rec := range recs {
		if rec.Corrupt != "" {
			corrupt = append(corrupt, name)
		} else {
			pinned[rec.RiskLevel] = true
		}
		if rec.Suspicious() {
			suspicious = append(suspicious, name)
		}
	}
	if !slices.Equal(corrupt, []string{"corrupt"}) {
		t.Errorf("corrupt rows: %v, want exactly [corrupt]", corrupt)
	}
	if c := recs["corrupt"]; c.EffectiveRisk != model.RiskUnknown || !strings.Contains(c.Corrupt, "extreme") {
		t.Errorf("corrupt row: risk %s, reason %q", c.EffectiveRisk, c.Corrupt)
	}
	slices.Sort(suspicious)
	if !slices.Equal(suspicious, []string{"escapes", "unicode"}) {
		t.Errorf("suspicious rows: %v, want [escapes unicode]", suspicious)
	}
	for _, lvl := range []model.RiskLevel{model.RiskLow, model.RiskMedium, model.RiskHigh} {
		if !pinned[lvl] {
			t.Errorf("no seeded row pinned %s", lvl)
		}
	}
	// A row that says its level has it: what the demo shows is true.
	for _, c := range Catalogue(1) {
		for _, lvl := range []model.RiskLevel{model.RiskLow, model.RiskMedium, model.RiskHigh} {
			if strings.HasPrefix(c.Shows, string(lvl)+" risk") && recs[c.Name].RiskLevel != lvl {
				t.Errorf("%s shows %q, pinned %s", c.Name, c.Shows, recs[c.Name].RiskLevel)
			}
		}
	}

	// Hostile content sits in the command, the cwd and the agent's words.
	wantFindings := map[string][]string{
		"escapes": {"escape sequence in command", "escape sequence in cwd", "escape sequence in requester's context"},
		"unicode": {
			"bidirectional override in command", "zero-width character in command", "invalid UTF-8 in command",
			"invalid UTF-8 in cwd", "zero-width character in cwd",
			"bidirectional override in requester's context", "zero-width character in requester's context",
			"invalid UTF-8 in requester's context",
		},
	}
	for name, want := range wantFindings {
		for _, f := range want {
			if !slices.Contains(recs[name].Findings, f) {
				t.Errorf("%s: findings %v lack %q", name, recs[name].Findings, f)
			}
		}
	}
	if cmd := recs["escapes"].Command; !strings.Contains(cmd, "\x1b]0;") || !strings.Contains(cmd, "\x1b]8;;") {
		t.Errorf("escapes: no OSC title or hyperlink in %q", cmd)
	}
	if cmd := recs["unicode"].Command; !strings.Contains(cmd, "\u202e") || !strings.Contains(cmd, "\u200b") || !strings.Contains(cmd, "\xff") {
		t.Errorf("unicode: command %q", cmd)
	}

	// The Hermes row: foreign (no approve-tui submit event), decodes, valid.
	h := recs["hermes"]
	if h.Corrupt != "" || len(h.ApprovalID) != 11 || h.Requester != "hermes-gateway" || h.Backend != "local" ||
		h.PolicyVersion != HermesPolicyVersion || h.DisplayText == "" || !strings.HasPrefix(h.SessionKey, "agent:main:telegram:dm:") {
		t.Errorf("hermes row: %+v", h.Proposal)
	}
	if !strings.Contains(h.DisplayText, "/approve "+h.ApprovalID) {
		t.Errorf("hermes display text does not name its id: %q", h.DisplayText)
	}
	evs, err := s.Audit(ctx, storage.AuditQuery{ApprovalID: h.ApprovalID})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 0 {
		t.Errorf("hermes row has approve-tui audit events: %+v", evs)
	}

	// Expired: still pending in the table, not in the pending list.
	exp := recs["expired"]
	if exp.Status != model.StatusPending || exp.EffectiveStatus != model.StatusExpired {
		t.Errorf("expired row: status %s, effective %s", exp.Status, exp.EffectiveStatus)
	}
	pending, err := s.List(ctx, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != len(ids)-1 {
		t.Errorf("%d pending, want %d", len(pending), len(ids)-1)
	}
	for _, rec := range pending {
		if rec.ApprovalID == exp.ApprovalID {
			t.Error("the expired row is listed as pending")
		}
	}
	if left, ok := recs["expiring"].TimeLeft(now); !ok || left < 44*time.Second || left > 46*time.Second {
		t.Errorf("expiring row: %v left (%v)", left, ok)
	}

	// Never downgraded: pinned low, shown and enforced high.
	dg := recs["downgraded"]
	if dg.RiskLevel != model.RiskLow || dg.EffectiveRisk != model.RiskHigh || dg.Corrupt != "" {
		t.Errorf("downgraded row: pinned %s effective %s corrupt %q", dg.RiskLevel, dg.EffectiveRisk, dg.Corrupt)
	}
	if risk.Guard(dg.RiskLevel, dg.Command, risk.Context{Cwd: dg.Cwd}) == nil {
		t.Error("the guard would run the downgraded row")
	}

	// Diffs and command shapes.
	d := recs["diff"]
	if !strings.HasPrefix(d.DiffText, "--- a/") || strings.Count(d.DiffText, "\n@@ ") < 2 || d.RiskLevel != model.RiskHigh {
		t.Errorf("diff row: risk %s, diff %q", d.RiskLevel, d.DiffText)
	}
	if sm := recs["summary"]; sm.DiffText != "" || sm.DiffSummary == "" || sm.RiskLevel != model.RiskHigh {
		t.Errorf("summary row: %+v", sm.Proposal)
	}
	if dr := recs["drop"]; dr.DiffText != "" || dr.DiffSummary != "" || dr.RiskLevel != model.RiskHigh {
		t.Errorf("drop row: %+v", dr.Proposal)
	}
	if l := recs["long"].Command; len(l) < 400 || strings.Contains(l, "\n") {
		t.Errorf("long command is %d bytes", len(l))
	}
	if hd := recs["heredoc"].Command; !strings.HasPrefix(hd, "cat <<'EOF' > /etc/") || strings.Count(hd, "\n") < 5 {
		t.Errorf("heredoc command %q", hd)
	}
	if !risk.Classify(recs["hardline"].Command).Hardline {
		t.Error("hardline row matches no hardline rule")
	}
	if recs["low"].ExpiresAt != nil {
		t.Error("the low row should never expire")
	}

	// Waiters: a dead one on dead-waiter, none elsewhere until the agent runs.
	for name, rec := range recs {
		ws, err := s.WaiterState(ctx, rec.ApprovalID)
		if err != nil {
			t.Fatal(err)
		}
		want := storage.WaiterNone
		if name == "dead-waiter" {
			want = storage.WaiterDead
		}
		if ws.State != want {
			t.Errorf("%s: waiter %s, want %s", name, ws.State, want)
		}
	}

	// Submissions are the demo agent's.
	evs, err = s.Audit(ctx, storage.AuditQuery{ApprovalID: recs["diff"].ApprovalID})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Event != storage.EventSubmit || !strings.Contains(evs[0].Actor, "demo-agent") {
		t.Errorf("diff row audit: %+v", evs)
	}
}

// Seeding twice into one file fails instead of writing a mixture.
func TestSeedTwiceFails(t *testing.T) {
	s, _ := seedStore(t, 1, time.Now())
	if _, err := Seed(context.Background(), s, 1, time.Now()); err == nil {
		t.Fatal("seeding an already seeded file succeeded")
	}
}

// The agent's catalogue spans every risk level, and every draft is valid.
func TestAgentCatalogue(t *testing.T) {
	levels := map[model.RiskLevel]int{}
	for _, e := range agentCatalogue() {
		p, _, err := risk.Propose(e.draft, time.Now())
		if err != nil {
			t.Errorf("%q: %v", e.draft.Command, err)
			continue
		}
		levels[p.RiskLevel]++
		if risk.Guard(p.RiskLevel, p.Command, e.draft.JudgeContext()) != nil {
			t.Errorf("%q: the guard refuses a fresh proposal", p.Command)
		}
	}
	for _, lvl := range []model.RiskLevel{model.RiskLow, model.RiskMedium, model.RiskHigh} {
		if levels[lvl] == 0 {
			t.Errorf("no %s-risk command in the agent's catalogue (%v)", lvl, levels)
		}
	}
}
