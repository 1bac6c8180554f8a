package tui

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/golden"
	"github.com/approve-tui/approve-tui/trust"
)

// Golden screens of a store that requires signatures, with keys made from
// fixed seeds (the fingerprints on screen are the same on every run).

// securityKey is a signer whose public key is a security key's
// (sk-ssh-ed25519@openssh.com): what the prompt says while such a key
// waits for its touch. It never signs.
type securityKey struct{ pub ssh.PublicKey }

func (k securityKey) PublicKey() ssh.PublicKey { return k.pub }
func (k securityKey) Sign(io.Reader, []byte) (*ssh.Signature, error) {
	return nil, errors.New("not touched")
}

func newSecurityKey(t testing.TB) securityKey {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, "touch")
	blob := ssh.Marshal(struct {
		Name        string
		Key         []byte
		Application string
	}{"sk-ssh-ed25519@openssh.com", ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), "ssh:"})
	pub, err := ssh.ParsePublicKey(blob)
	if err != nil {
		t.Fatal(err)
	}
	return securityKey{pub}
}

func TestGoldenSigned(t *testing.T) {
	scenarios := []struct {
		name    string
		signing func(r *trustRig) Signing
		run     func(t *testing.T, r *trustRig, m *Model)
	}{
		{"signed-votes", func(r *trustRig) Signing { return Signing{KeyFile: r.alice} }, func(t *testing.T, r *trustRig, m *Model) {
			id := r.ids["drop"]
			typeApproveOn(t, m, id)
			press(m, "enter")
			selectThenPress(t, m, id, "enter")
		}},
		{"approve-touch-security-key", func(r *trustRig) Signing { return Signing{KeyFile: r.alice} }, func(t *testing.T, r *trustRig, m *Model) {
			id := r.ids["drop"]
			typeApproveOn(t, m, id)
			m.Update(keyMsg("enter")) // the key is asked for; that command is not run
			m.Update(signerMsg{gen: m.signGen, id: id, key: &keySigner{signer: trust.NewStatementSigner(newSecurityKey(t))}})
		}},
		{"approve-no-agent", func(*trustRig) Signing { return AgentSocket("") }, func(t *testing.T, r *trustRig, m *Model) {
			id := r.ids["drop"]
			typeApproveOn(t, m, id)
			press(m, "enter")
		}},
		{"deny-unsigned", func(*trustRig) Signing { return AgentSocket("") }, func(t *testing.T, r *trustRig, m *Model) {
			openPromptOn(t, m, r.ids["drop"], "d")
			press(m, "enter")
		}},
	}
	for _, sc := range scenarios {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			name := fmt.Sprintf("%s-%dx%d", sc.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				r := trustRigWith(t, fixedKey)
				setSignedPolicy(t, r, "policy:\n  - match: {risk: high}\n    approvals: 3\n")
				signedVote(t, r, r.ids["drop"], r.bob, bob)
				m := signingConsole(t, r, sc.signing(r), nil)
				m.Update(windowSize(size[0], size[1]))
				m.View()
				sc.run(t, r, m)
				golden.Assert(t, name, m.View())
			})
		}
	}
}
