//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris)

package termbg

import (
	"os"
	"time"
)

// Dark says whether the terminal's background is dark: what COLORFGBG
// says, else Default. It asks the terminal nothing on this system.
func Dark(in, out *os.File, getenv func(string) string, timeout time.Duration) (dark, asked bool) {
	if d, ok := FromEnv(getenv); ok {
		return d, false
	}
	return Default, false
}
