package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const trustChannels = "channels:\n  desk: {type: exec, command: [notify-send, approve-tui]}\n"

func writeMode(t *testing.T, src string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return p
}

// A file that holds channels and that its group or others may write is
// refused, saying which file, its mode and the fix; the same file without
// channels, or kept 0600/0644, loads.
func TestLoadRefusesWritableFileWithChannels(t *testing.T) {
	for _, mode := range []os.FileMode{0o666, 0o664, 0o646, 0o777, 0o620} {
		p := writeMode(t, trustChannels, mode)
		_, err := Load(p)
		if err == nil {
			t.Errorf("mode %04o: loaded", mode)
			continue
		}
		msg := err.Error()
		for _, want := range []string{p, "may write it", fmt.Sprintf("(mode %04o)", mode), "chmod 600 " + p} {
			if !strings.Contains(msg, want) {
				t.Errorf("mode %04o: %q does not say %q", mode, msg, want)
			}
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o644, 0o400} {
		if _, err := Load(writeMode(t, trustChannels, mode)); err != nil {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
	if _, err := Load(writeMode(t, "open_hint: \"ssh x open {id}\"\n", 0o666)); err != nil {
		t.Errorf("a file without channels: %v", err)
	}
}

// A file that holds channels and is owned by another user (not root) is
// refused; one owned by root, or by the user running, is taken.
func TestLoadRefusesAnotherUsersFile(t *testing.T) {
	p := writeMode(t, trustChannels, 0o644)
	if os.Geteuid() == 0 {
		// A real file of another user's.
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), "owned by uid 65534") || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "chown") {
			t.Fatalf("another user's file: %v", err)
		}
		if err := os.Chown(p, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	owner, ok := fileOwner(fi)
	if !ok {
		t.Skip("no file owners on this system")
	}
	// As seen by another user: refused unless root owns it.
	err = checkTrust(p, fi, owner+1)
	if owner == 0 && err != nil {
		t.Errorf("a root-owned file, another user running: %v", err)
	}
	if owner != 0 && (err == nil || !strings.Contains(err.Error(), "not by the user running")) {
		t.Errorf("another user's file: %v", err)
	}
	if err := checkTrust(p, fi, owner); err != nil {
		t.Errorf("one's own file: %v", err)
	}
}

// parallel: a whole number of at least 1, per channel.
func TestChannelParallel(t *testing.T) {
	f := parseOK(t, t.TempDir(), "channels:\n  a: {type: exec, command: [x], parallel: 2}\n  b: {type: exec, command: [x]}\n")
	if f.Channels["a"].Parallel != 2 || f.Channels["b"].Parallel != 0 {
		t.Errorf("parallel: a %d, b %d", f.Channels["a"].Parallel, f.Channels["b"].Parallel)
	}
	for _, v := range []string{"0", "-1", "two", "1.5"} {
		ps := problemsOf(t, "channels:\n  a: {type: exec, command: [x], parallel: "+v+"}\n")
		if len(ps) != 1 || !strings.Contains(ps[0], "channel a (exec): parallel") {
			t.Errorf("parallel %s: %q", v, ps)
		}
	}
}
