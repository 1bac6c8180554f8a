package storage

// Interop with Hermes' Python approval store (SPEC §2, §3 invariant 1): the
// same state.db written and read by approve-tui (Go) and by
// testdata/hermes_store.py, a stdlib-only stand-in for Hermes' store that
// does what SPEC §2 says Hermes does (dataclass payload, json.dumps, its
// BEGIN IMMEDIATE ... UPDATE ... RETURNING compare-and-set).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/risk"
)

// ---- driving the Python store ----

type pyStore struct {
	t      *testing.T
	python string
	script string
	db     string
}

func newPyStore(t *testing.T, db string) *pyStore {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is required for the Hermes interop tests and was not found on PATH: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "hermes_store.py"))
	if err != nil {
		t.Fatal(err)
	}
	return &pyStore{t: t, python: python, script: script, db: db}
}

func (p *pyStore) command(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, p.python, append([]string{p.script, p.db}, args...)...)
}

// run runs one store command and returns its stdout and exit code. Exit
// codes other than 0, 3 (not found) and 4 (not pending) fail the test.
func (p *pyStore) run(stdin string, args ...string) (string, int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := p.command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if d := time.Since(start); d > 5*time.Second { // a loaded machine, or a lock held elsewhere
		p.t.Logf("SLOW python %s: %v", strings.Join(args, " "), d)
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		p.t.Fatalf("python3 hermes_store.py %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if code != 0 && code != 3 && code != 4 {
		p.t.Fatalf("python3 hermes_store.py %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	return stdout.String(), code
}

// submit has Hermes submit one proposal per spec (fields over its defaults)
// and returns the ids it generated.
func (p *pyStore) submit(specs ...map[string]any) []string {
	p.t.Helper()
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range specs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyJSON(s))
	}
	b.WriteByte(']')
	out, _ := p.run(b.String(), "submit")
	return p.ids(out, len(specs))
}

// submitN has Hermes submit n copies of command.
func (p *pyStore) submitN(n int, command string) []string {
	p.t.Helper()
	out, _ := p.run("", "submit", "--count", fmt.Sprint(n), command)
	return p.ids(out, n)
}

var hermesIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{11}$`)

func (p *pyStore) ids(out string, n int) []string {
	p.t.Helper()
	ids := strings.Fields(out)
	if len(ids) != n {
		p.t.Fatalf("python submitted %d proposals, want %d: %q", len(ids), n, out)
	}
	for _, id := range ids {
		if !hermesIDRe.MatchString(id) {
			p.t.Fatalf("id %q is not secrets.token_urlsafe(8)", id)
		}
	}
	return ids
}

// pyView is what hermes_store.py get prints: the proposal as Hermes reads it
// (columns overlaid), whether its dataclass accepted it, and the exact bytes
// of each string (UTF-8 with surrogateescape, as os.fsencode gives them).
type pyView struct {
	Found       bool           `json:"found"`
	JSONOK      bool           `json:"json_ok"`
	Valid       bool           `json:"valid"`
	Errors      []string       `json:"errors"`
	PayloadKeys []string       `json:"payload_keys"`
	Proposal    map[string]any `json:"proposal"`
	Bytes       map[string]any `json:"bytes"`
}

func (p *pyStore) get(id string) *pyView {
	p.t.Helper()
	out, code := p.run("", "get", id)
	var v pyView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		p.t.Fatalf("python get %s printed unreadable JSON: %v\n%s", id, err, out)
	}
	if code != 0 || !v.Found {
		p.t.Fatalf("python cannot find %s", id)
	}
	if !v.JSONOK || !v.Valid {
		p.t.Fatalf("python rejects %s: json_ok=%v errors=%v", id, v.JSONOK, v.Errors)
	}
	return &v
}

// str is the exact string Python holds for key ("" for None).
func (v *pyView) str(t *testing.T, key string) string {
	t.Helper()
	h, ok := v.Bytes[key].(string)
	if !ok {
		if v.Bytes[key] == nil {
			return ""
		}
		t.Fatalf("python %s is %T, not a string", key, v.Bytes[key])
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (v *pyView) env(t *testing.T) map[string]string {
	t.Helper()
	m, ok := v.Bytes["env_overrides"].(map[string]any)
	if !ok {
		t.Fatalf("python env_overrides is %T", v.Bytes["env_overrides"])
	}
	out := map[string]string{}
	for hk, hv := range m {
		k, err1 := hex.DecodeString(hk)
		val, err2 := hex.DecodeString(hv.(string))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		out[string(k)] = string(val)
	}
	return out
}

func (v *pyView) num(key string) *float64 {
	if f, ok := v.Proposal[key].(float64); ok {
		return &f
	}
	return nil
}

type pyDecision struct {
	OK         bool     `json:"ok"`
	Status     string   `json:"status"`
	ConsumedBy string   `json:"consumed_by"`
	ConsumedAt *float64 `json:"consumed_at"`
}

// decide runs Hermes' consume or deny.
func (p *pyStore) decide(verb, id, actor string) pyDecision {
	p.t.Helper()
	out, code := p.run("", verb, id, actor)
	var d pyDecision
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		p.t.Fatalf("python %s %s printed unreadable JSON: %v\n%s", verb, id, err, out)
	}
	if d.OK != (code == 0) {
		p.t.Fatalf("python %s %s: ok=%v but exit %d", verb, id, d.OK, code)
	}
	return d
}

// pyJSON writes a spec object for Python's json.load. Strings go through
// the project's exact-bytes codec, so an invalid byte reaches Python as the
// lone surrogate surrogateescape would have made of it.
func pyJSON(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(model.QuoteJSON(k) + ": ")
		switch v := m[k].(type) {
		case string:
			b.WriteString(model.QuoteJSON(v))
		case map[string]string:
			inner := map[string]any{}
			for ik, iv := range v {
				inner[ik] = iv
			}
			b.WriteString(pyJSON(inner))
		default:
			j, err := json.Marshal(v)
			if err != nil {
				panic(err)
			}
			b.Write(j)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// ---- the tests ----

func rawPayload(t *testing.T, s *Store, id string) string {
	t.Helper()
	var p string
	if err := rawDB(t, s.Path()).QueryRow(`SELECT payload_json FROM gateway_approvals WHERE approval_id = ?`, id).Scan(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

func verifyAuditOK(t *testing.T, s *Store) {
	t.Helper()
	res, err := s.VerifyAudit(ctx)
	if err != nil || !res.OK {
		t.Fatalf("audit chain does not verify: %+v %v", res, err)
	}
}

// Hermes writes, approve-tui reads and decides, Hermes reads the decisions.
func TestInteropHermesWritesGoReads(t *testing.T) {
	sqliteOnly(t, "Hermes (Python) writes a SQLite file")
	path := tempDB(t)
	py := newPyStore(t, path) // Hermes creates the file, as it would state.db

	type want struct {
		spec       map[string]any
		pinned     model.RiskLevel
		effective  model.RiskLevel
		suspicious bool
	}
	cases := []want{
		{ // high risk with env overrides, a unicode diff and a Hermes display text
			spec: map[string]any{
				"command": "rm -rf /var/lib/app/cache", "risk_level": "high", "risk_reason": "delete in root path",
				"cwd": "/srv/app", "backend": "local",
				"env_overrides": map[string]string{"PGHOST": "db.internal", "LANG": "C.UTF-8", "GREETING": "grüß dich ✓"},
				"diff_text":     "--- a/config.yaml\n+++ b/config.yaml\n@@ -1 +1 @@\n-mode: slow\n+mode: fast — ünïcödé ✓ 日本\n",
				"diff_summary":  "1 file changed, 1 insertion(+), 1 deletion(-)",
				"display_text":  "🚨 HIGH RISK\nDefault: DENY\n/approve <id>",
			},
			pinned: model.RiskHigh, effective: model.RiskHigh,
		},
		{ // pinned high, classifier low: never downgraded
			spec:   map[string]any{"command": "echo 'héllo wörld 🚀 日本語' > /tmp/grüße.txt", "risk_level": "high", "risk_reason": "operator policy"},
			pinned: model.RiskHigh, effective: model.RiskHigh,
		},
		{ // pinned low, classifier high, with ESC and BEL in the command
			spec:   map[string]any{"command": "printf '\x1b]0;owned\x07\x1b[2J'; dd if=/dev/zero of=/dev/sda bs=1M", "risk_level": "low", "risk_reason": "looked harmless"},
			pinned: model.RiskLow, effective: model.RiskHigh, suspicious: true,
		},
		{ // medium; a cwd Hermes got from os.fsdecode (lone surrogates), a bidi requester
			spec: map[string]any{"command": "systemctl restart nginx", "risk_level": "medium", "risk_reason": "stop/restart system service",
				"cwd": "/srv/\xff\xfe-data", "requester": "mallory\u202egnp.exe"},
			pinned: model.RiskMedium, effective: model.RiskMedium, suspicious: true,
		},
	}
	specs := make([]map[string]any, len(cases))
	for i, c := range cases {
		specs[i] = c.spec
	}
	ids := py.submit(specs...)
	pyViews := map[string]*pyView{}
	for _, id := range ids {
		pyViews[id] = py.get(id)
	}

	s := openAt(t, path, nil)
	if s.JournalMode() != "wal" {
		t.Errorf("Hermes' WAL file reads as journal mode %q", s.JournalMode())
	}
	payloads := map[string]string{}
	for i, c := range cases {
		id := ids[i]
		payloads[id] = rawPayload(t, s, id)
		rec, err := s.Get(ctx, id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		if rec.Corrupt != "" {
			t.Fatalf("%s: a Hermes row reads as corrupt: %s", id, rec.Corrupt)
		}
		if rec.EffectiveStatus != model.StatusPending || rec.Status != model.StatusPending {
			t.Fatalf("%s: status %s/%s", id, rec.Status, rec.EffectiveStatus)
		}
		sp := c.spec
		str := func(k string) string { v, _ := sp[k].(string); return v }
		got := map[string][2]string{
			"command":      {rec.Command, str("command")},
			"cwd":          {rec.Cwd, str("cwd")},
			"backend":      {rec.Backend, str("backend")},
			"risk_reason":  {rec.RiskReason, str("risk_reason")},
			"diff_text":    {rec.DiffText, str("diff_text")},
			"diff_summary": {rec.DiffSummary, str("diff_summary")},
			"display_text": {rec.DisplayText, str("display_text")},
			"session_key":  {rec.SessionKey, "agent:main:telegram:dm"},
			"policy":       {rec.PolicyDecision + "/" + rec.PolicyVersion + "/" + rec.DefaultDecision, "needs_approval/hermes/41427/deny"},
		}
		if r := str("requester"); r != "" {
			got["requester"] = [2]string{rec.Requester, r}
		} else {
			got["requester"] = [2]string{rec.Requester, "hermes-gateway"}
		}
		for k, gw := range got {
			if gw[0] != gw[1] {
				t.Errorf("%s %s: Go reads %q, Hermes wrote %q", id, k, gw[0], gw[1])
			}
			if k != "policy" && gw[0] != pyViews[id].str(t, k) {
				t.Errorf("%s %s: Go reads %q, Python holds %q", id, k, gw[0], pyViews[id].str(t, k))
			}
		}
		if env, ok := sp["env_overrides"].(map[string]string); ok {
			if fmt.Sprint(rec.EnvOverrides) != fmt.Sprint(env) {
				t.Errorf("%s env: Go reads %v, Hermes wrote %v", id, rec.EnvOverrides, env)
			}
		}
		if !rec.RequiresExplicitApproval {
			t.Errorf("%s: requires_explicit_approval lost", id)
		}
		if pe := pyViews[id].num("expires_at"); pe == nil || rec.ExpiresAt == nil || *pe != *rec.ExpiresAt {
			t.Errorf("%s: expires_at Go %v, Python %v", id, rec.ExpiresAt, pe)
		}
		if pc := pyViews[id].num("created_at"); pc == nil || *pc != rec.CreatedAt {
			t.Errorf("%s: created_at Go %v, Python %v", id, rec.CreatedAt, pc)
		}
		// Risk: pinned as Hermes wrote it; effective the higher of pinned
		// and the classifier, never lower than pinned.
		if rec.RiskLevel != c.pinned {
			t.Errorf("%s: pinned risk %s, want %s", id, rec.RiskLevel, c.pinned)
		}
		cls := risk.Classify(rec.Command).Level
		if rec.EffectiveRisk != model.MaxRisk(c.pinned, cls) || rec.EffectiveRisk != c.effective || rec.EffectiveRisk.Rank() < c.pinned.Rank() {
			t.Errorf("%s: effective risk %s (pinned %s, classifier %s), want %s", id, rec.EffectiveRisk, c.pinned, cls, c.effective)
		}
		if rec.Suspicious() != c.suspicious {
			t.Errorf("%s: suspicious=%v %v, want %v", id, rec.Suspicious(), rec.Findings, c.suspicious)
		}
	}

	// List sees every Hermes row (the rank index catches up with rows it
	// did not write), most urgent first: the medium one last.
	list, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(ids) || list[len(list)-1].ApprovalID != ids[3] {
		t.Fatalf("list: %d rows, last %v; want %d rows, last %s", len(list), idsOf(list), len(ids), ids[3])
	}
	for _, r := range list {
		g, _ := s.Get(ctx, r.ApprovalID)
		if r.Command != g.Command || r.EffectiveRisk != g.EffectiveRisk || r.Corrupt != "" {
			t.Fatalf("%s: List and Get disagree: %q/%s vs %q/%s", r.ApprovalID, r.Command, r.EffectiveRisk, g.Command, g.EffectiveRisk)
		}
	}

	// Go decides: approve needs the exact retyped id.
	approveID, denyID := ids[1], ids[0]
	flipped := strings.Map(func(r rune) rune { // the id with its letters' case swapped
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return unicode.ToLower(r)
	}, approveID)
	for _, typed := range []string{flipped, approveID + " ", " " + approveID, approveID[:10]} {
		if typed == approveID {
			continue // an id with no letters at all
		}
		if _, err := s.Consume(ctx, approveID, typed, alice); !errors.Is(err, ErrConfirmMismatch) {
			t.Fatalf("typed %q: want confirmation mismatch, got %v", typed, err)
		}
	}
	if v := py.get(approveID); v.Proposal["status"] != "pending" {
		t.Fatalf("a refused confirmation changed the row Hermes sees: %v", v.Proposal["status"])
	}
	if _, err := s.Consume(ctx, approveID, approveID, alice); err != nil {
		t.Fatalf("consume a Hermes proposal: %v", err)
	}
	if _, err := s.Deny(ctx, denyID, bob, "too broad"); err != nil {
		t.Fatalf("deny a Hermes proposal: %v", err)
	}

	// Hermes reads Go's transitions.
	for id, w := range map[string]struct{ status, by string }{approveID: {"consumed", alice.String()}, denyID: {"denied", bob.String()}} {
		v := py.get(id)
		if v.Proposal["status"] != w.status || v.Proposal["consumed_by"] != w.by || v.num("consumed_at") == nil {
			t.Fatalf("%s: Hermes reads status=%v by=%v at=%v, want %s by %s", id, v.Proposal["status"], v.Proposal["consumed_by"], v.Proposal["consumed_at"], w.status, w.by)
		}
		if v.Proposal["execution_status"] != "not_started" {
			t.Fatalf("%s: execution_status %v", id, v.Proposal["execution_status"])
		}
		if v.str(t, "command") != pyViews[id].str(t, "command") {
			t.Fatalf("%s: the command Hermes reads changed after Go's decision", id)
		}
		for _, verb := range []string{"consume", "deny"} {
			if d := py.decide(verb, id, "hermes:late"); d.OK || d.Status != w.status || d.ConsumedBy != w.by {
				t.Fatalf("Hermes %s after Go decided %s: %+v", verb, id, d)
			}
		}
	}
	// payload_json is written once: Go's transitions leave Hermes' payloads alone.
	for id, p := range payloads {
		if got := rawPayload(t, s, id); got != p {
			t.Fatalf("%s: payload_json rewritten:\n%s\n%s", id, p, got)
		}
	}
	if list, _ := s.List(ctx, ListOptions{}); len(list) != 2 {
		t.Fatalf("pending after two decisions: %v", idsOf(list))
	}
	verifyAuditOK(t, s)
}

func idsOf(recs []*Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.ApprovalID)
	}
	return out
}

// approve-tui writes, Hermes reads and decides, approve-tui sees the decisions.
func TestInteropGoWritesHermesReads(t *testing.T) {
	sqliteOnly(t, "Hermes (Python) reads a SQLite file")
	path := tempDB(t)
	s := openAt(t, path, nil) // approve-tui creates the file this time
	py := newPyStore(t, path)
	now := time.Now()

	g1 := proposal(model.NewID(), "echo \xff\xfe\x80 \x1b[31mred\x1b[0m\x07\x00\x7f && rm -rf /tmp/x\r\n", model.RiskHigh, now, time.Hour)
	g1.Cwd = "/home/b\xe9a/\u202etxt.exe"
	g1.EnvOverrides = map[string]string{"LC_ALL": "C.UTF-8", "HINT": "\xffbin\x1b[0m", "EMPTY": ""}
	g1.DiffText = "line\u2028sep\u2029 zero\u200bwidth 🚀 \"quoted\" \\ back\n\t tab\n"
	g1.DiffSummary = "ünïcödé"
	g1.DisplayText = "HIGH RISK \x1b[5mblink\x1b[0m"
	g2 := proposal(model.NewID(), "git push --force origin main", model.RiskMedium, now, time.Hour)
	g3 := proposal(model.NewID(), "psql -c 'DROP TABLE users'", model.RiskHigh, now, 2*time.Hour)
	g4 := proposal(model.NewID(), "ls -la /srv", model.RiskLow, now, 0) // never expires
	g4.Requester, g4.Cwd, g4.Backend, g4.PolicyVersion = "", "", "", ""
	for _, p := range []*model.Proposal{g1, g2, g3, g4} {
		mustSubmit(t, s, p)
	}

	for _, p := range []*model.Proposal{g1, g2, g3, g4} {
		v := py.get(p.ApprovalID) // fails unless json.loads and the dataclass accept it
		if strings.Join(v.PayloadKeys, ",") != strings.Join(model.PayloadKeys(), ",") {
			t.Fatalf("%s: payload keys %v, want Hermes' dataclass order %v", p.ApprovalID, v.PayloadKeys, model.PayloadKeys())
		}
		for k, want := range map[string]string{"approval_id": p.ApprovalID, "command": p.Command, "cwd": p.Cwd,
			"requester": p.Requester, "backend": p.Backend, "session_key": p.SessionKey, "risk_level": string(p.RiskLevel),
			"risk_reason": p.RiskReason, "diff_text": p.DiffText, "diff_summary": p.DiffSummary, "display_text": p.DisplayText,
			"policy_version": p.PolicyVersion, "status": "pending", "execution_status": "not_started"} {
			if got := v.str(t, k); got != want {
				t.Errorf("%s %s: Python holds %q, Go wrote %q", p.ApprovalID, k, got, want)
			}
		}
		for _, k := range []string{"requester", "cwd", "backend", "policy_version", "diff_text", "consumed_by"} {
			if v.str(t, k) == "" && v.Proposal[k] != nil {
				t.Errorf("%s %s: empty optional string reaches Python as %q, want None", p.ApprovalID, k, v.Proposal[k])
			}
		}
		env := v.env(t)
		if len(p.EnvOverrides) == 0 && len(env) != 0 || len(p.EnvOverrides) > 0 && fmt.Sprint(env) != fmt.Sprint(p.EnvOverrides) {
			t.Errorf("%s env: Python holds %q, Go wrote %q", p.ApprovalID, env, p.EnvOverrides)
		}
		if v.Proposal["requires_explicit_approval"] != true || v.Proposal["default_decision"] != "deny" || v.Proposal["policy_decision"] != "needs_approval" {
			t.Errorf("%s: pinned policy reads as %v", p.ApprovalID, v.Proposal)
		}
		if pe := v.num("expires_at"); (pe == nil) != (p.ExpiresAt == nil) || pe != nil && *pe != *p.ExpiresAt {
			t.Errorf("%s: expires_at Python %v, Go %v", p.ApprovalID, pe, p.ExpiresAt)
		}
		if pc := v.num("created_at"); pc == nil || *pc != p.CreatedAt {
			t.Errorf("%s: created_at Python %v, Go %v", p.ApprovalID, pc, p.CreatedAt)
		}
	}

	// Hermes decides with its own SQL.
	const hAlice, hBob = "hermes:telegram:alice", "hermes:slack:bob"
	d1 := py.decide("consume", g1.ApprovalID, hAlice)
	d2 := py.decide("deny", g2.ApprovalID, hBob)
	if !d1.OK || !d2.OK || d1.Status != "consumed" || d2.Status != "denied" {
		t.Fatalf("Hermes could not decide Go's proposals: %+v %+v", d1, d2)
	}

	// approve-tui sees the decisions, and tells its operator who made them.
	for _, c := range []struct {
		p      *model.Proposal
		status model.Status
		by     string
		at     *float64
	}{{g1, model.StatusConsumed, hAlice, d1.ConsumedAt}, {g2, model.StatusDenied, hBob, d2.ConsumedAt}} {
		rec, err := s.Get(ctx, c.p.ApprovalID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Corrupt != "" || rec.EffectiveStatus != c.status || rec.ConsumedBy != c.by || rec.ConsumedAt == nil || *rec.ConsumedAt != *c.at {
			t.Fatalf("%s after Hermes decided: %s by %q at %v corrupt=%q", c.p.ApprovalID, rec.EffectiveStatus, rec.ConsumedBy, rec.ConsumedAt, rec.Corrupt)
		}
		if rec.Command != c.p.Command {
			t.Fatalf("%s: command changed to %q", c.p.ApprovalID, rec.Command)
		}
		_, err = s.Consume(ctx, c.p.ApprovalID, c.p.ApprovalID, alice)
		var np *NotPendingError
		if !errors.As(err, &np) || np.Status != c.status || np.By != c.by || np.At == nil || *np.At != *c.at {
			t.Fatalf("Go consume after Hermes %s: %#v", c.status, err)
		}
		if !strings.Contains(err.Error(), c.by) {
			t.Fatalf("the message does not name the Hermes actor: %v", err)
		}
		if _, err := s.Deny(ctx, c.p.ApprovalID, bob, ""); !errors.As(err, &np) {
			t.Fatalf("Go deny after Hermes %s: %v", c.status, err)
		}
	}
	if d := py.decide("consume", g1.ApprovalID, "hermes:again"); d.OK || d.ConsumedBy != hAlice {
		t.Fatalf("Hermes consumed twice: %+v", d)
	}

	// Only the undecided ones stay on the console.
	list, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(idsOf(list), ","); got != g3.ApprovalID+","+g4.ApprovalID {
		t.Fatalf("pending after Hermes decided: %s, want %s,%s", got, g3.ApprovalID, g4.ApprovalID)
	}
	// Go decides one of the rest; Hermes sees it and cannot undo it.
	if _, err := s.Consume(ctx, g3.ApprovalID, g3.ApprovalID, alice); err != nil {
		t.Fatal(err)
	}
	if v := py.get(g3.ApprovalID); v.Proposal["status"] != "consumed" || v.Proposal["consumed_by"] != alice.String() {
		t.Fatalf("Hermes reads %v by %v", v.Proposal["status"], v.Proposal["consumed_by"])
	}
	if d := py.decide("deny", g3.ApprovalID, hBob); d.OK {
		t.Fatal("Hermes denied what Go consumed")
	}
	verifyAuditOK(t, s) // includes: Hermes' decisions left Go's payloads untouched
	db := rawDB(t, path)
	if n := countAudit(t, db, `event = 'approve' AND outcome = 'refused' AND reason = 'not_pending'`); n != 2 {
		t.Fatalf("%d refused approvals audited, want 2", n)
	}
}

// Invariant 1 across languages: Go workers and Hermes processes race to
// consume every id; each id has exactly one winner.
func TestInteropExactlyOnceRaceGoAndHermes(t *testing.T) {
	sqliteOnly(t, "Hermes (Python) races on a SQLite file")
	const perLang, goWorkers, pyWorkers = 120, 4, 4
	const pace = 2 * time.Millisecond // see roleConsumeAll
	path := tempDB(t)
	s := openAt(t, path, nil)
	py := newPyStore(t, path)
	now := time.Now()
	ids := py.submitN(perLang, "rm -rf /tmp/race-hermes")
	for i := 0; i < perLang; i++ {
		p := proposal(model.NewID(), "rm -rf /tmp/race-go", model.RiskHigh, now, time.Hour)
		mustSubmit(t, s, p)
		ids = append(ids, p.ApprovalID)
	}

	type proc struct {
		name, actor string
		goSide      bool
		cmd         *exec.Cmd
		stdin       io.WriteCloser
		lines       []string
		ready       chan struct{}
	}
	var procs []*proc
	for w := 0; w < goWorkers; w++ {
		name := fmt.Sprintf("go-%d", w)
		cmd := helperProcess(t, "consume-interop", path, "STORAGE_TEST_WORKER="+name, "STORAGE_TEST_PACE="+pace.String())
		procs = append(procs, &proc{name: name, actor: "worker-" + name + " via cli", goSide: true, cmd: cmd})
	}
	raceCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for w := 0; w < pyWorkers; w++ {
		name := fmt.Sprintf("hermes-py-%d", w)
		cmd := py.command(raceCtx, "race", name, "--pace", fmt.Sprint(pace.Seconds()))
		cmd.Stderr = &prefixWriter{t: t, prefix: name}
		procs = append(procs, &proc{name: name, actor: name, cmd: cmd})
	}
	var wg sync.WaitGroup
	for _, p := range procs {
		p.ready = make(chan struct{})
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		stdout, err := p.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", p.name, err)
		}
		wg.Add(1)
		go func(p *proc) {
			defer wg.Done()
			var once sync.Once
			defer once.Do(func() { close(p.ready) }) // a process that died early
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if sc.Text() == "ready" && len(p.lines) == 0 {
					once.Do(func() { close(p.ready) })
					continue
				}
				p.lines = append(p.lines, sc.Text())
			}
			_ = p.cmd.Wait()
		}(p)
		fmt.Fprintln(p.stdin, strings.Join(ids, "\n"))
	}
	for _, p := range procs { // every process has opened the store
		select {
		case <-p.ready:
		case <-time.After(time.Minute):
			t.Fatalf("%s never became ready", p.name)
		}
	}
	for _, p := range procs { // start everyone at once
		fmt.Fprintln(p.stdin, "go")
		p.stdin.Close()
	}
	wg.Wait()

	winner := map[string]*proc{}
	wins := map[string]int{}
	goWins, goLosses := 0, 0
	for _, p := range procs {
		if len(p.lines) != len(ids) {
			t.Fatalf("%s answered %d of %d ids (exit %v): %q", p.name, len(p.lines), len(ids), p.cmd.ProcessState, p.lines)
		}
		for _, line := range p.lines {
			f := strings.SplitN(line, " ", 3)
			switch {
			case len(f) == 2 && f[0] == "won":
				if prev := winner[f[1]]; prev != nil {
					t.Fatalf("%s consumed twice: by %s and %s", f[1], prev.name, p.name)
				}
				winner[f[1]] = p
				wins[p.name]++
				if p.goSide {
					goWins++
				}
			case len(f) == 3 && f[0] == "lost" && strings.HasPrefix(f[2], "by "):
				if p.goSide {
					goLosses++
				}
			default:
				t.Fatalf("%s: unexpected result %q", p.name, line)
			}
		}
	}
	if len(winner) != len(ids) {
		t.Fatalf("%d of %d ids have a winner", len(winner), len(ids))
	}
	// Every loser was told who won, and it was the winner.
	for _, p := range procs {
		for _, line := range p.lines {
			f := strings.SplitN(line, " ", 3)
			if f[0] == "lost" {
				if by := strings.TrimPrefix(f[2], "by "); by != winner[f[1]].actor {
					t.Fatalf("%s lost %s to %q, but %s (%q) won it", p.name, f[1], by, winner[f[1]].name, winner[f[1]].actor)
				}
			}
		}
	}
	t.Logf("wins per process: %v (Go %d, Hermes %d of %d)", wins, goWins, len(ids)-goWins, len(ids))
	if goWins == 0 || goWins == len(ids) {
		t.Fatalf("one language won every id (Go %d of %d): the race did not interleave", goWins, len(ids))
	}

	// The rows agree with the winners.
	db := rawDB(t, path)
	rows, err := db.Query(`SELECT approval_id, status, consumed_by FROM gateway_approvals`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id, status, by string
		if err := rows.Scan(&id, &status, &by); err != nil {
			t.Fatal(err)
		}
		n++
		if w := winner[id]; w == nil || status != "consumed" || by != w.actor {
			t.Fatalf("%s: row says %s by %q, winner %v", id, status, by, w)
		}
	}
	rows.Close()
	if n != len(ids) {
		t.Fatalf("%d rows, want %d", n, len(ids))
	}
	// Go's audit recorded exactly its own wins and losses, and still verifies.
	if got := countAudit(t, db, `event = 'approve' AND outcome = 'ok'`); got != goWins {
		t.Fatalf("%d approve events, Go won %d", got, goWins)
	}
	if got := countAudit(t, db, `event = 'approve' AND outcome = 'refused' AND reason = 'not_pending'`); got != goLosses || goLosses != goWorkers*len(ids)-goWins {
		t.Fatalf("%d refused events, Go lost %d", got, goLosses)
	}
	verifyAuditOK(t, s)
	if list, err := s.List(ctx, ListOptions{}); err != nil || len(list) != 0 {
		t.Fatalf("pending after the race: %v %v", idsOf(list), err)
	}
}

// prefixWriter forwards a child's stderr to the test log.
type prefixWriter struct {
	t      *testing.T
	prefix string
}

func (w *prefixWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s: %s", w.prefix, strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// A row Hermes wrote that is still pending past its expiry is expired for
// every purpose: neither store consumes it.
func TestInteropExpiredPendingRefusedByBoth(t *testing.T) {
	sqliteOnly(t, "Hermes (Python) on a SQLite file")
	path := tempDB(t)
	py := newPyStore(t, path)
	now := model.Epoch(time.Now())
	ids := py.submit(
		map[string]any{"command": "rm -rf /srv/old", "created_at": now - 120, "expires_at": now - 60},
		map[string]any{"command": "rm -rf /srv/new", "created_at": now, "expires_at": now + 3600},
	)
	expiredID, liveID := ids[0], ids[1]
	s := openAt(t, path, nil)

	rec, err := s.Get(ctx, expiredID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != model.StatusPending || rec.EffectiveStatus != model.StatusExpired || rec.Corrupt != "" {
		t.Fatalf("status %s, effective %s, corrupt %q", rec.Status, rec.EffectiveStatus, rec.Corrupt)
	}
	if list, _ := s.List(ctx, ListOptions{}); len(list) != 1 || list[0].ApprovalID != liveID {
		t.Fatalf("pending list shows %v, want only %s", idsOf(list), liveID)
	}
	if list, _ := s.List(ctx, ListOptions{Status: ListExpired}); len(list) != 1 || list[0].ApprovalID != expiredID {
		t.Fatalf("expired list shows %v, want %s", idsOf(list), expiredID)
	}

	_, err = s.Consume(ctx, expiredID, expiredID, alice)
	var np *NotPendingError
	if !errors.As(err, &np) || np.Status != model.StatusExpired || np.At == nil || *np.At != now-60 || np.By != "" {
		t.Fatalf("Go consume of an expired Hermes row: %#v", err)
	}
	if _, err := s.Deny(ctx, expiredID, bob, ""); !errors.As(err, &np) || np.Status != model.StatusExpired {
		t.Fatalf("Go deny of an expired Hermes row: %v", err)
	}
	for _, verb := range []string{"consume", "deny"} {
		if d := py.decide(verb, expiredID, "hermes:op"); d.OK || d.ConsumedBy != "" {
			t.Fatalf("Hermes %s of an expired row: %+v", verb, d)
		}
	}
	// Nobody transitioned it: the columns are as Hermes wrote them.
	var status string
	var at, by any
	if err := rawDB(t, path).QueryRow(`SELECT status, consumed_at, consumed_by FROM gateway_approvals WHERE approval_id = ?`, expiredID).Scan(&status, &at, &by); err != nil {
		t.Fatal(err)
	}
	if status != "pending" || at != nil || by != nil {
		t.Fatalf("refusals changed the row: %s %v %v", status, at, by)
	}
	db := rawDB(t, path)
	if n := countAudit(t, db, `approval_id = ? AND outcome = 'refused' AND reason = 'expired'`, expiredID); n != 2 {
		t.Fatalf("%d expired refusals audited, want 2", n)
	}

	// Go's sweep makes the column say so; Hermes reads it and still refuses.
	swept, err := s.ExpireDue(ctx, alice)
	if err != nil || len(swept) != 1 || swept[0] != expiredID {
		t.Fatalf("expire due: %v %v", swept, err)
	}
	if v := py.get(expiredID); v.Proposal["status"] != "expired" || v.Proposal["consumed_by"] != nil {
		t.Fatalf("Hermes reads %v by %v", v.Proposal["status"], v.Proposal["consumed_by"])
	}
	if d := py.decide("consume", expiredID, "hermes:op"); d.OK || d.Status != "expired" {
		t.Fatalf("Hermes consume after the sweep: %+v", d)
	}
	// The live one is untouched by all of this, and Hermes can still take it.
	if d := py.decide("consume", liveID, "hermes:op"); !d.OK {
		t.Fatalf("Hermes cannot consume the live row: %+v", d)
	}
	if r, _ := s.Get(ctx, liveID); r.EffectiveStatus != model.StatusConsumed || r.ConsumedBy != "hermes:op" {
		t.Fatalf("live row reads %s by %q", r.EffectiveStatus, r.ConsumedBy)
	}
	verifyAuditOK(t, s)
}
