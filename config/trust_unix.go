//go:build unix

package config

import (
	"os"
	"syscall"
)

// fileOwner is fi's owner's uid.
func fileOwner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
