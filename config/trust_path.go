package config

// What a file's path must be for the file to be trusted, as OpenSSH's
// StrictModes asks of authorized_keys: whoever may write a directory on
// the way to a file may replace the file (rename, unlink, a new entry), so
// every directory from the file up to / must be writable by its owner
// only, and owned by the user running or root. A sticky directory
// writable by others (/tmp) is allowed when the entry below it on the way
// is owned by the user running: the sticky bit keeps others from
// replacing it. Symbolic links are followed as the open would follow
// them: both the path as written and the path it resolves to are checked
// (a link lives in the directory that holds it; its target in its own).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// checkPathDirs refuses path when a directory on the way to it, written
// or resolved, may be written by another user than uid or root. what
// names the file in messages ("config file /x/y").
func checkPathDirs(what, path string, uid int) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s: its directory cannot be known: %v", what, err)
	}
	abs = filepath.Clean(abs)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("%s: its path cannot be resolved: %v: refused (could not know who may replace the file)", what, bare(err))
	}
	for _, p := range []string{abs, real} {
		if err := checkDirChain(what, filepath.Dir(p), p, uid); err != nil {
			return err
		}
		if real == abs {
			break
		}
	}
	return nil
}

// checkDirChain checks dir, on the way to child, and every directory
// above it up to /, as written; and, when dir is or passes through a
// symbolic link, as resolved.
func checkDirChain(what, dir, child string, uid int) error {
	walk := func(dir, child string) error {
		for {
			if err := checkDir(what, dir, child, uid); err != nil {
				return err
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return nil
			}
			dir, child = parent, dir
		}
	}
	if err := walk(dir, child); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("%s: directory %s on its path cannot be resolved: %v: refused (could not know who may replace the file)", what, dir, bare(err))
	}
	if real == dir {
		return nil
	}
	return walk(real, filepath.Join(real, filepath.Base(child)))
}

// checkDir refuses dir, on the way to child, when another user may
// replace child in it.
func checkDir(what, dir, child string, uid int) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: directory %s on its path cannot be read: %v: refused (could not know who may replace the file)", what, dir, bare(err))
	}
	mode := fi.Mode()
	owner, ok := fileOwner(fi)
	if !ok {
		return nil // no owners on this system
	}
	if owner != uid && owner != 0 {
		return fmt.Errorf("%s: directory %s on its path is owned by %s, not by the user running (%s) or root (mode %04o): that user may replace the file: refused; move the file to a directory of yours, or chown %s %s",
			what, dir, userText(owner), userText(uid), mode.Perm(), userName(uid), dir)
	}
	if mode.Perm()&0o022 == 0 {
		return nil
	}
	if mode&os.ModeSticky != 0 {
		// Others may write, but not replace an entry they do not own.
		cfi, err := os.Lstat(child)
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: directory %s on its path may be written by others (mode %s, sticky): another user may create %s there: refused; keep it in a directory only you may write", what, dir, modeText(mode), child)
		}
		if err != nil {
			return fmt.Errorf("%s: %s cannot be read: %v: refused (could not know who may replace the file)", what, child, bare(err))
		}
		if co, ok := fileOwner(cfi); ok && co == uid {
			return nil
		}
		co, _ := fileOwner(cfi)
		return fmt.Errorf("%s: directory %s on its path may be written by others (mode %s, sticky, owned by %s) and %s in it is owned by %s, not by the user running (%s): another user may replace it: refused; keep the file in a directory of yours that only you may write (chmod 700)",
			what, dir, modeText(mode), userText(owner), child, userText(co), userText(uid))
	}
	return fmt.Errorf("%s: directory %s on its path may be written by %s (mode %04o, owned by %s): another user may replace the file: refused; chmod go-w %s, or move the file to a directory only you may write",
		what, dir, writers(mode.Perm()), mode.Perm(), userText(owner), dir)
}

// modeText is the permission bits with the sticky bit: 1777.
func modeText(m os.FileMode) string {
	v := uint32(m.Perm())
	if m&os.ModeSticky != 0 {
		v |= 0o1000
	}
	return fmt.Sprintf("%04o", v)
}

// writers says who besides the owner may write, from mode's bits.
func writers(mode os.FileMode) string {
	switch {
	case mode&0o022 == 0o022:
		return "its group and others"
	case mode&0o002 != 0:
		return "others"
	}
	return "its group"
}

// CheckTrustedFile refuses the file at path (what names it in messages)
// when another user than the one running or root owns it, when its group
// or others may write it, or when a directory on its way may be written
// by another user (checkPathDirs). With secret, its group and others may
// not read it either.
func CheckTrustedFile(what, path string, secret bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s cannot be read: %v", what, bare(err))
	}
	return checkTrustedFile(what, path, fi, os.Geteuid(), secret)
}

func checkTrustedFile(what, path string, fi os.FileInfo, uid int, secret bool) error {
	mode := fi.Mode().Perm()
	switch {
	case secret && mode&0o066 != 0:
		return fmt.Errorf("%s may be read or written by %s (mode %04o): refused; chmod 600 %s", what, groupOthers(mode&0o066), mode, path)
	case !secret && mode&0o022 != 0:
		return fmt.Errorf("%s may be written by %s (mode %04o): refused; chmod go-w %s", what, writers(mode), mode, path)
	}
	if owner, ok := fileOwner(fi); ok && owner != uid && owner != 0 {
		fix := "chmod go-w " + path
		if secret {
			fix = "chmod 600 " + path
		}
		return fmt.Errorf("%s is owned by %s, not by the user running (%s) or root: refused; make it yours: chown %s %s && %s",
			what, userText(owner), userText(uid), userName(uid), path, fix)
	}
	return checkPathDirs(what, path, uid)
}

// groupOthers says whose bits are set in mode: its group, others, or both.
func groupOthers(mode os.FileMode) string {
	switch {
	case mode&0o070 != 0 && mode&0o007 != 0:
		return "its group and others"
	case mode&0o007 != 0:
		return "others"
	}
	return "its group"
}

// ErrProgramNotFound: an exec channel's program is not where exec would
// look for it (its sender then says it cannot start).
var ErrProgramNotFound = errors.New("program not found")

// ResolveProgram is the file an exec channel's argv[0] runs, found as
// os/exec finds it (a name with a slash as is, else the first executable
// file of that name in an absolute $PATH directory: exec refuses relative
// ones), refused when another user may change what runs: the file is
// not the running user's or root's, or its group or others may write it,
// or a directory on its way may be written by another user, or a $PATH
// directory searched before it may be (another user could put a program
// of that name there). what names the channel in messages.
func ResolveProgram(what, name string) (string, error) {
	return resolveProgram(what, name, os.Getenv("PATH"), os.Geteuid())
}

func resolveProgram(what, name, pathEnv string, uid int) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%s: no program", what)
	}
	check := func(p string) (string, error) {
		fi, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("%s: program %s: %w", what, p, ErrProgramNotFound)
		}
		return p, checkTrustedFile(fmt.Sprintf("%s: program %s", what, p), p, fi, uid, false)
	}
	if strings.Contains(name, "/") {
		if _, err := exec.LookPath(name); err != nil {
			return "", fmt.Errorf("%s: program %s: %w", what, name, ErrProgramNotFound)
		}
		return check(name)
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // exec runs nothing found through a relative entry
		}
		p := filepath.Join(dir, name)
		if _, err := exec.LookPath(p); err == nil {
			return check(p)
		}
		// A directory that does not exist may be made by whoever may
		// write the nearest one that does.
		pdir, child := dir, p
		for {
			if _, err := os.Lstat(dir); err == nil || filepath.Dir(dir) == dir {
				break
			}
			dir, child = filepath.Dir(dir), dir
		}
		if err := checkDirChain(fmt.Sprintf("%s: $PATH directory %s, searched for %s before the program is found", what, pdir, name), dir, child, uid); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: program %s in $PATH: %w", what, name, ErrProgramNotFound)
}
