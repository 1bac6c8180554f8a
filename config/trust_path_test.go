package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mkdirMode makes dir with mode, past the umask.
func mkdirMode(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeIn writes a file with mode in dir.
func writeIn(t *testing.T, dir, name, src string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantRefused(t *testing.T, what string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: taken", what)
		return
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err, w)
		}
	}
}

// A 0600 config file holding channels in a directory its group or others
// may write (without the sticky bit) is refused, naming the directory, its
// mode and owner and the fix; in a sticky one (as /tmp) it is taken when
// the file is the user's own. Without channels the file is taken anyway.
func TestLoadRefusesConfigInWritableDirectory(t *testing.T) {
	base := t.TempDir()
	for _, mode := range []os.FileMode{0o777, 0o775, 0o757} {
		dir := mkdirMode(t, filepath.Join(base, "m"+strings.TrimLeft(mode.String(), "-d")), mode)
		p := writeIn(t, dir, "config.yaml", trustChannels, 0o600)
		_, err := Load(p)
		wantRefused(t, mode.String(), err, "config file "+p, "directory "+dir+" on its path may be written by",
			"(mode 0"+fmtOctal(mode)+", owned by uid ", "chmod go-w "+dir)
		if _, err := Load(writeIn(t, dir, "plain.yaml", "open_hint: \"ssh x open {id}\"\n", 0o600)); err != nil {
			t.Errorf("%s: a file without channels: %v", mode, err)
		}
	}
	// A directory further up counts as much.
	up := mkdirMode(t, filepath.Join(base, "up"), 0o777)
	deep := mkdirMode(t, filepath.Join(up, "a", "b"), 0o700)
	_, err := Load(writeIn(t, deep, "config.yaml", trustChannels, 0o600))
	wantRefused(t, "a writable directory above", err, "directory "+up+" on its path may be written by its group and others (mode 0777")

	sticky := mkdirMode(t, filepath.Join(base, "sticky"), 0o777|os.ModeSticky)
	if _, err := Load(writeIn(t, sticky, "config.yaml", trustChannels, 0o600)); err != nil {
		t.Errorf("one's own file in a sticky directory: %v", err)
	}
	safe := mkdirMode(t, filepath.Join(base, "safe"), 0o755)
	if _, err := Load(writeIn(t, safe, "config.yaml", trustChannels, 0o600)); err != nil {
		t.Errorf("a file in a directory only its owner may write: %v", err)
	}
}

func fmtOctal(m os.FileMode) string {
	const digits = "01234567"
	v := uint32(m.Perm())
	return string([]byte{digits[v>>6&7], digits[v>>3&7], digits[v&7]})
}

// A symbolic link is checked where it lies and where it leads: a link in
// a directory others may write (they may replace it), and a link to a
// file in such a directory, are both refused.
func TestLoadChecksBothSidesOfASymlink(t *testing.T) {
	base := t.TempDir()
	safe := mkdirMode(t, filepath.Join(base, "safe"), 0o700)
	open := mkdirMode(t, filepath.Join(base, "open"), 0o777)

	target := writeIn(t, safe, "config.yaml", trustChannels, 0o600)
	link := filepath.Join(open, "config.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, err := Load(link)
	wantRefused(t, "a link in an open directory", err, "directory "+open+" on its path")

	target2 := writeIn(t, open, "real.yaml", trustChannels, 0o600)
	link2 := filepath.Join(safe, "linked.yaml")
	if err := os.Symlink(target2, link2); err != nil {
		t.Fatal(err)
	}
	_, err = Load(link2)
	wantRefused(t, "a link to a file in an open directory", err, "directory "+open+" on its path")

	// A directory reached through a link: the link's directory and the
	// real one are both checked.
	dirLink := filepath.Join(safe, "dirlink")
	if err := os.Symlink(open, dirLink); err != nil {
		t.Fatal(err)
	}
	_, err = Load(filepath.Join(dirLink, "real.yaml"))
	wantRefused(t, "through a linked directory", err, "directory ")
	okLink := filepath.Join(safe, "ok.yaml")
	if err := os.Symlink(target, okLink); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(okLink); err != nil {
		t.Errorf("a link between directories only their owner may write: %v", err)
	}
}

// As root (CI): a directory on the way owned by another user is refused,
// and in a sticky directory an entry another user owns is refused for
// anyone else (it could be swapped by its owner).
func TestLoadRefusesAnotherUsersDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root (tests run as root in CI)")
	}
	base := t.TempDir()
	theirs := mkdirMode(t, filepath.Join(base, "theirs"), 0o755)
	p := writeIn(t, theirs, "config.yaml", trustChannels, 0o600)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	wantRefused(t, "another user's directory", err, "directory "+theirs+" on its path is owned by uid 65534", "not by the user running (uid 0", "(mode 0755)")

	// A sticky directory: the entry below it is root's, the user running
	// (uid 1, daemon) is not root: root's entry cannot be replaced by
	// daemon, but the rule is the entry must be the user's own.
	sticky := mkdirMode(t, filepath.Join(base, "sticky"), 0o777|os.ModeSticky)
	q := writeIn(t, sticky, "config.yaml", trustChannels, 0o600)
	err = checkPathDirs("config file "+q, q, 1)
	wantRefused(t, "root's entry in a sticky directory, uid 1 running", err, "(mode 1777, sticky", q+" in it is owned by uid 0")
	if err := checkPathDirs("config file "+q, q, 0); err != nil {
		t.Errorf("one's own entry in a sticky directory: %v", err)
	}
}

// An exec channel's program: found as os/exec finds it, refused when
// another user may change what runs (the file, its directory, a $PATH
// directory searched before it); a program not found is left to the
// sender (it cannot start).
func TestResolveProgram(t *testing.T) {
	base := t.TempDir()
	bin := mkdirMode(t, filepath.Join(base, "bin"), 0o755)
	script := writeIn(t, bin, "page-me", "#!/bin/sh\nexit 0\n", 0o755)
	uid := os.Geteuid()

	if p, err := resolveProgram("channel desk (exec)", script, "", uid); err != nil || p != script {
		t.Errorf("a program in a safe directory: %q %v", p, err)
	}
	if p, err := resolveProgram("channel desk (exec)", "page-me", "relative:"+bin, uid); err != nil || p != script {
		t.Errorf("found in $PATH: %q %v", p, err)
	}
	// The program itself writable by others.
	loose := writeIn(t, bin, "loose", "#!/bin/sh\nexit 0\n", 0o777)
	_, err := resolveProgram("channel desk (exec)", loose, "", uid)
	wantRefused(t, "a program others may write", err, "channel desk (exec): program "+loose+" may be written by its group and others (mode 0777)", "chmod go-w "+loose)

	// In a directory others may write.
	open := mkdirMode(t, filepath.Join(base, "open"), 0o777)
	inOpen := writeIn(t, open, "page-me", "#!/bin/sh\nexit 0\n", 0o755)
	_, err = resolveProgram("channel desk (exec)", inOpen, "", uid)
	wantRefused(t, "a program in an open directory", err, "directory "+open+" on its path may be written by its group and others (mode 0777")
	_, err = resolveProgram("channel desk (exec)", "page-me", open, uid)
	wantRefused(t, "found through $PATH in an open directory", err, "directory "+open)

	// A $PATH directory others may write, searched before the program's:
	// they could put a page-me there.
	empty := mkdirMode(t, filepath.Join(base, "empty"), 0o777)
	_, err = resolveProgram("channel desk (exec)", "page-me", empty+":"+bin, uid)
	wantRefused(t, "an open $PATH directory before", err, "$PATH directory "+empty+", searched for page-me before the program is found")
	if p, err := resolveProgram("channel desk (exec)", "page-me", bin+":"+empty, uid); err != nil || p != script {
		t.Errorf("an open $PATH directory after the program's: %q %v", p, err)
	}
	// A $PATH directory that does not exist, in one others may write.
	_, err = resolveProgram("channel desk (exec)", "page-me", filepath.Join(empty, "later", "bin")+":"+bin, uid)
	wantRefused(t, "a missing $PATH directory others may make", err, "directory "+empty)

	// Not found at all: ErrProgramNotFound, for the sender to report.
	if _, err := resolveProgram("channel desk (exec)", "no-such-program", bin, uid); !errors.Is(err, ErrProgramNotFound) {
		t.Errorf("not found: %v", err)
	}

	// Load refuses the file that names an untrusted program, takes a
	// missing one.
	cfgDir := mkdirMode(t, filepath.Join(base, "cfg"), 0o700)
	p := writeIn(t, cfgDir, "config.yaml", "channels:\n  desk: {type: exec, command: ["+inOpen+", x]}\n", 0o600)
	_, err = Load(p)
	wantRefused(t, "Load", err, "config file "+p+": channel desk (exec): program "+inOpen, "directory "+open)
	p = writeIn(t, cfgDir, "missing.yaml", "channels:\n  desk: {type: exec, command: ["+filepath.Join(bin, "absent")+"]}\n", 0o600)
	if _, err := Load(p); err != nil {
		t.Errorf("a missing program: %v", err)
	}

	if uid != 0 {
		t.Skip("another user's program needs root to chown it (tests run as root in CI)")
	}
	theirs := writeIn(t, bin, "theirs", "#!/bin/sh\nexit 0\n", 0o755)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err = resolveProgram("channel desk (exec)", theirs, "", uid)
	wantRefused(t, "another user's program", err, "program "+theirs+" is owned by uid 65534", "chown root "+theirs)
}

// A secret file: only its owner may read or write it, its owner is the
// user running or root, and no other user may replace it.
func TestSecretFileTrust(t *testing.T) {
	base := t.TempDir()
	safe := mkdirMode(t, filepath.Join(base, "safe"), 0o700)
	good := writeIn(t, safe, "token", "s3cr3t-value\n", 0o600)
	if v, err := (Secret{File: good}).Resolve(); err != nil || v != "s3cr3t-value" {
		t.Errorf("a 0600 secret file: %q %v", v, err)
	}
	for mode, who := range map[os.FileMode]string{0o644: "its group and others", 0o640: "its group", 0o604: "others", 0o620: "its group", 0o602: "others", 0o666: "its group and others"} {
		p := writeIn(t, safe, "t"+fmtOctal(mode), "s3cr3t-value\n", mode)
		_, err := (Secret{File: p}).Resolve()
		wantRefused(t, "mode "+fmtOctal(mode), err, "secret file "+p+" may be read or written by "+who+" (mode 0"+fmtOctal(mode)+"): refused; chmod 600 "+p)
	}
	open := mkdirMode(t, filepath.Join(base, "open"), 0o777)
	swapped := writeIn(t, open, "token", "s3cr3t-value\n", 0o600)
	_, err := (Secret{File: swapped}).Resolve()
	wantRefused(t, "in an open directory", err, "secret file "+swapped+": directory "+open+" on its path may be written by its group and others (mode 0777")
	st := (Secret{File: swapped}).Status()
	if st.OK || strings.Contains(st.String(), "s3cr3t") {
		t.Errorf("status: %+v", st)
	}
	if os.Geteuid() != 0 {
		t.Skip("another user's secret file needs root to chown it (tests run as root in CI)")
	}
	theirs := writeIn(t, safe, "theirs", "s3cr3t-value\n", 0o600)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err = (Secret{File: theirs}).Resolve()
	wantRefused(t, "another user's", err, "secret file "+theirs+" is owned by uid 65534", "chown root "+theirs+" && chmod 600 "+theirs)
	if err := os.Chown(theirs, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := (Secret{File: theirs}).Resolve(); err != nil {
		t.Errorf("root's: %v", err)
	}
}
