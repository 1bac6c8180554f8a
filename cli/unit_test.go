package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/human"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

func TestObjectExactBytes(t *testing.T) {
	got := model.NewJSONObject().
		Str("s", "plain").
		OptStr("empty", "").
		Num("n", 1).
		Num("f", 1795945315.8759909).
		OptNum("none", nil).
		Int("i", -3).
		Bool("b", true).
		Strs("arr", nil).
		Strs("two", []string{"a", "b"}).
		Obj("o", model.NewJSONObject()).
		String()
	want := `{"s": "plain", "empty": null, "n": 1.0, "f": 1795945315.8759909, "none": null, "i": -3, "b": true, "arr": [], "two": ["a", "b"], "o": {}}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Fatal("not valid JSON")
	}
	if got := model.NewJSONObject().String(); got != "{}" {
		t.Fatalf("empty object = %s", got)
	}
	if got := jsonArray(nil); got != "[]" {
		t.Fatalf("empty array = %s", got)
	}
	if got := jsonArray([]string{"1", "2"}); got != "[\n  1,\n  2\n]" {
		t.Fatalf("array = %q", got)
	}
}

func TestObjectEscapes(t *testing.T) {
	got := model.NewJSONObject().Str("k\x1b", "a\xff\x1b\"\\\n\u2028é").String()
	want := `{"k\u001b": "a\udcff\u001b\"\\\n\u2028é"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// The --json proposal object is a superset of the payload: model's decoder
// reads it back with every agent byte intact, invalid UTF-8 included.
func TestRecordJSONRoundTrip(t *testing.T) {
	exp := 1795945915.5
	rec := &storage.Record{
		Proposal: model.Proposal{
			ApprovalID: "abc", CreatedAt: 1795945315.25, ExpiresAt: &exp, Status: model.StatusPending,
			SessionKey: "s\u202e1", Command: "rm -rf \xff\xfe \x1b[2J\nnext", Cwd: "/tmp/\xc3",
			EnvOverrides: map[string]string{"B": "2\xff", "A": "1"},
			RiskLevel:    model.RiskLow, RiskReason: "r", PolicyDecision: model.PolicyNeedsApproval,
			DefaultDecision: model.DefaultDeny, RequiresExplicitApproval: true,
			DiffText: "-a\n+b\xff\n", ExecutionStatus: model.ExecNotStarted,
		},
		EffectiveStatus: model.StatusPending,
		EffectiveRisk:   model.RiskHigh,
		ClassifierRisk:  model.RiskHigh,
		Findings:        []string{"invalid UTF-8 in command"},
	}
	out := approvals.RecordJSON(rec, &storage.WaiterStatus{State: storage.WaiterNone}).String()
	if !json.Valid([]byte(out)) {
		t.Fatalf("not valid JSON: %s", out)
	}
	if !strings.Contains(out, `"command": "rm -rf \udcff\udcfe \u001b[2J\nnext"`) {
		t.Fatalf("command not escaped exactly: %s", out)
	}
	p, err := model.DecodePayload([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != rec.Command || p.Cwd != rec.Cwd || p.SessionKey != rec.SessionKey || p.DiffText != rec.DiffText {
		t.Fatalf("bytes changed: %q %q %q %q", p.Command, p.Cwd, p.SessionKey, p.DiffText)
	}
	if p.EnvOverrides["B"] != "2\xff" || p.EnvOverrides["A"] != "1" {
		t.Fatalf("env changed: %q", p.EnvOverrides)
	}
	// status and risk_level carry the effective values.
	if p.RiskLevel != model.RiskHigh || *p.ExpiresAt != exp || p.CreatedAt != rec.CreatedAt {
		t.Fatalf("risk %s expires %v created %v", p.RiskLevel, *p.ExpiresAt, p.CreatedAt)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(model.PayloadKeys(), "pinned_risk_level", "suspicious", "findings", "corrupt", "waiter") {
		if _, ok := m[k]; !ok {
			t.Errorf("key %s missing", k)
		}
	}
	if m["pinned_risk_level"] != "low" || m["suspicious"] != true {
		t.Errorf("pinned %v suspicious %v", m["pinned_risk_level"], m["suspicious"])
	}
}

func TestExitCode(t *testing.T) {
	at := model.Epoch(time.Now().Add(-2 * time.Minute))
	cases := []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"nil", nil, ExitOK, ""},
		{"plain", errors.New("boom"), ExitError, "boom"},
		{"usage", usageErrorf("bad flag"), ExitUsage, "bad flag"},
		{"not found", storage.ErrNotFound, ExitNotFound, ""},
		{"wrapped not found", fmt.Errorf("get: %w", storage.ErrNotFound), ExitNotFound, ""},
		{"not pending", &storage.NotPendingError{ID: "x", Status: model.StatusConsumed, By: "alice@h via tui", At: &at}, ExitNotPending, "already consumed by alice@h via tui 2m00s ago"},
		{"expired", &storage.NotPendingError{ID: "x", Status: model.StatusExpired, At: &at}, ExitNotPending, "proposal x expired 2m00s ago"},
		{"mismatch", storage.ErrConfirmMismatch, ExitMismatch, "does not match"},
		{"corrupt", &storage.CorruptError{ID: "x", Reason: "bad json"}, ExitError, "proposal x is corrupt, cannot be approved; deny it (bad json)"},
		{"read-only", &storage.ReadOnlyError{Reason: "opened read-only"}, ExitUnavailable, "read-only"},
		{"unavailable", &storage.UnavailableError{Op: "approve", Reason: "locked"}, ExitUnavailable, "locked"},
		{"missing", &storeOpenError{err: fmt.Errorf("%w: /x", storage.ErrMissing)}, ExitUnavailable, "not found"},
		{"duplicate", &storage.DuplicateError{ID: "x"}, ExitError, "already exists"},
		{"interrupted", fmt.Errorf("wait: %w", context.Canceled), ExitInterrupted, "interrupted"},
		{"explicit", exitf(ExitTampered, "tampered"), ExitTampered, "tampered"},
	}
	for _, c := range cases {
		code, msg := exitCode(c.err, time.Now())
		if code != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: got %d %q, want %d containing %q", c.name, code, msg, c.code, c.msg)
		}
	}
}

func TestCutAndDurations(t *testing.T) {
	if got := cut("abcdef", 4); got != "abc…" {
		t.Errorf("cut = %q", got)
	}
	if got := cut("abc", 3); got != "abc" {
		t.Errorf("cut = %q", got)
	}
	if got := cut("日本語テキスト", 5); got != "日本…" || cells(got) != 5 {
		t.Errorf("cut wide = %q (%d cells)", got, cells(got))
	}
	// A wide rune that would cross the edge is left out, not half shown;
	// combining marks take no cell; nothing fits in no cells.
	if got := cut("日本語", 4); got != "日…" || cells(got) != 3 {
		t.Errorf("cut wide at the edge = %q (%d cells)", got, cells(got))
	}
	if got := cut("abc", 0); got != "" {
		t.Errorf("cut to 0 = %q", got)
	}
	if n := cells("e\u0301te\u0301"); n != 3 {
		t.Errorf("cells with combining marks = %d, want 3", n)
	}
	if got := pad("日本", 6); got != "日本  " {
		t.Errorf("pad wide = %q", got)
	}
	for d, want := range map[time.Duration]string{
		12 * time.Second:               "12s",
		4*time.Minute + 12*time.Second: "4m12s",
		3*time.Hour + 4*time.Minute:    "3h04m",
		50 * time.Hour:                 "2d02h",
	} {
		if got := human.Duration(d); got != want {
			t.Errorf("human.Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// run executes the CLI in-process against db with the given stdin and
// terminal-ness.
func run(t *testing.T, db string, tty bool, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(stdin), &out, &errb)
	a.isTTY = func() bool { return tty }
	a.getenv = func(k string) string {
		if k == "APPROVE_TUI_DB" {
			return db
		}
		return ""
	}
	code := a.execute(context.Background(), args)
	return code, out.String(), errb.String()
}

func TestApproveOnTerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	if code, _, stderr := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(stderr)
	}
	_, id, _ := run(t, db, false, "", "submit", "--", "rm", "-rf", "build")
	id = strings.TrimSpace(id)

	// A mistyped id: exit 5, the prompt was shown, nothing approved.
	code, stdout, stderr := run(t, db, true, id+"x\n", "approve", "--", id)
	if code != ExitMismatch || stdout != "" || !strings.Contains(stderr, "Type the approval id to approve: ") ||
		!strings.Contains(stderr, "HIGH RISK — default: deny") {
		t.Fatalf("mistyped: %d %q %q", code, stdout, stderr)
	}
	// Typed exactly (CRLF line ending tolerated): approved.
	code, stdout, stderr = run(t, db, true, id+"\r\n", "approve", "--", id)
	if code != ExitOK || stdout != "approved "+id+"\n" {
		t.Fatalf("typed: %d %q %q", code, stdout, stderr)
	}
	// Already decided: no prompt, exit 4.
	code, _, stderr = run(t, db, true, id+"\n", "approve", "--", id)
	if code != ExitNotPending || strings.Contains(stderr, "Type the approval id") {
		t.Fatalf("again: %d %q", code, stderr)
	}
}

func TestUsageBeforeRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	for _, args := range [][]string{{"list", "--nope"}, {"show"}, {"bogus"}, {"approve", "a", "b"}, {"--json=maybe", "list"}} {
		if code, _, stderr := run(t, db, false, "", args...); code != ExitUsage || strings.Count(stderr, "approve-tui: ") != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if code, stdout, _ := run(t, db, false, "", "--help"); code != ExitOK || !strings.Contains(stdout, "Exit codes") {
		t.Errorf("--help: %d", code)
	}
}

// An interrupt at the approve prompt ends it at once (exit 130), even
// though stdin never answers; nothing is approved.
func TestPromptInterrupted(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	run(t, db, false, "", "init")
	_, id, _ := run(t, db, false, "", "submit", "--", "ls")
	id = strings.TrimSpace(id)

	stdin, w := io.Pipe()
	defer w.Close()
	var out, errb bytes.Buffer
	a := newApp(stdin, &out, &errb)
	a.isTTY = func() bool { return true }
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	if code := a.execute(ctx, []string{"--db", db, "approve", "--", id}); code != ExitInterrupted {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if code, stdout, _ := run(t, db, false, "", "--json", "show", "--", id); code != 0 || !strings.Contains(stdout, `"status": "pending"`) {
		t.Fatalf("after interrupt: %d %s", code, stdout)
	}
}

// Every line a subcommand writes goes through the terminal guard, whole
// lines at a time; what is left of a line goes out on Flush.
func TestGuardWriter(t *testing.T) {
	var b strings.Builder
	g := &guardWriter{w: &b}
	fmt.Fprint(g, "ok \x1b[1mbold\x1b[0m, evil \x1b]0;ti")
	if b.Len() != 0 {
		t.Fatalf("an unfinished line was written: %q", b.String())
	}
	fmt.Fprint(g, "tle\x07 \u202e\nrest\x1b[8m")
	if got, want := b.String(), "ok \x1b[1mbold\x1b[0m, evil \\x1b]0;title\\x07 <U+202E>\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if err := g.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), `rest\x1b[8m`) {
		t.Fatalf("flush: %q", b.String())
	}
}

// On a terminal, list aligns its columns, cuts the command to the width with
// an ellipsis, and colours the risk unless NO_COLOR, TERM=dumb or --color
// never say otherwise.
func TestListFitsTheTerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	if code, _, stderr := run(t, db, false, "", "init"); code != 0 {
		t.Fatal(stderr)
	}
	long := "echo " + strings.Repeat("a", 200)
	if code, _, stderr := run(t, db, false, "", "submit", "--risk", "high", "--", long); code != 0 {
		t.Fatal(stderr)
	}
	onTerminal := func(env map[string]string, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		a := newApp(strings.NewReader(""), &out, &errb)
		a.termW = func() int { return 80 }
		a.getenv = func(k string) string {
			if k == "APPROVE_TUI_DB" {
				return db
			}
			return env[k]
		}
		if code := a.execute(context.Background(), args); code != 0 {
			t.Fatalf("%v: %d %s", args, code, errb.String())
		}
		return out.String()
	}
	out := onTerminal(nil, "list")
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if w := cells(ansiStrip(l)); w > 80 {
			t.Fatalf("line of %d cells on an 80-cell terminal: %q", w, l)
		}
	}
	if !strings.Contains(out, "…") || strings.Contains(out, strings.Repeat("a", 100)) {
		t.Fatalf("long command not cut: %q", out)
	}
	if !strings.Contains(out, "\x1b[31mHIGH\x1b[0m") || !strings.HasPrefix(out, "FLAG  ID") {
		t.Fatalf("no aligned, coloured table: %q", out)
	}
	for _, env := range []map[string]string{{"NO_COLOR": "1"}, {"TERM": "dumb"}} {
		if out := onTerminal(env, "list"); strings.Contains(out, "\x1b") {
			t.Fatalf("colour with %v: %q", env, out)
		}
	}
	if out := onTerminal(nil, "list", "--color", "never"); strings.Contains(out, "\x1b") {
		t.Fatalf("colour with --color never: %q", out)
	}
}

// ansiStrip drops SGR sequences (for measuring what a terminal shows).
func ansiStrip(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && s[j] != 'm' {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// show says plainly what the preview could not see: each reason it is
// incomplete (hostile paths inert), each part not previewed, and the
// level that raises.
func TestShowImpactIncomplete(t *testing.T) {
	m := &model.Impact{Entries: 6, Bytes: 2, Complete: false, Unknown: []string{"data/a/* (a glob: could not read /srv/data/a)"},
		Incomplete: []string{"could not read 2 directories (/srv/data/a, /srv/data/\x1b[2Jb)"},
		Summary:    "deletes at least 4 directories, 2 files, 2 B; incomplete: could not read 2 directories (/srv/data/a, /srv/data/\x1b[2Jb)",
		Targets:    []model.ImpactTarget{{Path: "/srv/data", Op: "delete", Exists: true, Entries: 6, Dirs: 4, Files: 2, Bytes: 2}}}
	var b bytes.Buffer
	writeImpact(&b, m, true)
	got := b.String()
	for _, want := range []string{
		"impact:        deletes at least 4 directories, 2 files, 2 B; incomplete: could not read 2 directories",
		"\n               incomplete: could not read 2 directories (/srv/data/a, /srv/data/\\x1b[2Jb)\n",
		"\n               could not preview: data/a/* (a glob: could not read /srv/data/a)\n",
		"\n               marked I, at least MEDIUM: at least 6 entries, 2 B; incomplete preview: could not read 2 directories",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("show lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Fatal("raw escape reached show")
	}
	// A stored preview cut short that kept no reason still says so.
	b.Reset()
	writeImpact(&b, &model.Impact{Summary: "deletes at least 3 files", Entries: 3}, false)
	if !strings.Contains(b.String(), "incomplete: a bound cut a walk: the counts are at least") {
		t.Fatalf("%s", b.String())
	}
}
