//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package termbg

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// Dark says whether the background of the terminal on in and out is dark:
// what COLORFGBG says, else the terminal's answer to one query (Query)
// read for at most timeout, else Default. It asks nothing of a dumb
// terminal, of a terminal that is not in and out both, or from a process
// in the background (reading the terminal would stop it). asked says
// whether the query was written: an answer that comes after timeout
// arrives as input.
func Dark(in, out *os.File, getenv func(string) string, timeout time.Duration) (dark, asked bool) {
	if d, ok := FromEnv(getenv); ok {
		return d, false
	}
	if getenv("TERM") == "dumb" || in == nil || out == nil {
		return Default, false
	}
	inFd, outFd := int(in.Fd()), int(out.Fd())
	if !term.IsTerminal(inFd) || !term.IsTerminal(outFd) {
		return Default, false
	}
	if pgrp, err := unix.IoctlGetInt(inFd, unix.TIOCGPGRP); err != nil || pgrp != unix.Getpgrp() {
		return Default, false
	}
	state, err := term.MakeRaw(inFd)
	if err != nil {
		return Default, false
	}
	defer term.Restore(inFd, state) //nolint:errcheck
	if _, err := out.WriteString(Query); err != nil {
		return Default, false
	}
	b, _ := readReply(inFd, timeout)
	if d, ok := ParseReply(b); ok {
		return d, true
	}
	return Default, true
}

// readReply reads fd until it holds the cursor position report or timeout
// has passed.
func readReply(fd int, timeout time.Duration) ([]byte, error) {
	deadline := time.Now().Add(timeout)
	var b []byte
	buf := make([]byte, 256)
	for !replied(b) && len(b) < 4096 {
		left := time.Until(deadline)
		if left <= 0 {
			return b, errors.New("no answer in time")
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return b, err
		}
		if n == 0 {
			continue // the deadline check above ends it
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 && fds[0].Revents&unix.POLLIN == 0 {
			return b, errors.New("terminal closed")
		}
		r, err := unix.Read(fd, buf)
		if r > 0 {
			b = append(b, buf[:r]...)
		}
		if err != nil && err != unix.EINTR && err != unix.EAGAIN {
			return b, err
		}
		if r == 0 && err == nil {
			return b, errors.New("terminal closed")
		}
	}
	return b, nil
}
