package model

import (
	"errors"
	"os"
	"os/user"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
//
// Name and Detail are for people to read: they are displayed, never parsed.
// Who the actor is, where approvers are counted, is Person and Key alone,
// set only by the code that established them: LocalActor from the process's
// OS user, the SSH server from the key it verified.
type Actor struct {
	Surface Surface
	// Name names the person or program for display: "alice@host", an SSH
	// key's comment and fingerprint, or "headless:demo.tape".
	Name string
	// Detail is extra context: a terminal, a key fingerprint, a pid.
	Detail string
	// ReadOnly marks a watcher: the decision path refuses every change it asks.
	ReadOnly bool
	// Person is who the actor is when approvers are counted: the OS user
	// of the process (LocalPerson), or the person of the SSH key the server
	// verified. "" names nobody: such an actor cannot vote where a rule asks
	// for more than one approver.
	Person string
	// Key is the fingerprint (SHA256:…) of the SSH key the server verified
	// for this actor; "" for a local actor.
	Key string
	// Signature, when set, is the actor's signature over the decision it
	// asks for: written with the decision in its transaction, and, where
	// the store requires signatures, verified there first.
	Signature *Signature
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
// terminal (if any) as detail. Its Person is LocalPerson; under sudo its
// name says both: "root@host (as alice)".
func LocalActor(surface Surface) Actor {
	id := localIdentity(os.Getuid(), os.Getenv("SUDO_UID"), os.Getenv("SUDO_USER"))
	a := Actor{Surface: surface, Name: id.user + "@" + HostName(), Person: id.person}
	if id.person != id.user {
		a.Name += " (as " + id.person + ")"
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
// when set, else the kernel's host name, else "localhost". It is for display
// only, and never names a person; it is kept to letters, digits, '.', '-'
// and '_' (any other run of characters becomes one '-'), so that a host
// name cannot make a stored "user@host (as …) via …" read as another.
func HostName() string {
	if v := SafeHost(os.Getenv(EnvHost)); v != "" {
		return v
	}
	if h := SafeHost(func() string { h, _ := os.Hostname(); return h }()); h != "" {
		return h
	}
	return "localhost"
}

// maxHost bounds a host name as recorded (a DNS name's length).
const maxHost = 253

// SafeHost is s as a host name approve-tui records: its first line, letters,
// digits, '.', '-' and '_' kept, every other run of characters one '-', no
// '-' at either end, at most 253 bytes ("" when nothing is left).
func SafeHost(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	var b strings.Builder
	dash := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '_' {
			if r == '-' && dash {
				continue
			}
			b.WriteRune(r)
			dash = r == '-'
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	for len(out) > maxHost {
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	return strings.TrimRight(out, "-")
}

// LocalPerson is the person running this process, where approvers are
// counted, decided by the OS and never by a name the environment sets:
//
//   - the user of the process's real uid (its name in the user database,
//     else "uid:N" — never $USER);
//   - under sudo, the user who ran it: only when the real uid is 0 (root),
//     SUDO_UID names an existing user other than root, and SUDO_USER is that
//     user's name. Anything else in SUDO_UID or SUDO_USER is ignored: a
//     process that is not root cannot claim another person through them
//     (root can: who runs as root can also write the store).
func LocalPerson() string {
	return localIdentity(os.Getuid(), os.Getenv("SUDO_UID"), os.Getenv("SUDO_USER")).person
}

// identity is a process's OS user and the person it counts as.
type identity struct{ user, person string }

// localIdentity decides identity for a process of real uid uid, with the
// environment's SUDO_UID and SUDO_USER (see LocalPerson).
func localIdentity(uid int, sudoUID, sudoUser string) identity {
	name := userName(uid)
	id := identity{user: name, person: name}
	if uid != 0 || sudoUID == "" || sudoUser == "" {
		return id
	}
	n, err := strconv.Atoi(sudoUID)
	if err != nil || n <= 0 || strconv.Itoa(n) != sudoUID {
		return id
	}
	u, err := user.LookupId(sudoUID)
	if err != nil || u.Username == "" || u.Username != sudoUser {
		return id
	}
	id.person = safeUser(u.Username)
	return id
}

// userName is the user database's name for uid, else "uid:N".
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		if n := safeUser(u.Username); n != "" {
			return n
		}
	}
	return "uid:" + strconv.Itoa(uid)
}

// safeUser is a user name as approve-tui records it: the characters that
// could make a stored "user@host (as …) via …" ambiguous ('@', '(', ')',
// spaces, controls) become '_'.
func safeUser(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '@' || r == '(' || r == ')' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return '_'
		}
		return r
	}, s)
}

// LocalOrigin is this process's person and host, as a proposal's Origin
// records them for display: "alice@laptop". The store counts the submitter
// by the structured person of the actor that submitted, never by this text.
func LocalOrigin() string { return LocalPerson() + "@" + HostName() }
