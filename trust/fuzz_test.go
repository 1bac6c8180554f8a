package trust

import (
	"bytes"
	"strings"
	"testing"
	"time"
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
