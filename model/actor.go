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
	SurfaceNotify   Surface = "notify"
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
	// Person is who the actor is when approvers are counted (an OS user,
	// whoever ran sudo): "" takes it from Name (policy.Person).
	Person string
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
	a := Actor{Surface: surface, Name: name + "@" + HostName(), Person: LocalPerson()}
	if a.Person != name {
		// Under sudo: the name says who ran it, as consumed_by records it.
		a.Name += " (as " + a.Person + ")"
	}
	if tty, err := os.Readlink("/proc/self/fd/0"); err == nil && (strings.HasPrefix(tty, "/dev/pts/") || strings.HasPrefix(tty, "/dev/tty")) {
		a.Detail = tty
	}
	return a
}

// EnvHost names the environment variable that sets the host name approve-tui
// records (actors, waiters, consoles): containers and autoscaled machines
// often have host names that say nothing, or the same one.
const EnvHost = "APPROVE_TUI_HOST"

// HostName is the name of this host as approve-tui records it: $APPROVE_TUI_HOST
// when set (its first line, without control characters), else the kernel's
// host name, else "localhost".
func HostName() string {
	if v := os.Getenv(EnvHost); v != "" {
		v, _, _ = strings.Cut(v, "\n")
		if v = strings.TrimSpace(Sanitize(v, Line)); v != "" {
			return v
		}
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// LocalPerson is the person running this process: the user who ran sudo
// when it runs as root under sudo ($SUDO_USER), else the OS user. Approvers
// are counted by person, so that one person counts once, whether or not
// they used sudo.
func LocalPerson() string {
	name := ""
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	if os.Geteuid() == 0 {
		if v := strings.TrimSpace(Sanitize(os.Getenv("SUDO_USER"), Line)); v != "" && v != "root" {
			name = v
		}
	}
	if name == "" {
		name = "unknown"
	}
	return name
}

// LocalOrigin is this process's person and host, as a proposal's Origin
// records them: "alice@laptop".
func LocalOrigin() string { return LocalPerson() + "@" + HostName() }
