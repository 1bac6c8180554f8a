package trust

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"golang.org/x/crypto/ssh"
)

// Mode is how strictly approve-tui asks for signatures.
type Mode string

// The modes of the trust configuration.
const (
	// ModeRequired: every approve, vote, deny and policy set must be
	// signed by a key of the trust file, and nothing runs without enough
	// valid signatures. The default where a trust file is configured.
	ModeRequired Mode = "required"
	// ModeOff: no signature is asked for or checked (one person on a
	// laptop). The default where no trust file is configured.
	ModeOff Mode = "off"
)

// Settings is the trust configuration in force for one process, loaded
// and checked: what every surface signs with and every verifier checks
// against. A nil *Settings is mode off.
type Settings struct {
	Mode Mode
	// Path is the trust file (allowed_signers format) Signers was read
	// from.
	Path string
	// Signers is the trust file, parsed.
	Signers *AllowedSigners
	// PolicySigners are the principals whose signature puts a policy in
	// force.
	PolicySigners []string
	// Store is the store identity every statement names: the operator's
	// configured name, or the store's own default (its absolute path, or
	// its PostgreSQL database and schema). Never read from a row.
	Store string
	// Users maps OS user names to the principal each signs as, where the
	// two differ (the configuration's trust: users).
	Users map[string]string
}

// PrincipalsOfUsers are the principals the OS users named sign as: each
// name itself, and the principal Users maps it to. A verifier leaves them
// all out of a proposal its own user's agent made.
func (s *Settings) PrincipalsOfUsers(names []string) []string {
	out := append([]string(nil), names...)
	if s == nil {
		return out
	}
	for _, n := range names {
		if p, ok := s.Users[n]; ok && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Required reports whether s asks for signatures.
func (s *Settings) Required() bool { return s != nil && s.Mode == ModeRequired }

// PolicySigner reports whether principal may sign a policy.
func (s *Settings) PolicySigner(principal string) bool {
	if s == nil || principal == "" {
		return false
	}
	for _, p := range s.PolicySigners {
		if p == principal {
			return true
		}
	}
	return false
}

// PrincipalOf is the one principal the trust file names for key: the
// name a signature by key is made and counted under. ParseAllowedSigners
// guarantees one plain principal per line and one principal per key, so
// it is the first line's; a key on no line has none, and the error says
// which line to add.
func (s *Settings) PrincipalOf(key ssh.PublicKey) (string, error) {
	if s == nil || s.Signers == nil {
		return "", fmt.Errorf("no trust file is configured")
	}
	want := key.Marshal()
	for _, sg := range s.Signers.Signers {
		if sg.Key != nil && bytes.Equal(sg.Key.Marshal(), want) {
			return sg.Principals, nil
		}
	}
	fp := ssh.FingerprintSHA256(key)
	return "", fmt.Errorf("key %s is not in the trust file %s: ask whoever keeps it to add a line \"PRINCIPAL %s\"", fp, model.Sanitize(s.Path, model.Line), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))))
}

// SignDecision completes st for signer under s (the store identity, the
// principal the trust file names for the signer's key, the time when
// unset), signs it, and returns it as the decision path carries it.
func (s *Settings) SignDecision(signer *StatementSigner, st Statement, now time.Time) (*model.Signature, error) {
	if s == nil {
		return nil, fmt.Errorf("no trust configuration: nothing to sign for")
	}
	principal, err := s.PrincipalOf(signer.PublicKey())
	if err != nil {
		return nil, err
	}
	st.Store, st.Principal = s.Store, principal
	if st.Time.IsZero() {
		st.Time = now
	}
	b, err := st.Encode()
	if err != nil {
		return nil, err
	}
	armored, err := signer.Sign(b)
	if err != nil {
		return nil, err
	}
	return &model.Signature{Principal: principal, Key: signer.Fingerprint(), Statement: b, Armored: string(armored)}, nil
}

// NeedsTouch reports whether key is a security key (sk-...@openssh.com),
// which signs only after the user touches it: a surface says so before it
// waits for the signature.
func NeedsTouch(key ssh.PublicKey) bool {
	return key != nil && strings.HasPrefix(key.Type(), "sk-")
}
