package trust

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/approve-tui/approve-tui/model"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// HashAlgorithm is the hash every signature made here uses. Verification
// also accepts sha256, which ssh-keygen -Y sign may be told to use.
const HashAlgorithm = sshsig.HashSHA512

// StatementSigner signs statements with one SSH key, held by an ssh-agent
// or read from an unencrypted key file.
type StatementSigner struct {
	signer ssh.Signer
	closer func() error
	agent  bool
}

// ErrAgent is wrapped by errors about reaching or choosing from an agent.
var ErrAgent = errors.New("ssh-agent")

// DialAgent connects to the ssh-agent at socket (the caller reads
// SSH_AUTH_SOCK; this package reads no environment) and picks its key with
// ChooseAgentKey. Close the signer to close the connection.
func DialAgent(socket, choose string) (*StatementSigner, error) {
	if socket == "" {
		return nil, fmt.Errorf("%w: no agent socket (is SSH_AUTH_SOCK set?)", ErrAgent)
	}
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot reach the agent at %s: %v", ErrAgent, model.Sanitize(socket, model.Line), model.Sanitize(unwrapOpError(err).Error(), model.Line))
	}
	s, err := AgentSigner(agent.NewClient(conn), choose)
	if err != nil {
		conn.Close()
		return nil, err
	}
	s.closer = conn.Close
	return s, nil
}

// AgentSigner picks a key from an agent already connected (a local one,
// or a client's forwarded agent over SSH). choose is empty (the agent must
// hold exactly one key), a fingerprint "SHA256:...", or a public key in
// authorized_keys form. Security-key keys (sk-ssh-ed25519@openssh.com,
// sk-ecdsa-sha2-nistp256@openssh.com) work as far as the agent does: the
// agent or its askpass asks for the touch while Sign waits.
func AgentSigner(ag agent.Agent, choose string) (*StatementSigner, error) {
	signers, err := ag.Signers()
	if err != nil {
		return nil, fmt.Errorf("%w: cannot list the agent's keys: %v", ErrAgent, err)
	}
	if len(signers) == 0 {
		return nil, fmt.Errorf("%w: the agent holds no keys (ssh-add one)", ErrAgent)
	}
	var want string
	if choose != "" {
		want = strings.TrimSpace(choose)
		if !strings.HasPrefix(want, "SHA256:") {
			pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(want))
			if err != nil {
				return nil, fmt.Errorf("%w: %q is neither a SHA256: fingerprint nor a public key", ErrAgent, clip(choose))
			}
			want = ssh.FingerprintSHA256(pk)
		}
	}
	var fps []string
	for _, s := range signers {
		fp := ssh.FingerprintSHA256(s.PublicKey())
		if want != "" && fp == want {
			return &StatementSigner{signer: s, agent: true}, nil
		}
		fps = append(fps, s.PublicKey().Type()+" "+fp)
	}
	if want != "" {
		return nil, fmt.Errorf("%w: the agent holds no key %s; it holds: %s", ErrAgent, model.Sanitize(want, model.Line), strings.Join(fps, ", "))
	}
	if len(signers) > 1 {
		return nil, fmt.Errorf("%w: the agent holds %d keys, choose one by fingerprint: %s", ErrAgent, len(signers), strings.Join(fps, ", "))
	}
	return &StatementSigner{signer: signers[0], agent: true}, nil
}

// KeyFileSigner reads an unencrypted OpenSSH (or PEM) private key file.
// An encrypted key is refused: load it into ssh-agent instead, so the
// passphrase is asked there and the key stays in the agent.
func KeyFileSigner(path string) (*StatementSigner, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %v", model.Sanitize(path, model.Line), unwrapPathError(err))
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("key file %s is encrypted: load it into ssh-agent (ssh-add %s) and sign through the agent", model.Sanitize(path, model.Line), model.Sanitize(path, model.Line))
		}
		return nil, fmt.Errorf("key file %s: %s", model.Sanitize(path, model.Line), model.Sanitize(err.Error(), model.Line))
	}
	return &StatementSigner{signer: signer}, nil
}

// NewStatementSigner wraps any ssh.Signer.
func NewStatementSigner(s ssh.Signer) *StatementSigner { return &StatementSigner{signer: s} }

// PublicKey is the key that signs.
func (s *StatementSigner) PublicKey() ssh.PublicKey { return s.signer.PublicKey() }

// Fingerprint is the key's SHA256:... fingerprint, as ssh-keygen -l prints it.
func (s *StatementSigner) Fingerprint() string { return ssh.FingerprintSHA256(s.signer.PublicKey()) }

// Sign signs the statement bytes (which must parse as a canonical
// statement) in the SSH signature format, namespace approve-tui, SHA-512,
// and returns the armored "-----BEGIN SSH SIGNATURE-----" text in the
// form ssh-keygen -Y sign writes (lines of 70), which ssh-keygen -Y
// verify accepts.
func (s *StatementSigner) Sign(statement []byte) ([]byte, error) {
	if _, err := ParseStatement(statement); err != nil {
		return nil, err
	}
	sig, err := sshsig.Sign(bytes.NewReader(statement), s.signer, HashAlgorithm, Namespace)
	if err != nil {
		if s.agent {
			return nil, fmt.Errorf("%w refused to sign with %s (not confirmed, not touched, or locked): %v", ErrAgent, s.Fingerprint(), err)
		}
		return nil, fmt.Errorf("signing with %s: %w", s.Fingerprint(), err)
	}
	return armor(sig.Marshal()), nil
}

// Close releases the agent connection, if any.
func (s *StatementSigner) Close() error {
	if s.closer != nil {
		return s.closer()
	}
	return nil
}

// unwrapOpError drops the *net.OpError wrapping, whose text repeats the
// socket path.
func unwrapOpError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err
		}
		return oe.Err
	}
	return err
}
