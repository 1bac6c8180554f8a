package cli

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// helpOf is what `approve-tui ARGS --help` prints.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Execute(append(args, "--help"), strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("%v --help: exit %d %s", args, code, errb.String())
	}
	return out.String()
}

// exitCodesIn reads the codes of a help's "Exit codes:" block.
func exitCodesIn(help string) []int {
	i := strings.Index(help, "\nExit codes:\n")
	if i < 0 {
		return nil
	}
	var codes []int
	re := regexp.MustCompile(`^  (\d+) `)
	for _, l := range strings.Split(help[i+len("\nExit codes:\n"):], "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			if strings.HasPrefix(l, "       ") {
				continue // a meaning's second line
			}
			break
		}
		n, _ := strconv.Atoi(m[1])
		codes = append(codes, n)
	}
	return codes
}

// Each command's --help lists the exit codes it can end with, and only
// those: no "5 confirmation did not match" for list or init.
func TestEachCommandSaysItsExitCodes(t *testing.T) {
	for cmd, want := range map[string][]int{
		"":               {0, 1, 2, 6, 130},
		"init":           {0, 1, 2, 6},
		"submit":         {0, 1, 2, 6},
		"list":           {0, 1, 2, 6},
		"show":           {0, 1, 2, 3, 6},
		"approve":        {0, 1, 2, 3, 4, 5, 6, 7, 130},
		"deny":           {0, 1, 2, 3, 4, 6, 130},
		"expire":         {0, 1, 2, 6},
		"audit":          {0, 1, 2, 6, 7},
		"demo":           {0, 1, 2, 6, 130},
		"lockouts":       {0, 1, 2, 3, 6},
		"serve":          {0, 1, 2, 6, 130},
		"copy":           {0, 1, 2, 6},
		"hook uninstall": {0, 1, 2},
	} {
		args := strings.Fields(cmd)
		help := helpOf(t, args...)
		if got := exitCodesIn(help); !slices.Equal(got, want) {
			t.Errorf("approve-tui %s --help: exit codes %v, want %v\n%s", cmd, got, want, help)
		}
		for _, l := range strings.Split(help[:strings.Index(help, "\nUsage:")], "\n") {
			if cells(l) > 80 && !strings.HasPrefix(l, "  approve-tui ") { // an example may not wrap
				t.Errorf("approve-tui %s --help: a line of %d cells: %q", cmd, cells(l), l)
			}
		}
		takesID := cmd == "show" || cmd == "approve" || cmd == "deny"
		if strings.Contains(help, "Approval ids may start with '-'") != takesID {
			t.Errorf("approve-tui %s --help: the note on ids that start with '-' belongs to commands that take one", cmd)
		}
	}
	// The commands with codes of their own keep saying them.
	for cmd, has := range map[string]string{"wait": "10   denied", "run": "14", "headless": "12 a Wait timed out"} {
		if h := helpOf(t, cmd); !strings.Contains(h, has) {
			t.Errorf("%s --help lost its own exit codes (%q)", cmd, has)
		}
	}
}

// A hook's --help gives the lock wait it really uses (2s), not the other
// commands' 10s: one truth.
func TestHookHelpSaysItsLockWait(t *testing.T) {
	for _, h := range []string{"claude-code", "codex", "gemini"} {
		help := helpOf(t, "hook", h)
		var lockLines []string
		for _, l := range strings.Split(help, "\n") {
			if strings.Contains(l, "--lock-timeout duration") {
				lockLines = append(lockLines, l)
			}
		}
		if len(lockLines) != 1 || !strings.HasSuffix(lockLines[0], "(default 2s)") {
			t.Errorf("hook %s --help: --lock-timeout lines %q, want one with (default 2s)", h, lockLines)
		}
	}
	if h := helpOf(t, "list"); !strings.Contains(h, "--lock-timeout duration   how long to wait for another process's lock (default 10s)") {
		t.Errorf("list --help lost the global --lock-timeout:\n%s", h)
	}
}

// completion for a shell cobra has no script for is a usage error that
// names the ones it has, not its help with exit 0.
func TestCompletionOfAnUnsupportedShell(t *testing.T) {
	code, stdout, stderr := run(t, filepath.Join(t.TempDir(), "state.db"), false, "", "completion", "tcsh")
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, `"tcsh" is not a supported shell`) ||
		!strings.Contains(stderr, "bash, fish, powershell, zsh") {
		t.Fatalf("completion tcsh: %d %q %q", code, stdout, stderr)
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if code, stdout, stderr := run(t, "", false, "", "completion", sh); code != 0 || !strings.Contains(stdout, "approve-tui") {
			t.Fatalf("completion %s: %d %s", sh, code, stderr)
		}
	}
}
