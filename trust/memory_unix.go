//go:build unix

package trust

import (
	"fmt"
	"os"
	"syscall"
)

// lockMemory takes an exclusive lock on the memory file's lock file
// (path + ".lock", mode 0600), so that two surfaces of one operator that
// remember a policy at once do not lose one of the two; unlock releases
// it.
func lockMemory(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the policy memory %s cannot be written (cannot lock it: %s): nothing is signed until it can be", sanitize(path), sanitize(err.Error()))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("the policy memory %s cannot be written (cannot lock it: %s): nothing is signed until it can be", sanitize(path), sanitize(err.Error()))
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
