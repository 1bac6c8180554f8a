package cli

// Signed decisions: where the configuration's trust: section requires
// signatures, approve, deny and policy set sign a statement of what they
// decide with the operator's own SSH key (in the ssh-agent at
// $SSH_AUTH_SOCK, or a key file given with --key), and the signature goes
// to the store on the actor, which verifies it in the deciding
// transaction.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/user"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
	sshagent "golang.org/x/crypto/ssh/agent"

	"github.com/approve-tui/approve-tui/config"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
	"github.com/approve-tui/approve-tui/tui"
)

// trustSettings is the trust configuration in force for this process on
// side: nil when off. A session of another surface (serve) takes the
// serving process's (a.trusting); this process's otherwise, from the
// configuration file. A trust file that cannot be loaded is an error:
// where signatures are required, whose keys count must be known.
func (a *app) trustSettings(side config.Side) (*trust.Settings, error) {
	if a.as != nil {
		return a.trusting, nil
	}
	f, err := a.loadConfig()
	if err != nil {
		return nil, err
	}
	s, err := f.TrustSettings(storage.DefaultIdentity(a.db), side)
	if err != nil {
		return nil, exitf(ExitError, "%s", line(err.Error()))
	}
	return s, nil
}

// keySigner is the key a decision is signed with, and what to close.
type keySigner struct {
	*trust.StatementSigner
	conn net.Conn
}

func (k *keySigner) Close() {
	if k == nil {
		return
	}
	if k.conn != nil {
		k.conn.Close()
	}
	k.StatementSigner.Close()
}

// signingHelp says how to give approve-tui a key to sign with.
func signingHelp(ts *trust.Settings) string {
	return fmt.Sprintf("under trust: mode required every decision is signed with your SSH key: load the key the trust file %s names for you into ssh-agent (ssh-add KEY; SSH_AUTH_SOCK set), or pass --key KEY", line(ts.Path))
}

// signer is the key this process signs with under ts: the key file
// keyFile when given; else, over serve, the session's forwarded agent;
// else the agent at $SSH_AUTH_SOCK. Of an agent's keys, the one the trust
// file knows is taken; none, or more than one, is an error that lists
// them.
func (a *app) signer(ts *trust.Settings, keyFile string) (*keySigner, error) {
	if keyFile != "" {
		if a.as != nil {
			return nil, usageErrorf("--key is not taken here: over ssh, your forwarded agent signs (ssh -A)")
		}
		s, err := trust.KeyFileSigner(keyFile)
		if err != nil {
			return nil, errors.New(line(err.Error()))
		}
		if _, err := ts.PrincipalOf(s.PublicKey()); err != nil {
			s.Close()
			return nil, errors.New(line(err.Error()))
		}
		return &keySigner{StatementSigner: s}, nil
	}
	var (
		ag   sshagent.Agent
		conn net.Conn
	)
	switch {
	case a.as != nil && a.sessionAgent != nil:
		ag = a.sessionAgent
	case a.as != nil:
		return nil, errors.New("your ssh client forwarded no agent: connect with ssh -A so your key can sign")
	default:
		sock := a.getenv("SSH_AUTH_SOCK")
		if sock == "" {
			return nil, errors.New("no ssh-agent: SSH_AUTH_SOCK is not set")
		}
		c, err := net.Dial("unix", sock)
		if err != nil {
			return nil, fmt.Errorf("cannot reach the ssh-agent at SSH_AUTH_SOCK: %s", line(err.Error()))
		}
		ag, conn = sshagent.NewClient(c), c
	}
	fail := func(err error) (*keySigner, error) {
		if conn != nil {
			conn.Close()
		}
		return nil, err
	}
	keys, err := ag.List()
	if err != nil {
		return fail(fmt.Errorf("the ssh-agent does not list its keys: %v", line(err.Error())))
	}
	if len(keys) == 0 {
		return fail(errors.New("the ssh-agent holds no keys"))
	}
	var known, unknown []string
	var pick string
	for _, k := range keys {
		pk, err := ssh.ParsePublicKey(k.Blob)
		if err != nil {
			continue
		}
		fp := ssh.FingerprintSHA256(pk)
		p, err := ts.PrincipalOf(pk)
		if err != nil {
			if strings.Contains(err.Error(), "is not in the trust file") {
				unknown = append(unknown, fp)
			} else {
				unknown = append(unknown, line(err.Error()))
			}
			continue
		}
		known = append(known, fp+" ("+line(p)+")")
		pick = fp
	}
	switch len(known) {
	case 0:
		return fail(fmt.Errorf("none of the ssh-agent's keys (%s) is in the trust file %s", strings.Join(unknown, ", "), line(ts.Path)))
	case 1:
	default:
		return fail(fmt.Errorf("the ssh-agent holds %d keys the trust file knows (%s): one person signs with one key; pass --key KEY, or keep one of them in this agent", len(known), strings.Join(known, ", ")))
	}
	s, err := trust.AgentSigner(ag, pick)
	if err != nil {
		return fail(errors.New(line(err.Error())))
	}
	return &keySigner{StatementSigner: s, conn: conn}, nil
}

// sign signs st with k under ts, saying first on stderr when the key
// waits for a touch.
func (a *app) sign(ts *trust.Settings, k *keySigner, st trust.Statement) (*model.Signature, error) {
	if trust.NeedsTouch(k.PublicKey()) {
		a.note("touch your security key to sign (%s %s)", k.PublicKey().Type(), k.Fingerprint())
	}
	sig, err := ts.SignDecision(k.StatementSigner, st, a.now())
	if err != nil {
		return nil, errors.New(line(err.Error()))
	}
	return sig, nil
}

// decisionStatement is what an approve or deny of rec signs: the payload
// the approver read (readSHA, or the record's as read now) and the risk
// pinned on the proposal.
func decisionStatement(d trust.Decision, rec *storage.Record, readSHA string) trust.Statement {
	sum := readSHA
	if sum == "" {
		sum = rec.PayloadSHA256
	}
	return trust.Statement{Decision: d, ApprovalID: rec.ApprovalID, PayloadSHA256: sum, Risk: string(rec.RiskLevel)}
}

// policyMemory is the operator's own file in which the newest signed
// policy seen in force is kept per store: $XDG_STATE_HOME/approve-tui/
// policies.json, else ~/.local/state/approve-tui/policies.json ($HOME,
// else the user database's home directory).
func (a *app) policyMemory() (string, error) {
	if d := a.getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "approve-tui", "policies.json"), nil
	}
	h := a.getenv("HOME")
	if !filepath.IsAbs(h) {
		if u, err := user.Current(); err == nil {
			h = u.HomeDir
		}
	}
	if filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "approve-tui", "policies.json"), nil
	}
	return "", errors.New("no $XDG_STATE_HOME or $HOME to keep the newest signed policy seen in, so a policy rolled back in the store could not be told: nothing is signed")
}

// headlessSigning is a tape's signing: the operator's agent, and the
// operator's policy memory, as the console's.
func (a *app) headlessSigning() tui.Signing {
	sg := tui.AgentSocket(a.getenv("SSH_AUTH_SOCK"))
	sg.PolicyMemory, _ = a.policyMemory()
	return sg
}

// approvalStatement is what an approval of rec signs (decisionStatement),
// naming the signed policy in force, after the operator's policy memory
// said it is not older than one seen before (tui.PolicyInForce).
func (a *app) approvalStatement(ctx context.Context, s *storage.Store, rec *storage.Record, readSHA string) (trust.Statement, error) {
	st := decisionStatement(trust.DecisionApprove, rec, readSHA)
	memory, err := a.policyMemory()
	if err != nil {
		return st, err
	}
	sum, err := tui.PolicyInForce(ctx, s, memory)
	if err != nil {
		return st, errors.New(line(err.Error()))
	}
	st.PolicySHA256 = sum
	return st, nil
}

// signDecision signs decision d of rec under the store's trust
// configuration when it requires signatures (nil otherwise).
func (a *app) signDecision(ts *trust.Settings, keyFile string, d trust.Decision, rec *storage.Record, readSHA string) (*model.Signature, error) {
	if !ts.Required() {
		return nil, nil
	}
	k, err := a.signer(ts, keyFile)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	return a.sign(ts, k, decisionStatement(d, rec, readSHA))
}

// recordFor is the proposal a signed decision names.
func recordFor(ctx context.Context, s *storage.Store, id string) (*storage.Record, error) {
	rec, err := s.Get(ctx, id)
	if err != nil {
		return nil, named(id, err)
	}
	return rec, nil
}

// signerActor is actor as the store will count it once key signs: the
// principal the trust file names for the key, and the key (actor itself
// when there is no key to sign with, or trust is off).
func signerActor(actor model.Actor, ts *trust.Settings, key *keySigner) model.Actor {
	if key == nil || !ts.Required() {
		return actor
	}
	p, err := ts.PrincipalOf(key.PublicKey())
	if err != nil {
		return actor
	}
	actor.Person, actor.Key, actor.Name = strings.ToLower(p), key.Fingerprint(), p
	return actor
}
