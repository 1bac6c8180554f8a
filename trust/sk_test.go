package trust

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// softSK is a software stand-in for a FIDO security key holding an
// sk-ssh-ed25519@openssh.com key: it signs as PROTOCOL.u2f says a token
// does (SHA-256 of the application, flags, counter, SHA-256 of the data),
// with the user-presence flag set or not. Verification of such signatures
// needs no hardware, so ssh-keygen -Y verify judges them for real.
type softSK struct {
	priv  ed25519.PrivateKey
	pub   ssh.PublicKey
	flags byte
}

func newSoftSK(t *testing.T, flags byte) *softSK {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wire := ssh.Marshal(struct {
		Type, Key, App string
	}{ssh.KeyAlgoSKED25519, string(pub), "ssh:"})
	pk, err := ssh.ParsePublicKey(wire)
	if err != nil {
		t.Fatal(err)
	}
	return &softSK{priv: priv, pub: pk, flags: flags}
}

func (s *softSK) PublicKey() ssh.PublicKey { return s.pub }

func (s *softSK) Sign(_ io.Reader, data []byte) (*ssh.Signature, error) {
	app := sha256.Sum256([]byte("ssh:"))
	msg := sha256.Sum256(data)
	var counter [4]byte
	binary.BigEndian.PutUint32(counter[:], 7)
	signed := append(append(append(app[:], s.flags), counter[:]...), msg[:]...)
	return &ssh.Signature{
		Format: ssh.KeyAlgoSKED25519,
		Blob:   ed25519.Sign(s.priv, signed),
		Rest:   append([]byte{s.flags}, counter[:]...),
	}, nil
}

func TestSecurityKeySignatures(t *testing.T) {
	needSSHKeygen(t)
	touched := newSoftSK(t, 0x01)
	untouched := newSoftSK(t, 0x00)
	authorized := func(k ssh.PublicKey) string {
		return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
	}
	trustPath := writeTrust(t, t.TempDir(), "alice "+authorized(touched.pub)+"\nbob "+authorized(untouched.pub)+"\n")
	as, err := LoadTrustFile(trustPath)
	if err != nil {
		t.Fatal(err)
	}

	st := sampleStatement("alice")
	stmt := mustEncode(t, st)
	sig, err := NewStatementSigner(touched).Sign(stmt)
	if err != nil {
		t.Fatal(err)
	}
	if err := osshVerify(t, trustPath, "alice", sig, stmt); err != nil {
		t.Fatalf("ssh-keygen refused a touched security-key signature: %v", err)
	}
	if _, err := Verify(sig, stmt, as, expectOf(st), time.Now()); err != nil {
		t.Fatalf("touched security-key signature: %v", err)
	}

	bst := sampleStatement("bob")
	bstmt := mustEncode(t, bst)
	bsig, err := NewStatementSigner(untouched).Sign(bstmt)
	if err != nil {
		t.Fatal(err)
	}
	// ssh-keygen -Y verify (OpenSSH 9.2) accepts it: allowed_signers has no
	// option that asks for presence. approve-tui is stricter: a decision
	// is a person's act, so a key that signed without a touch is refused.
	if err := osshVerify(t, trustPath, "bob", bsig, bstmt); err != nil {
		t.Fatalf("the signature itself should hold for ssh-keygen: %v", err)
	}
	if _, err := Verify(bsig, bstmt, as, expectOf(bst), time.Now()); ReasonOf(err) != ReasonNoTouch {
		t.Fatalf("untouched security-key signature: %v", err)
	}
}
