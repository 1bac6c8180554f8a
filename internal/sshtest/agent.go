// Package sshtest runs the real OpenSSH ssh-agent and ssh-keygen for
// tests.
package sshtest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// Agent runs a real ssh-agent holding the private key files keys, on a
// socket in a short directory of its own (a socket's path has a length
// limit) that is removed when the test ends, and returns the socket.
func Agent(t testing.TB, keys ...string) string {
	t.Helper()
	return AgentWith(t, nil, keys...)
}

// AgentWith is Agent with ssh-add's options extra (such as -c) for every
// key.
func AgentWith(t testing.TB, extra []string, keys ...string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "sock")
	StartAgent(t, sock)
	AddKeys(t, sock, extra, keys...)
	return sock
}

// Keygen makes a new unencrypted key pair of type typ (ed25519, ecdsa,
// rsa) with the real ssh-keygen at path and path.pub (extra: more of
// ssh-keygen's options), and returns path.
func Keygen(t testing.TB, path, typ, comment string, extra ...string) string {
	t.Helper()
	args := append([]string{"-q", "-t", typ, "-N", "", "-C", comment, "-f", path}, extra...)
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen %v: %v\n%s", args, err, out)
	}
	return path
}

// PublicLine is the public half of the private key file key, as an
// authorized_keys or allowed_signers line has it: "TYPE BASE64".
func PublicLine(t testing.TB, key string) string {
	t.Helper()
	b, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		t.Fatalf("%s.pub is not a public key: %q", key, b)
	}
	return f[0] + " " + f[1]
}
