package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// StatementHeader is the first line of every statement of this format.
const StatementHeader = "approve-tui-statement-v1"

// Namespace is the SSH signature namespace of every signature approve-tui
// makes or accepts (ssh-keygen -Y ... -n approve-tui).
const Namespace = "approve-tui"

// maxField bounds every free field of a statement.
const maxField = 256

// Decision is what a signature decides.
type Decision string

// The decisions a statement can carry.
const (
	DecisionApprove Decision = "approve" // the decision that approves a proposal
	DecisionVote    Decision = "vote"    // one vote towards a quorum
	DecisionDeny    Decision = "deny"    // a denial
	DecisionPolicy  Decision = "policy"  // setting the store's policy
)

// Risk levels a statement can pin.
const (
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
	// RiskTier2 is Hermes' tier-2 level: approved by a typed phrase.
	RiskTier2 = "tier2_critical"
)

// Statement is what one decision signs. Encode gives its only byte form.
//
// For approve, vote and deny, ApprovalID, PayloadSHA256 and Risk are set,
// and PolicySHA256, when set, names the signed policy the signer held to be
// in force (empty: none was signed): a verifier then asks at least what that
// policy asks, so deleting newer policy rows can never make the approval
// count for more. For policy, PolicySHA256 is set and the other three are
// empty.
type Statement struct {
	Store         string    // the store's identity
	Decision      Decision  // approve, vote, deny or policy
	ApprovalID    string    // the approval decided
	PayloadSHA256 string    // lower-case hex SHA-256 of the payload the operator read
	Risk          string    // low, medium or high: the risk pinned on the proposal
	PolicySHA256  string    // lower-case hex SHA-256 of the policy text (policy; optional on the others)
	Principal     string    // the signer's principal, as the trust file names it
	Time          time.Time // when it was signed; encoded in UTC to the second
}

// ErrStatement is wrapped by every error about a statement's form.
var ErrStatement = errors.New("malformed statement")

func statementErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrStatement, fmt.Sprintf(format, a...))
}

// Encode validates s and returns its canonical bytes: the header line,
// then key=value lines in a fixed order, each ended by "\n". Time is
// truncated to the second and written in UTC (RFC 3339, "Z").
func (s Statement) Encode() ([]byte, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	line := func(k, v string) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
		b.WriteByte('\n')
	}
	b.WriteString(StatementHeader)
	b.WriteByte('\n')
	line("store", s.Store)
	line("decision", string(s.Decision))
	if s.Decision == DecisionPolicy {
		line("policy_sha256", s.PolicySHA256)
	} else {
		line("id", s.ApprovalID)
		line("payload_sha256", s.PayloadSHA256)
		line("risk", s.Risk)
		if s.PolicySHA256 != "" {
			line("policy_sha256", s.PolicySHA256)
		}
	}
	line("principal", s.Principal)
	line("time", s.Time.UTC().Truncate(time.Second).Format(time.RFC3339))
	return b.Bytes(), nil
}

func (s Statement) validate() error {
	if err := checkToken("store", s.Store, false); err != nil {
		return statementErr("store identity %q cannot be signed (%v): set trust.store in the configuration to a name of 1 to %d bytes of visible ASCII without spaces", clip(s.Store), strings.TrimPrefix(err.Error(), ErrStatement.Error()+": "), maxField)
	}
	if err := checkToken("principal", s.Principal, true); err != nil {
		return err
	}
	switch s.Decision {
	case DecisionApprove, DecisionVote, DecisionDeny:
		if err := checkToken("id", s.ApprovalID, false); err != nil {
			return err
		}
		if err := checkHex("payload_sha256", s.PayloadSHA256); err != nil {
			return err
		}
		switch s.Risk {
		case RiskLow, RiskMedium, RiskHigh, RiskTier2:
		default:
			return statementErr("risk %q is not low, medium, high or tier2_critical", clip(s.Risk))
		}
		if s.PolicySHA256 != "" {
			if err := checkHex("policy_sha256", s.PolicySHA256); err != nil {
				return err
			}
		}
	case DecisionPolicy:
		if err := checkHex("policy_sha256", s.PolicySHA256); err != nil {
			return err
		}
		if s.ApprovalID != "" || s.PayloadSHA256 != "" || s.Risk != "" {
			return statementErr("a policy statement carries no id, payload_sha256 or risk")
		}
	default:
		return statementErr("decision %q is not approve, vote, deny or policy", clip(string(s.Decision)))
	}
	if s.Time.IsZero() {
		return statementErr("time is not set")
	}
	if y := s.Time.UTC().Year(); y < 1970 || y > 9999 {
		return statementErr("time %d is out of range", y)
	}
	return nil
}

// checkToken accepts 1 to 256 bytes of visible ASCII (0x21-0x7E): no
// space, control character, NUL, newline or non-ASCII byte, so a field can
// never be read as another. A principal also may not hold the characters
// that make an allowed_signers pattern list (",", "*", "?", "!") or quotes.
func checkToken(name, v string, principal bool) error {
	if v == "" {
		return statementErr("%s is empty", name)
	}
	if len(v) > maxField {
		return statementErr("%s is longer than %d bytes", name, maxField)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x21 || c > 0x7e {
			return statementErr("%s has byte 0x%02x at %d: only visible ASCII is allowed", name, c, i)
		}
		if principal && strings.IndexByte(",*?!\"'\\", c) >= 0 {
			return statementErr("principal has %q at %d: a principal is a plain name, not a pattern", c, i)
		}
	}
	return nil
}

func checkHex(name, v string) error {
	if len(v) != 64 {
		return statementErr("%s is not 64 hex digits", name)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return statementErr("%s is not lower-case hex", name)
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// ParseStatement reads a statement and accepts it only if it is
// byte for byte the canonical encoding of what it says.
func ParseStatement(b []byte) (Statement, error) {
	var s Statement
	if len(b) > 4096 {
		return s, statementErr("longer than 4096 bytes")
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		return s, statementErr("does not end with a newline")
	}
	lines := strings.Split(string(b[:len(b)-1]), "\n")
	if lines[0] != StatementHeader {
		return s, statementErr("first line is not %q", StatementHeader)
	}
	fields := map[string]string{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return s, statementErr("line %q has no '='", clip(l))
		}
		if _, dup := fields[k]; dup {
			return s, statementErr("key %q appears twice", clip(k))
		}
		fields[k] = v
	}
	s.Store = fields["store"]
	s.Decision = Decision(fields["decision"])
	s.ApprovalID = fields["id"]
	s.PayloadSHA256 = fields["payload_sha256"]
	s.Risk = fields["risk"]
	s.PolicySHA256 = fields["policy_sha256"]
	s.Principal = fields["principal"]
	if ts, ok := fields["time"]; ok {
		t, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			return Statement{}, statementErr("time %q is not RFC 3339", clip(ts))
		}
		s.Time = t.UTC()
	}
	enc, err := s.Encode()
	if err != nil {
		return Statement{}, err
	}
	if !bytes.Equal(enc, b) {
		return Statement{}, statementErr("not in canonical form (order, keys, spacing or time format differ)")
	}
	return s, nil
}

// SHA256Hex is the lower-case hex SHA-256 of b, the form payload_sha256
// and policy_sha256 take.
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
