package trust

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// FuzzParseStatement: whatever ParseStatement accepts is exactly its own
// canonical encoding.
func FuzzParseStatement(f *testing.F) {
	s := Statement{Store: "s1", Decision: DecisionVote, ApprovalID: "abc", PayloadSHA256: strings.Repeat("01", 32),
		Risk: RiskLow, Principal: "a@b", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	b, _ := s.Encode()
	f.Add(b)
	p := Statement{Store: "s1", Decision: DecisionPolicy, PolicySHA256: strings.Repeat("ef", 32), Principal: "root", Time: s.Time}
	pb, _ := p.Encode()
	f.Add(pb)
	f.Add([]byte("approve-tui-statement-v1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		st, err := ParseStatement(in)
		if err != nil {
			return
		}
		out, err := st.Encode()
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("accepted %q but re-encodes to %q (%v)", in, out, err)
		}
	})
}

// FuzzParseAllowedSigners: no input panics, and every error names a line.
func FuzzParseAllowedSigners(f *testing.F) {
	f.Add([]byte("alice ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDh7zUhKx5mNk0W2uS8yFhbb0FJZ4Dz6vPZrV8xKUZpC c\n"))
	f.Add([]byte(`a namespaces="x",valid-after="20240101" ssh-ed25519 AAAA` + "\n#\n\n"))
	f.Add([]byte("a cert-authority ssh-ed25519 AAAA\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, err := ParseAllowedSigners("f", in)
		if err != nil && !strings.HasPrefix(err.Error(), "f:") {
			t.Fatalf("error without FILE:LINE: %v", err)
		}
	})
}

// FuzzUnarmor: an armored signature is accepted only in its one form,
// the armour of its own blob, with nothing inside the signature beyond
// what its key type carries.
func FuzzUnarmor(f *testing.F) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	k, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		f.Fatal(err)
	}
	stmt, _ := Statement{Store: "s1", Decision: DecisionVote, ApprovalID: "abc", PayloadSHA256: strings.Repeat("01", 32),
		Risk: RiskLow, Principal: "a@b", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}.Encode()
	sig, err := NewStatementSigner(k).Sign(stmt)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sig)
	f.Add(append(append([]byte{}, sig...), "trailing\n"...))
	f.Add([]byte(armorBegin + "U1NIU0lH\n" + armorEnd))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := unarmor(in)
		if err != nil {
			if ReasonOf(err) != ReasonMalformed {
				t.Fatalf("unarmor refused with %v", err)
			}
			return
		}
		if out := armor(s.Marshal()); !bytes.Equal(out, in) {
			t.Fatalf("accepted %q, whose own armour is %q", in, out)
		}
		if k := s.PublicKey.Type(); k != ssh.KeyAlgoSKED25519 && k != ssh.KeyAlgoSKECDSA256 && len(s.Signature.Rest) != 0 {
			t.Fatalf("accepted %d bytes after a %s signature", len(s.Signature.Rest), k)
		}
	})
}
