package cli

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// hostileFile writes a database with every case of the hostile corpus in
// every field: one proposal per case with the string in each payload field,
// a corrupt row whose id is the string, and a forged audit row with the
// string in each column. It returns the path and the number of rows.
func hostileFile(t *testing.T, dir string) (string, int) {
	t.Helper()
	corpus, err := golden.HostileCorpus()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hostile.db")
	s, err := storage.Open(context.Background(), path, storage.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := float64(time.Now().Unix())
	rows := 0
	for i, c := range corpus {
		x := c.Text
		id := fmt.Sprintf("hostile%04d", i)
		exp := now + 3600
		p := &model.Proposal{ApprovalID: id, CreatedAt: now - float64(i), ExpiresAt: &exp, Status: model.StatusPending,
			SessionKey: "s:" + x, Requester: x, Command: "rm -rf /srv/" + x, Cwd: "/" + x, Backend: x,
			EnvOverrides: map[string]string{"K" + x: x}, RiskLevel: model.RiskHigh, RiskReason: x,
			PolicyDecision: "needs_approval", PolicyVersion: x, RequiresExplicitApproval: true, DefaultDecision: "deny",
			DiffText: "--- a/" + x + "\n+++ b/" + x + "\n@@ -1 +1 @@\n-" + x + "\n+" + x + "\n", DiffSummary: x, DisplayText: x,
			ExecutionStatus: model.ExecNotStarted}
		if _, err := db.Exec(`INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES (?, ?, ?, 'pending', ?)`,
			id, p.CreatedAt, exp, string(model.EncodePayload(p))); err != nil {
			t.Fatal(err)
		}
		rows++
		if x != "" && !strings.HasPrefix(x, " ") {
			if _, err := db.Exec(`INSERT INTO gateway_approvals (approval_id, created_at, expires_at, status, payload_json) VALUES (?, ?, ?, 'pending', '{}')`,
				x, now, exp); err == nil {
				rows++
			}
		}
		if _, err := db.Exec(`INSERT INTO approve_tui_audit (at, approval_id, event, outcome, reason, actor, surface, detail, prev_hash, hash)
			VALUES (?, ?, ?, 'refused', ?, ?, ?, ?, 'forged', 'forged')`, now, x, x, x, x, x, `{"reason": "`+strings.ReplaceAll(x, `"`, ``)+`"}`); err != nil {
			t.Fatal(err)
		}
	}
	return path, rows
}

// consoleInTmux runs the real binary in a real terminal (tmux) of w x h with
// env, capturing every byte it writes to the terminal (pipe-pane) into raw.
type consoleInTmux struct {
	*demoInTmux
	raw string
	w   int
}

func startConsoleInTmux(t *testing.T, bin string, w, h int, env []string, args ...string) *consoleInTmux {
	t.Helper()
	dir := t.TempDir()
	tm := &consoleInTmux{demoInTmux: &demoInTmux{t: t, sock: fmt.Sprintf("approve-tui-raw-%d-%d", os.Getpid(), time.Now().UnixNano())},
		raw: filepath.Join(dir, "raw.out"), w: w}
	// The program waits for a line, so that the capture runs from its
	// first byte.
	cmd := "read _; exec env " + strings.Join(env, " ") + " " + bin + " " + strings.Join(args, " ")
	tm.tmux("new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "sh", "-c", cmd)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	tm.tmux("pipe-pane", "-t", "e2e", "-o", "cat >> "+tm.raw)
	tm.key("Enter")
	return tm
}

// layout checks what tmux shows: the header on the first line, the help or
// the note at the bottom, no line wider than the terminal, and in the wide
// layout the detail's borders in one column on every row.
func (tm *consoleInTmux) layout(when string) {
	tm.t.Helper()
	screen := strings.TrimRight(tm.screen(), "\n")
	lines := strings.Split(screen, "\n")
	if !strings.HasPrefix(lines[0], "approve-tui") {
		tm.t.Fatalf("%s: the header is not on the first line:\n%s", when, screen)
	}
	col := -1
	for i, l := range lines {
		if w := runewidth.StringWidth(l); w > tm.w {
			tm.t.Fatalf("%s: line %d is %d cells wide on a %d-cell terminal:\n%s", when, i, w, tm.w, screen)
		}
		for _, border := range []string{"┌", "│", "└"} {
			if j := strings.LastIndex(l, border); j >= 0 && strings.TrimRight(l[j:], " ") == l[j:j+len(border)] {
				c := runewidth.StringWidth(l[:j])
				if col < 0 {
					col = c
				} else if c != col {
					tm.t.Fatalf("%s: line %d has the detail's border at column %d, not %d:\n%s", when, i, c, col, screen)
				}
			}
		}
	}
}

func (tm *consoleInTmux) rawFindings() []string {
	out, err := os.ReadFile(tm.raw)
	if err != nil {
		tm.t.Fatal(err)
	}
	if len(out) == 0 {
		tm.t.Fatal("nothing captured")
	}
	return golden.RawFindings(out)
}

// Every case of the hostile corpus, in every field of a proposal, as a
// corrupt row's id and in every audit column: the console in a real
// terminal, at 80x24 and 200x50, with colour and with NO_COLOR, walked
// through every row, its detail and the history. Not one byte a terminal
// would act on or hide reaches it, and the layout is what the console
// thinks it is.
func TestHostileCorpusNeverReachesTheTerminalRaw(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the end-to-end console test (apt-get install tmux)")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	db, rows := hostileFile(t, dir)
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		for _, colour := range []bool{true, false} {
			name := fmt.Sprintf("%dx%d-colour=%v", size[0], size[1], colour)
			t.Run(name, func(t *testing.T) {
				env := []string{"TERM=xterm-256color", "COLORTERM=truecolor"}
				if !colour {
					env = append(env, "NO_COLOR=1")
				}
				tm := startConsoleInTmux(t, bin, size[0], size[1], env, "--db", db, "--read-only")
				tm.waitFor("pending")
				wide := size[0] >= 120
				for i := 0; i < rows; i++ {
					if wide {
						tm.key("j")
					} else {
						tm.key("Enter", "PageDown", "Escape", "j")
					}
					if i%10 == 0 {
						time.Sleep(40 * time.Millisecond)
						tm.layout(fmt.Sprintf("row %d", i))
					}
				}
				tm.key("Tab")
				for i := 0; i < rows; i++ {
					tm.key("j")
				}
				time.Sleep(100 * time.Millisecond)
				tm.layout("history")
				if f := tm.rawFindings(); len(f) > 0 {
					t.Fatalf("%d raw findings in what the console wrote, first: %s", len(f), strings.Join(f[:min(len(f), 10)], "\n"))
				}
			})
		}
	}
}

// The CLI's text and JSON for every hostile row: show, list, audit.
func TestHostileCorpusCLIOutput(t *testing.T) {
	dir := t.TempDir()
	db, _ := hostileFile(t, dir)
	corpus, _ := golden.HostileCorpus()
	check := func(args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		Execute(append([]string{"--db", db}, args...), strings.NewReader(""), &out, &errb)
		for _, b := range [][]byte{out.Bytes(), errb.Bytes()} {
			if f := golden.RawFindings(b); len(f) > 0 {
				t.Fatalf("%v: %d raw findings, first: %s", args, len(f), strings.Join(f[:min(len(f), 5)], "\n"))
			}
		}
	}
	for _, json := range [][]string{nil, {"--json"}} {
		check(append(json, "list", "--status", "all", "--limit", "1000")...)
		check(append(json, "audit", "--limit", "1000")...)
		for i, c := range corpus {
			check(append(json, "show", "--", fmt.Sprintf("hostile%04d", i))...)
			if c.Text != "" {
				check(append(json, "show", "--", c.Text)...)
			}
		}
	}
}

// Headless: the final screen (with colour), every frame, the events log.
func TestHostileCorpusHeadless(t *testing.T) {
	dir := t.TempDir()
	db, rows := hostileFile(t, dir)
	tape := filepath.Join(dir, "walk.tape")
	var b strings.Builder
	for i := 0; i < rows; i++ {
		b.WriteString("Down\n")
	}
	b.WriteString("Tab\n")
	for i := 0; i < rows; i++ {
		b.WriteString("Down\n")
	}
	if err := os.WriteFile(tape, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	frames, events := filepath.Join(dir, "frames"), filepath.Join(dir, "events.jsonl")
	var out, errb bytes.Buffer
	t.Setenv("NO_COLOR", "")
	code := Execute([]string{"--db", db, "--read-only", "headless", "--script", tape, "--typing-speed", "0", "--width", "120", "--height", "40",
		"--frames", frames, "--events", events}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("headless: exit %d: %s", code, errb.String())
	}
	check := func(what string, b []byte) {
		t.Helper()
		if f := golden.RawFindings(b); len(f) > 0 {
			t.Fatalf("%s: %d raw findings, first: %s", what, len(f), strings.Join(f[:min(len(f), 5)], "\n"))
		}
	}
	check("stdout", out.Bytes())
	check("stderr", errb.Bytes())
	ev, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	check("events", ev)
	files, _ := filepath.Glob(filepath.Join(frames, "*"))
	if len(files) < rows {
		t.Fatalf("%d frames; final screen:\n%s\nstderr: %s", len(files), out.String(), errb.String())
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(f, b)
	}
}
