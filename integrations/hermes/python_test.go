package hermes

import (
	"os/exec"
	"testing"
)

// The plugin's own tests and the stand-in host's, in Python (standard
// library unittest; small /bin/sh fakes of approve-tui), run with the Go
// tests so that `go test ./...` covers them. The end-to-end tests with the
// real binary are in cli/ (hermes_e2e_test.go).
func TestPluginPython(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed for the Hermes plugin's tests")
	}
	cmd := exec.Command("python3", "-m", "unittest", "discover", "-s", "testhost", "-v")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
