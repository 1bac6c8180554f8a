// Package sshtest runs the real OpenSSH ssh-agent for tests.
package sshtest

import (
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// StartAgent runs a real ssh-agent in the foreground on socket sock,
// stops it when the test ends, and returns once it accepts connections:
// the socket file exists as soon as the agent binds it, before it
// listens, and a client that connects in between is refused. It skips
// the test when ssh-agent or ssh-add is not installed.
func StartAgent(t testing.TB, sock string) {
	t.Helper()
	for _, tool := range []string{"ssh-agent", "ssh-add"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (package openssh-client)", tool)
		}
	}
	cmd := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ssh-agent does not accept connections on %s: %v", sock, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// AddKeys adds the private key files to the agent at sock with ssh-add
// (extra: ssh-add's options, such as -c), never asking for anything.
func AddKeys(t testing.TB, sock string, extra []string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		add := exec.Command("ssh-add", append(append([]string(nil), extra...), k)...)
		add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock, "SSH_ASKPASS=", "DISPLAY=")
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("ssh-add %s: %v\n%s", k, err, out)
		}
	}
}
