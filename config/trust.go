package config

// A configuration file that holds channels says which programs run (exec)
// and where pages, and the secrets they carry, go: whoever may write it
// may run code as the notifier and read its secrets. Such a file is
// refused unless only its owner may write it, and its owner is the user
// running approve-tui or root.

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
)

// checkTrust refuses fi, the file at path, when it holds channels and
// another user could change it. uid is the user running.
func checkTrust(path string, fi os.FileInfo, uid int) error {
	mode := fi.Mode().Perm()
	if mode&0o022 != 0 {
		return fmt.Errorf("config file %s holds channels (the programs the notifier runs, where pages and their secrets go) and %s may write it (mode %04o): refused; make it writable by its owner only: chmod 600 %s",
			path, writers(mode), mode, path)
	}
	owner, ok := fileOwner(fi)
	if !ok {
		return nil // no owner to check on this system
	}
	if owner != uid && owner != 0 {
		return fmt.Errorf("config file %s holds channels (the programs the notifier runs, where pages and their secrets go) and is owned by %s, not by the user running (%s) or root: refused; make it yours: chown %s %s && chmod 600 %s",
			path, userText(owner), userText(uid), userName(uid), path, path)
	}
	return nil
}

// userText is "uid 1000 (alice)", or "uid 1000" when the name is unknown.
func userText(uid int) string {
	if n := userName(uid); n != strconv.Itoa(uid) {
		return fmt.Sprintf("uid %d (%s)", uid, n)
	}
	return fmt.Sprintf("uid %d", uid)
}

// userName is uid's login name, else the number.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return strconv.Itoa(uid)
}
