package config

// The trust: section: where the trust file of signed approvals is, who
// may sign a policy, and whether signatures are required.
//
//	trust:
//	  mode: required                     # or off; required when allowed_signers is set
//	  allowed_signers: /etc/approve-tui/allowed_signers
//	  policy_signers: [alice, bob]
//	  store: prod-approvals              # the store identity statements name

import (
	"fmt"
	"maps"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/trust"
)

// The keys of the trust: section, from TrustConfig's tags.
var trustKeys = yamlKeys[TrustConfig]()

// TrustConfig is the file's trust: section as written (checked, paths
// absolute); TrustSettings loads the trust file it names.
type TrustConfig struct {
	// Mode is trust.ModeRequired or trust.ModeOff: as the file says, else
	// required when AllowedSigners is set, off otherwise.
	Mode trust.Mode `yaml:"mode"`
	// AllowedSigners is the trust file (OpenSSH allowed_signers format),
	// absolute ("" when not set).
	AllowedSigners string `yaml:"allowed_signers" config:"file"`
	// PolicySigners are the principals whose signature puts a policy in
	// force.
	PolicySigners []string `yaml:"policy_signers" config:"principals"`
	// Store is the store identity statements name ("": the store's
	// default identity).
	Store string `yaml:"store" config:"store"`
	// Users maps OS user names to the principal each signs as, where the
	// two differ: a proposal of an agent running as the user is never
	// approved by that principal.
	Users map[string]string `yaml:"users"`
	// Line is where the section starts (0: no section).
	Line int
}

// Side says which side of approve-tui loads the trust file: the
// operators' (approve, deny, policy, the console, serve, show, audit),
// which sign, or the agent's (run and the hooks), which verify before
// letting a command through and run as the user the agent runs as.
type Side int

const (
	// OperatorSide: the trust file must be changeable by root or the user
	// running only.
	OperatorSide Side = iota
	// AgentSide: the trust file must not be changeable by the user running
	// (the agent's), unless that user is root: a file the agent can
	// rewrite names whoever the agent likes.
	AgentSide
)

// String names the side in messages.
func (s Side) String() string {
	if s == AgentSide {
		return "agent side"
	}
	return "operator side"
}

// trust decodes trust: into t. Without a mode, the mode is required when
// allowed_signers is set, off otherwise; required needs allowed_signers.
func (l *loader) trust(t *TrustConfig, e entry) bool {
	*t = TrustConfig{Line: line(e.key)}
	_, ok, good := l.object(e.val, part{what: "trust", prefix: "trust: ", inFile: true, want: "a mapping (" + strings.Join(trustKeys, ", ") + ")", read: map[string]func(entry) bool{
		"users": func(ue entry) bool {
			var good bool
			t.Users, good = decodeNamed[string](l, ue, "trust: users", "a mapping of OS user names to the principal each signs as, such as {asmith: alice}", kindPrincipal,
				func(name string) string {
					if storeName(name) != "" || name == "" {
						return "is not a user name; want an OS user name such as asmith"
					}
					return ""
				})
			return good
		},
	}}, t)
	if !ok {
		*t = TrustConfig{Mode: trust.ModeOff}
		return false
	}
	switch {
	case t.Mode == "" && t.AllowedSigners != "":
		t.Mode = trust.ModeRequired
	case t.Mode == "":
		t.Mode = trust.ModeOff
	case t.Mode == trust.ModeRequired && t.AllowedSigners == "" && good:
		l.add(l.at[&t.Mode].at(), "trust: mode: required needs allowed_signers: the trust file (OpenSSH allowed_signers format) that names whose keys may sign")
		good = false
	}
	return good
}

// plainPrincipal says why p cannot be a signing principal ("": it can):
// 1 to 256 bytes of visible ASCII, no pattern or list characters.
func plainPrincipal(p string) string {
	if why := storeName(p); why != "" {
		return why
	}
	if i := strings.IndexAny(p, ",*?!\"'\\"); i >= 0 {
		return fmt.Sprintf("has %q: a principal is a plain name, not a pattern or a list", p[i])
	}
	return ""
}

// storeName says why s cannot be a field of a statement ("": it can).
func storeName(s string) string {
	if len(s) > 256 {
		return "is longer than 256 bytes"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return fmt.Sprintf("has byte 0x%02x: only visible ASCII, no spaces", c)
		}
	}
	return ""
}

// TrustRequired reports whether the file asks for signatures.
func (f *File) TrustRequired() bool { return f != nil && f.Trust.Mode == trust.ModeRequired }

// TrustSettings is the trust configuration in force on side (TrustFor:
// the system file's where it decides), the trust file loaded for side:
// nil, nil when the mode is off. storeIdentity is the store's default
// identity (storage.DefaultIdentity of the store opened), used when the
// file names no store. A trust file that cannot be read, is malformed, or
// may be changed by whom side does not allow is an error: where
// signatures are required, not knowing whose keys count is never "no
// signatures needed".
func (f *File) TrustSettings(storeIdentity string, side Side) (*trust.Settings, error) {
	tc, origin := f.TrustFor(side)
	if tc.Mode != trust.ModeRequired {
		return nil, nil
	}
	path := tc.AllowedSigners
	var (
		signers *trust.AllowedSigners
		err     error
	)
	if side == AgentSide {
		signers, err = trust.LoadTrustFileForVerifier(path)
	} else {
		signers, err = trust.LoadTrustFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: trust: allowed_signers (%s): %s", origin, side, model.Sanitize(err.Error(), model.Line))
	}
	store := tc.Store
	if store == "" {
		store = storeIdentity
	}
	if store == "" {
		return nil, fmt.Errorf("%s: trust: no store identity to sign for: set trust: store", origin)
	}
	return &trust.Settings{
		Mode:          trust.ModeRequired,
		Path:          path,
		Signers:       signers,
		PolicySigners: append([]string(nil), tc.PolicySigners...),
		Store:         store,
		Users:         maps.Clone(tc.Users),
	}, nil
}
