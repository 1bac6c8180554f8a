package model

import (
	"errors"
	"os"
	"os/user"
	"strings"
)

// Surface is where a decision was made.
type Surface string

// The surfaces of SPEC §4.
const (
	SurfaceCLI      Surface = "cli"
	SurfaceTUI      Surface = "tui"
	SurfaceHeadless Surface = "headless"
	SurfaceSSH      Surface = "ssh"
	SurfaceRunner   Surface = "runner"
	SurfaceHook     Surface = "hook"
	SurfaceDemo     Surface = "demo"
	SurfaceSystem   Surface = "system"
)

// Actor is who asks for a transition: the operator (OS user and host, SSH
// user and key fingerprint, a script) and the surface they use. It goes into
// consumed_by and into every audit event.
type Actor struct {
	Surface Surface
	// Name identifies the person or program: "alice@host", an SSH user, or
	// "headless:demo.tape".
	Name string
	// Detail is extra context: a terminal, a key fingerprint, a pid.
	Detail string
	// ReadOnly marks a watcher: the decision path refuses every change it asks.
	ReadOnly bool
}

// String is the form stored in consumed_by: "alice@host via cli".
func (a Actor) String() string {
	if a.Surface == "" {
		return a.Name
	}
	return a.Name + " via " + string(a.Surface)
}

// Validate rejects an actor that names nobody.
func (a Actor) Validate() error {
	if strings.TrimSpace(a.Name) == "" {
		return errors.New("actor has no name")
	}
	return nil
}

// LocalActor names the OS user and host running this process, with the
// terminal (if any) as detail.
func LocalActor(surface Surface) Actor {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	a := Actor{Surface: surface, Name: name + "@" + host}
	if tty, err := os.Readlink("/proc/self/fd/0"); err == nil && (strings.HasPrefix(tty, "/dev/pts/") || strings.HasPrefix(tty, "/dev/tty")) {
		a.Detail = tty
	}
	return a
}
