package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	// -update (the flag golden screens use) also rewrites README captures.
	_ "github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/headless"
	"github.com/approve-tui/approve-tui/internal/docstest"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/tui"
)

// captureClock pins the console's clock for the example runs whose
// screenshots the README quotes, so that countdowns read the same on
// every run.
var captureClock = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

const dropID = "u7LxLGT73E5T" // demo seed 1's DROP TABLE proposal

// runCLI runs the command line in-process with a pinned clock.
func runCLI(t *testing.T, now func() time.Time, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errb)
	if now != nil {
		a.now = now
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := a.execute(ctx, args)
	return code, out.String(), errb.String()
}

func readEvents(t *testing.T, path string) []headless.EventLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []headless.EventLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e headless.EventLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("event line %q: %v", l, err)
		}
		if e.At.IsZero() {
			t.Fatalf("event without a time: %q", l)
		}
		evs = append(evs, e)
	}
	return evs
}

func findEvent(evs []headless.EventLine, kind, id, outcome string) *headless.EventLine {
	for i, e := range evs {
		if e.Source == "console" && e.Kind == kind && e.ID == id && e.Outcome == outcome {
			return &evs[i]
		}
	}
	return nil
}

func openDB(t *testing.T, path string) *storage.Store {
	t.Helper()
	s, err := storage.Open(context.Background(), path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func record(t *testing.T, s *storage.Store, id string) *storage.Record {
	t.Helper()
	rec, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// audits counts audit events of id, optionally by actor name.
func audits(t *testing.T, s *storage.Store, id, event, outcome, actor string) int {
	t.Helper()
	evs, err := s.Audit(context.Background(), storage.AuditQuery{ApprovalID: id, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Event == event && e.Outcome == outcome && (actor == "" || e.Actor == actor) {
			n++
		}
	}
	return n
}

// Each example tape runs headless against --demo-seed 1, as in CI, and
// leaves the database and the audit log as it says. The screenshots they
// take are the README's screen captures.
func TestHeadlessExampleTapes(t *testing.T) {
	dir := t.TempDir()
	diffID := "kxZb1iQysY5F" // high risk, with a diff
	tapes := []struct {
		name  string
		check func(t *testing.T, s *storage.Store, evs []headless.EventLine)
	}{
		{"quickstart", func(t *testing.T, s *storage.Store, evs []headless.EventLine) {
			rec := record(t, s, dropID)
			if rec.Status != model.StatusConsumed || rec.ConsumedBy != "headless:quickstart.tape via headless" {
				t.Fatalf("%s by %q", rec.Status, rec.ConsumedBy)
			}
			if audits(t, s, dropID, storage.EventApprove, storage.OutcomeOK, "headless:quickstart.tape") != 1 {
				t.Fatal("approval not audited as headless:quickstart.tape")
			}
		}},
		{"approve", func(t *testing.T, s *storage.Store, evs []headless.EventLine) {
			rec := record(t, s, diffID)
			if rec.Status != model.StatusConsumed || rec.ConsumedBy != "headless:approve.tape via headless" {
				t.Fatalf("%s by %q", rec.Status, rec.ConsumedBy)
			}
			refused := findEvent(evs, "approve", diffID, "refused")
			approved := findEvent(evs, "approve", diffID, "approved")
			if refused == nil || !strings.Contains(refused.Detail, "read it all first") || approved == nil || approved.Line <= refused.Line {
				t.Fatalf("want a refusal before the diff was read, then the approval: %+v %+v", refused, approved)
			}
		}},
		{"deny", func(t *testing.T, s *storage.Store, evs []headless.EventLine) {
			rec := record(t, s, dropID)
			if rec.Status != model.StatusDenied || rec.ConsumedBy != "headless:deny.tape via headless" {
				t.Fatalf("%s by %q", rec.Status, rec.ConsumedBy)
			}
			if r, _ := s.DenyReason(context.Background(), dropID); r != "archive export not verified yet" {
				t.Fatalf("reason %q", r)
			}
			if findEvent(evs, "deny", dropID, "denied") == nil {
				t.Fatal("deny not logged")
			}
		}},
		{"wrong-id", func(t *testing.T, s *storage.Store, evs []headless.EventLine) {
			if rec := record(t, s, dropID); rec.Status != model.StatusPending {
				t.Fatalf("a wrong or pasted id changed the row: %s", rec.Status)
			}
			if audits(t, s, dropID, storage.EventApprove, storage.OutcomeOK, "") != 0 {
				t.Fatal("approved")
			}
			if findEvent(evs, "approve", dropID, "refused") == nil || findEvent(evs, "paste", dropID, "refused") == nil ||
				findEvent(evs, "prompt", dropID, "closed") == nil {
				t.Fatalf("refusals not logged: %+v", evs)
			}
		}},
	}
	t.Run("run", func(t *testing.T) {
		for _, tc := range tapes {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				db := filepath.Join(dir, tc.name+".db")
				events := filepath.Join(dir, tc.name+".jsonl")
				code, stdout, stderr := runCLI(t, func() time.Time { return captureClock },
					"headless", "--script", "../examples/"+tc.name+".tape", "--demo-seed", "1", "--db", db,
					"--screenshot-dir", dir, "--events", events, "--typing-speed", "0", "--plain")
				if code != 0 {
					t.Fatalf("exit %d\n%s\n%s", code, stderr, stdout)
				}
				if strings.Contains(stdout, "\x1b") {
					t.Fatal("--plain printed escape sequences")
				}
				tc.check(t, openDB(t, db), readEvents(t, events))
			})
		}
	})
	if t.Failed() {
		return
	}
	checkReadmeCaptures(t, dir)
}

// checkReadmeCaptures compares each block of README.md and docs/*.md
// marked "<!-- capture: PATH -->" with the screenshot the example tapes
// wrote at PATH (relative to dir). With -update it rewrites the blocks.
func checkReadmeCaptures(t *testing.T, dir string) {
	files, err := docstest.Files("..")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)(<!-- capture: (\\S+) -->\n```\n)(.*?)(```)")
	update := false
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		update = true
	}
	found := 0
	var failed []string
	for _, file := range files {
		out := re.ReplaceAllStringFunc(file.Text, func(block string) string {
			m := re.FindStringSubmatch(block)
			found++
			shot, err := os.ReadFile(filepath.Join(dir, m[2]))
			if err != nil {
				failed = append(failed, file.Path+": "+m[2]+": no such screenshot from the example tapes")
				return block
			}
			if m[3] != string(shot) {
				failed = append(failed, file.Path+": "+m[2]+":\n--- "+file.Path+"\n"+m[3]+"--- tape\n"+string(shot))
			}
			return m[1] + string(shot) + m[4]
		})
		if update && out != file.Text {
			if err := os.WriteFile(filepath.Join("..", file.Path), []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if found < 2 {
		t.Fatalf("README.md and docs/ quote %d tape captures, want at least 2", found)
	}
	if update {
		return
	}
	for _, f := range failed {
		t.Errorf("a capture in the docs differs from the tape's screenshot (go test ./cli -run TestHeadlessExampleTapes -update rewrites it): %s", f)
	}
}

// runExampleScript runs examples/NAME.sh DIR: the tape headless (the
// approve-tui on PATH is this test binary) and a second approve-tui process
// that decides while the tape waits.
func runExampleScript(t *testing.T, name string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("approve-tui"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("sh", "../examples/"+name+".sh", dir)
	cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("%s did not finish\n%s", name, out.String())
	}
	return dir, out.String()
}

// A watcher (--read-only) sees a decision that another process makes
// appear live, and cannot decide itself.
func TestHeadlessWatcherSeesAnotherProcessDecide(t *testing.T) {
	t.Parallel()
	dir, out := runExampleScript(t, "run-watch")
	if !strings.Contains(out, dropID+" was denied elsewhere by") || !strings.Contains(out, "[read-only]") {
		t.Fatalf("final screen:\n%s", out)
	}
	s := openDB(t, filepath.Join(dir, "state.db"))
	rec := record(t, s, dropID)
	if rec.Status != model.StatusDenied || !strings.HasSuffix(rec.ConsumedBy, " via cli") {
		t.Fatalf("%s by %q", rec.Status, rec.ConsumedBy)
	}
	evs := readEvents(t, filepath.Join(dir, "events.jsonl"))
	if e := findEvent(evs, "gone", dropID, "denied"); e == nil || !strings.Contains(e.Detail, "denied elsewhere by") {
		t.Fatalf("the decision was not seen live: %+v", evs)
	}
	if e := findEvent(evs, "approve", dropID, "refused"); e == nil || !strings.Contains(e.Detail, "read-only") {
		t.Fatalf("the watcher's approve was not refused: %+v", evs)
	}
	if n := audits(t, s, dropID, storage.EventApprove, storage.OutcomeOK, ""); n != 0 {
		t.Fatal("a watcher approved")
	}
	if _, err := os.Stat(filepath.Join(dir, "examples", "captures", "watch.txt")); err != nil {
		t.Fatal(err)
	}
}

// A tape races another process for the same proposal and loses: the
// console says who won and the event log records the lost race.
func TestHeadlessTapeLosesARace(t *testing.T) {
	t.Parallel()
	dir, out := runExampleScript(t, "run-race")
	if !regexp.MustCompile("lost: " + dropID + " was already approved by .* via cli|" + dropID + " was approved elsewhere by .* via cli").MatchString(out) {
		t.Fatalf("final screen:\n%s", out)
	}
	s := openDB(t, filepath.Join(dir, "state.db"))
	rec := record(t, s, dropID)
	if rec.Status != model.StatusConsumed || !strings.HasSuffix(rec.ConsumedBy, " via cli") {
		t.Fatalf("%s by %q", rec.Status, rec.ConsumedBy)
	}
	if n := audits(t, s, dropID, storage.EventApprove, storage.OutcomeOK, ""); n != 1 {
		t.Fatalf("%d successful approvals", n)
	}
	if n := audits(t, s, dropID, storage.EventApprove, storage.OutcomeOK, "headless:race.tape"); n != 0 {
		t.Fatal("the tape won")
	}
	evs := readEvents(t, filepath.Join(dir, "events.jsonl"))
	if e := findEvent(evs, "approve", dropID, tui.OutcomeLost); e == nil || !strings.Contains(e.Detail, "via cli") {
		t.Fatalf("lost race not logged: %+v", evs)
	}
}

// The README's six-line tape is examples/quickstart.tape's, and the help
// lists every VHS line that headless accepts and ignores.
func TestHeadlessDocs(t *testing.T) {
	b, err := os.ReadFile("../examples/quickstart.tape")
	if err != nil {
		t.Fatal(err)
	}
	tape, err := headless.ParseTapeFile("../examples/quickstart.tape")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var six []string
	for _, c := range tape.Commands {
		if !c.VHSOnly && !c.Top {
			six = append(six, lines[c.Pos.Line-1])
		}
	}
	if len(six) != 6 {
		t.Fatalf("quickstart.tape drives the console with %d lines, want 6", len(six))
	}
	readme, err := docstest.Text("..")
	if err != nil {
		t.Fatal(err)
	}
	if block := "```\n" + strings.Join(six, "\n") + "\n```"; !strings.Contains(readme, block) {
		t.Fatalf("the docs do not show quickstart.tape's six lines:\n%s", block)
	}
	for _, name := range append(append([]string{}, headless.IgnoredCommands...), headless.IgnoredSettings...) {
		if !strings.Contains(headlessHelp, name) {
			t.Errorf("headless --help does not mention %s", name)
		}
	}
}
