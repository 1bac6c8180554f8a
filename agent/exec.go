package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/term"
)

// started is a command that is running.
type started struct {
	cmd *exec.Cmd
}

// startCommand starts cmd. The error is a failure to start (not found, not
// executable, fork failed): the command did not run.
func startCommand(cmd *exec.Cmd) (*started, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &started{cmd: cmd}, nil
}

// wait forwards the signals that arrive on sigs to the command until it
// ends, then returns its exit code (128+N when signal N killed it, as
// shells report it) and the outcome in words: "exit code N" or
// "killed by signal SIGTERM".
//
// SIGINT is not forwarded when the command shares a terminal's foreground
// process group with this process: the terminal already delivered the
// keyboard's interrupt to the whole group, and a second copy would look
// like a second Ctrl-C.
func (p *started) wait(sigs <-chan os.Signal, skipSIGINT bool) (int, string) {
	done := make(chan struct{})
	fwd := make(chan struct{})
	go func() {
		defer close(fwd)
		for {
			select {
			case <-done:
				return
			case sig, ok := <-sigs:
				if !ok {
					sigs = nil
					continue
				}
				if sig == syscall.SIGINT && skipSIGINT {
					continue
				}
				_ = p.cmd.Process.Signal(sig)
			}
		}
	}()
	_ = p.cmd.Wait() // the outcome is in ProcessState
	close(done)
	<-fwd
	return exitStatus(p.cmd.ProcessState)
}

// exitStatus is a finished process's exit code and outcome in words.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return 1, "ended, status unknown"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		return 128 + int(sig), "killed by signal " + signalName(sig)
	}
	code := ps.ExitCode()
	return code, fmt.Sprintf("exit code %d", code)
}

// signalName is the conventional name of the signals the runner deals with
// (SIGINT, SIGTERM...), or the signal's own description.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	if s, ok := sig.(syscall.Signal); ok {
		return fmt.Sprintf("%d (%s)", int(s), s.String())
	}
	return sig.String()
}

// startFailureCode is the exit code for a command that could not be
// started, as shells use them: 127 not found, 126 found but not runnable.
func startFailureCode(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return ExitNotFound
	}
	return ExitCannotRun
}

// inForegroundOfTerminal reports whether f is a terminal whose foreground
// process group is this process's group: then a child started without a
// group of its own receives the keyboard's signals directly.
func inForegroundOfTerminal(f *os.File) bool {
	if f == nil || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	var pgrp int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGPGRP), uintptr(unsafe.Pointer(&pgrp))); e != 0 {
		return false
	}
	return int(pgrp) == syscall.Getpgrp()
}
