package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approve-tui/approve-tui/internal/sshtest"
	"github.com/approve-tui/approve-tui/internal/syncbuf"
	"github.com/approve-tui/approve-tui/storage"
)

// sshRig is the real binary's `serve` on loopback, its store and access
// files in a directory of the test's, for the real OpenSSH client in a real
// terminal (tmux): the set-up the SSH end-to-end tests share.
type sshRig struct {
	t             *testing.T
	dir, bin, db  string
	port          int
	log           *syncbuf.Buffer // the server's stderr, read while it writes
	approvers     []byte          // authorized_keys lines, written when serving
	watchers      []byte
	knownHosts    string
	sessionsTaken int       // names each tmux server
	srv           *exec.Cmd // the server process, once serve started it
}

// newSSHRig builds the binary and makes the store (init).
func newSSHRig(t *testing.T) *sshRig {
	t.Helper()
	for _, tool := range []string{"tmux", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for the end-to-end SSH test (apt-get install tmux openssh-client)", tool)
		}
	}
	dir := t.TempDir()
	r := &sshRig{t: t, dir: dir, bin: buildBinary(t, dir), db: filepath.Join(dir, "state.db"), log: &syncbuf.Buffer{},
		knownHosts: filepath.Join(dir, "known_hosts")}
	r.run("init")
	return r
}

// run runs the binary on the rig's store and returns its output, trimmed.
func (r *sshRig) run(args ...string) string {
	r.t.Helper()
	out, err := exec.Command(r.bin, append([]string{"--db", r.db}, args...)...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// submit submits command for an hour and returns its id.
func (r *sshRig) submit(command string, flags ...string) string {
	r.t.Helper()
	args := append(append([]string{"--db", r.db, "submit", "--ttl", "1h"}, flags...), "--", command)
	out, err := exec.Command(r.bin, args...).Output()
	if err != nil {
		r.t.Fatalf("submit: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// key makes an ed25519 key named name with comment (the person the server
// knows it as) and adds it to the approvers, or the watchers.
func (r *sshRig) key(name, comment string, watcher bool) string {
	r.t.Helper()
	key := sshtest.Keygen(r.t, filepath.Join(r.dir, name), "ed25519", comment)
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		r.t.Fatal(err)
	}
	if watcher {
		r.watchers = append(r.watchers, pub...)
	} else {
		r.approvers = append(r.approvers, pub...)
	}
	return key
}

// serve starts the server with the keys made so far; it is stopped when
// the test ends.
func (r *sshRig) serve() {
	r.t.Helper()
	r.port = freePort(r.t)
	args := []string{"--db", r.db, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", r.port), "--host-key", filepath.Join(r.dir, "host_ed25519")}
	for _, f := range []struct {
		flag string
		keys []byte
	}{{"--approvers", r.approvers}, {"--watchers", r.watchers}} {
		if len(f.keys) == 0 {
			continue
		}
		path := filepath.Join(r.dir, strings.TrimPrefix(f.flag, "--"))
		if err := os.WriteFile(path, f.keys, 0o600); err != nil {
			r.t.Fatal(err)
		}
		args = append(args, f.flag, path)
	}
	srv := exec.Command(r.bin, args...)
	srv.Stderr = r.log
	// The server's policy memory in the rig's own directory.
	srv.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(r.dir, "state"))
	if err := srv.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.srv = srv
	r.t.Cleanup(func() { srv.Process.Signal(os.Interrupt); srv.Wait() })
	waitPort(r.t, r.port)
}

// connect runs ssh (-tt: a terminal) as user with key in a tmux session of
// its own at w x h, with remote as the command ("" none), and returns it.
func (r *sshRig) connect(user, key string, w, h int, remote ...string) *demoInTmux {
	r.t.Helper()
	r.sessionsTaken++
	tm := &demoInTmux{t: r.t, sock: fmt.Sprintf("approve-tui-ssh-%d-%d", os.Getpid(), r.sessionsTaken), bin: r.bin}
	args := []string{"new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h),
		"env", "TERM=xterm-256color", "ssh", "-tt", "-p", fmt.Sprint(r.port), "-i", key, "-o", "UserKnownHostsFile=" + r.knownHosts,
		"-o", "StrictHostKeyChecking=accept-new", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", user + "@127.0.0.1"}
	tm.tmux(append(args, remote...)...)
	r.t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	return tm
}

// get reads proposal id from the store, read-only.
func (r *sshRig) get(id string) *storage.Record {
	r.t.Helper()
	return readStore(r.t, r.db, func(ctx context.Context, s *storage.Store) (*storage.Record, error) { return s.Get(ctx, id) })
}

// readStore opens db read-only, reads what read returns, and closes it;
// either failing fails t.
func readStore[T any](t testing.TB, db string, read func(context.Context, *storage.Store) (T, error)) T {
	t.Helper()
	ctx := context.Background()
	s, err := storage.Open(ctx, db, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := read(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
