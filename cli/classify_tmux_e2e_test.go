package cli

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/risk"
)

// The console, in a real terminal at 80x24, explains a HIGH: the detail of
// "rm -rf /" says why it is HIGH, in the judgement's words.
func TestConsoleExplainsAHighInTmux(t *testing.T) {
	tm := startDemoInTmux(t)
	tm.waitFor("pending")
	out, err := exec.Command(tm.bin, "--db", tm.db, "submit", "--cwd", "/home/dev", "--", "rm -rf /").Output()
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	id := strings.TrimSpace(string(out))
	tm.key("/")
	tm.typeID(id)
	tm.key("Enter", "Enter")
	j := risk.Judge("rm -rf /", risk.Context{Cwd: "/home/dev"})
	tm.waitFor("why " + strings.ToUpper(string(j.Level)))
	screen := strings.Join(strings.Fields(tm.screen()), " ")
	for _, f := range j.Findings[:min(len(j.Findings), 2)] {
		if !strings.Contains(screen, strings.Join(strings.Fields(f.Why), " ")) {
			t.Errorf("the detail does not say %q:\n%s", f.Why, tm.screen())
		}
	}
}
