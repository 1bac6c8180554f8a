package trust

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/approve-tui/approve-tui/model"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Reason says why a signature was refused.
type Reason string

// The reasons Verify gives.
const (
	ReasonMalformed         Reason = "malformed"          // signature or statement unreadable, or not canonical
	ReasonBadSignature      Reason = "bad_signature"      // the signature does not hold over these bytes
	ReasonNamespace         Reason = "namespace"          // signed for another namespace, or the trust line forbids approve-tui
	ReasonHashAlgorithm     Reason = "hash_algorithm"     // a hash other than sha512 or sha256
	ReasonUnknownKey        Reason = "unknown_key"        // the key is not in the trust file
	ReasonPrincipalMismatch Reason = "principal_mismatch" // the statement's principal is not one of the key's
	ReasonExpired           Reason = "expired"            // after valid-before (at signing or now)
	ReasonNotYetValid       Reason = "not_yet_valid"      // before valid-after (at signing or now)
	ReasonNoTouch           Reason = "no_touch"           // a security key signed without user presence
	ReasonMismatch          Reason = "statement_mismatch" // valid, but over another store, id, payload, risk or policy
	ReasonDecision          Reason = "decision"           // valid, but a decision the verifier did not ask for (a deny where approvals count)
	ReasonStale             Reason = "stale"              // dated before Expect.NotBefore or older than Expect.MaxAge
	ReasonFuture            Reason = "future"             // dated after now plus Expect.Skew
	ReasonWeakKey           Reason = "weak_key"           // an RSA key under 2048 bits, or a DSA key
)

// VerifyError is a refused signature.
type VerifyError struct {
	Reason Reason
	Detail string
}

// Error is sanitised: the detail may quote what a signature carried.
func (e *VerifyError) Error() string {
	return model.Sanitize(fmt.Sprintf("signature refused (%s): %s", e.Reason, e.Detail), model.Line)
}

func refuse(r Reason, format string, a ...any) error {
	return &VerifyError{Reason: r, Detail: fmt.Sprintf(format, a...)}
}

// ReasonOf returns the Reason of a *VerifyError, or "" for nil or another error.
func ReasonOf(err error) Reason {
	var ve *VerifyError
	if errors.As(err, &ve) {
		return ve.Reason
	}
	return ""
}

// Expect is what the verifier knows independently of the signature: the
// store it serves, the proposal (or policy) it is about to act on, which
// decisions it is counting and how old a statement may be.
//
// Decisions lists the decisions acceptable here (CountingDecisions where
// approvals are counted, DecisionDeny for a denial, DecisionPolicy for a
// policy); a statement with another decision, or any statement when the
// list is empty, is refused (ReasonDecision). Every other field that
// applies to the statement's decision must be set, and must equal the
// statement's, or the signature is refused as a mismatch (a copy or
// replay from another store, approval or payload).
//
// Time: a statement dated after now+Skew is always refused
// (ReasonFuture; Skew 0 allows no clock difference); one dated before
// NotBefore (when set: the proposal's creation minus the skew) or before
// now-MaxAge (when MaxAge is set) is refused as stale (ReasonStale). A
// policy's signature may be old, so its Expect leaves both unset; an
// approval's sets them, so that a signature cannot be replayed long after
// on a proposal the agent reset.
type Expect struct {
	Store         string
	ApprovalID    string // approve, vote, deny
	PayloadSHA256 string // approve, vote, deny
	Risk          string // approve, vote, deny
	PolicySHA256  string // policy

	Decisions []Decision
	NotBefore time.Time
	MaxAge    time.Duration
	Skew      time.Duration
}

// CountingDecisions are the decisions that count towards an approval: a
// signer cannot know whether its approval completes the quorum, so
// approve and vote count alike.
var CountingDecisions = []Decision{DecisionApprove, DecisionVote}

// Verified is a signature that held.
type Verified struct {
	Principal   string // the statement's principal, matched against the key's trust line
	Fingerprint string // SHA256:... of the signing key
	Key         ssh.PublicKey
	Line        int       // the trust file line that admitted the key
	Statement   Statement // what was signed
}

// Verify checks an armored SSH signature over statement bytes against a
// trust file, at time now, and against what the verifier expects. It
// refuses with a *VerifyError: the signature must be in namespace
// approve-tui with sha512 or sha256; its key must be on a trust file line
// whose principal patterns match the statement's principal, whose
// namespaces option (if any) allows approve-tui, and whose validity
// window holds both at the statement's time and at now; a security key
// must have signed with user presence; and the statement must be
// canonical and say what want says.
func Verify(armored, statement []byte, signers *AllowedSigners, want Expect, now time.Time) (Verified, error) {
	var v Verified
	if signers == nil {
		return v, refuse(ReasonMalformed, "no trust file")
	}
	st, err := ParseStatement(statement)
	if err != nil {
		return v, refuse(ReasonMalformed, "%v", err)
	}
	sig, err := unarmor(armored)
	if err != nil {
		return v, err
	}
	if sig.Namespace != Namespace {
		return v, refuse(ReasonNamespace, "signed for namespace %q, not %q", clip(sig.Namespace), Namespace)
	}
	if sig.HashAlgorithm != sshsig.HashSHA512 && sig.HashAlgorithm != sshsig.HashSHA256 {
		return v, refuse(ReasonHashAlgorithm, "hash %q is not sha512 or sha256", clip(string(sig.HashAlgorithm)))
	}
	fp := ssh.FingerprintSHA256(sig.PublicKey)
	// Before the signature itself: crypto/rsa's own floor moves with
	// GODEBUG, which the agent's environment sets.
	if err := checkKeyStrength(sig.PublicKey); err != nil {
		return v, refuse(ReasonWeakKey, "%v", err)
	}
	// Checked before the signature itself (x/crypto would refuse it as a
	// bad signature) so that the reason is the missing touch.
	if err := checkTouch(sig); err != nil {
		return v, err
	}
	if err := sshsig.Verify(bytes.NewReader(statement), sig, sig.PublicKey, sig.HashAlgorithm, Namespace); err != nil {
		return v, refuse(ReasonBadSignature, "key %s: %v", fp, err)
	}
	if err := checkAlgorithm(sig); err != nil {
		return v, err
	}
	// The key must be in the trust file; its lines are tried in order and
	// the first that admits the principal wins. The most specific refusal
	// is reported when none does.
	keyBytes := sig.PublicKey.Marshal()
	var firstRefusal error
	for i := range signers.Signers {
		line := &signers.Signers[i]
		if !bytes.Equal(line.Key.Marshal(), keyBytes) {
			continue
		}
		err := line.admits(st, now)
		if err == nil {
			v = Verified{Principal: st.Principal, Fingerprint: fp, Key: sig.PublicKey, Line: line.Line, Statement: st}
			if err := want.check(st, now); err != nil {
				return Verified{}, err
			}
			return v, nil
		}
		if firstRefusal == nil {
			firstRefusal = err
		}
	}
	if firstRefusal != nil {
		return v, firstRefusal
	}
	return v, refuse(ReasonUnknownKey, "key %s (%s) is not in %s", fp, sig.PublicKey.Type(), signers.Path)
}

func (s *Signer) admits(st Statement, now time.Time) error {
	// A trust file names one plain principal per line: equality, as
	// OpenSSH's pattern match is for a plain name.
	if st.Principal != s.Principals {
		return refuse(ReasonPrincipalMismatch, "line %d does not name principal %q (it names %q)", s.Line, st.Principal, s.Principals)
	}
	if s.Namespaces != nil && !MatchPatternList(Namespace, strings.Join(s.Namespaces, ",")) {
		return refuse(ReasonNamespace, "line %d allows namespaces %q, not %q", s.Line, strings.Join(s.Namespaces, ","), Namespace)
	}
	for _, at := range []struct {
		what string
		t    time.Time
	}{{"at signing", st.Time}, {"now", now}} {
		if !s.ValidAfter.IsZero() && at.t.Before(s.ValidAfter) {
			return refuse(ReasonNotYetValid, "line %d is valid after %s, %s is %s", s.Line, s.ValidAfter.UTC().Format(time.RFC3339), at.what, at.t.UTC().Format(time.RFC3339))
		}
		if !s.ValidBefore.IsZero() && at.t.After(s.ValidBefore) {
			return refuse(ReasonExpired, "line %d is valid before %s, %s is %s", s.Line, s.ValidBefore.UTC().Format(time.RFC3339), at.what, at.t.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

func (e Expect) check(st Statement, now time.Time) error {
	if len(e.Decisions) == 0 {
		return refuse(ReasonDecision, "the verifier was given no decisions to accept")
	}
	if !slices.Contains(e.Decisions, st.Decision) {
		return refuse(ReasonDecision, "signed as %s, and here only %s counts", st.Decision, joinDecisions(e.Decisions))
	}
	if limit := now.Add(e.Skew); st.Time.After(limit) {
		return refuse(ReasonFuture, "dated %s, after now (%s) by more than %s", st.Time.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), e.Skew)
	}
	if !e.NotBefore.IsZero() && st.Time.Before(e.NotBefore) {
		return refuse(ReasonStale, "dated %s, before %s (the proposal is younger than its approval)", st.Time.UTC().Format(time.RFC3339), e.NotBefore.UTC().Format(time.RFC3339))
	}
	if e.MaxAge > 0 && st.Time.Before(now.Add(-e.MaxAge)) {
		return refuse(ReasonStale, "dated %s, older than %s", st.Time.UTC().Format(time.RFC3339), e.MaxAge)
	}
	if e.Store == "" {
		return refuse(ReasonMismatch, "the verifier was given no store identity")
	}
	if st.Store != e.Store {
		return refuse(ReasonMismatch, "signed for store %q, this is %q", st.Store, e.Store)
	}
	same := func(name, got, want string) error {
		if want == "" {
			return refuse(ReasonMismatch, "the verifier was given no %s", name)
		}
		if got != want {
			return refuse(ReasonMismatch, "signed for %s %q, expected %q", name, got, want)
		}
		return nil
	}
	if st.Decision == DecisionPolicy {
		return same("policy_sha256", st.PolicySHA256, e.PolicySHA256)
	}
	if err := same("id", st.ApprovalID, e.ApprovalID); err != nil {
		return err
	}
	if err := same("payload_sha256", st.PayloadSHA256, e.PayloadSHA256); err != nil {
		return err
	}
	return same("risk", st.Risk, e.Risk)
}

func joinDecisions(ds []Decision) string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString(string(d))
	}
	return b.String()
}

// The armour ssh-keygen -Y sign writes: this line, the base64 of the
// signature blob in lines of 70 characters, the END line, a newline.
const (
	armorBegin = "-----BEGIN SSH SIGNATURE-----\n"
	armorEnd   = "-----END SSH SIGNATURE-----\n"
	armorWidth = 70
)

// armor is the one armoured form of a signature blob: byte for byte what
// ssh-keygen -Y sign writes.
func armor(blob []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(blob)
	var b bytes.Buffer
	b.Grow(len(armorBegin) + len(enc) + len(enc)/armorWidth + 1 + len(armorEnd))
	b.WriteString(armorBegin)
	for len(enc) > armorWidth {
		b.WriteString(enc[:armorWidth])
		b.WriteByte('\n')
		enc = enc[armorWidth:]
	}
	b.WriteString(enc)
	b.WriteByte('\n')
	b.WriteString(armorEnd)
	return b.Bytes()
}

// unarmor parses an armored signature and accepts it only in its one
// canonical form: the armour ssh-keygen writes (no header, no other line
// width, nothing before or after), over a blob that re-encodes to the
// same bytes, with nothing appended inside the signature either. So a
// stored signature has one byte form and carries nothing a display could
// be made to print.
func unarmor(armored []byte) (*sshsig.Signature, error) {
	text := string(armored)
	body, ok := strings.CutPrefix(text, armorBegin)
	if !ok {
		return nil, refuse(ReasonMalformed, "not an armored SSH signature (it must start with the line -----BEGIN SSH SIGNATURE-----)")
	}
	body, _, ok = strings.Cut(body, armorEnd[:len(armorEnd)-1])
	if !ok {
		return nil, refuse(ReasonMalformed, "armored SSH signature without its END line")
	}
	blob, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(body, "\n", ""))
	if err != nil {
		return nil, refuse(ReasonMalformed, "armored SSH signature with more than base64 inside (headers or other text)")
	}
	sig, err := sshsig.ParseSignature(blob)
	if err != nil {
		return nil, refuse(ReasonMalformed, "signature: %v", err)
	}
	if !bytes.Equal(sig.Marshal(), blob) {
		return nil, refuse(ReasonMalformed, "signature blob not in its canonical encoding (bytes appended or a reserved field set)")
	}
	rest := len(sig.Signature.Rest)
	switch sig.PublicKey.Type() {
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256:
		if rest != 5 {
			return nil, refuse(ReasonMalformed, "security-key signature with %d bytes of flags and counter, not 5", rest)
		}
	default:
		if rest != 0 {
			return nil, refuse(ReasonMalformed, "%d bytes appended inside the signature", rest)
		}
	}
	if !bytes.Equal(armor(blob), armored) {
		return nil, refuse(ReasonMalformed, "armored SSH signature not in the form ssh-keygen -Y sign writes (line width, blank lines, or text before or after)")
	}
	return sig, nil
}

// checkAlgorithm refuses DSA keys and RSA signatures made with SHA-1
// (format "ssh-rsa"): the SSH signature format asks for rsa-sha2-512 or
// rsa-sha2-256.
func checkAlgorithm(sig *sshsig.Signature) error {
	switch sig.PublicKey.Type() {
	case ssh.KeyAlgoDSA:
		return refuse(ReasonHashAlgorithm, "DSA keys are not accepted")
	case ssh.KeyAlgoRSA:
		if f := sig.Signature.Format; f != ssh.KeyAlgoRSASHA512 && f != ssh.KeyAlgoRSASHA256 {
			return refuse(ReasonHashAlgorithm, "RSA signature algorithm %q is not rsa-sha2-512 or rsa-sha2-256", clip(f))
		}
	}
	return nil
}

// checkTouch refuses a security-key signature made without user presence
// (flag 0x01 in the signature's trailing flags and counter). ssh-keygen
// -Y verify accepts such a signature; approve-tui does not, since a
// decision is a person's act.
func checkTouch(sig *sshsig.Signature) error {
	switch sig.PublicKey.Type() {
	case ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256:
	default:
		return nil
	}
	rest := sig.Signature.Rest
	if len(rest) < 5 {
		return refuse(ReasonMalformed, "security-key signature without flags and counter")
	}
	if rest[0]&0x01 == 0 {
		return refuse(ReasonNoTouch, "security key %s signed without user presence (counter %d)", ssh.FingerprintSHA256(sig.PublicKey), binary.BigEndian.Uint32(rest[1:5]))
	}
	return nil
}

// MatchPatternList reports whether name matches an OpenSSH pattern list
// (ssh_config(5), PATTERNS): comma-separated patterns with '*' and '?',
// a leading '!' negating one. A name that matches a negated pattern is
// refused whatever else matches; otherwise it needs one positive match.
// Matching is exact in case, as for allowed_signers principals. As in
// OpenSSH, a pattern of 1023 bytes or more (its '!' counted) makes the
// list match nothing from there on.
func MatchPatternList(name, list string) bool {
	matched := false
	for _, p := range strings.Split(list, ",") {
		if len(p) >= maxPattern {
			return false
		}
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if matchPattern(name, p) {
			if neg {
				return false
			}
			matched = true
		}
	}
	return matched
}

// matchPattern matches '*' (any run) and '?' (any one byte).
func matchPattern(s, p string) bool {
	// Iterative wildcard match with single backtrack point.
	si, pi, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			si++
			pi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Quorum counts the distinct principals among verified approve and vote
// signatures and reports whether they reach need. Denials do not count.
// The requester never counts towards its own proposal: every signature
// signed as the requester (compared ignoring case) and every signature by
// a key that any line of signers admits for the requester (a second name
// on its line, another line with its key) is left out; an empty requester
// (not known) counts nothing at all. Each key counts once too: a key on a
// line with a pattern (*@example.com) could sign under several names, and
// one key is one person. need below 1 is treated as 1.
func Quorum(verified []Verified, need int, requester string, signers *AllowedSigners) (int, bool) {
	if need < 1 {
		need = 1
	}
	if requester == "" || signers == nil {
		return 0, false
	}
	theirs := map[string]bool{}
	for _, sg := range signers.Signers {
		if sg.Key != nil && MatchPatternList(requester, sg.Principals) {
			theirs[ssh.FingerprintSHA256(sg.Key)] = true
		}
	}
	principals := map[string]bool{}
	keys := map[string]bool{}
	for _, v := range verified {
		d := v.Statement.Decision
		if d != DecisionApprove && d != DecisionVote {
			continue
		}
		if v.Principal == "" || strings.EqualFold(v.Principal, requester) || v.Fingerprint == "" || theirs[v.Fingerprint] {
			continue
		}
		if principals[v.Principal] || keys[v.Fingerprint] {
			continue
		}
		principals[v.Principal] = true
		keys[v.Fingerprint] = true
	}
	return len(principals), len(principals) >= need
}
