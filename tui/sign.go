package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/approve-tui/approve-tui/approvals"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/policy"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// Signing is where the console's decisions get their signatures when the
// store requires them (storage.Store.Trust): the operator's ssh-agent, or
// a key file. The caller decides it once, at start (the local console from
// $SSH_AUTH_SOCK, an SSH session from the client's forwarded agent); the
// console reads no environment.
type Signing struct {
	// Agent connects to the agent that holds the operator's key, for one
	// signature; the closer ends that connection. Nil: there is none.
	Agent func() (agent.Agent, io.Closer, error)
	// Missing says what to do when Agent is nil and there is no KeyFile
	// ("connect with ssh -A so your key can sign").
	Missing string
	// KeyFile, when set, signs with this unencrypted private key file
	// instead of an agent.
	KeyFile string
	// PolicyMemory is the operator's own file in which the newest signed
	// policy seen in force is kept per store (trust.CheckPolicyMemory):
	// an approval is not signed against an older one. "" keeps none.
	PolicyMemory string
}

// AgentSocket is the signing of a local console: the ssh-agent listening at
// socket (the caller's $SSH_AUTH_SOCK, read once), or none when it is "".
func AgentSocket(socket string) Signing {
	if socket == "" {
		return Signing{Missing: "no ssh-agent (SSH_AUTH_SOCK is not set): start one, ssh-add your key, and open the console again"}
	}
	return Signing{Agent: func() (agent.Agent, io.Closer, error) {
		conn, err := net.DialTimeout("unix", socket, 5*time.Second)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot reach the ssh-agent at %s (SSH_AUTH_SOCK): %v", socket, err)
		}
		return agent.NewClient(conn), conn, nil
	}}
}

// keySigner is a key ready to sign one decision, and what to close after.
type keySigner struct {
	signer *trust.StatementSigner
	closer io.Closer
}

func (k *keySigner) close() {
	if k == nil {
		return
	}
	if k.signer != nil {
		_ = k.signer.Close()
	}
	if k.closer != nil {
		_ = k.closer.Close()
	}
}

// openSigner finds the key that signs for the operator: the key file, or
// the one key of the agent that the trust file names. An agent holding
// several keys the trust file knows is an error (which one is meant cannot
// be guessed); so is one holding none.
func openSigner(sg Signing, ts *trust.Settings) (*keySigner, error) {
	if sg.KeyFile != "" {
		s, err := trust.KeyFileSigner(sg.KeyFile)
		if err != nil {
			return nil, err
		}
		if _, err := ts.PrincipalOf(s.PublicKey()); err != nil {
			return nil, err
		}
		return &keySigner{signer: s}, nil
	}
	if sg.Agent == nil {
		msg := sg.Missing
		if msg == "" {
			msg = "no key to sign with: this console was started without an ssh-agent or a key file"
		}
		return nil, errors.New(msg)
	}
	ag, closer, err := sg.Agent()
	if err != nil {
		return nil, err
	}
	k := &keySigner{closer: closer}
	s, err := ChooseAgentKey(ag, ts)
	if err != nil {
		k.close()
		return nil, err
	}
	k.signer = s
	return k, nil
}

// ChooseAgentKey picks the agent's key that the trust file names a
// principal for: the only one. With none, the error says which keys the
// agent holds and what to do; with several, it lists them.
func ChooseAgentKey(ag agent.Agent, ts *trust.Settings) (*trust.StatementSigner, error) {
	keys, err := ag.List()
	if err != nil {
		return nil, fmt.Errorf("the ssh-agent cannot list its keys: %v", err)
	}
	if len(keys) == 0 {
		return nil, errors.New("the ssh-agent holds no keys: ssh-add the key the trust file names for you")
	}
	var known []string
	var firstErr error
	for _, k := range keys {
		pk, err := ssh.ParsePublicKey(k.Blob)
		if err != nil {
			continue
		}
		p, err := ts.PrincipalOf(pk)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		known = append(known, ssh.FingerprintSHA256(pk)+" ("+p+")")
	}
	switch {
	case len(known) == 1:
		fp, _, _ := strings.Cut(known[0], " ")
		return trust.AgentSigner(ag, fp)
	case len(known) > 1:
		return nil, fmt.Errorf("the ssh-agent holds %d keys the trust file knows (%s): keep one of them in this agent", len(known), strings.Join(known, ", "))
	case len(keys) == 1 && firstErr != nil:
		return nil, firstErr
	}
	path := ""
	if ts != nil {
		path = " " + ts.Path
	}
	return nil, fmt.Errorf("none of the ssh-agent's %d keys is in the trust file%s: ask whoever keeps it to add yours", len(keys), path)
}

// shortKey is a fingerprint as the console shows it: "SHA256:" and its
// first ten characters.
func shortKey(fp string) string {
	fp = model.Sanitize(fp, model.Line)
	const keep = len("SHA256:") + 10
	if len(fp) <= keep {
		return fp
	}
	return fp[:keep] + "…"
}

// signedBy is how an outcome names a signature: "alice SHA256:ab12…".
func signedBy(sig *model.Signature) string {
	return model.Sanitize(sig.Principal, model.Line) + " " + shortKey(sig.Key)
}

type (
	// signerMsg: the key that will sign (or why there is none).
	signerMsg struct {
		gen int
		id  string
		key *keySigner
		err error
	}
	// signedMsg: the signature made over a decision (or why not).
	signedMsg struct {
		gen int
		id  string
		sig *model.Signature
		err error
	}
)

// findSigner opens the operator's key for a decision on id.
func findSigner(sg Signing, ts *trust.Settings, gen int, id string) tea.Cmd {
	return func() tea.Msg {
		k, err := openSigner(sg, ts)
		return signerMsg{gen: gen, id: id, key: k, err: err}
	}
}

// signDecision signs decision d on rec with k, as read (its payload hash and
// pinned risk), and closes k.
func signDecision(k *keySigner, s *storage.Store, memory string, gen int, rec *storage.Record, d trust.Decision) tea.Cmd {
	return func() tea.Msg {
		defer k.close()
		st := trust.Statement{Decision: d, ApprovalID: rec.ApprovalID, PayloadSHA256: rec.PayloadSHA256, Risk: string(rec.RiskLevel)}
		if d != trust.DecisionDeny {
			// An approval names the signed policy it is made under.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			sum, err := PolicyInForce(ctx, s, memory)
			cancel()
			if err != nil {
				return signedMsg{gen: gen, id: rec.ApprovalID, err: err}
			}
			st.PolicySHA256 = sum
		}
		ts := *s.Trust()
		ts.Store = s.Identity() // the configured name, else the store's own
		sig, err := ts.SignDecision(k.signer, st, s.Now())
		return signedMsg{gen: gen, id: rec.ApprovalID, sig: sig, err: err}
	}
}

// PolicyInForce is the SHA-256 of the signed policy s holds in force
// ("" when none is signed), the one an approval names. With memory (the
// operator's own file) set, it is first compared with the newest one this
// operator saw in force for the store: an older one (rows deleted by
// whoever can write the store) is a *trust.RollbackError, and nothing is
// signed; a newer one is remembered.
func PolicyInForce(ctx context.Context, s *storage.Store, memory string) (string, error) {
	pv, err := s.Policy(ctx)
	if err != nil {
		return "", fmt.Errorf("the policy in force cannot be read (%s): nothing is signed", model.Sanitize(err.Error(), model.Line))
	}
	var seen *trust.PolicySeen
	if pv != nil && pv.SignedBy != "" {
		seen = &trust.PolicySeen{SHA256: pv.SHA256, SignedBy: pv.SignedBy, SignedAt: pv.SignedAt}
	}
	if memory != "" {
		if err := trust.CheckPolicyMemory(memory, s.Identity(), seen); err != nil {
			return "", err
		}
	}
	if seen == nil {
		return "", nil
	}
	return seen.SHA256, nil
}

// closeSigner closes a key no longer wanted (its prompt went away).
func closeSigner(k *keySigner) tea.Cmd {
	if k == nil {
		return nil
	}
	return func() tea.Msg { k.close(); return nil }
}

// readSignatures reads the signatures of the proposal shown and checks each
// against the trust file for its payload and risk as shown
// (approvals.Signers, over storage.CheckedSignatures).
func readSignatures(ctx context.Context, s *storage.Store, shown shownPayload) ([]approvals.Signer, error) {
	return approvals.Signers(ctx, s, &storage.Record{PayloadSHA256: shown.sha256,
		Proposal: model.Proposal{ApprovalID: shown.id, RiskLevel: shown.risk, CreatedAt: shown.created}})
}

// mustSign reports whether the decision the prompt is about to submit is
// signed first: where the store requires signatures, every deny, and an
// approve whose typed id or phrase matches (one that does not goes to the
// store unsigned, which refuses it and records the refusal, with no touch
// of a key asked for nothing).
func (m *Model) mustSign(p *prompt) bool {
	if !m.opt.Store.Trust().Required() || m.opt.Actor.ReadOnly {
		return false
	}
	return p.kind == promptDeny || p.matches()
}

// startSigning asks for the key that signs the prompt's decision.
func (m *Model) startSigning(p *prompt) tea.Cmd {
	m.signGen++
	p.signing, p.message = true, ""
	p.info = "asking your ssh-agent for a signature…"
	m.emit("sign", p.id, "asked", p.kind.String())
	return m.oneOff(findSigner(m.opt.Signing, m.opt.Store.Trust(), m.signGen, p.id))
}

// signingFor returns the prompt a signer or signature answers, or nil when
// it was cancelled or replaced meanwhile.
func (m *Model) signingFor(gen int, id string) *prompt {
	if p := m.prompt; p != nil && p.signing && gen == m.signGen && p.id == id {
		return p
	}
	return nil
}

func (m *Model) onSigner(msg signerMsg) tea.Cmd {
	p := m.signingFor(msg.gen, msg.id)
	if p == nil {
		return closeSigner(msg.key)
	}
	if msg.err != nil {
		return m.notSigned(p, msg.err)
	}
	s := msg.key.signer
	if trust.NeedsTouch(s.PublicKey()) {
		p.info = "touch your security key to sign (" + shortKey(s.Fingerprint()) + ")"
		m.emit("sign", p.id, "touch", p.info)
	} else {
		p.info = "signing with " + shortKey(s.Fingerprint()) + "…"
	}
	d := trust.DecisionApprove
	if p.kind == promptDeny {
		d = trust.DecisionDeny
	}
	return m.oneOff(signDecision(msg.key, m.opt.Store, m.opt.Signing.PolicyMemory, msg.gen, p.rec, d))
}

func (m *Model) onSigned(msg signedMsg) tea.Cmd {
	p := m.signingFor(msg.gen, msg.id)
	if p == nil {
		return nil // cancelled: the signature is not used
	}
	if msg.err != nil {
		return m.notSigned(p, msg.err)
	}
	m.emit("sign", p.id, "signed", signedBy(msg.sig))
	// Where signatures are required, the person a vote counts for is the
	// key's principal: the votes block's "(you)" and the prompt's words
	// follow it from now on.
	m.me = policy.Voter{Person: strings.ToLower(msg.sig.Principal), Key: msg.sig.Key}
	return m.submit(p, msg.sig, "")
}

// notSigned: no signature could be made for the prompt's decision. An
// approve is not sent (the store would refuse it): the prompt says why and
// stays open. A deny goes unsigned (a deny never lets anything run), and
// its outcome says so.
func (m *Model) notSigned(p *prompt, err error) tea.Cmd {
	why := model.Sanitize(err.Error(), model.Line)
	if p.kind == promptDeny {
		return m.submit(p, nil, why)
	}
	p.signing, p.info = false, ""
	p.message = "not signed, nothing decided: " + why
	m.emit("approve", p.id, OutcomeRefused, p.message)
	return nil
}

// submit sends the prompt's decision to the store, as the actor with sig
// (nil: unsigned; unsigned, when not "", says why a deny is).
func (m *Model) submit(p *prompt, sig *model.Signature, unsigned string) tea.Cmd {
	p.signing, p.info = false, ""
	actor := m.opt.Actor
	actor.Signature = sig
	if sig != nil {
		// Who a signed vote counts for is the key's principal in the
		// trust file (the store verifies it and decides the same).
		actor.Person, actor.Key = strings.ToLower(sig.Principal), sig.Key
	}
	var cmd tea.Cmd
	switch {
	case p.kind == promptApprove && p.phrase != "":
		// Hermes counts every wrong phrase: so does the store.
		cmd = approvePhrase(m.ctx, m.opt.Store, p.id, p.typed, p.rec.PayloadSHA256, actor)
	case p.kind == promptApprove:
		if !p.matches() && !p.pasted {
			// The button stays disabled; the attempt still goes to the
			// decision path, which refuses it and records the refusal.
			// (After a refused paste the prompt keeps saying so.)
			p.message = "approve stays disabled until the typed text is exactly " + p.id
		}
		cmd = approve(m.ctx, m.opt.Store, p.id, p.typed, p.rec.PayloadSHA256, actor)
	default:
		cmd = deny(m.ctx, m.opt.Store, p.id, p.typed, actor)
	}
	pasted := p.pasted
	return m.decide(p.id, func() tea.Msg {
		msg := cmd().(decidedMsg)
		msg.pasted, msg.sig, msg.unsigned = pasted, sig, unsigned
		return msg
	})
}

// identityMsg: whose key would sign this console's decisions (or why
// none would), found at start.
type identityMsg struct {
	principal, key string
	err            error
}

// identify finds, at start and where the store requires signatures, the
// key the console will sign with: the operator learns at once that
// approvals cannot be signed here, and the votes block knows which votes
// are theirs. Nothing is signed.
func (m *Model) identify() tea.Cmd {
	ts := m.opt.Store.Trust()
	if !ts.Required() || m.opt.Actor.ReadOnly {
		return nil
	}
	sg := m.opt.Signing
	return m.oneOff(func() tea.Msg {
		k, err := openSigner(sg, ts)
		if err != nil {
			return identityMsg{err: err}
		}
		defer k.close()
		p, err := ts.PrincipalOf(k.signer.PublicKey())
		return identityMsg{principal: p, key: k.signer.Fingerprint(), err: err}
	})
}

func (m *Model) onIdentity(msg identityMsg) {
	if msg.err != nil {
		why := model.Sanitize(msg.err.Error(), model.Line)
		m.emit("sign", "", "unavailable", why)
		if m.note.text == "" {
			m.setNote("approvals here must be signed, and cannot be: "+why, m.st.Warning)
		}
		return
	}
	m.me = policy.Voter{Person: strings.ToLower(msg.principal), Key: msg.key}
	m.votesChanged()
	m.detail.Refresh(m.now)
	m.emit("sign", "", "identity", model.Sanitize(msg.principal, model.Line)+" "+shortKey(msg.key))
}
