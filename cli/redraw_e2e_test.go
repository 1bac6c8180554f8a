package cli

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Another process writes to the console's terminal (an agent started in
// the background of the console's shell): its text stays on the screen,
// the console rewriting only the lines it changes, until ctrl+l repaints
// the whole screen.
func TestCtrlLRepaintsInTmux(t *testing.T) {
	tm := startDemoInTmux(t)
	tm.waitFor("pending")
	tm.waitFor("? help")
	tty := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "e2e", "#{pane_tty}"))
	f, err := os.OpenFile(tty, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("the pane's terminal %q: %v", tty, err)
	}
	// On the help line (the last), which the console does not change by
	// itself, and on two more.
	if _, err := f.WriteString("\x1b[24;40HGARBAGE-ON-THE-HELP-LINE\x1b[12;30HGARBAGE-2\x1b[6;50HGARBAGE-3"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tm.waitFor("GARBAGE-ON-THE-HELP-LINE")
	time.Sleep(300 * time.Millisecond)
	if !strings.Contains(tm.screen(), "GARBAGE-ON-THE-HELP-LINE") {
		t.Fatalf("the console's own frames removed the other process's text: this test would show nothing:\n%s", tm.screen())
	}
	tm.key("C-l")
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(tm.screen(), "GARBAGE") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	screen := tm.screen()
	if strings.Contains(screen, "GARBAGE") || !strings.Contains(screen, "pending") || !strings.Contains(screen, "? help") {
		t.Fatalf("after ctrl+l:\n%s", screen)
	}
}
