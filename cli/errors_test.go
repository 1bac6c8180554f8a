package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/storage"
)

// unwritableDir makes dir unwritable for this process: chattr +i as root
// (whom permission bits do not stop), mode 0555 otherwise.
func unwritableDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("chattr +i (needed to make a directory unwritable for root) failed: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}

// A read of a store in a directory this user cannot write says what is
// wrong in one sentence of one error class: the store could not be opened
// (not "the store is store unavailable").
func TestUnwritableDirectoryErrorIsOneSentence(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	if code, _, errs := runCLI(t, nil, "--db", db, "init"); code != ExitOK {
		t.Fatalf("init: %d %s", code, errs)
	}
	unwritableDir(t, dir)
	want := fmt.Sprintf("approve-tui: store unavailable (open): cannot open %s: its directory %s is not writable, "+
		"and SQLite must create state.db-shm (and state.db-wal) beside a database in WAL mode even to read it; "+
		"make the directory writable, or copy the file with its -wal to a writable directory\n", db, dir)
	for _, args := range [][]string{{"list"}, {"stats"}, {"show", "nosuch12345"}} {
		code, out, errs := runCLI(t, nil, append([]string{"--db", db}, args...)...)
		if code != ExitUnavailable || out != "" || errs != want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n%q\nwant\n%q", args, code, out, errs, want)
		}
	}
}

// Each class of error is said once, in its own words.
func TestErrorClassesReadAsOneSentence(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&storage.ReadOnlyError{Reason: "opened read-only"}, "refused, nothing changed: the store is read-only (opened read-only)"},
		{&storage.ReadOnlyError{Reason: "alice is a watcher (read-only) and cannot approve", Watcher: true},
			"refused, nothing changed: alice is a watcher (read-only) and cannot approve"},
		{&storage.UnavailableError{Op: "open", Reason: "cannot open x", Err: &storage.ReadOnlyError{Reason: "attempt to write"}},
			"store unavailable (open): cannot open x"},
		{&storeOpenError{err: &storage.UnavailableError{Op: "open", Reason: "cannot open x"}}, "store unavailable (open): cannot open x"},
	}
	for _, c := range cases {
		if code, msg := exitCode(c.err, time.Now()); code != ExitUnavailable || msg != c.want {
			t.Errorf("%#v: %d %q, want %q", c.err, code, msg, c.want)
		}
	}
}
