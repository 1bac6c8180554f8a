package config

// The system configuration file: the anchor of the trust settings. The
// user's configuration is found through --config, $APPROVE_TUI_CONFIG,
// $XDG_CONFIG_HOME or $HOME, all of which the agent sets (and the file
// itself the agent's user may write), so on the agent side it cannot be
// what decides whether signatures are checked. The system file is at a
// path fixed when the program is built, owned by root (or by an operators'
// user) and not writable by the user running: where it exists, its trust:
// section is in force on the agent side whatever the user's configuration
// says, as managed settings or sudoers are.

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// SystemConfigPath is the system configuration file. It is set when the
// program is built, never from the environment or a flag:
//
//	go build -ldflags "-X github.com/approve-tui/approve-tui/config.SystemConfigPath=/etc/approve-tui/config.yaml"
var SystemConfigPath = "/etc/approve-tui/config.yaml"

// systemKeys are the keys the system file takes, from System's tags.
var systemKeys = yamlKeys[System]()

// System is the system configuration file, read and checked.
type System struct {
	// Path is SystemConfigPath as it was read.
	Path string
	// Trust is its trust: section (mode off when it has none).
	Trust TrustConfig `yaml:"trust"`
}

// SystemError is a system configuration file that exists and cannot be
// relied on: its owner or mode, or those of a directory above it, let the
// user running change it, or it cannot be read. Where it exists the
// trust settings in force are its own, so this is never "no system file".
type SystemError struct {
	Path   string
	Reason string
}

func (e *SystemError) Error() string {
	return model.Sanitize(fmt.Sprintf("system configuration %s refused: %s; it decides whether run and the hooks check signatures, so nothing is let through until it is fixed: make it and every directory above it root's and writable by root only (chown root:root %s && chmod 644 %s)", e.Path, e.Reason, e.Path, e.Path), model.Line)
}

// LoadSystem reads the system configuration file at SystemConfigPath for
// side: nil, nil when there is none. A file that is there and fails
// side's ownership rules is a *SystemError; one with problems an *Error.
// It takes trust: only. The agent side's rules are the verifier's
// (trust.ReadFileForVerifier: owned by root or by another user than the
// one running, not writable by the user running, every directory above
// likewise); the operator side's those of its trust file
// (trust.LoadTrustFile: owned by root or the user running, writable by its
// owner only, every directory above likewise), so that operators may run
// as the user that owns it.
func LoadSystem(side Side) (*System, error) { return LoadSystemAt(SystemConfigPath, side) }

// LoadSystemAt is LoadSystem for the file at path.
func LoadSystemAt(path string, side Side) (*System, error) {
	if path == "" {
		return nil, nil
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, &SystemError{Path: path, Reason: fmt.Sprintf("cannot know whether it exists: %v", bare(err))}
	}
	var data []byte
	var err error
	if side == AgentSide {
		data, err = trust.ReadFileForVerifier(path, maxFileSize)
	} else {
		data, err = trust.ReadFileOwnedBy(path, maxFileSize, uint32(os.Geteuid()))
	}
	if err != nil {
		reason := err.Error()
		var te *trust.TrustFileError
		if errors.As(err, &te) {
			reason = te.Reason
			if te.Path != path {
				reason = te.Path + ": " + reason
			}
		}
		return nil, &SystemError{Path: path, Reason: reason}
	}
	return ParseSystem(path, data)
}

// ParseSystem validates data, the contents of the system file at path.
func ParseSystem(path string, data []byte) (*System, error) {
	l := newLoader(path)
	s := &System{Path: path, Trust: TrustConfig{Mode: trust.ModeOff}}
	if body := l.body(data); body != nil {
		l.object(body, part{what: "the system configuration", want: "a mapping with trust: only (the rest of the configuration belongs in the user's file)", read: map[string]func(entry) bool{
			"trust": func(e entry) bool { return l.trust(&s.Trust, e) },
		}}, s)
	}
	if err := l.problems(path); err != nil {
		return nil, err
	}
	return s, nil
}

// TrustOrigin is where the trust settings in force on a side come from.
type TrustOrigin struct {
	// Path is the file ("" for the defaults: no file).
	Path string
	// Line is where its trust: section starts (0: none).
	Line int
	// System: the system configuration file.
	System bool
}

// String is "PATH:LINE", "PATH", or "configuration" when there is no
// file.
func (o TrustOrigin) String() string {
	switch {
	case o.Path == "":
		return "configuration"
	case o.Line > 0:
		return fmt.Sprintf("%s:%d", o.Path, o.Line)
	}
	return o.Path
}

// Anchor puts the system configuration s (nil: none) under f: its trust
// section is then in force on the agent side, and on the operator side
// unless f has a trust: section of its own.
func (f *File) Anchor(s *System) { f.system = s }

// System is the system configuration f is anchored to (nil: none).
func (f *File) System() *System { return f.system }

// TrustFor is the trust section in force on side and where it comes from:
// the system file's on the agent side whenever there is one; on the
// operator side the user file's when it has a trust: section, else the
// system file's.
func (f *File) TrustFor(side Side) (TrustConfig, TrustOrigin) {
	if s := f.system; s != nil && (side == AgentSide || f.Trust.Line == 0) {
		return s.Trust, TrustOrigin{Path: s.Path, Line: s.Trust.Line, System: true}
	}
	return f.Trust, TrustOrigin{Path: f.Path, Line: f.Trust.Line}
}

// TrustWarning says how the user file's trust: section stands against the
// system file's on side ("" when there is nothing to say): on the agent
// side one that differs is ignored; on the operator side it is used, and
// differs from what run and the hooks verify with.
func (f *File) TrustWarning(side Side) string {
	s := f.system
	if s == nil || f.Trust.Line == 0 || sameTrust(f.Trust, s.Trust) {
		return ""
	}
	user := TrustOrigin{Path: f.Path, Line: f.Trust.Line}
	diff := trustDiff(f.Trust, s.Trust)
	if side == AgentSide {
		return fmt.Sprintf("%s: trust: (%s) is ignored here: the system configuration %s decides the trust settings of run, the hooks, submit and wait (%s)",
			user, diff, s.Path, trustText(s.Trust))
	}
	return fmt.Sprintf("%s: trust: (%s) differs from the system configuration %s (%s): this command uses the user file's, but run and the hooks verify with the system file's, and may refuse what is decided here",
		user, diff, s.Path, trustText(s.Trust))
}

// sameTrust reports whether two trust sections mean the same.
func sameTrust(a, b TrustConfig) bool {
	return a.Mode == b.Mode && a.AllowedSigners == b.AllowedSigners && a.Store == b.Store && slices.Equal(a.PolicySigners, b.PolicySigners) && maps.Equal(a.Users, b.Users)
}

// trustDiff says how user differs from sys, in words.
func trustDiff(user, sys TrustConfig) string {
	if user.Mode != sys.Mode {
		// Mode off says it all; the rest is not used.
		return "mode " + string(user.Mode)
	}
	var d []string
	if user.AllowedSigners != sys.AllowedSigners {
		if user.AllowedSigners == "" {
			d = append(d, "no trust file")
		} else {
			d = append(d, "another trust file, "+user.AllowedSigners)
		}
	}
	if user.Store != sys.Store {
		if user.Store == "" {
			d = append(d, "no store name")
		} else {
			d = append(d, "another store name, "+user.Store)
		}
	}
	if !slices.Equal(user.PolicySigners, sys.PolicySigners) {
		d = append(d, "other policy signers")
	}
	return strings.Join(d, ", ")
}

// trustText is a trust section in a few words.
func trustText(t TrustConfig) string {
	if t.Mode != trust.ModeRequired {
		if t.Line == 0 {
			return "no trust: section: mode off"
		}
		return "mode off"
	}
	s := "mode required, allowed_signers " + t.AllowedSigners
	if t.Store != "" {
		s += ", store " + t.Store
	}
	return s
}
