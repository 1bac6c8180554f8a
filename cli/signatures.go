package cli

// The signatures a store keeps, checked: show ID --signatures prints each
// with the ssh-keygen -Y verify line that checks it without approve-tui;
// audit --verify --signers FILE checks every one against the audit log.
// Every field of a signature row is the agent's to write: hostile until
// verified, sanitised when shown.

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
	"github.com/approve-tui/approve-tui/trust"
)

// checkedSignature is one stored signature and what checking it found.
type checkedSignature struct {
	rec storage.SignatureRecord
	// st is the statement as signed (parsed is false when it is not one).
	st     trust.Statement
	parsed bool
	// verified is set when the signature holds and agrees with its row.
	verified *trust.Verified
	// problem says why not ("" when it verified).
	problem string
}

// decisionsOf are the statement decisions a stored event may carry.
func decisionsOf(event string) []trust.Decision {
	switch event {
	case storage.EventApprove, storage.EventVote:
		// The signer cannot know whether the vote completes the quorum.
		return []trust.Decision{trust.DecisionApprove, trust.DecisionVote}
	case storage.EventDeny:
		return []trust.Decision{trust.DecisionDeny}
	case storage.EventPolicySet:
		return []trust.Decision{trust.DecisionPolicy}
	}
	return nil
}

// checkSignature verifies r against signers (the trust file at path),
// expecting want: the signature must hold, its statement must say what
// want says and carry a decision its event may carry, the trust file must
// name exactly one principal for its key, and the row's principal and key
// must be the verified ones.
func checkSignature(r storage.SignatureRecord, ts *trust.Settings, want trust.Expect) checkedSignature {
	c := checkedSignature{rec: r}
	if st, err := trust.ParseStatement(r.Statement); err == nil {
		c.st, c.parsed = st, true
	}
	if ts == nil || ts.Signers == nil {
		c.problem = "not checked: no trust file (the configuration's trust: mode is off)"
		return c
	}
	at := time.Now()
	if r.At > 0 {
		at = model.FromEpoch(r.At) // valid when it was stored
	}
	v, err := trust.Verify([]byte(r.Armored), r.Statement, ts.Signers, want, at)
	if err != nil {
		c.problem = err.Error()
		return c
	}
	ok := false
	for _, d := range decisionsOf(r.Event) {
		ok = ok || v.Statement.Decision == d
	}
	switch p, perr := ts.PrincipalOf(v.Key); {
	case !ok:
		c.problem = fmt.Sprintf("signed decision %s, stored as event %s", v.Statement.Decision, r.Event)
	case perr != nil:
		c.problem = perr.Error()
	case p != v.Principal:
		c.problem = fmt.Sprintf("the trust file names %s for key %s, the statement %s", p, v.Fingerprint, v.Principal)
	case r.Principal != v.Principal:
		c.problem = fmt.Sprintf("the row says principal %s, the signature %s", r.Principal, v.Principal)
	case r.Key != v.Fingerprint:
		c.problem = fmt.Sprintf("the row says key %s, the signature %s", r.Key, v.Fingerprint)
	default:
		c.verified = &v
	}
	return c
}

// principal is who the signature is by: the verified principal, else the
// statement's, else the row's (claims).
func (c checkedSignature) principal() string {
	switch {
	case c.verified != nil:
		return c.verified.Principal
	case c.parsed:
		return c.st.Principal
	}
	return c.rec.Principal
}

// keyOf is the signing key's fingerprint as the signature carries it
// (the row's claim when the signature cannot be read).
func keyOf(r storage.SignatureRecord) string {
	if sig, err := parseArmoredKey(r.Armored); err == nil {
		return sig
	}
	return r.Key
}

// shellWord quotes s for a POSIX shell.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// verifyLines are the shell lines that check signature n with OpenSSH's
// own ssh-keygen: write the statement and the signature, then verify.
func verifyLines(c checkedSignature, n int, signersPath string) (writeStmt, writeSig, verify string) {
	stmt, sig := fmt.Sprintf("sig-%d.statement", n), fmt.Sprintf("sig-%d.sig", n)
	writeStmt = "echo " + base64.StdEncoding.EncodeToString(c.rec.Statement) + " | base64 -d > " + stmt
	writeSig = "echo " + base64.StdEncoding.EncodeToString([]byte(c.rec.Armored)) + " | base64 -d > " + sig
	verify = "ssh-keygen -Y verify -f " + shellWord(signersPath) + " -I " + shellWord(c.principal()) + " -n " + trust.Namespace + " -s " + sig + " < " + stmt
	return writeStmt, writeSig, line(verify)
}

// showSignatures is show ID --signatures: every signature kept for id
// (storage.PolicyRef: the policies'), each checked against the configured
// trust file, with the lines that check it with ssh-keygen.
func (a *app) showSignatures(ctx context.Context, s *storage.Store, id string) error {
	var rec *storage.Record
	if id != storage.PolicyRef {
		r, err := s.Get(ctx, id)
		if err != nil {
			return named(id, err)
		}
		rec = r
	}
	sigs, err := s.Signatures(ctx, id)
	if err != nil {
		return err
	}
	ts := s.Trust()
	path := "ALLOWED_SIGNERS"
	if ts != nil {
		path = ts.Path
	}
	var inForce *storage.PolicyVersion
	if rec == nil {
		inForce, _ = s.Policy(ctx) // a policy unreadable is said as "not in force"
	}
	checked := make([]checkedSignature, len(sigs))
	notes := make([]string, len(sigs))
	for i, r := range sigs {
		want := trust.Expect{Store: s.Identity()}
		if rec != nil {
			want.ApprovalID, want.PayloadSHA256, want.Risk = rec.ApprovalID, rec.PayloadSHA256, string(rec.RiskLevel)
		} else if st, err := trust.ParseStatement(r.Statement); err == nil {
			// Which version it signs is said below; the signature is
			// checked over the file it names.
			want.PolicySHA256 = st.PolicySHA256
			switch {
			case inForce != nil && inForce.SHA256 == st.PolicySHA256:
				notes[i] = fmt.Sprintf("signs policy v%d, the version in force", inForce.Version)
			default:
				notes[i] = "signs policy sha256 " + shortSum(st.PolicySHA256) + ", not the version in force"
			}
		}
		checked[i] = checkSignature(r, ts, want)
	}
	if a.json {
		list := make([]*model.JSONObject, len(checked))
		for i, c := range checked {
			ws, wg, v := verifyLines(c, i+1, path)
			o := model.NewJSONObject().Int("seq", c.rec.Seq).Str("event", c.rec.Event).Str("principal", c.principal())
			if c.parsed {
				o.Str("decision", string(c.st.Decision)).Str("time", c.st.Time.UTC().Format(time.RFC3339))
			} else {
				o.Raw("decision", "null").Raw("time", "null")
			}
			o.Str("key", keyOf(c.rec)).Str("statement", base64.StdEncoding.EncodeToString(c.rec.Statement)).
				Str("signature", c.rec.Armored).Bool("verified", c.verified != nil).OptStr("problem", c.problem).
				OptStr("note", notes[i]).Str("write_statement", ws).Str("write_signature", wg).Str("verify_command", v)
			list[i] = o
		}
		o := model.NewJSONObject().Str("id", id).Str("store", s.Identity())
		if ts != nil {
			o.Str("trust_file", ts.Path)
		} else {
			o.Raw("trust_file", "null")
		}
		a.printf("%s\n", o.Raw("signatures", jsonList(list)))
		return nil
	}
	if len(checked) == 0 {
		a.printf("no signatures on %s: nothing about it was signed\n", line(id))
		return nil
	}
	for i, c := range checked {
		if i > 0 {
			a.printf("\n")
		}
		what := line(c.rec.Event)
		if c.parsed {
			what = line(string(c.st.Decision)) + ", signed " + c.st.Time.UTC().Format(time.RFC3339)
		}
		a.printf("signature %d of %d on %s: %s by %s, key %s\n", i+1, len(checked), line(id), what, line(c.principal()), line(keyOf(c.rec)))
		if notes[i] != "" {
			a.printf("  %s\n", notes[i])
		}
		switch {
		case c.verified != nil:
			a.printf("  verifies against %s: yes (line %d)\n", line(path), c.verified.Line)
		case ts == nil:
			a.printf("  %s\n", line(c.problem))
		default:
			a.printf("  verifies against %s: NO: %s\n", line(path), line(c.problem))
		}
		a.printf("  statement (base64): %s\n", base64.StdEncoding.EncodeToString(c.rec.Statement))
		a.printf("  signature:\n")
		for _, l := range strings.Split(strings.TrimRight(c.rec.Armored, "\n"), "\n") {
			a.printf("    %s\n", line(l))
		}
		ws, wg, v := verifyLines(c, i+1, path)
		a.printf("  check it with OpenSSH's ssh-keygen (write the statement and the signature, then verify):\n")
		a.printf("    %s\n    %s\n    %s\n", ws, wg, v)
	}
	return nil
}

// parseArmoredKey is the fingerprint of the key an armored signature
// carries.
func parseArmoredKey(armored string) (string, error) {
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil {
		return "", err
	}
	return ssh.FingerprintSHA256(sig.PublicKey), nil
}
